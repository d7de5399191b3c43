/* libs.c: not written yet */
