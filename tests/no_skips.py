"""Fail the test command when any test skipped (exit 77).

`scripts/dev test` installs everything the tests need, so on a fresh Debian
machine no test may skip: a skip there means CI silently stopped running it
(cli-build once skipped for a missing python3-wheel-whl).  Reads meson's
testlog.json (one JSON object per line) and prints each skipped test with the
last lines of its output, which say what it missed.

usage: no_skips.py TESTLOG.json
"""
import json
import sys


def main(path):
    skipped = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            t = json.loads(line)
            if t.get("result") == "SKIP":
                skipped.append(t)
    for t in skipped:
        out = (t.get("stdout") or "").strip().splitlines()[-3:]
        print("SKIPPED: %s: %s" % (t.get("name"), " / ".join(out) or "(no output)"), file=sys.stderr)
    if skipped:
        print("%d test(s) skipped: install what they need (scripts/dev's TEST_PKGS) "
              "so that every test runs" % len(skipped), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
