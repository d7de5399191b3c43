/* specifier.c: not written yet */
