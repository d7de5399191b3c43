"""gpuenv diagnose: every signature of data/kb/diagnose.toml has a log under
tests/fixtures/logs/<id>.log that produces exactly that id; a clean log gives
exit 0; real-looking mixed logs give their ids; facts make fixes concrete;
exit statuses and --json."""
import json
import os
import subprocess
import sys
import tempfile
import tomllib

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC") or os.path.join(os.path.dirname(__file__), "..", "..")
LOGS = os.path.join(SRC, "tests", "fixtures", "logs")
failures = []


def run(*args, stdin=None):
    return subprocess.run([BIN, *args], capture_output=True, text=True, input=stdin, timeout=60)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def ids(r):
    try:
        return [f["id"] for f in json.loads(r.stdout)["findings"]]
    except (ValueError, KeyError) as e:
        return "bad JSON (%s): %r %r" % (e, r.stdout[:200], r.stderr[:200])


with open(os.path.join(SRC, "data", "kb", "diagnose.toml"), "rb") as f:
    sigs = tomllib.load(f)["signature"]
check(len(sigs) >= 30, "at least 30 signatures (%d)" % len(sigs))

# one fixture per signature, each producing exactly its id
for s in sigs:
    path = os.path.join(LOGS, s["id"] + ".log")
    if not os.path.exists(path):
        check(False, "fixture %s.log exists" % s["id"])
        continue
    r = run("--json", "diagnose", path)
    check(r.returncode == 1, "%s: exit 1 (got %d: %s)" % (s["id"], r.returncode, r.stderr[:200]))
    check(ids(r) == [s["id"]], "%s.log gives exactly [%s], got %s" % (s["id"], s["id"], ids(r)))
    if r.returncode == 1:
        f = json.loads(r.stdout)["findings"][0]
        check(f["line"] >= 1 and f["match"] and f["cause"] and f["fix"] and f["source"]["source"],
              "%s: line, match, cause, fix and source" % s["id"])
        check("{" not in f["cause"] and "{" not in f["fix"],
              "%s: placeholders filled: %r / %r" % (s["id"], f["cause"], f["fix"]))
print("signatures with a fixture:", len(sigs))

# docs/diagnose.md lists every signature
with open(os.path.join(SRC, "docs", "diagnose.md")) as f:
    doc = f.read()
for s in sigs:
    check("| `%s` |" % s["id"] in doc, "docs/diagnose.md lists %s" % s["id"])

# no fixture without a signature
known = {s["id"] for s in sigs}
for name in sorted(os.listdir(LOGS)):
    if name.endswith(".log") and not name.startswith(("mixed-", "clean")):
        check(name[:-4] in known, "fixture %s names a signature" % name)

# nothing known -> exit 0, a line saying so
r = run("diagnose", os.path.join(LOGS, "clean.log"))
check(r.returncode == 0 and "no known failure" in r.stdout, "clean log -> 0: %r" % r.stdout)
r = run("--json", "diagnose", os.path.join(LOGS, "clean.log"))
check(r.returncode == 0 and json.loads(r.stdout)["findings"] == [], "clean log JSON")
r = run("diagnose", "-", stdin="")
check(r.returncode == 0, "empty stdin -> 0")

# real-looking mixed logs
r = run("--json", "diagnose", os.path.join(LOGS, "mixed-rtx5090.log"))
check(r.returncode == 1 and ids(r) == ["torch-arch-unsupported", "no-kernel-image"],
      "mixed-rtx5090: %s" % ids(r))
if r.returncode == 1:
    f = json.loads(r.stdout)["findings"]
    check(f[0]["line"] == 8 and f[0]["count"] == 2 and f[0]["lines"] == [8, 14], "repeat lines %s" % f[0])
    check(f[1]["line"] == 24 and f[1]["count"] == 2, "no-kernel-image at line 24, twice: %s" % f[1])
    # without facts, the log's own words make the fix concrete enough
    check("cu128" in f[0]["fix"] and not f[0]["fix_from_facts"], "fix from the log: %r" % f[0]["fix"])
