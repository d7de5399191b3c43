"""gpuenv export --format dockerfile | compose on the satellite example
(../shared/examples, locked against the PyTorch-shaped fixture index as
test_lock.py locks it) and on a project whose targets lock cu130 (H200),
cu124 (an RTX 4090 on an R550 driver) and CPU torch:

  - every Dockerfile is read by a small parser of the Dockerfile reference's
    grammar (parser directive, comments, continuations): the instructions and
    their order, the lock and the requirements COPYed and installed (with
    --require-hashes --no-deps and BuildKit's pip cache mount) before the
    source, a non-root numeric USER last; the requirements file it COPYs is
    byte for byte `gpuenv export --target T`; the base image known to the KB
    and `gpuenv preflight --dockerfile` of the generated file says go on facts
    of the target's GPU and driver;
  - the base image the rule picks for each target (the lock's CUDA, the
    target's Python), --base refused with the reason (a CUDA 12 image for a
    cu130 lock, an image whose release notes need a newer driver, another
    Python, a Jetson) and preflight agreeing that the refused image is no-go;
    nothing written on any refusal;
  - Jetson: the l4t-jetpack image of the target's JetPack (ngc.toml's L4T rows),
    preflight go on the Orin's facts; nvidia/cuda and another JetPack refused;
  - Python 3.9 to 3.13, one target each: python:X.Y-slim-bookworm when the
    lock brings the CUDA runtime as wheels, else nvidia/cuda with a uv-managed
    Python; NVIDIA_REQUIRE_CUDA of the lock's CUDA and the GPUs' capability;
    a CPU target gets the python image;
  - FROM tag@digest from image-manifest.json (hand-written, and made by
    `gpuenv image lock` against tests/fixtures/registry_server.py), a
    platform the lock lacks refused, a malformed manifest;
  - the rule over every CUDA build of torch.toml x Python 3.10 / 3.12 x an
    R580 and an R535 driver, against an oracle that reads the KB files;
  - h200 of the satellite example has no lock (no solution), and export says
    so; compose parsed with yaml: one service per target, GPU reservations;
  - compose's Triton service ([tool.gpuenv.triton]): the tritonserver image the
    target's driver runs (preflight --image agrees, newer releases no-go),
    shm_size, ulimits, ports and GPUs as Triton's docs run it, the triton
    check command before the build."""
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile

import yaml

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.environ.get("GPUENV_SHARED", os.path.join(SRC, "..", "shared"))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import registry_server as rs  # noqa: E402
import torch_index  # noqa: E402

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-export-df-")
CACHE = os.path.join(TMP, "cache")


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    e = dict(os.environ)
    e.pop("VIRTUAL_ENV", None)
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=e, timeout=300)
    return p.returncode, p.stdout, p.stderr


URLS = torch_index.build(os.path.join(TMP, "index"))


def lock(project):
    a = ["lock", "--project", project, "--index-url", URLS["pypi"], "--torch-index", URLS["torch-index"],
         "--cache-dir", CACHE]
    text = open(os.path.join(project, "pyproject.toml")).read()
    if 'name = "pytorch"' in text:
        a += ["--source-url", "pytorch=%s/cu118/" % URLS["torch-index"]]
    if 'name = "nvidia-jetpack"' in text:
        a += ["--source-url", "nvidia-jetpack=" + URLS["jetpack"]]
    return run(*a)


# ---- a Dockerfile parser (docs.docker.com/reference/dockerfile) -------------------

def parse_dockerfile(text):
    """(directives, [(INSTRUCTION, args, line)]): parser directives at the top,
    comment lines dropped, backslash continuations joined."""
    lines = text.split("\n")
    directives, i = {}, 0
    while i < len(lines) and lines[i].startswith("#") and "=" in lines[i] and " " not in lines[i][1:].strip().split("=")[0]:
        k, v = lines[i][1:].strip().split("=", 1)
        directives[k.strip().lower()] = v.strip()
        i += 1
    out, cur, start = [], "", 0
    for n in range(i, len(lines)):
        s = lines[n]
        if not cur and (not s.strip() or s.lstrip().startswith("#")):
            continue
        if cur and s.lstrip().startswith("#"):
            continue
        if not cur:
            start = n + 1
        if s.endswith("\\"):
            cur += s[:-1] + " "
            continue
        cur += s
        word, _, rest = cur.strip().partition(" ")
        out.append((word.upper(), " ".join(rest.split()), start))
        cur = ""
    if cur:
        raise ValueError("a continuation at the end of the file")
    return directives, out


def ignored(patterns, path):
    """Docker's .dockerignore: the last matching pattern decides; ! re-includes."""
    verdict = False
    for p in patterns:
        neg = p.startswith("!")
        q = p[1:] if neg else p
        if fnmatch.fnmatch(path, q) or fnmatch.fnmatch(path, q.lstrip("*/")) or path.startswith(q.rstrip("/") + "/"):
            verdict = not neg
    return verdict


