/* toml_write.c: not written yet */
