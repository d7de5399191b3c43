"""The knowledge base against its sources: every case in tests/kb_coverage/*.toml
asks the built binary one question (`gpuenv --json <args>`) and compares the
answer with the values its source document gives.

A case file is TOML:

    [[case]]
    args = ["kb", "image", "nvcr.io/nvidia/pytorch:24.10-py3"]
    source = "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-24-10.html"
    expect = { "images.0.cuda_full" = "12.6.2", "images.0.cudnn" = "9.5.0.50" }
    # optional: rc = 1 (default 0); json = false to match text instead;
    # stdout_has = ["..."] substrings of the output (text or raw JSON);
    # stderr_has = ["..."] substrings of the error output (a refusal's message and hint)

`expect` keys are dotted paths into the JSON answer (list indexes are numbers);
values compare as strings (null is "null", booleans "true"/"false"). A file
may set `min_cases = N` at the top: fewer cases is a failure (so a file cut
short by an edit does not pass quietly). Every case needs a `source`."""
import json
import os
import subprocess
import sys

import tomlset

BIN = os.environ["GPUENV_BIN"]
HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.environ.get("GPUENV_KB_COVERAGE", os.path.join(HERE, "..", "kb_coverage"))
failures = []
total = 0


def fail(what):
    failures.append(what)
    print("FAIL:", what)


def walk(doc, path):
    cur = doc
    for part in path.split("."):
        if isinstance(cur, list):
            try:
                cur = cur[int(part)]
            except (ValueError, IndexError):
                return KeyError
        elif isinstance(cur, dict):
            if part not in cur:
                return KeyError
            cur = cur[part]
        else:
            return KeyError
    return cur


def as_text(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True)
    return str(v)


nfiles = 0
for name, cases in tomlset.rows(DIR, "case", "min_cases", fail):
    nfiles += 1
    for i, c in enumerate(cases):
        total += 1
        where = "%s case %d (%s)" % (name, i + 1, " ".join(c.get("args", [])))
        if not c.get("source"):
            fail(where + ": no source")
        args = c.get("args")
        if not args or not all(isinstance(a, str) for a in args):
            fail(where + ": args must be a list of strings")
            continue
        use_json = c.get("json", True)
        cmd = [BIN] + (["--json"] if use_json else []) + args
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        want_rc = c.get("rc", 0)
        if r.returncode != want_rc:
            fail("%s: exit %d, want %d: %s" % (where, r.returncode, want_rc, (r.stderr or r.stdout)[:300]))
            continue
        for s in c.get("stdout_has", []):
            if s not in r.stdout:
                fail("%s: output lacks %r" % (where, s))
        for s in c.get("stderr_has", []):
            if s not in r.stderr:
                fail("%s: error output lacks %r" % (where, s))
        exp = c.get("expect", {})
        if not exp:
            continue
        if not use_json:
            fail(where + ": expect needs JSON output")
            continue
        try:
            ans = json.loads(r.stdout)
        except ValueError:
            fail(where + ": not JSON: " + r.stdout[:200])
            continue
        for k, want in exp.items():
            got = walk(ans, k)
            if got is KeyError:
                fail("%s: %s: not in the answer" % (where, k))
            elif as_text(got) != as_text(want):
                fail("%s: %s = %s, the source says %s" % (where, k, as_text(got), as_text(want)))

print("kb coverage: %d cases in %d files, %d failures" % (total, nfiles, len(failures)))
sys.exit(1 if failures else 0)
