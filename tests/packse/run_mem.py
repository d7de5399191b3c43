#!/usr/bin/env python3
"""Replay packse-format scenarios through gpuenv's resolver in memory.

    tests/packse/run_mem.py [--gpuenv BIN] [--min-pass PCT] DIR...

A later DIR overrides an earlier one file by file (tests/packse/
scenario_files.py): `../shared/testdata/packse/scenarios
tests/packse/uv-newest` is uv's current suite.

Each scenario file (*.toml) under DIR is resolved with `gpuenv debug resolve
FILE --json` (the in-memory provider: no index, no wheels) and compared with
its [expected] table: satisfiable, and when expected.packages is given, the
exact set of name==version pairs.  One line per scenario,
    PASS name | FAIL name: reason | SKIP name: reason
then `N passed, M failed, K skipped`.  packse's JSON and YAML spellings
are written as TOML first (YAML needs python3-yaml; without it they are
skipped).  A file NAME.explanation beside a
scenario holds its expected explanation, compared exactly (gpuenv's own
fixtures in tests/fixtures/resolve).  Skipped: `universal = true` scenarios
(gpuenv locks per target, never universally).  With --min-pass, the exit status is 1 when
fewer than PCT percent of the scenarios that are not universal pass (a
skip other than universal counts as not passing).  The fixture-wheel
runner through `gpuenv lock` is tests/packse/run; this one checks the
resolver alone, fast.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario_files  # noqa: E402


def norm(name):
    out, prev = [], False
    for ch in name.lower():
        if ch in "-_.":
            if not prev:
                out.append("-")
            prev = True
        else:
            out.append(ch)
            prev = False
    return "".join(out)


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return json.dumps(str(v))  # a version read as a number (YAML's 1.0)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise ValueError(f"cannot write {type(v).__name__} {v!r} as TOML")


def to_toml(d, prefix=""):
    """packse's JSON / YAML spelling written as its TOML one (the same
    tables and keys; JSON strings are TOML basic strings)."""
    out, sub = [], []
    for k, v in d.items():
        key = json.dumps(str(k))
        if isinstance(v, dict):
            sub.append((prefix + key, v))
        else:
            out.append(f"{key} = {toml_value(v)}")
    text = "\n".join(out) + "\n"
    for p, v in sub:
        text += f"\n[{p}]\n" + to_toml(v, p + ".")
    return text


def load(path):
    """The scenarios in one file: TOML (gpuenv reads it itself), or JSON and
    YAML (written as TOML for gpuenv first; YAML needs python3-yaml)."""
    if path.endswith(".toml"):
        with open(path, "rb") as f:
            return [(tomllib.load(f), None)]
    with open(path, encoding="utf-8") as f:
        if path.endswith(".json"):
            data = json.load(f)
        else:
            import yaml  # ImportError: reported as a skip
            data = yaml.safe_load(f)
    items = data if isinstance(data, list) else [data]
    return [(sc, to_toml(sc)) for sc in items]


def check(gpuenv, path):
    """[(status, name, reason)] for one scenario file."""
    base = os.path.basename(path)
    try:
        scs = load(path)
    except ImportError:
        return [("SKIP", base, "YAML, and python3-yaml is not installed")]
    except (OSError, ValueError, tomllib.TOMLDecodeError) as e:
        return [("FAIL", base, f"cannot read: {e}")]
    res = []
    for sc, text in scs:
        if text is None:
            res.append(check_one(gpuenv, path, sc, base))
            continue
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as t:
            t.write(text)
        try:
            res.append(check_one(gpuenv, t.name, sc, base))
        finally:
            os.unlink(t.name)
    return res


def check_one(gpuenv, path, sc, base):
    name = sc.get("name", base)
    if sc.get("resolver_options", {}).get("universal"):
        return "SKIP", name, "universal: gpuenv locks per target, not for every environment at once"
    exp = sc.get("expected", {})
    p = subprocess.run([gpuenv, "debug", "resolve", path, "--json"],
                       capture_output=True, text=True, timeout=120)
    try:
        got = json.loads(p.stdout)
    except ValueError:
        err = (p.stderr.strip().splitlines() or ["no output"])[-1]
        return "FAIL", name, f"exit {p.returncode}: {err}"
    if p.returncode not in (0, 1) or (p.returncode == 0) != got["satisfiable"]:
        return "FAIL", name, f"exit {p.returncode} with satisfiable={got['satisfiable']}"
    want_sat = exp.get("satisfiable")
    if want_sat is not None and got["satisfiable"] != want_sat:
        if got["satisfiable"]:
            pins = ", ".join(f"{k}=={v}" for k, v in sorted(got["packages"].items()))
            return "FAIL", name, f"expected no solution, got {pins}"
        first = (got.get("explanation") or "").splitlines()
        return "FAIL", name, "expected a solution, got none: " + (first[0] if first else "")
    golden = os.path.splitext(path)[0] + ".explanation"
    if os.path.exists(golden):
        with open(golden, encoding="utf-8") as f:
            want_text = f.read().rstrip("\n")
        have_text = got.get("explanation") or ""
        if have_text != want_text:
            return "FAIL", name, f"explanation differs from {os.path.basename(golden)}:\n{have_text}"
    if "packages" in exp and got["satisfiable"]:
        want = {norm(k): v for k, v in exp["packages"].items()}
        have = got["packages"]
        if want != have:
            diff = []
            for k in sorted(set(want) | set(have)):
                if want.get(k) != have.get(k):
                    diff.append(f"{k}: expected {want.get(k, '(absent)')}, got {have.get(k, '(absent)')}")
            return "FAIL", name, "; ".join(diff)
    return "PASS", name, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--gpuenv", default=os.environ.get("GPUENV_BIN", "gpuenv"))
    ap.add_argument("--min-pass", type=float, default=None)
    a = ap.parse_args()
    try:
        files = scenario_files.collect(a.dirs)
    except FileNotFoundError as e:
        print(f"run_mem.py: {e}: not a directory", file=sys.stderr)
        return 2
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    universal = 0
    total = 0
    for f in files:
        for st, name, why in check(a.gpuenv, f):
            total += 1
            counts[st] += 1
            if st == "SKIP" and why.startswith("universal"):
                universal += 1
            print(f"{st} {name}" + (f": {why}" if why else ""))
    print(f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
    if a.min_pass is not None:
        considered = total - universal
        pct = 100.0 * counts["PASS"] / considered if considered else 0.0
        print(f"{pct:.1f}% of {considered} scenarios that are not universal pass "
              f"(at least {a.min_pass:g}% needed)")
        if not considered or pct < a.min_pass:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
