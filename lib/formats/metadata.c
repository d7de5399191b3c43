/* metadata.c: not written yet */
