"""The row files of a data-driven test (tests/kb_coverage, tests/diagnose_real):
every *.toml in a folder, each a list of [[TABLE]] rows and an optional
`min_KEY = N` (fewer rows fail, so a file cut short by an edit does not pass
quietly)."""
import glob
import os
import tomllib


def rows(folder, table, min_key, fail):
    """(file name, rows) for each file, in name order; problems go to fail(text)."""
    files = sorted(glob.glob(os.path.join(folder, "*.toml")))
    if not files:
        fail("no %s files in %s" % (table, folder))
    for path in files:
        name = os.path.basename(path)
        try:
            with open(path, "rb") as f:
                doc = tomllib.load(f)
        except (OSError, tomllib.TOMLDecodeError) as e:
            fail("%s: %s" % (name, e))
            continue
        got = doc.get(table, [])
        want = doc.get(min_key, 1)
        if len(got) < want:
            fail("%s: %d %s rows, the file says at least %d" % (name, len(got), table, want))
        yield name, got