def check_dockerfile(name, project, target, path, want_base=None):
    """The parser test; returns the FROM image."""
    text = open(path).read()
    try:
        directives, ins = parse_dockerfile(text)
    except ValueError as e:
        check(False, "%s: %s" % (name, e))
        return None
    words = [w for w, _, _ in ins]
    check(text.startswith("# syntax=docker/dockerfile:1\n") and directives.get("syntax") == "docker/dockerfile:1",
          "%s: the BuildKit syntax directive first" % name)
    check(words.count("FROM") == 1 and words[0] == "FROM", "%s: one FROM, first: %s" % (name, words))
    image = ins[0][1].split()[-1]
    if want_base:
        check(image == want_base, "%s: FROM %s, want %s" % (name, image, want_base))
    lockname, reqname = "pylock.%s.toml" % target, "requirements.%s.txt" % target
    copies = [(k, a) for k, (w, a, _) in enumerate(ins) if w == "COPY"]
    runs = [(k, a) for k, (w, a, _) in enumerate(ins) if w == "RUN"]
    dep = [k for k, a in copies if a.split()[:2] == [lockname, reqname]]
    src = [k for k, a in copies if a.split()[0] == "."]
    pip = [k for k, a in runs if "pip install" in a]
    check(len(dep) == 1 and len(src) == 1 and len(pip) == 1, "%s: one COPY of the lock and requirements, one of the "
          "source, one pip install: %s" % (name, words))
    if len(dep) == 1 and len(src) == 1 and len(pip) == 1:
        check(dep[0] < pip[0] < src[0], "%s: the lock copied and installed before the source" % name)
        a = ins[pip[0]][1]
        check("--require-hashes" in a and "--no-deps" in a and ("-r /opt/gpuenv/" + reqname) in a,
              "%s: hashes enforced, nothing but the lock: %s" % (name, a))
        check("--mount=type=cache,target=/root/.cache/pip" in a, "%s: BuildKit's pip cache mount" % name)
        for f in ins[dep[0]][1].split()[:2]:
            check(os.path.exists(os.path.join(project, f)), "%s: COPY %s: in the build context" % (name, f))
    check(any("python3 -m venv /opt/venv" in a or ("uv venv " in a and a.endswith(" /opt/venv")) for _, a in runs),
          "%s: a venv" % name)
    users = [a for w, a, _ in ins if w == "USER"]
    check(len(users) == 1 and words[-1] == "USER", "%s: USER last: %s" % (name, words[-3:]))
    if users:
        u = users[0].split(":")[0]
        check(u.isdigit() and int(u) != 0, "%s: a numeric non-root USER: %s" % (name, users[0]))
        check(any(("useradd --uid %s " % u) in a for _, a in runs), "%s: the user is made" % name)
    req = os.path.join(os.path.dirname(path), reqname)
    rc, out, _ = run("export", "--project", project, "--target", target)
    check(rc == 0 and os.path.exists(req) and open(req).read() == out,
          "%s: the requirements file it COPYs is `gpuenv export --target %s`" % (name, target))
    lk = open(os.path.join(project, lockname)).read()
    check(out.count("--hash=sha256:") == lk.count("sha256 = "), "%s: a hash for every file of the lock" % name)
    ign = os.path.join(os.path.dirname(path), os.path.basename(path) + ".dockerignore")
    pats = [x for x in open(ign).read().split("\n") if x and not x.startswith("#")] if os.path.exists(ign) else []
    check(".venv" in pats and ".git" in pats, "%s: the .dockerignore beside it leaves out .venv and .git" % name)
    check(not ignored(pats, lockname) and not ignored(pats, reqname) and ignored(pats, ".venv")
          and ignored(pats, "pkg/__pycache__"), "%s: the .dockerignore keeps the lock and the requirements" % name)
    return image


def facts_for(gpu, cc, driver, cuda, machine="x86_64"):
    """A snapshot of one node: the healthy fixture with this GPU and driver."""
    with open(os.path.join(SRC, "tests", "fixtures", "doctor", "healthy", "facts.json")) as f:
        fa = json.load(f)
    g = fa["gpus"][0]
    g.update(name=gpu, compute_capability=cc, sm="sm_" + cc.replace(".", ""), architecture=None,
             pci_device_id=None, device_id=None)
    fa["gpus"] = [g]
    fa["pci"] = []
    fa["host"]["machine"] = machine
    d = fa["driver"]
    maj, mi = cuda.split(".")
    d.update(version=driver, kernel_module=driver, procfs_version=driver, cuda_version=cuda,
             cuda_version_int=int(maj) * 1000 + int(mi) * 10)
    d["procfs"] = d["procfs"].replace("570.133.20", driver)
    p = os.path.join(TMP, "facts-%s.json" % driver)
    with open(p, "w") as f:
        json.dump(fa, f)
    return p


def preflight(path, facts):
    rc, out, err = run("--json", "preflight", "--dockerfile", path, "--facts", facts)
    return rc, (json.loads(out) if out.startswith("{") else {}), err


# ---- the satellite example ----------------------------------------------------------

SAT = os.path.join(TMP, "satellite")
os.makedirs(SAT)
shutil.copy(os.path.join(SHARED, "examples", "satellite-classifier", "pyproject.toml"), SAT)
rc, out, err = lock(SAT)
check(rc == 1 and all(os.path.exists(os.path.join(SAT, "pylock.%s.toml" % t)) for t in ("a100", "t4", "jetson")),
      "satellite: a100, t4 and jetson lock; h200 has no solution: %d %s%s" % (rc, out, err))

FACTS = {
    "a100": facts_for("NVIDIA A100-SXM4-80GB", "8.0", "535.104.05", "12.2"),
    "t4": facts_for("Tesla T4", "7.5", "525.85.12", "12.0"),
    "h200": facts_for("NVIDIA H200", "9.0", "580.159.04", "13.0"),
    "rtx4090": facts_for("NVIDIA GeForce RTX 4090", "8.9", "550.54.15", "12.4"),
}
# the rule: the lock's CUDA (cu118: 11.8), the Ubuntu whose python3 is the target's 3.10
for t, want in (("a100", "nvidia/cuda:11.8.0-runtime-ubuntu22.04"), ("t4", "nvidia/cuda:11.8.0-runtime-ubuntu22.04")):
    df = os.path.join(SAT, "Dockerfile." + t)
    rc, out, err = run("export", "--project", SAT, "--target", t, "--format", "dockerfile", "-o", df)
    check(rc == 0 and os.path.exists(df), "satellite %s: written: %d %s" % (t, rc, err))
    if not os.path.exists(df):
        continue
    image = check_dockerfile("satellite " + t, SAT, t, df, want)
    rc, kbout, err = run("--json", "kb", "image", image)
    check(rc == 0 and kbout.startswith(("{", "[")), "satellite %s: the KB knows %s: %d %s" % (t, image, rc, err))
    rc, pf, err = preflight(df, FACTS[t])
    check(rc == 0 and pf.get("go") is True, "satellite %s: preflight --dockerfile on the target's facts: go: %d %s %s"
          % (t, rc, err, [r.get("message") for r in pf.get("reasons", [])]))
    again = open(df).read()
    rc, out, _ = run("export", "--project", SAT, "--target", t, "--format", "dockerfile")
    check(rc == 0 and out == again, "satellite %s: stdout and -o give the same bytes (deterministic)" % t)

