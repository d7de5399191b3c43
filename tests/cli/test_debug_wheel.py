"""gpuenv debug wheel-name / wheel-tags / metadata: the packaging file-name
vectors, pip's edge-case wheels (names, and their dist-info unzipped with
zipfile), the torch dist-info of the corpus, single files, exit statuses."""
import json
import os
import subprocess
import sys
import tempfile
import zipfile

BIN = os.environ["GPUENV_BIN"]
SHARED = os.environ["GPUENV_SHARED"]
failures = []


def run(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


# ---- packaging's utils.json through the CLI --------------------------------
with open(os.path.join(SHARED, "testdata/packaging/utils.json"), encoding="utf-8") as f:
    cases = json.load(f)["cases"]
n = 0
for c in cases:
    kind = c["kind"]
    if not kind.startswith("wheel_filename"):
        continue
    n += 1
    args = ["debug", "wheel-name"] + (["--validate-order"] if c.get("validate_order") else [])
    r = run(*args, "--", c["filename"])
    if kind == "wheel_filename_invalid":
        check(r.returncode == 1 and r.stdout == "" and "invalid wheel file name" in r.stderr
              and r.stderr.count("\n") == 1,
              "%r should be refused in one line: %d %r" % (c["filename"], r.returncode, r.stderr))
        continue
    check(r.returncode == 0, "%r: exit %d %s" % (c["filename"], r.returncode, r.stderr))
    if r.returncode or kind != "wheel_filename":
        continue
    j = json.loads(r.stdout)
    want = {"name": c["name"], "version": c["version"],
            "build": c["build"] or None, "tags": c["tags"]}
    check(j == want, "%r: %r != %r" % (c["filename"], j, want))
check(n == 26, "26 wheel_filename* vectors, found %d" % n)

# ---- pip's edge-case wheels: names --------------------------------------------
WHEELS = os.path.join(SHARED, "testdata/pip-wheels")
bad_names = {"invalid.whl", "invalid_version-2010i-py3-none-any.whl"}
for w in sorted(os.listdir(WHEELS)):
    if not w.endswith(".whl"):
        continue
    r = run("debug", "wheel-name", os.path.join(WHEELS, w))
    if w in bad_names:
        check(r.returncode == 1 and w in r.stderr, "%s should be refused: %r" % (w, r.stderr))
    else:
        check(r.returncode == 0, "%s: %s" % (w, r.stderr))
r = run("debug", "wheel-name", "simplewheel-2.0-1-py2.py3-none-any.whl")
check(json.loads(r.stdout)["build"] == [1, ""], "build tag [1, '']")
r = run("debug", "wheel-name", "simple.dist-0.1-py1-none-invalid.whl")
check(json.loads(r.stdout) == {"name": "simple-dist", "version": "0.1", "build": None,
                               "tags": ["py1-none-invalid"]}, "simple.dist: %s" % r.stdout)

# ---- ... and their dist-info folders ----------------------------------------
with tempfile.TemporaryDirectory() as tmp:
    infos = {}
    for w in sorted(os.listdir(WHEELS)):
        try:
            z = zipfile.ZipFile(os.path.join(WHEELS, w))
        except zipfile.BadZipFile:
            continue
        dest = os.path.join(tmp, w[:-4])
        z.extractall(dest)
        for d in os.listdir(dest):
            if d.endswith(".dist-info"):
                infos[w] = os.path.join(dest, d)
    check(len(infos) == 31, "31 wheels unzip, got %d" % len(infos))
    for w, d in sorted(infos.items()):
        r = run("debug", "metadata", "--validate-record", d)
        if w == "invalid_version-2010i-py3-none-any.whl":
            check(r.returncode == 1 and "METADATA:3:10: Version '2010i' is not a PEP 440 version"
                  in r.stderr, "2010i refused with its line: %r" % r.stderr)
            r = run("debug", "metadata", "--lenient-version", d)
            check(r.returncode == 0 and json.loads(r.stdout)["metadata"]["version_normalized"]
                  is None and "warning:" in r.stderr, "--lenient-version: %r" % r.stderr)
            continue
        check(r.returncode == 0, "%s: %s" % (w, r.stderr))
        if r.returncode:
            continue
        j = json.loads(r.stdout)
        md = j["metadata"]
        if w == "require_invalid_version-1.0-py3-none-any.whl":
            check(md["requires_dist"][0]["valid"] is False and md["warnings"] == 1
                  and "METADATA:4: invalid Requires-Dist 'invalid-version ==2010i'" in r.stderr,
                  "invalid Requires-Dist is a warning: %r" % r.stderr)
        elif w == "complex_dist-0.1-py2.py3-none-any.whl":
            check("unknown Metadata-Version 1.3" in r.stderr and j["wheel"]["tags"] == [],
                  "complex_dist: %r" % r.stderr)
        else:
            check(r.stderr == "", "%s: no warnings: %r" % (w, r.stderr))
        if w == "requires_simple_extra-0.1-py2.py3-none-any.whl":
            q = md["requires_dist"][0]
            check(q["name"] == "simple" and q["specifier"] == "==1.0"
                  and q["marker"] == 'extra == "extra"' and md["provides_extra"] == ["extra"],
                  "requires_simple_extra: %r" % q)
        if w == "console_scripts_uppercase-1.0-py2.py3-none-any.whl":
            check(j["entry_points"] == [{"group": "console_scripts", "name": "cmdName",
                                         "value": "cmdmod:cmd", "module": "cmdmod", "attr": "cmd",
                                         "extras": []}], "entry point case kept: %r"
                  % j["entry_points"])
        if w == "simplewheel-2.0-1-py2.py3-none-any.whl":
            check(j["wheel"]["build"] == [1, ""], "WHEEL Build: %r" % j["wheel"])
        if w == "mypy-0.782-py3-none-any.whl":
            names = sorted(e["name"] for e in j["entry_points"])
            check(names == ["dmypy", "mypy", "stubgen", "stubtest"], "mypy scripts: %r" % names)
            rec = {e["path"]: e for e in j["record"]}
            own = rec.get("mypy-0.782.dist-info/RECORD")
            check(own is not None and own["algorithm"] is None and own["size"] is None,
                  "RECORD lists itself without hash: %r" % own)
            # a RECORD digest matches the file's SHA-256
            ep = rec["mypy-0.782.dist-info/entry_points.txt"]
            r2 = run("debug", "sha256", os.path.join(d, "entry_points.txt"))
            check(r2.stdout.split()[0] == ep["digest_hex"] and ep["size"] == os.path.getsize(
                os.path.join(d, "entry_points.txt")), "RECORD digest and size match the file")

        # the single-file forms agree with the folder form (a few wheels: the
        # sanitizer build starts slowly)
        if w not in ("mypy-0.782-py3-none-any.whl", "simplewheel-2.0-1-py2.py3-none-any.whl",
                     "console_scripts_uppercase-1.0-py2.py3-none-any.whl"):
            continue
        for name, key in (("METADATA", "metadata"), ("WHEEL", "wheel"), ("RECORD", "record"),
                          ("entry_points.txt", "entry_points")):
            p = os.path.join(d, name)
            if not os.path.exists(p):
                continue
            r = run("debug", "metadata", p)
            check(r.returncode == 0 and json.loads(r.stdout) == {key: j[key]},
                  "%s/%s alone: %s" % (w, name, r.stderr))

# ---- the corpus: torch 2.11.0 ------------------------------------------------
r = run("debug", "metadata", os.path.join(SHARED, "corpus/h200-env/torch-2.11.0.dist-info"))
check(r.returncode == 0 and r.stderr == "", "torch: %s" % r.stderr)
j = json.loads(r.stdout)
rd = j["metadata"]["requires_dist"]
check(len(rd) == 17, "torch has 17 Requires-Dist, got %d" % len(rd))
nccl = [q for q in rd if q["name"] == "nvidia-nccl-cu13"]
check(nccl and nccl[0]["specifier"] == "==2.28.9"
      and nccl[0]["marker"] == 'platform_system == "Linux"', "nccl pin: %r" % nccl)
cuda = [q for q in rd if q["name"] == "cuda-toolkit"][0]
check(len(cuda["extras"]) == 11 and cuda["specifier"] == "==13.0.2", "cuda-toolkit: %r" % cuda)
check([q["marker"] for q in rd if q["name"] == "opt-einsum"] == ['extra == "opt-einsum"'],
      "opt-einsum extra")
check(j["metadata"]["requires_python"] == ">=3.10" and j["wheel"]["tags"]
      == ["cp312-cp312-manylinux_2_28_x86_64"] and j["record"] is None, "torch WHEEL")
check(j["metadata"]["description_bytes"] > 1000, "torch description is the body")

# ---- wheel-tags and --target --------------------------------------------------
r = run("debug", "wheel-tags", "cp312-manylinux_2_35_x86_64")
tags = r.stdout.split("\n")[:-1]
check(r.returncode == 0 and len(tags) == 960 and tags[0] == "cp312-cp312-manylinux_2_35_x86_64"
      and tags[-1] == "py30-none-any", "wheel-tags: %d %r" % (len(tags), tags[:1]))
check(tags.index("cp312-cp312-manylinux2014_x86_64") == tags.index(
    "cp312-cp312-manylinux_2_17_x86_64") + 1, "legacy alias right after its PEP 600 tag")
check(tags.index("cp312-cp312-linux_x86_64") == tags.index("cp312-cp312-manylinux1_x86_64") + 1,
      "linux_x86_64 after the manylinux tags")
r = run("debug", "wheel-tags", "--linux-first", "--json", "cp312-manylinux_2_35_x86_64")
check(json.loads(r.stdout)[0] == "cp312-cp312-linux_x86_64", "--linux-first --json")
r = run("debug", "wheel-tags", "cp312-freebsd_14_amd64")
check(r.returncode == 2 and "hint:" in r.stderr, "bad target -> 2 with a hint: %r" % r.stderr)
r = run("debug", "wheel-name", "--target", "cp312-manylinux_2_35_x86_64",
        "torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl")
j = json.loads(r.stdout)
check(r.returncode == 0 and j["compatible"] is True and j["rank"] == tags.index(
    "cp312-cp312-manylinux_2_28_x86_64"), "--target rank: %r" % j)
r = run("debug", "wheel-name", "--target", "cp311-manylinux_2_35_x86_64",
        "torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl")
check(r.returncode == 1 and json.loads(r.stdout)["compatible"] is False
      and json.loads(r.stdout)["rank"] is None, "incompatible -> exit 1")

# ---- usage ----------------------------------------------------------------------
for args in (["wheel-name"], ["wheel-name", "a", "b"], ["metadata"], ["wheel-tags"]):
    r = run("debug", *args)
    check(r.returncode == 2 and "usage:" in r.stderr, "debug %s -> usage error" % " ".join(args))
r = run("debug", "metadata", "/nonexistent/METADATA")
check(r.returncode == 1 and "/nonexistent/METADATA" in r.stderr, "missing file -> 1")
with tempfile.TemporaryDirectory() as tmp:
    r = run("debug", "metadata", tmp)
    check(r.returncode == 1 and "not a .dist-info folder" in r.stderr, "folder without METADATA")
    p = os.path.join(tmp, "METADATA")
    with open(p, "wb") as f:
        f.write(b"Name: x\nVersion: 1\nSummary: caf\xc3\n")
    r = run("debug", "metadata", p)
    check(r.returncode == 0 and json.loads(r.stdout)["metadata"]["summary"] == "caf\ufffd",
          "malformed UTF-8 becomes U+FFFD in the JSON: %r" % r.stdout[:200])

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
