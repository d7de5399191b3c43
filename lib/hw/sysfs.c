/* sysfs.c: not written yet */
