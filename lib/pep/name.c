/* name.c: not written yet */
