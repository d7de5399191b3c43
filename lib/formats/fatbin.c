/* fatbin.c: not written yet */