r = run("--json", "diagnose", os.path.join(LOGS, "mixed-cluster.log"))
check(ids(r) == ["cuda-oom", "nccl-timeout", "gpu-fell-off-bus"], "mixed-cluster: %s" % ids(r))

# facts make the fix concrete, as the issue words it
want = ("your GPU is sm_120; your torch 2.5.1+cu124 carries sm_50..sm_90 and no PTX: "
        "install a cu128 build")
r = run("diagnose", os.path.join(LOGS, "no-kernel-image.log"),
        "--facts", os.path.join(LOGS, "facts-rtx5090.json"))
check(r.returncode == 1 and want in r.stdout and "from this machine's facts" in r.stdout,
      "facts file -> concrete fix: %r" % r.stdout)
r = run("--json", "diagnose", os.path.join(LOGS, "no-kernel-image.log"),
        "--gpu", "RTX 5090", "--torch", "2.5.1+cu124", "--driver", "570.133.07")
f = json.loads(r.stdout)["findings"][0] if r.returncode == 1 else {}
check(want in f.get("fix", "") and f.get("fix_from_facts") is True, "facts by hand: %r" % f)
# an old driver: the pick says to upgrade it too
r = run("--json", "diagnose", os.path.join(LOGS, "no-kernel-image.log"),
        "--gpu", "RTX 5090", "--torch", "2.5.1+cu124", "--driver", "535.104.05")
f = json.loads(r.stdout)["findings"][0] if r.returncode == 1 else {}
check("after upgrading the driver to >= 570.26" in f.get("fix", ""), "driver upgrade named: %r" % f)
r = run("--json", "diagnose", os.path.join(LOGS, "torch-driver-too-old.log"))
f = json.loads(r.stdout)["findings"][0]
check("CUDA <= 11.4" in f["fix"] and "11.4" in f["cause"], "11040 read as CUDA 11.4: %r" % f)
r = run("--json", "diagnose", os.path.join(LOGS, "cuda-oom.log"),
        "--facts", os.path.join(LOGS, "facts-rtx5090.json"))
f = json.loads(r.stdout)["findings"][0]
check("NVIDIA GeForce RTX 5090 has 31.8 GiB" in f["fix"], "memory from facts: %r" % f["fix"])
r = run("--json", "diagnose", os.path.join(LOGS, "nvcc-unsupported-arch.log"))
f = json.loads(r.stdout)["findings"][0]
check("CUDA 12.8 or newer" in f["fix"] and "570.26" in f["fix"], "nvcc fix from the KB: %r" % f["fix"])
r = run("diagnose", os.path.join(LOGS, "torch-cpu-only.log"), "--gpu", "H200", "--driver", "580.159.04")
check("cu130" in r.stdout and "from this machine's facts" in r.stdout, "CPU torch on an H200: %r" % r.stdout)

# TensorRT's Half2 message: the fix follows the GPU (issue 24 item 7): a T4
# runs FP16 fast, so its fix keeps --fp16; a P4 (6.1) does not
HALF2 = "[TRT] Half2 support requested on hardware without native FP16 support, performance will be negatively affected.\n"
for gpu, want, unwanted in (("T4", "has fast FP16", "FP32"), ("P4", "build the engine in FP32", "keep --fp16")):
    r = run("--json", "diagnose", "--gpu", gpu, "-", stdin=HALF2)
    f = json.loads(r.stdout)["findings"][0] if r.returncode == 1 else {}
    check(f.get("id") == "trt-half2" and want in f.get("fix", "") and unwanted not in f.get("fix", ""),
          "Half2 on a %s: %r" % (gpu, f))

# human output: file:line: id: title, the matched line, cause, fix, source
r = run("diagnose", os.path.join(LOGS, "cudnn-lib-missing.log"))
check(r.returncode == 1 and "cudnn-lib-missing.log:8: cudnn-lib-missing: cuDNN library not found" in r.stdout
      and "  | ImportError: libcudnn.so.8" in r.stdout and "  cause: " in r.stdout
      and "  fix: " in r.stdout and "  source: diagnose.toml:" in r.stdout, "human output: %r" % r.stdout)
