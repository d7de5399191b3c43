"""The scenario files under the runners' DIR arguments.

A later DIR overrides an earlier one file by file: a file whose path
relative to its DIR is also under an earlier DIR replaces that one.  So
`../shared/testdata/packse/scenarios tests/packse/uv-newest` is uv's
current suite: the shared snapshot with the scenarios uv has added or
changed since written over it.  A DIR that is a file is taken as it is.
"""
import os

SUFFIXES = (".toml", ".json", ".yaml", ".yml")


def collect(dirs):
    """Sorted paths, or raise FileNotFoundError naming the missing DIR."""
    by_rel = {}
    for d in dirs:
        if os.path.isfile(d):
            by_rel[os.path.abspath(d)] = d
            continue
        if not os.path.isdir(d):
            raise FileNotFoundError(d)
        for root, _, names in os.walk(d):
            for n in names:
                if n.endswith(SUFFIXES):
                    path = os.path.join(root, n)
                    by_rel[os.path.relpath(path, d)] = path
    return sorted(by_rel.values())
