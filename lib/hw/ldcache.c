/* ldcache.c: not written yet */
