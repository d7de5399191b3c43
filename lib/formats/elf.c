/* elf.c: not written yet */