# jetson: the l4t-jetpack image of its JetPack's CUDA (12.6) and Python (3.10), from ngc.toml
JDF = os.path.join(SAT, "Dockerfile.jetson")
L4T = "nvcr.io/nvidia/l4t-jetpack:r36.4.0"
FACTS["jetson"] = facts_for("Jetson AGX Orin", "8.7", "540.4.0", "12.6", machine="aarch64")
rc, out, err = run("export", "--project", SAT, "--target", "jetson", "--format", "dockerfile", "-o", JDF)
check(rc == 0 and os.path.exists(JDF), "jetson: the L4T base is chosen: %d %s" % (rc, err))
if os.path.exists(JDF):
    check_dockerfile("satellite jetson", SAT, "jetson", JDF, L4T)
    text = open(JDF).read()
    check("JetPack 6.1" in text and "L4T R36.4.0" in text and "[ngc.toml:" in text,
          "jetson: the Dockerfile names the JetPack and L4T releases and the KB row")
    check('\nENV NVIDIA_REQUIRE_CUDA="cuda>=12.6,arch>=8.7"\n' in text,
          "jetson: NVIDIA_REQUIRE_CUDA from the JetPack's CUDA and the Orin's 8.7: %s"
          % [x for x in text.split("\n") if "REQUIRE" in x])
    check("--platform linux/arm64" in text, "jetson: built for linux/arm64")
    rc, pf, err = preflight(JDF, FACTS["jetson"])
    check(rc == 0 and pf.get("go") is True, "jetson: preflight --dockerfile on the Orin's facts: go: %d %s %s"
          % (rc, err, [r.get("message") for r in pf.get("reasons", [])]))
rc, out, err = run("export", "--project", SAT, "--target", "jetson", "--format", "dockerfile", "--base",
                   "nvidia/cuda:12.6.3-runtime-ubuntu22.04", "-o", JDF + ".x")
check(rc == 1 and "Jetson" in err and "L4T" in err and not os.path.exists(JDF + ".x"),
      "jetson: an nvidia/cuda --base is refused: %d %s" % (rc, err))
for base, why in (("nvcr.io/nvidia/l4t-jetpack:r35.4.1", "CUDA 11.4"),):
    rc, out, err = run("export", "--project", SAT, "--target", "jetson", "--format", "dockerfile", "--base", base,
                       "-o", JDF + ".x")
    check(rc == 1 and why in err and not os.path.exists(JDF + ".x"), "jetson --base %s: refused (%s): %d %s"
          % (base, why, rc, err))
rc, out, err = run("export", "--project", SAT, "--target", "t4", "--format", "dockerfile", "--base", L4T)
check(rc == 1 and "Jetson devices only" in err, "an L4T --base for an x86_64 T4: refused: %d %s" % (rc, err))

# h200: the example has no solution for it (torchvision ^0.16 has no cp312 wheel)
HDF = os.path.join(SAT, "Dockerfile.h200")
rc, out, err = run("export", "--project", SAT, "--target", "h200", "--format", "dockerfile", "-o", HDF)
check(rc == 4 and "no lock for target h200" in err and not os.path.exists(HDF), "h200: no lock, said so: %d %s" % (rc, err))

# wrong --base for the cu118 targets: another CUDA major, another Python; nothing written
NOPE = os.path.join(SAT, "Dockerfile.nope")
for base, why in (("nvidia/cuda:12.4.1-runtime-ubuntu22.04", "does not match the lock's CUDA 11"),
                  ("nvcr.io/nvidia/pytorch:22.12-py3", "Python is 3.8"),
                  ("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", "conda")):
    rc, out, err = run("export", "--project", SAT, "--target", "t4", "--format", "dockerfile", "--base", base, "-o", NOPE)
    check(rc in (1, 4) and why in err and not os.path.exists(NOPE) and
          not os.path.exists(os.path.join(SAT, "requirements.t4.txt.tmp")), "t4 --base %s: refused (%s): %d %s" % (base, why, rc, err))
rc, out, err = run("export", "--project", SAT, "--target", "t4", "--format", "dockerfile", "--base",
                   "nvidia/cuda:11.8.0-bogus", "-o", NOPE)
check(rc == 2 and not os.path.exists(NOPE), "a tag that does not fit nvidia/cuda's grammar: usage: %d %s" % (rc, err))
# a --base that fits is used, by tag and digest when given one
DIG = "sha256:" + "ab" * 32
rc, out, err = run("export", "--project", SAT, "--target", "a100", "--format", "dockerfile", "--base",
                   "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04@" + DIG)
check(rc == 0 and ("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04@" + DIG) in out, "--base with a digest: %d %s" % (rc, err))

# the image lock (image-manifest.json, docs/image.md): FROM tag@digest, by default from the project's
def manifest(path, entries):
    imgs = []
    for ref, digest, arches in entries:
        reg, rest = ref.split("/", 1)
        repo, tag = rest.rsplit(":", 1)
        imgs.append({"ref": ref, "registry": reg, "repository": repo, "tag": tag, "digest": digest,
                     "platforms": [{"os": "linux", "architecture": a, "digest": "sha256:" + ("%02x" % k) * 32}
                                   for k, a in enumerate(arches)], "components": {}})
    with open(path, "w") as f:
        json.dump({"schema": "gpuenv.image-manifest/1", "images": sorted(imgs, key=lambda x: x["ref"])}, f, indent=2)


