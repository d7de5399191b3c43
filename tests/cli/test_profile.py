"""The install profile (issue 13, item 3; docs/profile.md):

  - `lock --profile` and `sync --profile` against a fixture index over HTTP
    (tests/fixtures/index_server.py, wheels from mkwheel.py): the trace
    passes a Trace Event Format checker of this file's own (every event's
    ph, ts, pid, tid, name; dur on X; B/E nesting; metadata events), and has
    per-package page/metadata, download, hash, unpack and link spans;
  - the build shims: a build-like script run through `gpuenv debug
    shim-run` calls the real nvcc (/usr/local/cuda/bin/nvcc) 47 times and
    gcc once; `gpuenv profile` counts 47 nvcc calls for the package; a
    failing cc call is counted as failed; nvcc's output reaches the script;
  - `gpuenv profile` text, --json, --top;
  - the flame graph: --svg parsed as XML (one <title> per drawn span), and
    opened in headless Chromium: the screenshot is a PNG that is not blank
    (decoded here, pixel variance) -- skipped only when chromium is absent;
  - malformed traces: not JSON (line:col), an X without dur, an E without
    its B, an unended B, an unknown phase, a wrong displayTimeUnit: exit 4
    with the event and the field named; a trace of a failed sync is still
    written; an unwritable --profile path fails the run with exit 4.
"""
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import index_server  # noqa: E402
import mkwheel  # noqa: E402

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-profile-test-")
PY = os.path.realpath(sys.executable)
PYXY = "%d.%d" % sys.version_info[:2]
NVCC = "/usr/local/cuda/bin/nvcc"


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, env=None, stdin=None, timeout=300):
    e = dict(os.environ)
    e.pop("VIRTUAL_ENV", None)
    e.update(env or {})
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=e, input=stdin, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


# ---- a checker of the Trace Event Format, independent of gpuenv's -----------

PHASES = set("BEXiICbneSTpFstfPNODMVvRc()")
META = {"process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index"}


def validate(doc):
    """Problems of a trace as Chrome's viewer reads it ([] when none)."""
    bad = []
    if isinstance(doc, list):
        events = doc
    elif isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        events = doc["traceEvents"]
        if doc.get("displayTimeUnit", "ms") not in ("ms", "ns"):
            bad.append("displayTimeUnit")
    else:
        return ["not a trace"]
    open_be = {}
    for i, e in enumerate(events):
        if not isinstance(e, dict) or e.get("ph") not in PHASES:
            bad.append("%d: ph" % i)
            continue
        ph = e["ph"]
        isint = lambda v: isinstance(v, int) and not isinstance(v, bool)  # noqa: E731
        if not isint(e.get("pid")):
            bad.append("%d: pid" % i)
        if ph == "M":
            if e.get("name") not in META:
                bad.append("%d: metadata name" % i)
            if e.get("name", "").startswith("thread_") and not isint(e.get("tid")):
                bad.append("%d: metadata tid" % i)
            if e.get("name", "").endswith("_name") and not isinstance(e.get("args", {}).get("name"), str):
                bad.append("%d: metadata args.name" % i)
            continue
        if not isint(e.get("tid")):
            bad.append("%d: tid" % i)
        if not isinstance(e.get("ts"), (int, float)):
            bad.append("%d: ts" % i)
        if ph != "E" and not isinstance(e.get("name"), str):
            bad.append("%d: name" % i)
        if ph == "X" and not (isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0):
            bad.append("%d: dur" % i)
        if ph in "BE":
            open_be.setdefault((e.get("pid"), e.get("tid")), []).append((e.get("ts", 0), i, ph, e.get("name")))
    for key, evs in open_be.items():
        stack = []
        for ts, i, ph, name in sorted(evs):
            if ph == "B":
                stack.append(name)
            elif not stack or (name is not None and stack.pop() != name):
                bad.append("%d: E without its B" % i)
        if stack:
            bad.append("%r: B without E" % (key,))
    return bad


def load_trace(path):
    with open(path) as f:
        return json.load(f)


def spans(doc):
    return [e for e in doc["traceEvents"] if e["ph"] == "X"]


def phases_by_package(doc):
    out = {}
    for e in spans(doc):
        a = e.get("args", {})
        if "package" in a:
            out.setdefault(a["package"], set()).add(a["phase"])
    return out