# stdin
with open(os.path.join(LOGS, "cuda-oom.log")) as f:
    r = run("--json", "diagnose", stdin=f.read())
check(r.returncode == 1 and ids(r) == ["cuda-oom"] and json.loads(r.stdout)["file"] == "<stdin>", "stdin")

# usage -> 2; an input that cannot be read -> 4 (docs/exit-codes.md: was 2,
# which the one table keeps for a bad command line)
r = run("diagnose", "/nonexistent/log")
check(r.returncode == 4 and "/nonexistent/log" in r.stderr, "missing log -> 4: %r" % r.stderr)
r = run("diagnose", "a.log", "b.log")
check(r.returncode == 2, "two logs -> 2")
r = run("diagnose", "--facts", "/nonexistent.json", os.path.join(LOGS, "clean.log"))
check(r.returncode == 4, "missing facts -> 4")
r = run("diagnose", "--facts", os.path.join(LOGS, "clean.log"), os.path.join(LOGS, "clean.log"))
check(r.returncode == 4, "facts that are not JSON -> 4: %r" % r.stderr)
r = run("diagnose", "--gpu", "Voodoo 5", os.path.join(LOGS, "clean.log"))
check(r.returncode == 2 and "Voodoo 5" in r.stderr, "unknown GPU -> 2")
r = run("diagnose", "--driver", "new", os.path.join(LOGS, "clean.log"))
check(r.returncode == 2, "bad driver -> 2")
r = run("diagnose", "--factz", "x")
check(r.returncode == 2 and "did you mean '--facts'" in r.stderr, "option suggestion")
r = run("diagnose", "--help")
check(r.returncode == 0 and "exit status" in r.stdout and "--facts" in r.stdout, "--help")

# --kb-dir: a signature set of one
with tempfile.TemporaryDirectory() as d:
    with open(os.path.join(d, "diagnose.toml"), "w") as f:
        f.write('[[signature]]\nid = "hello"\ntitle = "greeting"\nregex = ["hello (w[a-z]+)"]\n'
                'cause = "said hello to {1}"\nfix = "say goodbye to {1}"\nsource = "a test"\n')
    r = run("--json", "diagnose", "--kb-dir", d, "-", stdin="x\nhello world\n")
    f = json.loads(r.stdout)["findings"] if r.returncode == 1 else []
    check(r.returncode == 1 and [x["id"] for x in f] == ["hello"] and f[0]["cause"] == "said hello to world"
          and f[0]["line"] == 2, "--kb-dir signature: %r %r" % (r.stdout, r.stderr))
    with open(os.path.join(d, "diagnose.toml"), "w") as f:
        f.write('[[signature]]\nid = "bad"\ntitle = "t"\nregex = ["(x"]\ncause = "c"\nfix = "f"\nsource = "s"\n')
    r = run("diagnose", "--kb-dir", d, "-", stdin="x\n")
    check(r.returncode == 4 and "diagnose.toml:1" in r.stderr, "bad regex reported: %r" % r.stderr)

# a large log stays fast enough and is read whole
lines = ["INFO step %d loss 1.234 tokens/s 380000" % i for i in range(200000)]
lines[150000] = "RuntimeError: CUDA error: an illegal memory access was encountered"
r = run("--json", "diagnose", "-", stdin="\n".join(lines) + "\n")
check(r.returncode == 1 and ids(r) == ["illegal-memory-access"] and
      json.loads(r.stdout)["findings"][0]["line"] == 150001 and json.loads(r.stdout)["lines"] == 200000,
      "200000-line log")

