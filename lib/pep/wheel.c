/* wheel.c: not written yet */