# ---- the fixture index over HTTP ----------------------------------------------

INDEX = os.path.join(TMP, "index")
mkwheel.build_index(INDEX, [
    {"name": "alpha", "version": "2.0", "requires": ["beta>=2.0", "gamma"], "sdist": False},
    {"name": "beta", "version": "2.0", "sdist": False, "files": {"beta/data.txt": "beta data\n" * 500}},
    {"name": "gamma", "version": "1.0", "sdist": False},
])


def project(name, deps):
    d = os.path.join(TMP, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "pyproject.toml"), "w") as f:
        f.write('[project]\nname = "%s"\nversion = "0.1"\ndependencies = [%s]\n\n'
                '[tool.gpuenv.targets.cpu]\ngpu = "none"\npython = "%s"\nplatform = "%s"\n'
                % (name, ", ".join('"%s"' % x for x in deps), PYXY, mkwheel.platform_tag()))
    return d


srv, port = index_server.start(INDEX)
URL = "http://127.0.0.1:%d/simple/" % port
try:
    # ---- lock --profile ---------------------------------------------------------
    P1 = project("proj-lock", ["alpha"])
    LT = os.path.join(TMP, "lock-trace.json")
    rc, out, err = run("lock", "--project", P1, "--index-url", URL, "--cache-dir", os.path.join(TMP, "c1"),
                       "--profile", LT)
    check(rc == 0, "lock --profile: %d %s" % (rc, err))
    doc = load_trace(LT)
    check(validate(doc) == [], "the lock trace validates: %r" % validate(doc)[:5])
    check(doc.get("displayTimeUnit") == "ms" and doc["otherData"]["command"] == "gpuenv lock",
          "the lock trace's displayTimeUnit and otherData: %r" % doc.get("otherData"))
    byp = phases_by_package(doc)
    for pkg in ("alpha", "beta", "gamma"):
        check({"page", "metadata"} <= byp.get(pkg, set()), "lock: %s has page and metadata spans: %r" % (pkg, byp.get(pkg)))
    check(any(e["name"] == "resolve" for e in spans(doc)), "lock: a resolve span")
    names = {e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    check("main" in names and any(n.startswith("index ") for n in names), "lock: threads named: %r" % names)

    # a warm lock: the cache answers, the spans say so
    rc, out, err = run("lock", "--project", P1, "--index-url", URL, "--cache-dir", os.path.join(TMP, "c1"),
                       "--profile", LT, "--offline")
    doc = load_trace(LT)
    check(rc == 0 and validate(doc) == [], "warm lock --profile: %d %s" % (rc, err))

    # ---- sync --profile (it locks first: metadata spans too) --------------------
    P2 = project("proj-sync", ["alpha"])
    ST = os.path.join(TMP, "sync-trace.json")
    rc, out, err = run("sync", "--project", P2, "--venv", os.path.join(TMP, "venv"), "--python", PY,
                       "--index-url", URL, "--cache-dir", os.path.join(TMP, "c2"), "--profile", ST)
    check(rc == 0, "sync --profile: %d %s%s" % (rc, out, err))
    doc = load_trace(ST)
    check(validate(doc) == [], "the sync trace validates: %r" % validate(doc)[:5])
    check(doc["otherData"]["command"] == "gpuenv sync" and doc["otherData"]["dropped"] == 0, "sync otherData")
    byp = phases_by_package(doc)
    for pkg in ("alpha", "beta", "gamma"):
        want = {"page", "metadata", "download", "hash", "unpack", "link"}
        check(want <= byp.get(pkg, set()), "sync: %s has %s spans: %r" % (pkg, sorted(want), sorted(byp.get(pkg, ()))))
    check({"cache", "stage", "commit"} <= {e["args"]["phase"] for e in spans(doc)}, "sync: cache, stage, commit spans")
    # complete events on one thread nest or follow each other (what the viewer draws)
    by_tid = {}
    for e in spans(doc):
        by_tid.setdefault(e["tid"], []).append((e["ts"], -e["dur"], e["ts"] + e["dur"]))
    overlap = []
    for tid, v in by_tid.items():
        stack = []
        for ts, _, end in sorted(v):
            while stack and stack[-1] <= ts:
                stack.pop()
            if stack and end > stack[-1]:
                overlap.append(tid)
            stack.append(end)
    check(overlap == [], "no partial overlap of spans on one thread: %r" % overlap)

    # ---- gpuenv profile: text, --json, --top -------------------------------------
    rc, out, err = run("profile", ST)
    check(rc == 0, "profile: %d %s" % (rc, err))
    check("slowest packages" in out and "slowest phases" in out and "tool calls: none" in out, "profile text: " + out)
    for pkg in ("alpha", "beta", "gamma"):
        check(("  " + pkg + " ") in out, "profile text lists %s" % pkg)
    rc, out, err = run("profile", ST, "--json")
    j = json.loads(out) if rc == 0 else {}
    check(j.get("command") == "gpuenv sync" and j.get("tool_calls") == 0, "profile --json: %r" % {k: j.get(k) for k in ("command", "tool_calls")})
    pk = {p["package"]: {x["phase"] for x in p["phases"]} for p in j.get("packages", [])}
    check(set(pk) == {"alpha", "beta", "gamma"} and all({"download", "unpack", "link"} <= v for v in pk.values()),
          "profile --json packages: %r" % pk)
    tot = [p["total_us"] for p in j.get("packages", [])]
    check(tot == sorted(tot, reverse=True), "packages slowest first")
    rc, out, err = run("--json", "profile", ST, "--top", "0")
    j0 = json.loads(out) if rc == 0 else {}
    check(sum(p["spans"] for p in j0.get("phases", [])) == j0.get("spans"), "every span in one phase (--top 0)")
    rc, out, err = run("--json", "profile", ST, "--top", "1")
    j1 = json.loads(out) if rc == 0 else {}
    check(len(j1.get("packages", [])) == 1 and j1["packages"][0]["package"] == j["packages"][0]["package"],
          "--top 1: the slowest package alone")
    rc, out, err = run("profile", ST, "--top", "x")
    check(rc == 2 and "--top" in err, "--top x: usage error: %d %s" % (rc, err))
    rc, out, err = run("profile", "-", stdin=open(ST).read())
    check(rc == 0 and "slowest packages" in out, "profile reads stdin")

    # ---- a failed sync still leaves its trace ---------------------------------------
    FT = os.path.join(TMP, "failed-trace.json")
    P3 = project("proj-fail", ["nosuchpkg"])
    rc, out, err = run("sync", "--project", P3, "--venv", os.path.join(TMP, "venv3"), "--python", PY,
                       "--index-url", URL, "--cache-dir", os.path.join(TMP, "c3"), "--profile", FT)
    check(rc != 0 and os.path.exists(FT) and validate(load_trace(FT)) == [],
          "a failed sync writes a valid trace: %d %s" % (rc, err))
    rc, out, err = run("lock", "--project", P1, "--index-url", URL, "--cache-dir", os.path.join(TMP, "c1"),
                       "--profile", os.path.join(TMP, "no", "such", "dir", "t.json"))
    check(rc == 4 and "t.json" in err, "an unwritable --profile: exit 4 naming it: %d %s" % (rc, err))
finally:
    srv.terminate()
    srv.wait()

# ---- the build shims: 47 nvcc calls -------------------------------------------------

BUILD = os.path.join(TMP, "build.sh")
with open(BUILD, "w") as f:
    f.write("""#!/bin/sh
# a setup.py's habit: ask nvcc its version, 47 times
i=0
while [ $i -lt 47 ]; do nvcc --version | tail -1; i=$((i+1)); done
printf 'int f(void) { return 1; }\\n' > "$1/x.c"
gcc -c -o "$1/x.o" "$1/x.c"
cc -c "$1/missing.c" 2>/dev/null
test -f "$1/x.o"
echo "nvcc is $(readlink "$(command -v nvcc)")"
""")
BT = os.path.join(TMP, "build-trace.json")
if os.access(NVCC, os.X_OK):
    env = {"PATH": os.path.dirname(NVCC) + ":" + os.environ.get("PATH", "/usr/bin:/bin")}
    env["TMPDIR"] = TMP
    rc, out, err = run("debug", "shim-run", "--profile", BT, "--package", "fake-ext", "--", "sh", BUILD, TMP, env=env)
    check(rc == 0, "shim-run: %d %s" % (rc, err))
    if os.path.exists(os.path.join(os.path.dirname(BIN), "gpuenv-shim")):
        check("nvcc is " + os.path.join(os.path.dirname(os.path.realpath(BIN)), "gpuenv-shim") in out,
              "the shims are links to gpuenv-shim (libc alone): " + out[-300:])
    check(out.count("Build cuda_") == 47, "nvcc's own output reached the script 47 times: %d" % out.count("Build cuda_"))
    doc = load_trace(BT)
    check(validate(doc) == [], "the shims' trace validates: %r" % validate(doc)[:5])
    tools = [e for e in spans(doc) if e.get("cat") == "tool"]
    nv = [e for e in tools if e["args"]["tool"] == "nvcc"]
    check(len(nv) == 47 and all(e["args"]["argv"] == ["--version"] and e["args"]["status"] == 0 for e in nv),
          "47 nvcc --version calls in the trace: %d" % len(nv))
    build = [e for e in spans(doc) if e["args"]["phase"] == "build"]
    check(len(build) == 1 and all(build[0]["ts"] <= e["ts"] and e["ts"] + e["dur"] <= build[0]["ts"] + build[0]["dur"] + 1
                                  for e in tools), "every tool call lies inside the build span")
    rc, out, err = run("--json", "profile", BT)
    j = json.loads(out) if rc == 0 else {}
    t = {x["tool"]: x for x in j.get("tools", [])}
    check(t.get("nvcc", {}).get("calls") == 47, "profile counts 47 nvcc calls: %r" % t.get("nvcc"))
    check(t.get("gcc", {}).get("calls") == 1 and t.get("cc", {}).get("failed") == 1, "gcc once, cc failed once: %r" % t)
    bp = {(x["package"], x["tool"]): x["calls"] for x in j.get("tools_by_package", [])}
    check(bp.get(("fake-ext", "nvcc")) == 47, "47 nvcc calls of fake-ext: %r" % bp)
    rc, out, err = run("profile", BT)
    check(rc == 0 and "nvcc" in out and " 47 calls" in out and "fake-ext" in out, "profile text counts the calls: " + out)
    check(not glob.glob(os.path.join(TMP, "gpuenv-shims-*")), "the shim folder is removed")
    # a tool that is not on PATH after the shims: 127, as a shell says
    rc, out, err = run("debug", "shim-run", "--profile", os.path.join(TMP, "missing-tool.json"), "--", "sh", "-c",
                       "nvcc --version", env={"PATH": "/usr/bin:/bin", "TMPDIR": TMP})
    check(rc == 127 and "no such tool on PATH" in err, "a missing nvcc: 127 and why: %d %s" % (rc, err))
else:
    print("note: no %s here: the nvcc shim checks are skipped" % NVCC)

# ---- the real thing: an sdist whose setup.py runs nvcc 47 times, built by sync --profile ----

SETUPTOOLS = "/usr/share/python-wheels/setuptools-66.1.1-py3-none-any.whl"
WHEEL = "/usr/share/python-wheels/wheel-0.38.4-py3-none-any.whl"
DEBIAN_PY = "/usr/bin/python3.11"  # Debian's setuptools wheel needs Debian's distutils
NVCC_SETUP = """import subprocess, sys
from setuptools import setup
# as an extension's build_ext asks: only when the wheel is built
if "bdist_wheel" in sys.argv:
    for _ in range(47):
        subprocess.run(["nvcc", "--version"], check=True, stdout=subprocess.DEVNULL)
setup(name="nvccpkg", version="1.0", packages=["nvccpkg"])
"""
# the builder records its tool calls since it sets the shims up (lib/builder/build.c)
BUILD_C = os.path.join(SRC, "lib", "build", "build.c")
have_builder = os.path.exists(BUILD_C) and "gpuenv_shim_setup" in open(BUILD_C).read()
if have_builder and os.access(NVCC, os.X_OK) and all(os.path.exists(p) for p in (SETUPTOOLS, WHEEL, DEBIAN_PY)):
    SIDX = os.path.join(TMP, "sdist-index")
    stage = os.path.join(TMP, "sdist-stage")
    mkwheel.write_index(SIDX, [
        mkwheel.wheel_from_file(SETUPTOOLS, stage), mkwheel.wheel_from_file(WHEEL, stage),
        mkwheel.make_sdist(stage, "nvccpkg", "1.0", files={
            "pyproject.toml": '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n',
            "setup.py": NVCC_SETUP})])
    P4 = project("proj-nvcc", ["nvccpkg"])
    with open(os.path.join(P4, "pyproject.toml")) as f:
        text = f.read().replace('python = "%s"' % PYXY, 'python = "3.11"')
    with open(os.path.join(P4, "pyproject.toml"), "w") as f:
        f.write(text)
    NT = os.path.join(TMP, "nvcc-sync.json")
    env = {"PATH": os.path.dirname(NVCC) + ":" + os.environ.get("PATH", "/usr/bin:/bin"),
           "SETUPTOOLS_USE_DISTUTILS": "stdlib"}
    rc, out, err = run("sync", "--project", P4, "--venv", os.path.join(TMP, "venv-nvcc"), "--python", DEBIAN_PY,
                       "--index-url", "file://" + os.path.join(SIDX, "simple") + "/",
                       "--cache-dir", os.path.join(TMP, "c4"), "--profile", NT, env=env, timeout=900)
    check(rc == 0, "sync --profile of the nvcc sdist: %d %s%s" % (rc, out, err[-2000:]))
    if os.path.exists(NT):
        doc = load_trace(NT)
        check(validate(doc) == [], "the build's trace validates: %r" % validate(doc)[:5])
        check("build" in phases_by_package(doc).get("nvccpkg", set()), "a build span of nvccpkg: %r" % phases_by_package(doc))
        rc, out, err = run("--json", "profile", NT)
        j = json.loads(out) if rc == 0 else {}
        bp = {(x["package"], x["tool"]): x["calls"] for x in j.get("tools_by_package", [])}
        check(bp.get(("nvccpkg", "nvcc")) == 47, "gpuenv profile counts the build's 47 nvcc calls: %r" % bp)
        pk = {x["package"]: x for x in j.get("packages", [])}
        check(0 < pk.get("nvccpkg", {}).get("total_us", 0) <= j.get("wall_us", 0),
              "the build's hooks inside its span are not counted twice: %r of %r" % (pk.get("nvccpkg"), j.get("wall_us")))
else:
    print("note: the sdist build check needs the PEP 517 builder with the shims (lib/builder/build.c), %s, Debian's "
          "setuptools and wheel wheels and %s: skipped" % (NVCC, DEBIAN_PY))

# ---- the flame graph ---------------------------------------------------------------

SVG = os.path.join(TMP, "flame.svg")
src = BT if os.path.exists(BT) else ST
rc, out, err = run("profile", src, "--svg", SVG)
check(rc == 0 and os.path.exists(SVG), "profile --svg: %d %s" % (rc, err))
svg1 = open(SVG, "rb").read() if os.path.exists(SVG) else b""
rc, out, err = run("profile", src, "--svg", SVG)
check(open(SVG, "rb").read() == svg1, "the SVG is deterministic")
try:
    root = ET.fromstring(svg1)
    ns = "{http://www.w3.org/2000/svg}"
    titles = root.findall(".//%sg/%stitle" % (ns, ns))
    nspans = len(spans(load_trace(src)))
    check(root.tag == ns + "svg" and len(titles) == nspans, "one <title> per span: %d of %d" % (len(titles), nspans))
    if src == BT:
        check(sum(1 for t in titles if t.text.startswith("nvcc fake-ext")) == 47, "47 nvcc spans drawn")
except ET.ParseError as e:
    check(False, "the SVG parses as XML: %s" % e)


def png_pixels(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit PNG, unfiltered."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    assert depth == 8 and ctype in (2, 6) and interlace == 0, "PNG kind %r" % (ihdr,)
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    rows, prev, stride = [], bytearray(w * bpp), w * bpp
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
if CHROMIUM and svg1:
    shot = os.path.join(TMP, "flame.png")
    p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--user-data-dir=" + os.path.join(TMP, "chromium-profile"),
                        "--screenshot=" + shot, "--window-size=1400,600", "file://" + SVG],
                       capture_output=True, text=True, timeout=120)
    check(os.path.exists(shot), "chromium wrote a screenshot: %d %s" % (p.returncode, p.stderr[-500:]))
    if os.path.exists(shot):
        w, h, bpp, rows = png_pixels(shot)
        lum = [0.299 * r[x] + 0.587 * r[x + 1] + 0.114 * r[x + 2] for r in rows[::4] for x in range(0, w * bpp, 4 * bpp)]
        mean = sum(lum) / len(lum)
        var = sum((v - mean) ** 2 for v in lum) / len(lum)
        colours = {(r[x], r[x + 1], r[x + 2]) for r in rows[::4] for x in range(0, w * bpp, 4 * bpp)}
        print("screenshot %dx%d: luminance variance %.1f, %d colours" % (w, h, var, len(colours)))
        check(w == 1400 and h == 600, "the screenshot's size: %dx%d" % (w, h))
        check(var > 50 and len(colours) > 8, "the screenshot is not blank: variance %.1f, %d colours" % (var, len(colours)))
