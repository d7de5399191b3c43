/* version.c: not written yet */
