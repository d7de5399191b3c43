#!/usr/bin/python3
"""toml-test (TOML 1.0.0 list) through `gpuenv debug toml-decode/-encode`.

For every case listed in toml-test's tests/files-toml-1.0.0:
  valid:   decode     TOML -> tagged JSON equals the expected JSON
           encode     expected JSON -> TOML -> decode equals the expected JSON
           roundtrip  our JSON -> encode -> decode gives the same tagged JSON
                      (compared with keys sorted: TOML forces key/values
                      before sub-tables, so insertion order may change)
  invalid: decode exits 1 with a "gpuenv: <stdin>:LINE:COL: message" error
Comparisons follow toml-test: floats by value (nan == nan, any sign),
integers by value, date/times by value (offset ones as instants).
Plus a few checks of the verbs' options.  Exit 0 pass, 1 fail.
"""
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

BIN = os.environ.get("GPUENV_BIN", "build/gpuenv")
SHARED = os.environ.get("GPUENV_SHARED", os.path.join(os.path.dirname(__file__), "../../../shared"))
SUITE = os.path.join(SHARED, "testdata", "toml-test", "tests")
LIST = os.path.join(SUITE, "files-toml-1.0.0")
SANITIZER = re.compile(r"AddressSanitizer|LeakSanitizer|runtime error:|UndefinedBehaviorSanitizer")
ERROR_LINE = re.compile(r"^gpuenv: <stdin>:\d+:\d+: \S")


# LeakSanitizer's scan at exit is the slowest part of a run under the
# sanitizer build: keep it for every tenth case (and the option checks), the
# unit tests and fuzz replays check the library for leaks anyway.
NO_LEAK_ENV = dict(os.environ)
NO_LEAK_ENV["ASAN_OPTIONS"] = re.sub(r"detect_leaks=1", "detect_leaks=0",
                                     os.environ.get("ASAN_OPTIONS", "")) or "detect_leaks=0"


def run(args, data, leaks=True):
    p = subprocess.run([BIN, "debug"] + args, input=data, capture_output=True, timeout=120,
                       env=None if leaks else NO_LEAK_ENV)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


# ---- comparisons, as toml-test makes them ----

DT = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})?$")
DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
TIME = re.compile(r"^(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?$")


def days_from_civil(y, m, d):
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def nanos(frac):
    return int((frac or "").ljust(9, "0")[:9])


def dt_key(typ, s):
    if typ == "datetime":
        m = DT.match(s)
        if not m or not m.group(8):
            return None
        y, mo, d, h, mi, se = (int(m.group(i)) for i in range(1, 7))
        off = m.group(8)
        offmin = 0 if off in "Zz" else (1 if off[0] == "+" else -1) * (int(off[1:3]) * 60 + int(off[4:6]))
        secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - offmin * 60
        return (secs, nanos(m.group(7)))
    if typ == "datetime-local":
        m = DT.match(s)
        if not m or m.group(8):
            return None
        return tuple(int(m.group(i)) for i in range(1, 7)) + (nanos(m.group(7)),)
    if typ == "date-local":
        m = DATE.match(s)
        return tuple(int(x) for x in m.groups()) if m else None
    if typ == "time-local":
        m = TIME.match(s)
        return tuple(int(m.group(i)) for i in range(1, 4)) + (nanos(m.group(4)),) if m else None
    return None


def float_val(s):
    t = s.lstrip("+-")
    if t == "nan":
        return "nan"
    if t == "inf":
        return float("-inf") if s.startswith("-") else float("inf")
    return float(s)


def is_tagged(x):
    return isinstance(x, dict) and set(x) == {"type", "value"} and all(
        isinstance(v, str) for v in x.values())


