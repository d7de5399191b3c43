"""gpuenv debug fatbin: cuobjdump's --list-elf / --list-ptx lines for the CUDA
libraries of testdata/fatbin, the summary line, --json, and damaged or
non-ELF files (a warning on stderr, exit 1, the other files still listed).

The CUDA parts need /usr/local/cuda/lib64 with the files index.tsv names
(checked by size here; test-fatbin checks their SHA-256); without them only
the other checks run."""
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ["GPUENV_BIN"]
SHARED = os.environ.get("GPUENV_SHARED", "../shared")
DATA = os.path.join(SHARED, "testdata", "fatbin")
CUDA = "/usr/local/cuda/lib64"
failures = []


def run(*args):
    return subprocess.run([BIN, "debug", "fatbin", *args], capture_output=True, text=True,
                          timeout=120)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def read(path):
    with open(path) as f:
        return f.read()


tmp = tempfile.mkdtemp(prefix="gpuenv-cli-fatbin-")
empty = os.path.join(tmp, "empty.so")
text = os.path.join(tmp, "text.so")
cut = os.path.join(tmp, "libcut.so.1")
open(empty, "wb").close()
with open(text, "w") as f:
    f.write("not an ELF file\n")
with open(BIN, "rb") as f:
    head = f.read(4096)
with open(cut, "wb") as f:
    f.write(head)

# usage
r = run()
check(r.returncode == 2 and "no FILE given" in r.stderr, "no FILE -> 2: %r" % r.stderr)
r = run("--elff", BIN)
check(r.returncode == 2 and "did you mean '--elf'" in r.stderr, "option suggestion: %r" % r.stderr)
r = run("--json", "--elf", BIN)
check(r.returncode == 2, "--json with --elf -> 2")
r = run("--help")
check(r.returncode == 0 and r.stdout.startswith("usage: gpuenv debug fatbin"), "--help")

# a file without CUDA code, damaged and non-ELF files
r = run(BIN)
check(r.returncode == 0 and r.stdout == "no CUDA code\n" and r.stderr == "",
      "no CUDA code: %r %r" % (r.stdout, r.stderr))
r = run("--elf", "--ptx", BIN)
check(r.returncode == 0 and r.stdout == "", "--elf on a file without CUDA code prints nothing")
for path, needle in ((empty, "empty file"), (text, "not an ELF file"), (cut, "section header table"),
                     ("/nonexistent/libx.so", "No such file"), (tmp, "directory")):
    r = run("--elf", path, BIN)
    check(r.returncode == 1 and r.stdout == "" and path in r.stderr and needle in r.stderr
          and r.stderr.count("\n") == 1 and "Sanitizer" not in r.stderr,
          "%s: one warning, exit 1: %r" % (path, r.stderr))
r = run(empty, BIN)
check(r.returncode == 1 and r.stdout == BIN + ": no CUDA code\n",
      "the next file is still listed: %r" % r.stdout)
r = run("--json", text, BIN)
check(r.returncode == 1, "--json with a bad file -> 1")
try:
    j = json.loads(r.stdout)
    check(isinstance(j, list) and len(j) == 2, "--json: an array, one object per file")
    check(j[0]["file"] == text and "not an ELF file" in j[0]["error"] and j[0]["cubins"] == [],
          "--json error object: %r" % j[0])
    check(j[1]["error"] is None and j[1]["summary"] == {"sm": [], "ptx": [], "lto": []},
          "--json object without CUDA code: %r" % j[1])
except (ValueError, KeyError, IndexError) as e:
    check(False, "--json output: %s: %r" % (e, r.stdout[:200]))

# the CUDA libraries against cuobjdump's listings
libs = []
if os.path.isdir(CUDA):
    for line in read(os.path.join(DATA, "index.tsv")).splitlines():
        name, sha, size = line.split("\t")
        path = os.path.join(CUDA, name)
        st = os.stat(path) if os.path.exists(path) else None
        check(st is not None and st.st_size == int(size),
              "%s missing or not the %s-byte file the listings were recorded from" % (path, size))
        if st is not None and st.st_size == int(size):
            libs.append((name, path))