D1, D2 = "sha256:" + "1f" * 32, "sha256:" + "2e" * 32
manifest(os.path.join(SAT, "image-manifest.json"),
         [("docker.io/nvidia/cuda:11.8.0-runtime-ubuntu22.04", D1, ["amd64", "arm64"])])
T4DF = os.path.join(SAT, "Dockerfile.t4")
rc, out, err = run("export", "--project", SAT, "--target", "t4", "--format", "dockerfile", "-o", T4DF)
text = open(T4DF).read() if rc == 0 else ""
check(rc == 0 and ("\nFROM nvidia/cuda:11.8.0-runtime-ubuntu22.04@%s\n" % D1) in text and "image lock" in text,
      "the project's image-manifest.json: FROM tag@digest: %d %s" % (rc, err))
if rc == 0:
    check_dockerfile("satellite t4 by digest", SAT, "t4", T4DF, "nvidia/cuda:11.8.0-runtime-ubuntu22.04@" + D1)
    rc, pf, err = preflight(T4DF, FACTS["t4"])
    check(rc == 0 and pf.get("go") is True, "t4 by digest: preflight --dockerfile reads tag@digest: go: %d %s" % (rc, err))
OTHER = os.path.join(TMP, "other-manifest.json")
manifest(OTHER, [("docker.io/nvidia/cuda:11.8.0-runtime-ubuntu22.04", D2, ["amd64"])])
rc, out, err = run("export", "--project", SAT, "--target", "t4", "--format", "dockerfile", "--image-manifest", OTHER)
check(rc == 0 and ("FROM nvidia/cuda:11.8.0-runtime-ubuntu22.04@%s\n" % D2) in out, "--image-manifest FILE: %d %s" % (rc, err))
manifest(OTHER, [("docker.io/nvidia/cuda:11.8.0-runtime-ubuntu22.04", D2, ["arm64"])])
rc, out, err = run("export", "--project", SAT, "--target", "t4", "--format", "dockerfile", "--image-manifest", OTHER,
                   "-o", NOPE)
check(rc == 1 and "no linux/amd64 image" in err and not os.path.exists(NOPE),
      "an image the lock records for arm64 only, for an x86_64 target: refused: %d %s" % (rc, err))
manifest(OTHER, [("docker.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04", D2, ["amd64"])])
rc, out, err = run("export", "--project", SAT, "--target", "t4", "--format", "dockerfile", "--image-manifest", OTHER)
check(rc == 0 and "FROM nvidia/cuda:11.8.0-runtime-ubuntu22.04\n" in out and "no entry for" in err,
      "an image the manifest lacks: by tag, with a warning: %d %s" % (rc, err))
with open(OTHER, "w") as f:
    f.write('{"schema": "gpuenv.image-manifest/1", "images": [ {"ref": 1} ]}')
rc, out, err = run("export", "--project", SAT, "--target", "t4", "--format", "dockerfile", "--image-manifest", OTHER,
                   "-o", NOPE)
check(rc == 4 and "other-manifest.json" in err and not os.path.exists(NOPE), "a malformed image manifest: %d %s" % (rc, err))
os.unlink(os.path.join(SAT, "image-manifest.json"))

# end to end: gpuenv image lock against the fixture registry (docker.io sent to it), then export
blobs = {}
amd = rs.image_manifest(blobs, "amd64", salt="e1")
arm = rs.image_manifest(blobs, "arm64", variant="v8", salt="e1")
INDEX = rs.image_index(blobs, [(amd[0], amd[1], "linux", "amd64", None), (arm[0], arm[1], "linux", "arm64", "v8")])
STATE = os.path.join(TMP, "registry.json")
rs.write_state(STATE, {"blobs": blobs, "tags": {"nvidia/cuda": {"11.8.0-runtime-ubuntu22.04": INDEX}}, "auth": "token"})
proc, port = rs.start(STATE)
try:
    rc, out, err = run("image", "lock", "nvidia/cuda:11.8.0-runtime-ubuntu22.04", "-o",
                       os.path.join(SAT, "image-manifest.json"), "--registry", "docker.io=http://127.0.0.1:%d" % port)
    check(rc == 0, "image lock against the fixture registry: %d %s" % (rc, err))
    rc, out, err = run("export", "--project", SAT, "--target", "a100", "--format", "dockerfile")
    check(rc == 0 and ("\nFROM nvidia/cuda:11.8.0-runtime-ubuntu22.04@%s\n" % INDEX) in out,
          "image lock, then export: FROM tag@the digest the registry serves: %d %s %s" % (rc, err, INDEX))
finally:
    proc.terminate()
    proc.wait()
os.unlink(os.path.join(SAT, "image-manifest.json"))

rc, out, err = run("export", "--project", SAT, "--target", "a100", "--format", "dockerfile", "--base",
                   "nvidia/cuda:11.8.0-runtime-ubuntu22.04@sha256:abc", "-o", NOPE)
check(rc == 2 and "64" in err and not os.path.exists(NOPE), "--base with a malformed digest: usage: %d %s" % (rc, err))