def compare(exp, got, path="root"):
    """None when equal, else a description of the first difference."""
    if is_tagged(exp):
        if not is_tagged(got):
            return f"{path}: expected a {exp['type']} value, got {json.dumps(got)[:80]}"
        if exp["type"] != got["type"]:
            return f"{path}: expected type {exp['type']}, got {got['type']}"
        t, e, g = exp["type"], exp["value"], got["value"]
        try:
            if t == "float":
                same = float_val(e) == float_val(g)
            elif t == "integer":
                same = int(e) == int(g)
            elif t in ("datetime", "datetime-local", "date-local", "time-local"):
                ke, kg = dt_key(t, e), dt_key(t, g)
                same = ke is not None and ke == kg
            else:
                same = e == g
        except ValueError:
            same = False
        return None if same else f"{path}: expected {t} {e!r}, got {g!r}"
    if isinstance(exp, dict):
        if not isinstance(got, dict) or is_tagged(got):
            return f"{path}: expected a table, got {json.dumps(got)[:80]}"
        if set(exp) != set(got):
            return f"{path}: keys differ: missing {sorted(set(exp) - set(got))}, extra {sorted(set(got) - set(exp))}"
        for k in exp:
            d = compare(exp[k], got[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(exp, list):
        if not isinstance(got, list):
            return f"{path}: expected an array, got {json.dumps(got)[:80]}"
        if len(exp) != len(got):
            return f"{path}: expected {len(exp)} elements, got {len(got)}"
        for i, (a, b) in enumerate(zip(exp, got)):
            d = compare(a, b, f"{path}[{i}]")
            if d:
                return d
        return None
    return f"{path}: unexpected JSON {json.dumps(exp)[:80]}"


# ---- the cases ----

def decode(data, leaks=True):
    rc, out, err = run(["toml-decode"], data, leaks)
    if SANITIZER.search(err):
        return None, "sanitizer: " + err[-2000:]
    if rc != 0:
        return None, f"exit {rc}: {err.strip()[:300]}"
    try:
        return json.loads(out), None
    except ValueError as e:
        return None, f"output is not JSON ({e})"


def encode(obj, leaks=True):
    rc, out, err = run(["toml-encode"], json.dumps(obj).encode(), leaks)
    if SANITIZER.search(err):
        return None, "sanitizer: " + err[-2000:]
    if rc != 0:
        return None, f"encode exit {rc}: {err.strip()[:300]}"
    return out, None


def check_valid(name, leaks):
    """Returns a list of (stage, message) failures."""
    base = os.path.join(SUITE, name[:-len(".toml")])
    with open(base + ".toml", "rb") as f:
        toml = f.read()
    with open(base + ".json", "rb") as f:
        expected = json.load(f)
    fails = []
    got, err = decode(toml, leaks)
    if err or (err := compare(expected, got)):
        fails.append(("decode", err))
    # encoder side of the protocol: the expected JSON written as TOML
    text, err = encode(expected, leaks)
    if not err:
        back, err = decode(text, leaks)
        if err:
            err = f"{err}\n--- written TOML ---\n{text.decode('utf-8', 'replace')[:1500]}"
        elif (d := compare(expected, back)):
            err = f"{d}\n--- written TOML ---\n{text.decode('utf-8', 'replace')[:1500]}"
    if err:
        fails.append(("encode", err))
    # decode -> encode -> decode gives the same tagged JSON
    if got is not None:
        text, err = encode(got, leaks)
        if not err:
            back, err = decode(text, leaks)
            if not err and json.dumps(back, sort_keys=True) != json.dumps(got, sort_keys=True):
                err = f"round trip changed the document ({compare(got, back) or 'float/date text'})"
        if err:
            fails.append(("roundtrip", err))
    return fails


def check_invalid(name, leaks):
    with open(os.path.join(SUITE, name), "rb") as f:
        toml = f.read()
    rc, out, err = run(["toml-decode"], toml, leaks)
    if SANITIZER.search(err):
        return [("invalid", "sanitizer: " + err[-2000:])]
    if rc != 1:
        return [("invalid", f"accepted (exit {rc}); output {out[:200]!r}")]
    if not ERROR_LINE.match(err):
        return [("invalid", f"error is not 'gpuenv: <stdin>:LINE:COL: message': {err[:200]!r}")]
    return []


def option_checks():
    fails = []
    rc, out, err = run(["toml-decode", "--check"], b"a = 1\n")
    if rc != 0 or out:
        fails.append(f"--check on valid input: exit {rc}, output {out!r}")
    rc, out, err = run(["toml-decode", "--check"], b"a = \n")
    if rc != 1 or out:
        fails.append(f"--check on invalid input: exit {rc}, output {out!r}")
    rc, out, err = run(["toml-decode", "--check", "--time"], b"a = 1\n")
    if rc != 0 or "parsed 6 bytes" not in err:
        fails.append(f"--time: exit {rc}, stderr {err!r}")
    with tempfile.NamedTemporaryFile(suffix=".toml") as f:
        f.write(b"[project]\nname = 'x'\nname = 'y'\n")
        f.flush()
        rc, out, err = run(["toml-decode", f.name], b"")
        want = f"{f.name}:3:1: duplicate key 'name'"
        if rc != 1 or want not in err:
            fails.append(f"file argument: exit {rc}, stderr {err!r}, want {want!r}")
    rc, out, err = run(["toml-decode", "--chek"], b"")
    if rc != 2 or "--check" not in err:
        fails.append(f"unknown option: exit {rc}, stderr {err!r}")
    rc, out, err = run(["toml-encode"], b"[1, 2]")
    if rc != 1:
        fails.append(f"toml-encode of a JSON array: exit {rc}")
    rc, out, err = run(["toml-encode"], b'{"a": {"type": "datetime", "value": "2024-13-01"}}')
    if rc != 1:
        fails.append(f"toml-encode of a bad date: exit {rc}")
    return fails


def main():
    if not os.path.exists(LIST):
        print(f"toml-test list not found: {LIST}", file=sys.stderr)
        return 1
    with open(LIST) as f:
        names = [l.strip() for l in f if l.strip()]
    valid = [n for n in names if n.startswith("valid/") and n.endswith(".toml")]
    invalid = [n for n in names if n.startswith("invalid/") and n.endswith(".toml")]
    workers = max(2, os.cpu_count() or 2)
    stage_fail = {"decode": [], "encode": [], "roundtrip": [], "invalid": []}
    with concurrent.futures.ThreadPoolExecutor(workers) as ex:
        leaks = [i % 10 == 0 for i in range(len(valid))]
        for name, fails in zip(valid, ex.map(check_valid, valid, leaks)):
            for stage, msg in fails:
                stage_fail[stage].append((name, msg))
        leaks = [i % 10 == 0 for i in range(len(invalid))]
        for name, fails in zip(invalid, ex.map(check_invalid, invalid, leaks)):
            for stage, msg in fails:
                stage_fail[stage].append((name, msg))
    for stage, lst in stage_fail.items():
        for name, msg in lst:
            print(f"FAIL {stage} {name}: {msg}")
    opt = option_checks()
    for m in opt:
        print(f"FAIL options: {m}")
    nv, ni = len(valid), len(invalid)
    print(f"toml-test 1.0.0 valid:   decode {nv - len(stage_fail['decode'])}/{nv}, "
          f"encode {nv - len(stage_fail['encode'])}/{nv}, "
          f"round-trip {nv - len(stage_fail['roundtrip'])}/{nv}")
    print(f"toml-test 1.0.0 invalid: rejected {ni - len(stage_fail['invalid'])}/{ni}")
    print(f"option checks: {7 - len(opt)}/7")
    if nv < 200 or ni < 400:
        print("FAIL: the toml-test list looks truncated")
        return 1
    return 1 if opt or any(stage_fail.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
