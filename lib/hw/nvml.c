/* nvml.c: not written yet */