# bytes that are not text (issue 7): --json reports what the text mode
# reports, escaped the one documented way (\xHH, \\), and keeps the "file"
# key of a file name that is not UTF-8; the text mode shows a log's escape
# sequences instead of sending them to the terminal
def runb(*args, stdin=None):
    return subprocess.run([BIN, *args], capture_output=True, input=stdin, timeout=60)


bad = b"RuntimeError: CUDA out of memory. Tried \xff\xfe to allocate \x1b[2J\x1b]0;owned\x07 C:\\x\n"
r = runb("--json", "diagnose", "-", stdin=bad)
j = json.loads(r.stdout) if r.returncode == 1 else {}
fs = j.get("findings", [])
check(r.returncode == 1 and [x["id"] for x in fs] == ["cuda-oom"]
      and fs[0]["text"] == "RuntimeError: CUDA out of memory. Tried \\xff\\xfe to allocate \x1b[2J\x1b]0;owned\x07 C:\\\\x",
      "non-UTF-8 line kept in --json: %r %r" % (r.stdout[:400], r.stderr))
r = runb("diagnose", "-", stdin=bad)
check(r.returncode == 1 and b"cuda-oom" in r.stdout and b"\x1b" not in r.stdout and b"\x07" not in r.stdout
      and b"\xff" not in r.stdout and b"Tried \\xff\\xfe to allocate \\x1b[2J\\x1b]0;owned\\x07 C:\\\\x" in r.stdout,
      "text mode escapes the log's bytes: %r" % r.stdout[:300])
with tempfile.TemporaryDirectory() as d:
    p = os.path.join(os.fsencode(d), b"caf\xe9\x1b[1m.log")
    with open(p, "wb") as f:
        f.write(b"RuntimeError: CUDA out of memory.\n")
    r = runb("--json", "diagnose", p)
    j = json.loads(r.stdout) if r.returncode == 1 else {}
    check(r.returncode == 1 and j.get("file") == os.path.join(d, "caf\\xe9\x1b[1m.log")
          and len(j.get("findings", [])) == 1, "non-UTF-8 file name kept in --json: %r" % r.stdout[:200])
    r = runb("diagnose", p)
    check(r.returncode == 1 and b"caf\\xe9\\x1b[1m.log:1: cuda-oom" in r.stdout and b"\x1b" not in r.stdout,
          "text mode escapes the file name: %r" % r.stdout[:200])

# --torch is checked as --driver is; the log cap is said in the help and in the error
for bad_torch in ("abc", "2", "2.5.1+", "2.5.1+CU124", "x2.5"):
    r = run("diagnose", "--torch", bad_torch, os.path.join(LOGS, "clean.log"))
    check(r.returncode == 2 and "2.5.1+cu124" in r.stderr, "--torch %s -> 2: %r" % (bad_torch, r.stderr))
for good_torch in ("2.5.1", "2.5", "2.5.1+cu124", "2.7.0+cpu"):
    r = run("diagnose", "--torch", good_torch, os.path.join(LOGS, "clean.log"))
    check(r.returncode == 0, "--torch %s accepted: %r" % (good_torch, r.stderr))
r = run("diagnose", "--help")
check("256 MiB" in r.stdout, "--help names the 256 MiB log cap")
with tempfile.TemporaryDirectory() as d:
    big = os.path.join(d, "big.log")
    with open(big, "wb") as f:
        f.truncate((256 << 20) + 1)
    r = run("diagnose", big)
    check(r.returncode == 4 and "256 MiB" in r.stderr and big in r.stderr, "over the cap: %r" % r.stderr)

# real facts from the H200 machine: torch 2.11.0+cu130 has sm_90 cubins, so
# "no kernel image" there is not torch's fault and no torch is suggested
h200 = os.path.join(os.environ["GPUENV_SRC"], "docs", "hardware", "h200-2026-11-29", "probe.json")
r = run("diagnose", "--facts", h200, "-",
        stdin="RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
check(r.returncode == 1 and "no-kernel-image" in r.stdout and "install a cu" not in r.stdout,
      "covered GPU: no torch reinstall suggested: %r" % r.stdout[-400:])

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
