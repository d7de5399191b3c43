/* marker.c: not written yet */
