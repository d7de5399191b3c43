/* loader.c: not written yet */