# compose: one service per target of the project
COMPOSE = os.path.join(SAT, "docker-compose.yml")
rc, out, err = run("export", "--project", SAT, "--format", "compose", "-o", COMPOSE)
check(rc == 0 and "Dockerfile.h200" in err, "compose: written, naming the Dockerfiles still to export: %d %s" % (rc, err))
doc = yaml.safe_load(open(COMPOSE)) if os.path.exists(COMPOSE) else {}
svc = doc.get("services", {})
check(set(svc) == {"a100", "t4", "jetson", "h200"}, "compose: a service per target: %s" % list(svc))
for t, s in svc.items():
    b = s.get("build", {})
    check(b.get("context") == "." and b.get("dockerfile") == "Dockerfile." + t, "compose %s: build: %s" % (t, b))
    check(s.get("image") == "satellite-classifier:" + t, "compose %s: image %s" % (t, s.get("image")))
    dev = s.get("deploy", {}).get("resources", {}).get("reservations", {}).get("devices", [])
    check(len(dev) == 1 and dev[0].get("driver") == "nvidia" and dev[0].get("capabilities") == ["gpu"],
          "compose %s: the GPU reservation: %s" % (t, dev))
check(svc.get("jetson", {}).get("platform") == "linux/arm64" and svc.get("t4", {}).get("platform") == "linux/amd64",
      "compose: the targets' platforms")
rc, out, err = run("export", "--project", SAT, "--format", "compose", "--target", "t4")
check(rc == 2, "compose with --target: usage")

# ---- a project with cu130, cu124 and CPU builds --------------------------------------

CTR = os.path.join(TMP, "serve")
os.makedirs(CTR)
with open(os.path.join(CTR, "pyproject.toml"), "w") as f:
    f.write('[project]\nname = "vision-serve"\nversion = "1.0"\nrequires-python = ">=3.10"\n'
            'dependencies = ["torch>=2.6", "numpy"]\n\n[tool.gpuenv]\ntorch-backend = "auto"\n')
    for name, body in (("h200", 'gpu = "H200"\ndriver = "580.159.04"'),
                       ("rtx4090", 'gpu = "RTX 4090"\ndriver = "550.54.15"'),
                       ("cpu", 'gpu = "none"')):
        f.write('\n[tool.gpuenv.targets.%s]\n%s\npython = "3.12"\nplatform = "manylinux_2_28_x86_64"\n' % (name, body))
rc, out, err = lock(CTR)
check(rc == 0, "serve: every target locks: %d %s%s" % (rc, out, err))
os.makedirs(os.path.join(CTR, "docker"))
HDF = os.path.join(CTR, "docker", "Dockerfile.h200")
rc, out, err = run("export", "--project", CTR, "--target", "h200", "--format", "dockerfile", "-o", HDF)
check(rc == 0, "h200 cu130: written: %d %s" % (rc, err))
if rc == 0:
    # -o in a folder of the project: the COPY paths are relative to the context
    text = open(HDF).read()
    check("COPY pylock.h200.toml docker/requirements.h200.txt /opt/gpuenv/" in text,
          "h200: COPY paths from the project directory: %s" % [x for x in text.split("\n") if x.startswith("COPY")])
    rc2, pf, err2 = preflight(HDF, FACTS["h200"])
    check(rc2 == 0 and pf.get("go") is True, "h200: preflight --dockerfile: go: %d %s" % (rc2, err2))
    check("FROM nvidia/cuda:13.0.3-runtime-ubuntu24.04\n" in text, "h200: CUDA 13.0, Ubuntu 24.04 (Python 3.12)")
    rc2, out2, _ = run("export", "--project", CTR, "--target", "h200")
    check(open(os.path.join(CTR, "docker", "requirements.h200.txt")).read() == out2, "h200: its requirements")
NOPE = os.path.join(CTR, "Dockerfile.nope")
for t, base, code, why, facts in (
        ("h200", "nvidia/cuda:12.8.1-runtime-ubuntu24.04", 1, "does not match the lock's CUDA 13", None),
        ("h200", "nvidia/cuda:13.0.3-runtime-ubuntu22.04", 1, "the lock's wheels are for Python 3.12", None),
        ("h200", "nvidia/cuda:13.0.3-runtime-ubi9", 4, "apt-get", None),
        ("rtx4090", "nvcr.io/nvidia/pytorch:25.04-py3", 1, "R575", "rtx4090")):
    rc, out, err = run("export", "--project", CTR, "--target", t, "--format", "dockerfile", "--base", base, "-o", NOPE)
    check(rc == code and why in err and not os.path.exists(NOPE), "%s --base %s: refused (%s): %d %s" % (t, base, why, rc, err))
    if facts:
        rc, out, err = run("preflight", "--image", base, "--facts", FACTS[facts])
        check(rc == 1 and "no-go" in out, "%s: preflight --image %s agrees: no-go: %d %s" % (t, base, rc, out[-300:]))
# the RTX 4090's lock is cu124 on Python 3.12: no 12.4 tag on Ubuntu 24.04, so the nearest newer
# one, which the R550 driver runs only through minor-version compatibility: said so
RDF = os.path.join(CTR, "Dockerfile.rtx4090")
rc, out, err = run("export", "--project", CTR, "--target", "rtx4090", "--format", "dockerfile", "-o", RDF)
check(rc == 0 and "NVIDIA_DISABLE_REQUIRE" in err, "rtx4090: written, warning about NVIDIA_REQUIRE_CUDA: %d %s" % (rc, err))
if rc == 0:
    img = check_dockerfile("serve rtx4090", CTR, "rtx4090", RDF)
    check(img and img.startswith("nvidia/cuda:12.") and "-base-ubuntu24.04" in img,
          "rtx4090: a CUDA 12 base flavour (the lock has the CUDA runtime wheels) on Ubuntu 24.04: %s" % img)
    rc, pf, err = preflight(RDF, FACTS["rtx4090"])
    check(rc == 0, "rtx4090: preflight --dockerfile: go: %d %s" % (rc, err))
    check('\nENV NVIDIA_REQUIRE_CUDA="cuda>=12.0,arch>=8.9"\n' in open(RDF).read(),
          "rtx4090: NVIDIA_REQUIRE_CUDA asks CUDA 12.0 (minor-version compatibility), not the image's 12.x")
