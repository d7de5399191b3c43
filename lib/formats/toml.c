/* toml.c: not written yet */