else:
    print("note: %s absent: the listings of testdata/fatbin are not compared here" % CUDA)

for name, path in libs:
    for opt, ext in (("--elf", "list-elf"), ("--ptx", "list-ptx")):
        r = run(opt, path)
        want = read(os.path.join(DATA, name + "." + ext))
        check(r.returncode == 0 and r.stdout == want and r.stderr == "",
              "%s %s differs from cuobjdump (%d vs %d lines)"
              % (opt, name, r.stdout.count("\n"), want.count("\n")))
if libs:
    paths = [p for _, p in libs]
    # both options: ELF lines, then PTX lines, file after file
    r = run("--elf", "--ptx", *paths)
    want = "".join(read(os.path.join(DATA, n + ".list-elf")) + read(os.path.join(DATA, n + ".list-ptx"))
                   for n, _ in libs)
    check(r.returncode == 0 and r.stdout == want, "--elf --ptx over all libraries")
    r = run(os.path.join(CUDA, "libcudnn_ops.so.9"))
    check(r.stdout == "sm_75 sm_80 sm_90a sm_100f sm_120f sm_121 ptx: compute_121\n",
          "summary of libcudnn_ops: %r" % r.stdout)
    r = run(os.path.join(CUDA, "libcurand.so.10"), os.path.join(CUDA, "libcufft.so.12"))
    check(r.stdout == "%s/libcurand.so.10: sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_103 sm_120 sm_121 "
          "ptx: compute_121\n%s/libcufft.so.12: sm_75\n" % (CUDA, CUDA),
          "summary of two files: %r" % r.stdout)
    r = run("--json", *paths)
    check(r.returncode == 0, "--json over all libraries")
    j = json.loads(r.stdout)
    for (name, _), obj in zip(libs, j):
        ne = read(os.path.join(DATA, name + ".list-elf")).count("\n")
        np = read(os.path.join(DATA, name + ".list-ptx")).count("\n")
        check(len(obj["cubins"]) == ne and len(obj["ptx"]) == np and obj["error"] is None,
              "--json %s: %d cubins / %d PTX, cuobjdump %d / %d"
              % (name, len(obj["cubins"]), len(obj["ptx"]), ne, np))
    lt = [o for o in j if o["file"].endswith("libcublasLt.so.13")][0]
    check("sm_90a" in lt["summary"]["sm"] and "sm_100a" in lt["summary"]["sm"]
          and "sm_120f" in lt["summary"]["sm"], "libcublasLt variants: %r" % lt["summary"])
    c = [x for x in lt["cubins"] if x["arch"] == "sm_90a"][0]
    check(c["sm"] == 90 and c["variant"] == "a" and c["compressed"] is True and c["version"] == "1.8"
          and c["size"] > 0 and c["uncompressed_size"] > c["size"], "a cubin entry: %r" % c)

# a file name that is not UTF-8: --json keeps it, escaped (\xHH) as
# docs/probe-schema.md "Strings" says (json_string used to drop it)
bad = os.path.join(tmp.encode(), b"caf\xe9.so")
with open(bad, "wb") as f:
    f.write(b"not an ELF file at all")
r = subprocess.run([BIN, "debug", "fatbin", "--json", bad], capture_output=True, timeout=60)
try:
    jb = json.loads(r.stdout.decode("utf-8"))
except ValueError:
    jb = None
check(isinstance(jb, list) and len(jb) == 1 and (jb[0].get("file") or "").endswith("/caf\\xe9.so")
      and "caf\\xe9.so" in (jb[0].get("error") or ""),
      "non-UTF-8 file name in --json: %r" % r.stdout[-300:])
os.unlink(bad)

for p in (empty, text, cut):
    os.unlink(p)
os.rmdir(tmp)
if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok (%d libraries compared)" % len(libs))
