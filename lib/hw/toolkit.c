/* toolkit.c: not written yet */
