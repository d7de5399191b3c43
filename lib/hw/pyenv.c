/* pyenv.c: not written yet */
