"""gpuenv debug libs / pyenv / ldd: the stack probe seen from the command
line, over a fake machine built here (a generated ld.so.cache and tiny ELF
files with chosen DT_NEEDED / RPATH / RUNPATH, a toolkit, a venv with the
h200-env corpus's torch and cuDNN METADATA) and over this machine (ldd's own
answers for a few system binaries).

Exits 77 while cli/debug/debug.c has no rows for these verbs (they are added at
integration)."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

BIN = os.environ["GPUENV_BIN"]
SHARED = os.environ.get("GPUENV_SHARED", "../shared")
failures = []


def run(*args, env=None):
    e = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1"}
    if env:
        e.update(env)
    return subprocess.run([BIN, "debug", *args], capture_output=True, text=True, timeout=120, env=e)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


if run("ldd", "--help").returncode != 0:
    print("gpuenv debug ldd is not registered in cli/debug/debug.c yet: skipped")
    sys.exit(77)


def elf(path, needed=(), soname=None, rpath=None, runpath=None, cls=2):
    """An ET_DYN x86-64 ELF with a PT_LOAD over the whole file and a PT_DYNAMIC."""
    strs = bytearray(b"\0")

    def add(s):
        off = len(strs)
        strs.extend(s.encode() + b"\0")
        return off
    dyn = [(1, add(n)) for n in needed]
    if soname:
        dyn.append((14, add(soname)))
    if rpath:
        dyn.append((15, add(rpath)))
    if runpath:
        dyn.append((29, add(runpath)))
    stroff = 64 + 2 * 56
    dynoff = (stroff + len(strs) + 7) // 8 * 8
    dyn += [(5, stroff), (10, len(strs)), (0, 0)]
    total = dynoff + 16 * len(dyn)
    out = bytearray(b"\x7fELF" + bytes([cls, 1, 1]) + b"\0" * 9)
    out += struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 64, 0, 0, 64, 56, 2, 64, 0, 0)
    out += struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, total, total, 4096)
    out += struct.pack("<IIQQQQQQ", 2, 6, dynoff, dynoff, dynoff, 16 * len(dyn), 16 * len(dyn), 8)
    out += strs + b"\0" * (dynoff - stroff - len(strs))
    for t, v in dyn:
        out += struct.pack("<QQ", t, v)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(out)


def ldcache(path, entries):
    """glibc-ld.so.cache1.1 with (soname, path) entries for x86-64."""
    n = len(entries)
    strs = bytearray()
    offs = []
    base = 48 + 24 * n
    for k, v in entries:
        ko = base + len(strs)
        strs += k.encode() + b"\0"
        vo = base + len(strs)
        strs += v.encode() + b"\0"
        offs.append((ko, vo))
    out = bytearray(b"glibc-ld.so.cache1.1" + struct.pack("<II", n, len(strs)) + struct.pack("<B3xI12x", 2, 0))
    for ko, vo in offs:
        out += struct.pack("<iIIIQ", 0x0303, ko, vo, 0, 0)
    out += strs
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(out)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


root = tempfile.mkdtemp(prefix="gpuenv-cli-stack-")
R = lambda p: root + p  # noqa: E731
SITE = "/venv/lib/python3.12/site-packages"

# the fake machine
ldcache(R("/etc/ld.so.cache"), [("libcudnn.so.8", "/usr/lib/x86_64-linux-gnu/libcudnn.so.8"),
                                ("libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6")])
elf(R("/usr/lib/x86_64-linux-gnu/libc.so.6"), soname="libc.so.6")
elf(R("/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7"), soname="libcudnn.so.8", needed=["libc.so.6"])
os.symlink("libcudnn.so.8.9.7", R("/usr/lib/x86_64-linux-gnu/libcudnn.so.8"))
write(R("/usr/local/cuda-12.8/version.json"),
      '{"cuda": {"version": "12.8.1"}, "libcublas": {"version": "12.8.4.1"}, "cuda_nvcc": {"version": "12.8.93"}}')
elf(R("/usr/local/cuda-12.8/lib64/libcublas.so.12.8.4.1"), soname="libcublas.so.12", needed=["libc.so.6"])
os.symlink("libcublas.so.12.8.4.1", R("/usr/local/cuda-12.8/lib64/libcublas.so.12"))
os.symlink("cuda-12.8", R("/usr/local/cuda"))
elf(R("/app/bin/app.so"), rpath="$ORIGIN/../lib", needed=["libfoo.so.1", "libcudnn.so.8", "libgone.so.3"])
elf(R("/app/lib/libfoo.so.1"), soname="libfoo.so.1", needed=["libc.so.6"])
elf(R("/app/lib32/libbar.so.1"), soname="libbar.so.1", cls=1)
# the venv
for d in ("torch-2.11.0.dist-info", "nvidia_cudnn_cu13-9.19.0.56.dist-info"):
    src = os.path.join(SHARED, "corpus", "h200-env", d, "METADATA")
    os.makedirs(R(SITE + "/" + d))
    shutil.copy(src, R(SITE + "/" + d + "/METADATA"))
write(R("/venv/pyvenv.cfg"), "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n")
write(R(SITE + "/torch/version.py"), "__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\nhip = None\n")
elf(R(SITE + "/torch/lib/libtorch_cuda.so"), rpath="$ORIGIN/../../nvidia/cudnn/lib",
    needed=["libcudnn.so.9", "libc.so.6"])
elf(R(SITE + "/nvidia/cudnn/lib/libcudnn.so.9"), soname="libcudnn.so.9")
write(R(SITE + "/nvidia/cudnn/include/cudnn_version.h"),
      "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 19\n#define CUDNN_PATCHLEVEL 0\n")

# usage
r = run("ldd")
check(r.returncode == 2 and "no FILE given" in r.stderr, "ldd without FILE -> 2: %r" % r.stderr)
r = run("pyenv", "--python", "/x", "--env", "/y")
check(r.returncode == 2 and "exclude each other" in r.stderr, "--python with --env -> 2: %r" % r.stderr)
r = run("libs", "--roots", "/")
check(r.returncode == 2 and "did you mean '--root'" in r.stderr, "option suggestion: %r" % r.stderr)
r = run("pyenv", "--root", root, "--python", "/nope/python3")
check(r.returncode == 1 and "no such Python interpreter" in r.stderr, "--python /nope -> 1: %r" % r.stderr)
r = run("ldd", "--root", root, "/app/none.so")
check(r.returncode == 1 and "/app/none.so" in r.stderr, "ldd of a missing file -> 1: %r" % r.stderr)

# ldd over the fake machine
r = run("ldd", "--root", root, "/app/bin/app.so", env={"LD_LIBRARY_PATH": "/app/lib32"})
check(r.returncode == 1, "a missing dependency -> 1 (%d)" % r.returncode)
out = r.stdout
check("libfoo.so.1 => /app/lib/libfoo.so.1 (rpath $ORIGIN/../lib of /app/bin/app.so)" in out, "rpath line: %r" % out)
check("libcudnn.so.8 => /usr/lib/x86_64-linux-gnu/libcudnn.so.8 (ld.so.cache)" in out, "cache line: %r" % out)
check("libgone.so.3 => not found (needed by /app/bin/app.so)" in out, "missing line: %r" % out)
r = run("ldd", "--root", root, "--json", "/app/bin/app.so")
j = json.loads(r.stdout)
check(len(j) == 1 and j[0]["missing"] == 1, "ldd --json: one binary, one missing")
objs = j[0]["objects"]
check([o["path"] for o in objs] == ["/app/bin/app.so", "/app/lib/libfoo.so.1",
                                    "/usr/lib/x86_64-linux-gnu/libcudnn.so.8",
                                    "/usr/lib/x86_64-linux-gnu/libc.so.6"], "load order: %r" % [o["path"] for o in objs])
needs = {n["name"]: n for n in objs[0]["needs"]}
check(needs["libfoo.so.1"]["how"] == "rpath" and needs["libfoo.so.1"]["rule_of"] == "/app/bin/app.so", "rpath need json")
check(needs["libgone.so.3"]["how"] == "not found" and needs["libgone.so.3"]["path"] is None, "missing need json")
cn = {n["name"]: n for n in objs[2]["needs"]}
check(cn["libc.so.6"]["how"] == "already loaded", "libc reused: %r" % cn["libc.so.6"])

# libs over the fake machine
r = run("libs", "--root", root, "--json", env={"LD_LIBRARY_PATH": "/usr/local/cuda/lib64"})
check(r.returncode == 0, "libs -> 0: %r" % r.stderr)
j = json.loads(r.stdout)
check(len(j["toolkits"]) == 1 and j["toolkits"][0]["version"]["version"] == "12.8.1"
      and j["toolkits"][0]["version"]["source"] == "version.json" and j["toolkits"][0]["nvcc_version"] == "12.8.93",
      "toolkit from version.json: %r" % j["toolkits"])
libs = {l["path"]: l for l in j["libraries"]}
c = libs.get("/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7")
check(c and c["family"] == "cudnn" and c["version"]["version"] == "8.9.7" and c["version"]["source"] == "filename"
      and "ld.so.cache" in c["where"] and c["aliases"] == ["/usr/lib/x86_64-linux-gnu/libcudnn.so.8"],
      "system cuDNN: %r" % c)
c = libs.get("/usr/local/cuda-12.8/lib64/libcublas.so.12.8.4.1")
check(c and set(c["where"]) == {"toolkit", "LD_LIBRARY_PATH"} and c["toolkit"] == "/usr/local/cuda"
      and [v["source"] for v in c["versions"]] == ["filename", "version.json", "soname"], "toolkit cuBLAS: %r" % c)
r = run("libs", "--root", root)
check(r.returncode == 0 and "CUDA 12.8.1 (version.json" in r.stdout, "libs text: %r" % r.stdout[:300])

# pyenv over the venv
r = run("pyenv", "--root", root, "--env", "/venv", "--json")
check(r.returncode == 0, "pyenv -> 0: %r" % r.stderr)
j = json.loads(r.stdout)
e = j["python_envs"][0]
check(e["found_by"] == "--env" and e["kind"] == "venv" and e["python"]["version"] == "3.12.3", "env: %r" % {k: e[k] for k in ("found_by", "kind", "python")})
check([d["normalized"] for d in e["distributions"]] == ["nvidia-cudnn-cu13", "torch"], "dists")
fw = {f["kind"]: f for f in e["frameworks"]}
t = fw["torch"]
check(t["version"] == "2.11.0+cu130" and t["local"] == "cu130" and t["cuda"] == "13.0" and t["gpu"], "torch: %r" % t)
need = t["binaries"][0]["loads"]["objects"][0]["needs"][0]
check(need["path"] == SITE + "/nvidia/cudnn/lib/libcudnn.so.9" and need["how"] == "rpath", "torch loads the wheel's cuDNN: %r" % need)
r = run("libs", "--root", root, "--env", "/venv", "--json")
libs = {l["path"]: l for l in json.loads(r.stdout)["libraries"]}
c = libs.get(SITE + "/nvidia/cudnn/lib/libcudnn.so.9")
check(c and c["dist"] == "nvidia-cudnn-cu13" and c["version"]["version"] == "9.19.0.56"
      and c["version"]["source"] == "metadata" and c["versions"][1]["version"] == "9.19.0", "wheel cuDNN: %r" % c)

# Hangs (issue 7): files the probe finds by itself must be regular files,
# checked before they are opened; a FIFO in their place used to block the
# probe and doctor forever.  A file the user names may still be a pipe.
def run_top(*args, env=None, stdin=None, timeout=30):
    e = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1"}
    if env:
        e.update(env)
    try:
        return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout, env=e,
                              stdin=stdin)
    except subprocess.TimeoutExpired:
        return None


froot = tempfile.mkdtemp(prefix="gpuenv-cli-fifo-")
F = lambda p: froot + p  # noqa: E731
os.makedirs(F("/etc"))
os.mkfifo(F("/etc/ld.so.cache"))
elf(F("/usr/lib/x86_64-linux-gnu/libc.so.6"), soname="libc.so.6")
os.makedirs(F("/fifo/runpath"))
os.makedirs(F("/fifo/llp"))
os.mkfifo(F("/fifo/runpath/libviarunpath.so.1"))
os.mkfifo(F("/fifo/llp/libviallp.so.1"))
os.mkfifo(F("/fifo/llp/libcudnn.so.9"))  # a library family: the inventory reads it
os.mkfifo(F("/fifo/abs.so"))
elf(F("/app/fifo.so"), runpath="/fifo/runpath",
    needed=["libviarunpath.so.1", "libviallp.so.1", "/fifo/abs.so", "libc.so.6"])
r = run_top("probe", "--root", froot, "--json", "--no-fatbin")
check(r is not None, "probe --root with a FIFO ld.so.cache returns")
if r is not None:
    check(r.returncode == 0 and "/etc/ld.so.cache" in r.stdout and "not a regular file" in r.stdout,
          "probe: the FIFO ld.so.cache is a warning: %r %r" % (r.returncode, r.stderr[-300:]))
r = run_top("debug", "libs", "--root", froot, "--json")
check(r is not None and r.returncode == 0, "debug libs with a FIFO ld.so.cache returns 0")
r = run_top("debug", "ldd", "--root", froot, "--json", "/app/fifo.so", env={"LD_LIBRARY_PATH": "/fifo/llp"})
check(r is not None, "ldd through FIFOs (RUNPATH, LD_LIBRARY_PATH, absolute DT_NEEDED) returns")
if r is not None:
    j = json.loads(r.stdout)
    needs = {n["name"]: n for n in j[0]["objects"][0]["needs"]}
    check(needs["libviarunpath.so.1"]["how"] == "not found" and needs["libviallp.so.1"]["how"] == "not found",
          "FIFO candidates are skipped: %r" % needs)
    objs = {o["path"]: o for o in j[0]["objects"]}
    check("/fifo/abs.so" not in objs or objs["/fifo/abs.so"]["error"] is not None,
          "an absolute FIFO DT_NEEDED is not read: %r" % objs.get("/fifo/abs.so"))
# the live doctor with LD_LIBRARY_PATH naming a folder of FIFOs
r = run_top("doctor", env={"LD_LIBRARY_PATH": F("/fifo/llp") + ":" + F("/fifo/runpath")})
check(r is not None, "doctor with FIFOs on LD_LIBRARY_PATH returns")
# a pipe the user names still works: doctor --facts <(gpuenv probe --json)
p = subprocess.Popen([BIN, "probe", "--json", "--root", root, "--no-fatbin"], stdout=subprocess.PIPE,
                     env={"PATH": "/usr/bin:/bin"})
r = run_top("doctor", "--json", "--facts", "/dev/stdin", stdin=p.stdout)
p.stdout.close()
try:
    p.wait(timeout=30)
except subprocess.TimeoutExpired:
    p.kill()
    p.wait()
check(r is not None and r.stdout.lstrip().startswith("{"),
      "doctor --facts from a pipe reads it: %r" % (r and r.stderr[-300:]))
shutil.rmtree(froot)

# Wrong results (issue 7): bytes that are not text (a path or dist-info name
# with invalid UTF-8, a NUL in METADATA) are escaped as docs/probe-schema.md
# "Strings" says (\xHH, \\), never dropped and never written as \u0000.
broot = tempfile.mkdtemp(prefix="gpuenv-cli-bytes-")
bsite = broot.encode() + b"/v\xe9nv/lib/python3.12/site-packages"
os.makedirs(bsite + b"/caf\xe9-1.0.dist-info")
os.makedirs(bsite + b"/plain-2.0.dist-info")
with open(bsite + b"/caf\xe9-1.0.dist-info/METADATA", "wb") as f:
    f.write(b"Metadata-Version: 2.1\nName: caf\xe9\nVersion: 1.0\nRequires-Dist: a\x00b\n\n")
with open(bsite + b"/plain-2.0.dist-info/METADATA", "wb") as f:
    f.write(b"Metadata-Version: 2.1\nName: back\\slash\nVersion: 2.0\n\n")
with open(broot.encode() + b"/v\xe9nv/pyvenv.cfg", "wb") as f:
    f.write(b"home = /usr/bin\nversion = 3.12.3\n")
r = subprocess.run([BIN, "probe", "--root", broot, "--env", b"/v\xe9nv", "--json", "--no-fatbin"],
                   capture_output=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
check(r.returncode == 0, "probe --env of a non-UTF-8 path -> 0: %r" % r.stderr[-300:])
check(b"\\u0000" not in r.stdout, "no \\u0000 in the facts")
try:
    j = json.loads(r.stdout.decode("utf-8"))
except ValueError as e:
    j = {}
    check(False, "probe prints UTF-8 JSON: %s" % e)
envs = j.get("environments") or []
check(len(envs) == 1 and envs[0]["prefix"] == "/v\\xe9nv", "the environment is kept, escaped: %r"
      % [e.get("prefix") for e in envs])
if envs:
    d = {x["name"]: x for x in envs[0]["distributions"]}
    check("caf\\xe9" in d and d["caf\\xe9"]["requires"] == ["a\\x00b"]
          and d["caf\\xe9"]["path"].endswith("/caf\\xe9-1.0.dist-info"),
          "the non-UTF-8 distribution is kept, escaped: %r" % d.get("caf\\xe9"))
    check("back\\\\slash" in d, "a backslash is written as \\\\: %r" % list(d))
shutil.rmtree(broot)

# probe --root / --python / --env of a missing path: an error naming it, not
# a plausible report of an empty machine (and not one that silently lacks
# the toolkits and libraries)
for args, what in ((["--root", "/nonexistent-gpuenv-root"], "no such folder"),
                   (["--root", root, "--env", "/nope"], "no such environment folder"),
                   (["--root", root, "--python", "/nope/bin/python3"], "no such Python interpreter")):
    r = run_top("probe", "--json", *args)
    check(r is not None and r.returncode == 4 and what in r.stderr and r.stdout == "",
          "probe %s -> 4 (an input could not be read) with %r: %r" % (args, what, r and (r.returncode, r.stderr)))
r = run("libs", "--root", "/nonexistent-gpuenv-root")
check(r.returncode == 1 and "no such folder" in r.stderr, "debug libs --root missing -> 1: %r" % r.stderr)

# debug libs --ldcache of a missing or corrupt cache: an error with the file
# and what is wrong (it used to print "ld.so.cache: none" and exit 0)
r = run("libs", "--root", root, "--ldcache", "/etc/missing.cache")
check(r.returncode == 1 and "/etc/missing.cache" in r.stderr and "No such file" in r.stderr,
      "libs --ldcache missing -> 1: %r" % r.stderr)
write(R("/etc/corrupt.cache"), "glibc-ld.so.cache1.1" + "x" * 40)
r = run("libs", "--root", root, "--ldcache", "/etc/corrupt.cache")
check(r.returncode == 1 and "/etc/corrupt.cache" in r.stderr, "libs --ldcache corrupt -> 1: %r" % r.stderr)
r = run("pyenv", "--root", root, "--ldcache", "/etc/corrupt.cache")
check(r.returncode == 1 and "/etc/corrupt.cache" in r.stderr, "pyenv --ldcache corrupt -> 1: %r" % r.stderr)

# absolute symlinks inside a --root tree resolve inside the tree, never
# against the host (issue 7)
aroot = tempfile.mkdtemp(prefix="gpuenv-cli-abslink-")
A = lambda p: aroot + p  # noqa: E731
write(A("/usr/local/cuda-12.8/version.json"), '{"cuda": {"version": "12.8.1"}}')
elf(A("/usr/local/cuda-12.8/lib64/libcublas.so.12.8.4.1"), soname="libcublas.so.12")
os.symlink("/usr/local/cuda-12.8", A("/usr/local/cuda"))
write(A("/srv/venv-real/pyvenv.cfg"), "home = /usr/bin\nversion = 3.12.3\n")
write(A("/srv/venv-real/lib/python3.12/site-packages/abslink-1.0.dist-info/METADATA"),
      "Name: abslink\nVersion: 1.0\n\n")
os.makedirs(A("/opt"))
os.symlink("/srv/venv-real", A("/opt/venv"))
r = run("libs", "--root", aroot, "--json")
check(r.returncode == 0, "libs over absolute links -> 0: %r" % r.stderr)
tks = json.loads(r.stdout)["toolkits"] if r.returncode == 0 else []
check(len(tks) == 1 and tks[0]["realpath"] == "/usr/local/cuda-12.8"
      and "/usr/local/cuda" in [tks[0]["path"]] + tks[0]["aliases"],
      "/usr/local/cuda -> /usr/local/cuda-12.8 (absolute) resolves in the tree: %r" % tks)
r = run("pyenv", "--root", aroot, "--env", "/opt/venv", "--json")
check(r.returncode == 0, "pyenv --env through an absolute link -> 0: %r" % r.stderr)
if r.returncode == 0:
    e = json.loads(r.stdout)["python_envs"][0]
    check([d["name"] for d in e["distributions"]] == ["abslink"] and e["python"]["version"] == "3.12.3",
          "the venv behind /opt/venv -> /srv/venv-real: %r" % e["distributions"])
shutil.rmtree(aroot)

# this machine: ldd's own answers
for b in ("/usr/bin/ls", "/usr/lib/x86_64-linux-gnu/libcurl.so.4", "/usr/local/cuda/lib64/libcublas.so.13"):
    if not os.path.exists(b):
        continue
    real = subprocess.run(["ldd", b], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}).stdout
    want = {}
    for line in real.splitlines():
        if " => " in line:
            name, rest = line.strip().split(" => ", 1)
            want[name] = rest.split(" (0x")[0]
    r = run("ldd", b)
    got = {}
    for line in r.stdout.splitlines():
        if " => " in line:
            name, rest = line.strip().split(" => ", 1)
            got.setdefault(name, rest.split(" (")[0])
    for name, path in want.items():
        check(got.get(name) == path, "%s: %s: ldd %s, gpuenv %s" % (b, name, path, got.get(name)))
r = run("libs")
check(r.returncode == 0, "libs on this machine -> 0: %r" % r.stderr)

shutil.rmtree(root)
if failures:
    print("%d failures" % len(failures))
    sys.exit(1)
print("all stack CLI checks passed")
