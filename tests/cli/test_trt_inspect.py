"""gpuenv trt inspect (issue 24, items 1 and 2; docs/trt.md).

- Every model .onnx file of Debian's libonnx-testdata equals what python3-onnx
  reads from it (onnx.load(..., load_external_data=False)): IR version,
  opsets, producer, inputs without initializers, outputs, dtypes, shapes,
  operator counts (subgraphs included), node and initializer counts.  The
  models are counted; none is skipped (SKIPPED below lists any, with why).
- ../shared/testdata/onnx (torch 2.11 exports, both exporters, external data)
  equals its truth.json.
- The models of tests/cli/onnx_models.py (subgraphs, domains, odd types, IR 3
  initializer inputs, external data) equal the oracle too.
- A small model cut at every offset: exit 4 with FILE:OFFSET exactly when
  protobuf refuses the bytes (or no graph is left), else equal to the oracle.
- Hostile files: a length past the end, a bad varint, groups (wire types 3
  and 4), deep nesting (types and subgraphs), 10^6 inputs, external data
  outside the folder (.., absolute, a symlink), missing or too short: exit 4
  with FILE:OFFSET and what is wrong, no crash, bounded memory (peak RSS of
  the child from wait4).
- A 1 GB model (a sparse file: the raw_data initializer is a hole) inspected
  in bounded memory; the reader's time is checked in-process by
  tests/unit/test_onnx.c and measured in docs/benchmarks.md.
"""
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
try:
    import onnx
    from onnx import TensorProto
    from google.protobuf.message import DecodeError
    import onnx_models as om
    import onnx_oracle
