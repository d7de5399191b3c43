/* record.c: not written yet */
