"""gpuenv diagnose on real logs: what users pasted into public issue threads
(tests/diagnose_real/*.toml), each with its source URL, and clean logs.

    min_logs = 10            # optional, per file: fewer [[log]] rows fail
    [[log]]
    id = "jax-plugin-mismatch-1"        # unique over all files
    source = "https://github.com/jax-ml/jax/issues/NNNN"
    category = "jax"                    # the issue's area (docs/diagnose.md lists them)
    expect = "jax-plugin-version-mismatch"   # the signature that names the cause; "" = clean
    also = ["..."]                      # optional: other signatures that are right there too
    args = ["--gpu", "H200"]            # optional: facts given to diagnose
    fix_has = ["..."]                   # optional: substrings the expected finding's fix holds
    text = '''the excerpt, as pasted'''

A real log is named correctly when `expect` is among the findings; a finding
that is neither `expect` nor in `also` is a false positive (on a clean log,
any finding is). The test fails below 95% named correctly, on any false
positive, and on a fix_has miss. GPUENV_DIAG_REPORT=FILE writes the figures
as JSON (docs/diagnose.md quotes them)."""
import collections
import json
import os
import subprocess
import sys
import tempfile

import tomlset

BIN = os.environ["GPUENV_BIN"]
HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.environ.get("GPUENV_DIAG_REAL", os.path.join(HERE, "..", "diagnose_real"))
TARGET = 0.95
MIN_REAL = int(os.environ.get("GPUENV_DIAG_MIN_REAL", "120"))  # the issue: at least 120 real logs
MIN_CLEAN = int(os.environ.get("GPUENV_DIAG_MIN_CLEAN", "20"))  # and 20 clean ones
problems = []


def problem(what):
    problems.append(what)
    print("FAIL:", what)


logs = []
seen = set()
for name, rows in tomlset.rows(DIR, "log", "min_logs", problem):
    for r in rows:
        lid = r.get("id")
        if not lid or lid in seen:
            problem("%s: missing or repeated id %r" % (name, lid))
            continue
        seen.add(lid)
        if not r.get("source", "").startswith("http"):
            problem("%s: %s: the source must be a URL" % (name, lid))
        if not r.get("text", "").strip():
            problem("%s: %s: no text" % (name, lid))
            continue
        if len(r["text"]) > 6000:
            problem("%s: %s: excerpt of %d characters; keep it short" % (name, lid, len(r["text"])))
        r["_file"] = name
        logs.append(r)

stats = collections.defaultdict(lambda: [0, 0])  # category -> [right, total]
misses, fps = [], []
n_real = n_clean = right = 0
with tempfile.TemporaryDirectory() as tmp:
    for r in logs:
        p = os.path.join(tmp, "log.txt")
        with open(p, "w") as f:
            f.write(r["text"])
        res = subprocess.run([BIN, "diagnose", "--json", p, *r.get("args", [])],
                             capture_output=True, text=True, timeout=60)
        try:
            d = json.loads(res.stdout)
        except ValueError:
            problem("%s: diagnose exit %d, no JSON: %s" % (r["id"], res.returncode, res.stderr[:300]))
            continue
        found = {f["id"]: f for f in d.get("findings", [])}
        exp = r.get("expect", "")
        ok_ids = {exp} | set(r.get("also", [])) if exp else set()
        extra = sorted(set(found) - ok_ids)
        if extra:
            fps.append((r["id"], extra))
            problem("%s (%s): false positive %s" % (r["id"], r["_file"], extra))
        if not exp:
            n_clean += 1
            continue
        n_real += 1
        cat = r.get("category", "?")
        stats[cat][1] += 1
        if exp in found:
            right += 1
            stats[cat][0] += 1
            fix = found[exp].get("fix", "")
            for s in r.get("fix_has", []):
                if s not in fix:
                    problem("%s: the fix lacks %r: %s" % (r["id"], s, fix[:300]))
        else:
            misses.append((r["id"], exp, sorted(found), r["source"]))
            print("miss: %s: want %s, found %s (%s)" % (r["id"], exp, sorted(found) or "nothing",
                                                        r["source"]))

rate = right / n_real if n_real else 0.0
print("diagnose on real logs: %d/%d named correctly (%.1f%%), %d clean logs, %d false positives"
      % (right, n_real, 100 * rate, n_clean, len(fps)))
for cat in sorted(stats):
    print("  %-28s %3d/%d" % (cat, stats[cat][0], stats[cat][1]))
if n_real and rate < TARGET:
    problem("%.1f%% named correctly, the target is %.0f%%" % (100 * rate, 100 * TARGET))
if n_real < MIN_REAL or n_clean < MIN_CLEAN:
    problem("%d real and %d clean logs; want at least %d and %d" % (n_real, n_clean, MIN_REAL, MIN_CLEAN))
rep = os.environ.get("GPUENV_DIAG_REPORT")
if rep:
    with open(rep, "w") as f:
        json.dump({"real": n_real, "right": right, "clean": n_clean, "false_positives": fps,
                   "misses": misses, "categories": {k: v for k, v in sorted(stats.items())}}, f, indent=1)
sys.exit(1 if problems else 0)