except ImportError as e:  # scripts/dev test installs python3-onnx
    print("FAIL: python3-onnx is needed (apt-get install python3-onnx libonnx-testdata): %s" % e)
    sys.exit(1)

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.path.abspath(os.environ.get("GPUENV_SHARED", os.path.join(SRC, "..", "shared")))
TESTDATA = "/usr/share/libonnx-testdata/data"
# models of libonnx-testdata the comparison leaves out, with the reason (none so far)
SKIPPED = {}

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-trt-test-")


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, cwd=TMP):
    """exit status, stdout, stderr and the child's peak RSS in KiB"""
    p = subprocess.Popen([BIN, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
    out, err = p.communicate(timeout=600)
    # the child is reaped by communicate(); its rusage comes from wait4 only
    # when we reap it, so measure with a second child where RSS matters
    return p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def run_rss(*args):
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        try:
            os.execv(BIN, [BIN, *args])
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), ru.ru_maxrss


def inspect(*paths):
    rc, out, err = run("trt", "inspect", "--json", *paths)
    try:
        return rc, json.loads(out) if out.strip() else None, err
    except ValueError:
        return rc, None, err


# ---- the oracle (tests/cli/onnx_oracle.py: what python3-onnx reads) ------------
oracle, ours, diff = onnx_oracle.oracle, onnx_oracle.ours, onnx_oracle.diff


def compare_many(paths, what):
    """inspect paths in batches (one process each: the test build starts slowly)"""
    ok = 0
    for i in range(0, len(paths), 100):
        batch = paths[i:i + 100]
        rc, js, err = inspect(*batch)
        check(rc == 0 and isinstance(js, list) and len(js) == len(batch),
              "%s: batch %d: exit %d %s" % (what, i, rc, err[-500:]))
        for p, j in zip(batch, js or []):
            m = onnx.load(p, load_external_data=False)
            d = diff(ours(j), oracle(m))
            check(not d and j["path"] == p, "%s: %s: %s" % (what, p, "; ".join(d)[:800]))
            ok += not d
    return ok


# ---- 1. libonnx-testdata against python3-onnx -----------------------------------
models = sorted(glob.glob(os.path.join(TESTDATA, "**", "*.onnx"), recursive=True))
check(len(models) > 1000, "libonnx-testdata: %d models found under %s (apt-get install libonnx-testdata)"
      % (len(models), TESTDATA))
todo = [p for p in models if os.path.relpath(p, TESTDATA) not in SKIPPED]
t0 = time.monotonic()
same = compare_many(todo, "libonnx-testdata")
print("libonnx-testdata: %d models, %d equal to python3-onnx %s, %d skipped (%.1f s)"
      % (len(models), same, onnx.__version__, len(models) - len(todo), time.monotonic() - t0))
check(same == len(todo), "libonnx-testdata: %d of %d differ" % (len(todo) - same, len(todo)))

# ---- 2. torch 2.11 exports against truth.json ---------------------------------------
tdir = os.path.join(SHARED, "testdata", "onnx")
truth = json.load(open(os.path.join(tdir, "truth.json")))
check(len(truth) == 4, "truth.json: %d models" % len(truth))
for name, t in sorted(truth.items()):
    p = os.path.join(tdir, name)
    rc, j, err = inspect(p)
    check(rc == 0 and j, "%s: exit %d %s" % (name, rc, err))
    if not j:
        continue
    want_values = lambda vs: [{"name": v["name"], "dtype": v["elem_type"], "shape": v["dims"]} for v in vs]
    got = {"ir_version": j["ir_version"], "opsets": j["opset"], "producer": j["producer"],
           "inputs": j["inputs"], "outputs": j["outputs"], "n_nodes": j["nodes"],
           "ops": sorted(j["operators"]), "n_initializers": j["initializers"]["count"], "bytes": j["file_size"]}
    want = {"ir_version": t["ir_version"], "opsets": t["opsets"], "producer": t["producer"],
            "inputs": want_values(t["inputs"]), "outputs": want_values(t["outputs"]), "n_nodes": t["n_nodes"],
            "ops": sorted(t["ops"]), "n_initializers": t["n_initializers"], "bytes": t["bytes"]}
    d = diff(got, want)
    check(not d, "%s: differs from truth.json: %s" % (name, "; ".join(d)))
    ext = j["initializers"]["external"]
    if name.endswith("_dynamo.onnx"):
        data = p + ".data"
        f = ext["files"][0] if ext["files"] else {}
        check(len(ext["files"]) == 1 and f["location"] == name + ".data" and f["path"] == data
              and f["file_size"] == os.path.getsize(data) and f["bytes"] <= f["file_size"]
              and ext["tensors"] == f["tensors"] > 0,
              "%s: external data %r" % (name, ext))
    else:
        check(ext == {"tensors": 0, "bytes": 0, "files": []}, "%s: no external data: %r" % (name, ext))
    # the text view says the same
    rc, out, err = run("trt", "inspect", p)
    check(rc == 0 and "IR version %d" % t["ir_version"] in out
          and all(v["name"] in out for v in t["inputs"]) and "dynamic" in out,
          "%s: text output: %s" % (name, out[:300]))

# ---- 3. the models of onnx_models.py ------------------------------------------------
made = []
for name, m in om.all_models().items():
    p = os.path.join(TMP, name + ".onnx")
    onnx.save(m, p)
    made.append(p)
with open(os.path.join(TMP, "external.onnx.data"), "wb") as f:
    f.write(b"\0" * 16)
check(compare_many(made, "onnx_models") == len(made), "onnx_models.py's models")
rc, j, err = inspect(os.path.join(TMP, "subgraphs.onnx"))
check(rc == 0 and j["operators"].get("com.example.FusedThing") == 1 and j["subgraph_nodes"] == 5
      and j["operators"]["Identity"] == 2, "subgraph operators counted: %r" % (j and j["operators"]))
rc, j, err = inspect(os.path.join(TMP, "odd_types.onnx"))
byname = {v["name"]: v for v in (j or {}).get("inputs", [])}
check(byname.get("noshape", {}).get("shape", 0) is None and byname["unknown"]["shape"] == [None, 5]
      and byname["scalar"]["shape"] == [] and byname["notype"] == {"name": "notype", "dtype": None,
                                                                   "shape": None, "type": None},
      "shapes: none, unknown dim, scalar, no type: %r" % byname)
rc, out, err = run("trt", "inspect", os.path.join(TMP, "odd_types.onnx"))
check("no shape" in out and "[?, 5]" in out, "text: no shape, unknown dim: %s" % out)
rc, j, err = inspect(os.path.join(TMP, "external.onnx"))
check(rc == 0 and j["initializers"]["external"]["files"][0]["bytes"] == 16, "external data: %r" % j)

# ---- 4. a small model cut at every offset --------------------------------------------
small = om.conv_dynbatch().SerializeToString()
cut = os.path.join(TMP, "cut")
os.mkdir(cut)
paths, expect = [], {}
for n in range(len(small)):
    p = os.path.join(cut, "c%05d.onnx" % n)
    with open(p, "wb") as f:
        f.write(small[:n])
    paths.append(p)
    try:
        m = onnx.ModelProto.FromString(small[:n])
        expect[p] = oracle(m) if m.HasField("graph") else "no graph"
    except DecodeError:
        expect[p] = "refused"
got_ok, got_err = {}, {}
for i in range(0, len(paths), 200):
    rc, js, err = inspect(*paths[i:i + 200])
    for j in js or []:
        got_ok[j["path"]] = j
    for line in err.splitlines():
        mm = re.match(r"gpuenv: (\S+\.onnx):(\d+): (.+)", line)
        if mm:
            got_err[mm.group(1)] = (int(mm.group(2)), mm.group(3))
nref = 0
for n, p in enumerate(paths):
    e = expect[p]
    if isinstance(e, dict):
        check(p in got_ok and not diff(ours(got_ok[p]), e), "cut at %d: protobuf reads it, gpuenv: %r"
              % (n, got_err.get(p)))
    else:
        nref += 1
        check(p in got_err and p not in got_ok and got_err[p][0] <= n,
              "cut at %d: %s by protobuf; gpuenv: %r" % (n, e, got_err.get(p) or "read it"))
print("cut at every offset: %d files, %d refused with FILE:OFFSET" % (len(paths), nref))
check(nref > len(paths) // 2, "most cuts are refused")


# ---- 5. hostile files --------------------------------------------------------------------
def hostile(name, data, want, max_rss_kib=200 * 1024):
    p = os.path.join(TMP, name)
    with open(p, "wb") as f:
        f.write(data)
    rc, out, err = run("trt", "inspect", p)
    ok = rc == 4 and re.search(re.escape(p) + r":\d+: ", err) and re.search(want, err) and "Sanitizer" not in err
    check(ok, "%s: exit 4 with FILE:OFFSET and /%s/: exit %d %s" % (name, want, rc, err[-400:]))
    rc, rss = run_rss("trt", "inspect", p)
    check(rc == 4 and rss < max_rss_kib, "%s: peak RSS %d KiB (at most %d), exit %d" % (name, rss, max_rss_kib, rc))
    return err


F, M = om.field, om.msg
graph_ok = M(7, M(11, M(1, b"x")))
hostile("past_end.onnx", F(1, 0, value=8) + F(7, 2)[:1] + om.varint(1000) + b"\x0a\x01", "past the end")
hostile("past_end_inner.onnx", F(1, 0, value=8) + M(7, M(11, b"\x0a\x50x")), "past the end")
hostile("bad_varint.onnx", F(1, 0, value=8) + b"\x08" + b"\xff" * 10 + b"\x01", "malformed varint")
hostile("varint_eof.onnx", F(1, 0, value=8) + b"\x08\xff\xff", "truncated varint")
hostile("group_start.onnx", F(1, 0, value=8) + F(9, 3) + graph_ok, "group")
hostile("group_end.onnx", F(1, 0, value=8) + graph_ok + M(7, F(3, 4)), "group")
hostile("wire7.onnx", b"\x0f" + graph_ok, "wire type")
hostile("field0.onnx", b"\x00\x00" + graph_ok, "field number 0")
hostile("not_onnx.onnx", b"\x08\x08\x10\x01", "no graph")
hostile("text.onnx", b"hello, world\n", r"\S")
hostile("empty.onnx", b"", "empty")
t = M(1, F(1, 0, value=1))
for _ in range(200):
    t = M(4, M(1, t))
hostile("deep_type.onnx", M(7, M(11, M(1, b"x") + M(2, t))), "nested more than 64")
gr = M(1, F(4, 2, b"Relu"))
for _ in range(100):
    gr = M(1, F(4, 2, b"If") + M(5, M(6, gr)))
hostile("deep_graph.onnx", F(1, 0, value=8) + M(7, gr), "nested more than 64")
one = M(11, M(1, b"x"))
hostile("million_inputs.onnx", F(1, 0, value=8) + M(7, one * 1000000), "more than 65536 graph inputs")
hostile("many_dims.onnx", M(7, M(11, M(1, b"x") + M(2, M(1, M(2, M(1, F(1, 0, value=1)) * 5000))))),
        "more than 1024 dims")
hostile("long_name.onnx", M(7, M(11, M(1, b"n" * 70000))), "name of 70000 bytes")

# external data: outside the folder, absolute, a symlink out, missing, too short
inside = os.path.join(TMP, "ext")
os.mkdir(inside)
with open(os.path.join(TMP, "secret.data"), "wb") as f:
    f.write(b"\0" * 64)
with open(os.path.join(inside, "short.data"), "wb") as f:
    f.write(b"\0" * 8)
os.symlink(os.path.join(TMP, "secret.data"), os.path.join(inside, "link.data"))
for name, m, want in (("up.onnx", om.external("../secret.data", 16), r"leaves the model's folder"),
                      ("abs.onnx", om.external(os.path.join(TMP, "secret.data"), 16), "absolute path"),
                      ("link.onnx", om.external("link.data", 16), "outside the model's folder"),
                      ("missing.onnx", om.external("nowhere.data", 16), "No such file"),
                      ("short.onnx", om.external("short.data", 16), "runs past the end"),
                      ("offset.onnx", om.external("short.data", 4, offset=6), "runs past the end"),
                      ("badlen.onnx", om.external("short.data", "12x"), "not a number"),
                      ("noloc.onnx", om.external(None, 4), "no location")):
    p = os.path.join(inside, name)
    onnx.save(m, p)
    rc, out, err = run("trt", "inspect", p)
    check(rc == 4 and re.search(re.escape(p) + r":\d+: tensor 'w'", err) and re.search(want, err),
          "external %s: exit 4 /%s/: %d %s" % (name, want, rc, err))
onnx.save(om.external("short.data"), os.path.join(inside, "tofile.onnx"))
rc, j, err = inspect(os.path.join(inside, "tofile.onnx"))
check(rc == 0 and j["initializers"]["external"]["bytes"] == 8, "no length: to the end of the file: %r %s" % (j, err))

# ---- 6. a 1 GB model: a sparse file, the weights a hole ----------------------------------
N = 1 << 30
big = os.path.join(TMP, "big.onnx")
om.write_sparse_model(big, N)
t0 = time.monotonic()
rc, j, err = inspect(big)
dt = time.monotonic() - t0
check(rc == 0 and j["initializers"]["bytes"] == N and j["inputs"][0]["shape"] == ["batch", N // 4]
      and j["operators"] == {"MatMul": 1} and j["opset"] == {"ai.onnx": 18},
      "1 GB model: %d %s %s" % (rc, err, j and {k: j[k] for k in ("inputs", "initializers")}))
rc_small, rss_small = run_rss("trt", "inspect", os.path.join(TMP, "conv_dynbatch.onnx"))
rc, rss = run_rss("trt", "inspect", big)
print("1 GB model: %.3f s for the whole process (test build); peak RSS %d KiB (a 1 KB model: %d KiB)"
      % (dt, rss, rss_small))
check(rc == 0 and rss < rss_small + 64 * 1024, "1 GB model: peak RSS %d KiB, a small one %d KiB" % (rss, rss_small))

# ---- 7. usage ----------------------------------------------------------------------------
rc, out, err = run("trt", "inspect")
check(rc == 2 and "no MODEL" in err, "no model: exit 2: %d %s" % (rc, err))
rc, out, err = run("trt", "inspect", "--frobnicate", "x.onnx")
check(rc == 2, "unknown option: exit 2: %d" % rc)
rc, out, err = run("trt", "inspect", os.path.join(TMP, "none.onnx"))
check(rc == 4 and "none.onnx" in err, "missing model: exit 4: %d %s" % (rc, err))
rc, out, err = run("trt", "inspect", TMP)
check(rc == 4, "a folder: exit 4: %d %s" % (rc, err))
rc, out, err = run("trt", "inspekt")
check(rc == 2 and "inspect" in err, "typo: suggestion: %d %s" % (rc, err))
for args in (["trt", "--help"], ["trt", "inspect", "--help"]):
    rc, out, err = run(*args)
    check(rc == 0 and "inspect" in out and "usage:" in out, "%s: %d" % (" ".join(args), rc))

shutil.rmtree(TMP, ignore_errors=True)
print("ok" if not failures else "%d failures" % len(failures))
sys.exit(1 if failures else 0)
