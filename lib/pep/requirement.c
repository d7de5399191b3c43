/* requirement.c: not written yet */