rc, out, err = run("--json", "export", "--project", CTR, "--target", "rtx4090", "--format", "dockerfile")
j = json.loads(out) if out.startswith("{") else {}
check(rc == 0 and j.get("base", {}).get("chosen") is True and j.get("base", {}).get("flavour") == "base"
      and j.get("dockerfile", "").startswith("# syntax="), "--json: the base and the Dockerfile: %s" % out[:300])
CDF = os.path.join(CTR, "Dockerfile.cpu")
rc, out, err = run("export", "--project", CTR, "--target", "cpu", "--format", "dockerfile", "-o", CDF)
check(rc == 0, "cpu: the official python image: %d %s" % (rc, err))
if rc == 0:
    check_dockerfile("serve cpu", CTR, "cpu", CDF, "python:3.12-slim-bookworm")
    check("NVIDIA_REQUIRE_CUDA" not in open(CDF).read(), "cpu: no NVIDIA_REQUIRE_CUDA for a target without a GPU")
rc, out, err = run("export", "--project", CTR, "--format", "compose")
svc = yaml.safe_load(out).get("services", {}) if rc == 0 else {}
check(set(svc) == {"h200", "rtx4090", "cpu"} and "deploy" not in svc.get("cpu", {}) and "deploy" in svc.get("h200", {}),
      "compose: no GPU reservation for the CPU target: %s" % svc.get("cpu"))
# the rule over every CUDA build the KB knows (torch.toml [[variant]] tags), Python 3.10 and 3.12,
# an H200 on R580 and an A100 on R535: a lock with that build gets an image of its CUDA major, of its
# release or newer, that preflight accepts on the target's facts; or exit 4 exactly when images.toml
# has no tag of that major on an Ubuntu with the target's Python, or the driver is below the
# major's minimum (CUDA 13 on R535).  The oracle reads the KB files itself.
import tomllib  # noqa: E402
with open(os.path.join(SRC, "data", "kb", "torch.toml"), "rb") as f:
    TAGS = sorted({v["tag"] for v in tomllib.load(f)["variant"] if v["tag"].startswith("cu")})
with open(os.path.join(SRC, "data", "kb", "images.toml"), "rb") as f:
    CUDA_IMAGES = tomllib.load(f)["cuda_image"]
with open(os.path.join(SRC, "data", "kb", "ngc.toml"), "rb") as f:
    UBUNTU_PY = {}
    for c in tomllib.load(f)["container"]:
        if "ubuntu" in c and "python" in c:
            UBUNTU_PY.setdefault(c["ubuntu"], set()).add(".".join(c["python"].split(".")[:2]))


def oracle(tag, py):
    major, minor = int(tag[2:-1]), int(tag[-1])
    return [(r["cuda_full"], o) for r in CUDA_IMAGES if r["status"] in ("supported", "end-of-life")
            and "runtime" in r["flavours"] and int(r["cuda_full"].split(".")[0]) == major
            and int(r["cuda_full"].split(".")[1]) >= minor for o in r["os"]
            if o.startswith("ubuntu") and UBUNTU_PY.get(o[6:]) == {py}]


GRID = os.path.join(TMP, "grid")
os.makedirs(GRID)
GT = {"h200py310": ("H200", "580.159.04", "3.10", "h200"), "h200py312": ("H200", "580.159.04", "3.12", "h200"),
      "a100py310": ("A100", "535.104.05", "3.10", "a100")}
with open(os.path.join(GRID, "pyproject.toml"), "w") as f:
    f.write('[project]\nname = "grid"\nversion = "1"\ndependencies = ["numpy"]\n')
    for name, (gpu, drv, py, _) in GT.items():
        f.write('\n[tool.gpuenv.targets.%s]\ngpu = "%s"\ndriver = "%s"\npython = "%s"\n'
                'platform = "manylinux_2_28_x86_64"\n' % (name, gpu, drv, py))
base_lock = open(os.path.join(CTR, "pylock.cpu.toml")).read()
chosen = 0
for name, (gpu, drv, py, facts) in GT.items():
    for tag in TAGS:
        with open(os.path.join(GRID, "pylock.%s.toml" % name), "w") as f:
            f.write(base_lock.replace('backend = "cpu"', 'backend = "%s"' % tag).replace('python = "3.12"', 'python = "%s"' % py))
        df = os.path.join(GRID, "Dockerfile." + name)
        rc, out, err = run("--json", "export", "--project", GRID, "--target", name, "--format", "dockerfile", "-o", df)
        want = oracle(tag, py)
        major, minor = int(tag[2:-1]), int(tag[-1])
        what = "grid %s %s (%s)" % (name, tag, want[:3])
        if rc == 0:
            chosen += 1
            b = json.loads(out)["base"]
            cm, cn = (int(x) for x in b["cuda"].split("."))
            check(cm == major and cn >= minor and b["chosen"], "%s: CUDA %s for %s" % (what, b["cuda"], tag))
            rc2, pf, err2 = preflight(df, FACTS[facts])
            check(rc2 == 0 and pf.get("go") is True, "%s: preflight --dockerfile go: %d %s" % (what, rc2, err2))
        else:
            check(rc == 4 and "no nvidia/cuda tag" in err and (not want or (major == 13 and drv < "580")),
                  "%s: exit 4 only when no tag can fit: %d %s" % (what, rc, err))
check(chosen >= 2 * len(TAGS), "grid: most builds get an image: %d of %d" % (chosen, 3 * len(TAGS)))

