"""gpuenv preflight --dockerfile: the base image of a Dockerfile's final stage
(ARG defaults substituted, stages followed, escape directive, continuations)
judged exactly as --image judges that image, on the doctor fixtures' nodes;
malformed Dockerfiles give a clear error (file:line) and exit 4."""
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
FIX = os.path.join(SRC, "tests", "fixtures", "doctor")
TMP = tempfile.mkdtemp(prefix="gpuenv-pf-df-")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, stdin=None):
    return subprocess.run([BIN, *args], capture_output=True, text=True, input=stdin, timeout=60)


def dockerfile(name, text):
    p = os.path.join(TMP, name)
    with open(p, "w") as f:
        f.write(text)
    return p


MULTI = dockerfile("multi", """# syntax=docker/dockerfile:1
ARG REGISTRY=nvcr.io/nvidia
ARG RELEASE=24.10
FROM nvidia/cuda:12.4.1-devel-ubuntu22.04 AS build
RUN make
# the runtime stage
FROM ${REGISTRY}/tritonserver:${RELEASE}-py3 \\
    AS runtime
COPY --from=build /out /app
FROM runtime AS final
USER 1000
""")
TICK = dockerfile("tick", """# escape=`
ARG CUDA
FROM --platform=linux/amd64 `
  nvidia/cuda:${CUDA:-12.8.1}-runtime-ubuntu24.04
""")
PLAIN = dockerfile("plain", "from nvcr.io/nvidia/pytorch:25.01-py3\nCMD python\n")

facts_files = sorted(os.path.join(FIX, d, "facts.json") for d in os.listdir(FIX)
                     if os.path.exists(os.path.join(FIX, d, "facts.json")))
check(len(facts_files) >= 10, "doctor fixtures with facts: %d" % len(facts_files))

cases = [(MULTI, "nvcr.io/nvidia/tritonserver:24.10-py3", 7, "final", 3),
         (TICK, "nvidia/cuda:12.8.1-runtime-ubuntu24.04", 3, None, 1),
         (PLAIN, "nvcr.io/nvidia/pytorch:25.01-py3", 1, None, 1)]
verdicts = set()
for path, image, line, stage, stages in cases:
    for facts in facts_files:
        a = run("--json", "preflight", "--dockerfile", path, "--facts", facts)
        b = run("--json", "preflight", "--image", image, "--facts", facts)
        name = "%s on %s" % (os.path.basename(path), os.path.basename(os.path.dirname(facts)))
        check(a.returncode == b.returncode, "%s: exit %d, --image %d (%s)" % (name, a.returncode, b.returncode, a.stderr[:200]))
        if a.returncode in (0, 1) and b.returncode in (0, 1):
            da, db = json.loads(a.stdout), json.loads(b.stdout)
            df = da.pop("dockerfile", {})
            check(df == {"path": path, "line": line, "image": image, "stage": stage, "stages": stages} or
                  (stage is None and df == {"path": path, "line": line, "image": image, "stages": stages}),
                  "%s: the FROM found: %s" % (name, df))
            check(da == db, "%s: the same verdict as --image" % name)
            verdicts.add(da.get("go"))
check(verdicts == {True, False}, "both go and no-go among the fixtures: %s" % verdicts)

r = run("preflight", "--dockerfile", MULTI, "--facts", facts_files[0])
check(r.stdout.startswith("%s:7: FROM nvcr.io/nvidia/tritonserver:24.10-py3 (the final stage's base image)\n" % MULTI),
      "text names the FROM line: %r" % r.stdout[:200])
with open(PLAIN) as f:
    r = run("preflight", "--dockerfile", "-", "--facts", facts_files[0], stdin=f.read())
check(r.returncode in (0, 1) and "FROM nvcr.io/nvidia/pytorch:25.01-py3" in r.stdout, "stdin: %s" % r.stderr)

# --- malformed: file:line, what is wrong, exit 4, no verdict ---------------------------
for text, words in [("RUN echo\n", "no FROM instruction"),
                    ("FROM scratch\nCOPY x /x\n", "FROM scratch"),
                    ("ARG V\nFROM nvidia/cuda:${V}-base-ubuntu22.04\n", ":2: FROM uses $V, which is declared without a default"),
                    ("FROM nvidia/cuda:${V\n", "unclosed ${"),
                    ("FROM a b c\n", "FROM takes IMAGE [AS NAME]"),
                    ("FROM\n", "FROM without an image"),
                    ("FROM x\0\n", "NUL byte")]:
    p = dockerfile("bad", text)
    r = run("preflight", "--dockerfile", p, "--facts", facts_files[0])
    check(r.returncode == 4 and words in r.stderr and r.stdout == "", "%r: %d %s" % (text, r.returncode, r.stderr))
r = run("preflight", "--dockerfile", os.path.join(TMP, "missing"))
check(r.returncode == 4 and "missing" in r.stderr, "a missing Dockerfile: %s" % r.stderr)
r = run("preflight", "--dockerfile", PLAIN, "--image", "nvidia/cuda:12.8.1-base-ubuntu24.04")
check(r.returncode == 2, "--dockerfile with --image: usage error")

print("ok" if not failures else "%d failures" % len(failures))
sys.exit(1 if failures else 0)