else:
    print("note: no chromium here: the screenshot check is skipped")

# ---- malformed traces -----------------------------------------------------------------

BAD = {
    "not-json.json": ('{"traceEvents": [', "not JSON"),
    "no-events.json": ('{"events": []}', 'no "traceEvents"'),
    "x-no-dur.json": ('{"traceEvents":[{"name":"a","ph":"X","pid":1,"tid":1,"ts":0}]}', 'traceEvents[0]'),
    "no-pid.json": ('{"traceEvents":[{"name":"a","ph":"X","tid":1,"ts":0,"dur":1}]}', '"pid"'),
    "no-ts.json": ('[{"name":"a","ph":"i","pid":1,"tid":1}]', '"ts"'),
    "unknown-ph.json": ('[{"name":"a","ph":"Q","pid":1,"tid":1,"ts":0}]', '"ph"'),
    "e-first.json": ('[{"name":"a","ph":"E","pid":1,"tid":1,"ts":0},{"name":"a","ph":"B","pid":1,"tid":1,"ts":1}]',
                     "no B event open"),
    "b-open.json": ('[{"name":"a","ph":"B","pid":1,"tid":1,"ts":0}]', "no E event ends"),
    "crossed.json": ('[{"name":"a","ph":"B","pid":1,"tid":1,"ts":0},{"name":"b","ph":"B","pid":1,"tid":1,"ts":1},'
                     '{"name":"a","ph":"E","pid":1,"tid":1,"ts":2},{"name":"b","ph":"E","pid":1,"tid":1,"ts":3}]',
                     "must nest"),
    "unit.json": ('{"traceEvents":[],"displayTimeUnit":"s"}', "displayTimeUnit"),
}
for name, (text, want) in BAD.items():
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    rc, out, err = run("profile", path)
    check(rc == 4 and want in err and name in err and out == "", "%s: exit 4 saying %r: %d %s" % (name, want, rc, err))
    check(validate(json.loads(text)) != [] if name != "not-json.json" and name != "no-events.json" else True,
          "%s: this file's checker refuses it too" % name)
rc, out, err = run("profile", os.path.join(TMP, "not-json.json"))
check(":1:" in err, "a JSON error has its line: " + err)
# a trace of another tool: B/E pairs nested, the JSON Array Format
OK = os.path.join(TMP, "other-tool.json")
with open(OK, "w") as f:
    f.write('[{"name":"a","ph":"B","pid":1,"tid":1,"ts":0},{"name":"b","ph":"B","pid":1,"tid":1,"ts":1},'
            '{"ph":"E","pid":1,"tid":1,"ts":2},{"name":"a","ph":"E","pid":1,"tid":1,"ts":3}]')
rc, out, err = run("--json", "profile", OK)
j = json.loads(out) if rc == 0 else {}
check(j.get("spans") == 2 and {p["phase"] for p in j.get("phases", [])} == {"a", "b"}, "another tool's trace reads: %d %s" % (rc, err))
rc, out, err = run("profile")
check(rc == 2, "profile without a FILE: usage")
rc, out, err = run("profile", os.path.join(TMP, "missing.json"))
check(rc == 4 and "missing.json" in err, "a missing trace: exit 4")

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
shutil.rmtree(TMP, ignore_errors=True)
print("ok")