# ---- Python 3.9 to 3.13: a base for every supported Python ------------------------------
# One project, a target per Python (an A100 on R570).  With the CUDA runtime as wheels
# (nvidia-cuda-runtime-cu12) the Pythons no Ubuntu of the nvidia/cuda tags ships (3.9, 3.11,
# 3.13) get Docker's python:X.Y-slim-bookworm; without them a CUDA image with a uv-managed
# Python.  Each Dockerfile is parsed, judged by preflight --dockerfile on the target's facts,
# and carries NVIDIA_REQUIRE_CUDA of the lock's CUDA and the A100's compute capability.
FACTS["a100r570"] = facts_for("NVIDIA A100-SXM4-80GB", "8.0", "570.86.10", "12.8")
PYS = ("3.9", "3.10", "3.11", "3.12", "3.13")
UBUNTU_OF = {"3.10": "ubuntu22.04", "3.12": "ubuntu24.04"}
for variant, deps in (("wheels", '"torch>=2.4", "numpy", "nvidia-cuda-runtime-cu12"'), ("uv", '"torch>=2.4", "numpy"')):
    PP = os.path.join(TMP, "pyall-" + variant)
    os.makedirs(PP)
    with open(os.path.join(PP, "pyproject.toml"), "w") as f:
        f.write('[project]\nname = "pyall"\nversion = "1"\nrequires-python = ">=3.9"\ndependencies = [%s]\n\n'
                '[tool.gpuenv]\ntorch-backend = "auto"\n' % deps)
        for py in PYS:
            f.write('\n[tool.gpuenv.targets.py%s]\ngpu = "A100"\ndriver = "570.86.10"\npython = "%s"\n'
                    'platform = "manylinux_2_28_x86_64"\n' % (py.replace(".", ""), py))
    rc, out, err = lock(PP)
    check(rc == 0, "pyall %s: every Python locks: %d %s%s" % (variant, rc, out[-500:], err[-500:]))
    for py in PYS:
        t = "py" + py.replace(".", "")
        df = os.path.join(PP, "Dockerfile." + t)
        rc, out, err = run("export", "--project", PP, "--target", t, "--format", "dockerfile", "-o", df)
        what = "pyall %s python %s" % (variant, py)
        check(rc == 0 and os.path.exists(df), "%s: written: %d %s" % (what, rc, err))
        if not os.path.exists(df):
            continue
        image = check_dockerfile(what, PP, t, df)
        text = open(df).read()
        _, ins = parse_dockerfile(text)
        if py in UBUNTU_OF:
            check(image.startswith("nvidia/cuda:12.") and image.endswith(UBUNTU_OF[py]),
                  "%s: the Ubuntu whose python3 it is: %s" % (what, image))
        elif variant == "wheels":
            check(image == "python:%s-slim-bookworm" % py, "%s: Docker's python image: %s" % (what, image))
            check(any(w == "ENV" and "NVIDIA_DRIVER_CAPABILITIES=compute,utility" in a for w, a, _ in ins),
                  "%s: the python image asks the toolkit for the compute libraries" % what)
            check(not any("apt-get" in a for w, a, _ in ins), "%s: no apt-get: the image has its Python" % what)
        else:
            check(image.startswith("nvidia/cuda:12.") and "-runtime-ubuntu" in image,
                  "%s: a CUDA runtime image (the lock brings no CUDA runtime wheel): %s" % (what, image))
            check(any(w == "COPY" and a.startswith("--from=ghcr.io/astral-sh/uv:") for w, a, _ in ins) and
                  any(w == "RUN" and ("uv python install %s" % py) in a and ("--python %s /opt/venv" % py) in a
                      for w, a, _ in ins), "%s: uv installs Python %s and makes the venv" % (what, py))
        lk = open(os.path.join(PP, "pylock.%s.toml" % t)).read()
        build = lk.split('backend = "', 1)[1].split('"', 1)[0] if 'backend = "' in lk else ""
        want = 'NVIDIA_REQUIRE_CUDA="cuda>=%s.%s,arch>=8.0"' % (build[2:-1], build[-1]) if build.startswith("cu") else None
        req = [a for w, a, _ in ins if w == "ENV" and "NVIDIA_REQUIRE_CUDA=" in a]
        check(want and len(req) == 1 and want in req[0], "%s: %s (lock %s): %s" % (what, want, build, req))
        rc, pf, err = preflight(df, FACTS["a100r570"])
        check(rc == 0 and pf.get("go") is True, "%s: preflight --dockerfile on the target's facts: go: %d %s %s"
              % (what, rc, err, [r.get("message") for r in pf.get("reasons", [])]))
# the python image's judgement agrees with preflight: a 470 driver cannot run the lock's CUDA 12
FACTS["a100r470"] = facts_for("NVIDIA A100-SXM4-80GB", "8.0", "470.57.02", "11.4")
PP = os.path.join(TMP, "pyall-wheels")
rc, out, err = run("preflight", "--image", "python:3.11-slim-bookworm", "--facts", FACTS["a100r570"])
check(rc == 0 and "no CUDA" in out, "preflight --image python:3.11-slim-bookworm: go, no CUDA of its own: %d %s" % (rc, out))
rc, out, err = run("kb", "image", "python:3.11-alpine")
check(rc == 2 and "musl" in err, "python:3.11-alpine: not a tag the lock's wheels install into: %d %s" % (rc, err))
rc, out, err = run("export", "--project", PP, "--target", "py311", "--format", "dockerfile", "--base",
                   "python:3.12-slim-bookworm", "-o", NOPE)
check(rc == 1 and "Python 3.11" in err and not os.path.exists(NOPE), "--base python:3.12 for a 3.11 lock: refused: %d %s"
      % (rc, err))

# ---- compose with a Triton service ([tool.gpuenv.triton]) -----------------------------------
TRI = os.path.join(TMP, "tri")
os.makedirs(os.path.join(TRI, "models"))
TRI_HEAD = ('[project]\nname = "tri-serve"\nversion = "1"\ndependencies = ["numpy"]\n\n'
            '[tool.gpuenv.targets.h200]\ngpu = "H200"\ndriver = "580.159.04"\npython = "3.12"\n'
            'platform = "manylinux_2_28_x86_64"\n\n[tool.gpuenv.targets.old]\ngpu = "A100"\n'
            'driver = "470.57.02"\npython = "3.10"\nplatform = "manylinux_2_28_x86_64"\n')
with open(os.path.join(TRI, "pyproject.toml"), "w") as f:
    f.write(TRI_HEAD + '\n[tool.gpuenv.triton]\nrepository = "models"\ntarget = "h200"\n')
rc, out, err = run("export", "--project", TRI, "--format", "compose")
doc = yaml.safe_load(out) if rc == 0 else {}
tsvc = doc.get("services", {}).get("triton", {})
check(rc == 0 and set(doc.get("services", {})) == {"h200", "old", "triton"}, "triton compose: a service per target and "
      "triton: %d %s %s" % (rc, err, list(doc.get("services", {}))))
timg = tsvc.get("image", "")
check(timg.startswith("nvcr.io/nvidia/tritonserver:") and timg.endswith("-py3"), "triton: a tritonserver image: %s" % timg)
check(tsvc.get("shm_size") == "1gb" and tsvc.get("ulimits") == {"memlock": -1, "stack": 67108864},
      "triton: shm_size and ulimits as Triton's docs run it: %s %s" % (tsvc.get("shm_size"), tsvc.get("ulimits")))
check(tsvc.get("ports") == ["8000:8000", "8001:8001", "8002:8002"], "triton: HTTP, gRPC, metrics ports: %s" % tsvc.get("ports"))
check(tsvc.get("volumes") == ["./models:/models:ro"] and "--model-repository=/models" in tsvc.get("command", []),
      "triton: the model repository mounted and served: %s %s" % (tsvc.get("volumes"), tsvc.get("command")))
tdev = tsvc.get("deploy", {}).get("resources", {}).get("reservations", {}).get("devices", [])
check(len(tdev) == 1 and tdev[0].get("driver") == "nvidia" and tdev[0].get("capabilities") == ["gpu"],
      "triton: GPUs reserved: %s" % tdev)
check(("gpuenv triton check models --image %s --facts facts.h200.json" % timg) in out,
      "triton: the compose file says to run gpuenv triton check before the image is built")
if timg:
    # the image chosen for the H200 on R580 is go there (preflight --image), and the newest such release
    rc, pout, _ = run("preflight", "--image", timg, "--facts", FACTS["h200"])
    check(rc == 0, "triton: preflight --image %s on the H200's facts: go: %d %s" % (timg, rc, pout[-300:]))
    with open(os.path.join(SRC, "data", "kb", "ngc.toml"), "rb") as f:
        rels = sorted(c["release"] for c in tomllib.load(f)["container"]
                      if c["image"] == "nvcr.io/nvidia/tritonserver" and c["tag"] == c["release"] + "-py3")
    newer = [r for r in rels if r > timg.split(":")[1][:5]]
    for r in newer[:3]:
        rc, kout, _ = run("--json", "kb", "image", "nvcr.io/nvidia/tritonserver:%s-py3" % r, "--driver", "580.159.04")
        runs = json.loads(kout)["images"][0].get("runs") if kout.startswith("{") else None
        check(runs != "yes", "triton: a newer release %s is not run by R580 by itself (else it would be chosen): %s"
              % (r, runs))
# the old A100 (R470): a driver that runs no tritonserver release of the KB by itself: said so, exit 4
with open(os.path.join(TRI, "pyproject.toml"), "w") as f:
    f.write(TRI_HEAD + '\n[tool.gpuenv.triton]\nrepository = "models"\ntarget = "old"\n')
rc, out, err = run("export", "--project", TRI, "--format", "compose")
check(rc == 0 or (rc == 4 and "tritonserver" in err), "triton on R470: an image or said so: %d %s" % (rc, err))
# image named: used as given; a repository missing: the error names the key
with open(os.path.join(TRI, "pyproject.toml"), "w") as f:
    f.write(TRI_HEAD + '\n[tool.gpuenv.triton]\nrepository = "models"\nimage = "nvcr.io/nvidia/tritonserver:24.08-py3"\n')
rc, out, err = run("export", "--project", TRI, "--format", "compose")
check(rc == 0 and yaml.safe_load(out)["services"]["triton"]["image"] == "nvcr.io/nvidia/tritonserver:24.08-py3",
      "triton: image as [tool.gpuenv.triton] names it: %d %s" % (rc, err))
with open(os.path.join(TRI, "pyproject.toml"), "w") as f:
    f.write(TRI_HEAD + '\n[tool.gpuenv.triton]\nimage = "nvcr.io/nvidia/tritonserver:24.08-py3"\n')
rc, out, err = run("export", "--project", TRI, "--format", "compose")
check(rc == 4 and "repository" in err, "triton: no repository: said so: %d %s" % (rc, err))

OUTSIDE = os.path.join(TMP, "Dockerfile.outside")
rc, out, err = run("export", "--project", CTR, "--target", "h200", "--format", "dockerfile", "-o", OUTSIDE)
check(rc == 2 and "outside the project" in err and not os.path.exists(OUTSIDE), "-o outside the project: usage: %s" % err)
rc, out, err = run("export", "--lock", os.path.join(CTR, "pylock.h200.toml"), "--format", "dockerfile")
check(rc == 2, "--lock with --format dockerfile: usage")
rc, out, err = run("export", "--project", CTR, "--target", "h200", "--base", "nvidia/cuda:13.0.3-base-ubuntu24.04")
check(rc == 2, "--base without --format dockerfile: usage")
rc, out, err = run("export", "--help")
check(rc == 0 and "--base" in out and "dockerfile" in out and "compose" in out, "export --help")


shutil.rmtree(TMP, ignore_errors=True)
print("ok" if not failures else "%d failures" % len(failures))
sys.exit(1 if failures else 0)
