"""gpuenv doctor over the broken-environment matrix (tests/fixtures/doctor/).

Each scenario folder holds facts.json (what `gpuenv probe --json` would write
there) and expected.json (the exact multiset of (id, severity) verdicts, the
exit status and fragments its fixes must contain).  Also: the JSON shape of
every verdict, the human output, --env, and the errors on bad input."""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = os.environ["GPUENV_BIN"]
SRC = Path(os.environ.get("GPUENV_SRC", Path(__file__).resolve().parents[2]))
FIX = SRC / "tests" / "fixtures" / "doctor"
failures = []


def run(*args, stdin=None):
    return subprocess.run([BIN, *args], capture_output=True, text=True, input=stdin, timeout=60)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


SEVERITIES = {"error", "warning", "info"}
scenarios = sorted(p.parent for p in FIX.glob("*/expected.json"))
broken = 0
for d in scenarios:
    name = d.name
    exp = json.loads((d / "expected.json").read_text())
    r = run("doctor", "--facts", str(d / "facts.json"), "--json")
    check(r.returncode == exp["status"],
          "%s: exit %d, expected %d (stderr %r)" % (name, r.returncode, exp["status"], r.stderr[:300]))
    try:
        out = json.loads(r.stdout)
    except ValueError:
        check(False, "%s: --json output is not JSON: %r" % (name, r.stdout[:200]))
        continue
    got = sorted([v["id"], v["severity"]] for v in out["verdicts"])
    check(got == exp["verdicts"], "%s: verdicts %s, expected %s" % (name, got, exp["verdicts"]))
    counts = {s: sum(1 for v in out["verdicts"] if v["severity"] == s) for s in SEVERITIES}
    check(out["errors"] == counts["error"] and out["warnings"] == counts["warning"] and
          out["infos"] == counts["info"], "%s: counts" % name)
    check(out["status"] == ("errors" if counts["error"] else "warnings" if counts["warning"] else "ok"),
          "%s: status %r" % (name, out.get("status")))
    # errors first, then warnings, then infos
    order = [{"error": 0, "warning": 1, "info": 2}[v["severity"]] for v in out["verdicts"]]
    check(order == sorted(order), "%s: verdicts sorted by severity" % name)
    fixes = " | ".join(v["fix"] or "" for v in out["verdicts"])
    for frag in exp["fix_contains"]:
        check(frag in fixes, "%s: no fix contains %r (fixes: %s)" % (name, frag, fixes))
    for v in out["verdicts"]:
        for key in ("id", "severity", "subject", "target", "gpu", "environment", "binary",
                    "message", "fix", "evidence"):
            check(key in v, "%s: verdict %s lacks %r" % (name, v.get("id"), key))
        check(v["severity"] in SEVERITIES, "%s: severity %r" % (name, v["severity"]))
        check(bool(v["message"]), "%s: %s has no message" % (name, v["id"]))
        check(len(v["evidence"]) > 0, "%s: %s has no evidence" % (name, v["id"]))
        if v["severity"] != "info":
            check(bool(v["fix"]), "%s: %s (%s) has no fix" % (name, v["id"], v["severity"]))
        for e in v["evidence"]:
            check(e.get("fact") and e.get("value") is not None and e.get("source"),
                  "%s: %s evidence incomplete: %r" % (name, v["id"], e))
            if e["source"] == "kb":
                check(bool(e.get("kb_source")), "%s: KB evidence without its citation" % name)
    if exp["status"] != 0:
        broken += 1
    # the human output agrees with the JSON
    h = run("doctor", "--facts", str(d / "facts.json"))
    check(h.returncode == exp["status"], "%s: human output exit %d" % (name, h.returncode))
    for v in out["verdicts"]:
        check(v["id"] in h.stdout, "%s: %s missing from the human output" % (name, v["id"]))
    if not out["verdicts"]:
        check("no problem found" in h.stdout, "%s: healthy text" % name)

check(broken >= 15, "at least 15 broken scenarios (have %d)" % broken)
check((FIX / "healthy").is_dir() and (FIX / "h200-2026-11-29").is_dir(), "healthy and H200 scenarios")

# the real H200 machine: no error, and its facts are judged quickly
h200 = FIX / "h200-2026-11-29" / "facts.json"
t0 = time.monotonic()
r = run("doctor", "--facts", str(h200), "--json")
elapsed = time.monotonic() - t0
out = json.loads(r.stdout)
check(out["errors"] == 0 and out["warnings"] == 0, "H200: no error, no warning")
cudnn = [v for v in out["verdicts"] if v["target"] == "libcudnn.so.9"]
check(len(cudnn) == 1 and cudnn[0]["severity"] == "info" and "9.19.0" in cudnn[0]["message"] and
      "9.14.0" in cudnn[0]["message"], "H200: wheel cuDNN 9.19 beside system 9.14 is one info")
print("H200 doctor wall time (sanitizer build, process included): %.1f ms" % (elapsed * 1000))

# --env: only that environment is judged; an unknown one cannot be judged
r = run("doctor", "--facts", str(FIX / "wheel-missing" / "facts.json"), "--env", "/srv/venv/", "--json")
check(r.returncode == 3 and "wheel-missing" in r.stdout, "--env with a trailing slash")
r = run("doctor", "--facts", str(FIX / "wheel-missing" / "facts.json"), "--env", "/nowhere")
check(r.returncode == 4 and "/nowhere" in r.stderr, "--env unknown -> 4: %r" % r.stderr)
# machine rules still run with --env
r = run("doctor", "--facts", str(FIX / "mig-no-instances" / "facts.json"), "--env", "/srv/venv")
check(r.returncode == 3 and "mig-no-device" in r.stdout, "machine rules with --env")

# stdin, bad input, usage
r = run("doctor", "--facts", "-", "--json", stdin=(FIX / "healthy" / "facts.json").read_text())
check(r.returncode == 0 and json.loads(r.stdout)["verdicts"] == [], "--facts - (stdin)")
r = run("doctor", "--facts", "-", stdin="{\"schema\": ")
check(r.returncode == 4 and "<stdin>:1:" in r.stderr, "malformed JSON -> 4 with position: %r" % r.stderr)
r = run("doctor", "--facts", "-", stdin="{\"schema\": \"gpuenv.facts/2\"}")
check(r.returncode == 4 and "gpuenv.facts/2" in r.stderr, "unknown schema major -> 4")
r = run("doctor", "--facts", "-", stdin="[1, 2]")
check(r.returncode == 4, "not an object -> 4")
r = run("doctor", "--facts", "-", stdin="{\"schema\": \"gpuenv.facts/1\"}")
check(r.returncode == 0 and "no problem found" in r.stdout, "empty facts: nothing to judge")
r = run("doctor", "--facts", "/nonexistent.json")
check(r.returncode == 4 and "/nonexistent.json" in r.stderr, "missing file -> 4")
r = run("doctor", "--factz", "x")
check(r.returncode == 2 and "--facts" in r.stderr, "option suggestion -> 2")
r = run("doctor", "extra")
check(r.returncode == 2, "stray argument -> 2")
r = run("doctor", "--help")
check(r.returncode == 0 and "exit status" in r.stdout and "--facts" in r.stdout, "--help")

# --kb-dir: the rules read the KB given (a changed minimum driver shows in the fix)
with tempfile.TemporaryDirectory() as kbdir:
    cuda = (SRC / "data" / "kb" / "cuda.toml").read_text()
    changed = cuda.replace('driver_linux = "530.30.02"', 'driver_linux = "531.99.99"', 1)
    check(changed != cuda, "cuda.toml has the CUDA 12.1 driver row")
    Path(kbdir, "cuda.toml").write_text(changed)
    r = run("doctor", "--facts", str(FIX / "driver470-cu121" / "facts.json"), "--kb-dir", kbdir)
    check(r.returncode == 3 and ">= 531.99.99" in r.stdout, "--kb-dir row used: %r" % r.stdout[-300:])
    Path(kbdir, "cuda.toml").write_text("[[toolkit]]\ncuda = 1\n")
    r = run("doctor", "--facts", str(FIX / "healthy" / "facts.json"), "--kb-dir", kbdir)
    check(r.returncode == 4 and "cuda.toml" in r.stderr, "broken KB file -> 4: %r" % r.stderr)
r = run("doctor", "--facts", str(FIX / "healthy" / "facts.json"), "--kb-dir", "/nonexistent")
check(r.returncode == 4 and "/nonexistent" in r.stderr, "--kb-dir missing -> 4")

# wrong types everywhere: the rules read them as unknown, never crash
weird = {"schema": "gpuenv.facts/1", "driver": [], "gpus": {"a": 1}, "pci": "x",
         "cuda_visible_devices": {"set": True, "value": 5, "visible": "all"},
         "libraries": [None, 1, {"soname": 3}],
         "environments": [None, {"path": 7, "frameworks": [1, {"name": None, "cuda": 13,
                                                               "binaries": [{"cubins": [1, None, "sm_"],
                                                                             "loads": [{"needed": 1}]}]}],
                                 "distributions": [{"name": "torch", "requires_dist": [1, "nvidia-x=="]}]}]}
r = run("doctor", "--facts", "-", "--json", stdin=json.dumps(weird))
check(r.returncode in (0, 1, 3) and json.loads(r.stdout) is not None, "wrong types: %r" % r.stderr[:300])

# ---- unknown facts say nothing (docs/doctor.md): a field of another type or
# null is unknown, never a verdict with a fix
def healthy():
    return json.loads((FIX / "healthy" / "facts.json").read_text())


def judge(facts, *args):
    r = run("doctor", "--facts", "-", "--json", *args, stdin=json.dumps(facts))
    try:
        return r, json.loads(r.stdout) if r.stdout else None
    except ValueError:
        return r, None


def ids(out):
    return sorted(v["id"] for v in out["verdicts"]) if out else None


f = healthy()
f["environments"][0]["frameworks"][0]["cuda"] = 12.6  # a number, not "12.6"
r, out = judge(f)
check(r.returncode == 0 and ids(out) == [], "framework cuda of another type says nothing: %s %r"
      % (ids(out), r.stderr[:200]))
f = healthy()
need = f["environments"][0]["frameworks"][0]["binaries"][0]["loads"]["objects"][0]["needs"][0]
need["path"] = None  # found by RUNPATH, where unknown: not "library-not-found"
r, out = judge(f)
check(r.returncode == 0 and ids(out) == [], "a needs path null says nothing: %s" % ids(out))
f = json.loads((FIX / "sm120-torch-cu124" / "facts.json").read_text())
for b in f["environments"][0]["frameworks"][0]["binaries"]:
    if "cuda_code" in b:
        b["cuda_code"]["cubins"] = ["sm_80", 90]
r, out = judge(f)
check(out is not None and "no-kernel-image" not in ids(out),
      "a cubin list with a non-string entry is unknown: %s" % ids(out))
# a torch without torch/version.py: its CUDA from the +cu126 label, as the
# probe writes it (cuda null, gpu false)
f = healthy()
fw = f["environments"][0]["frameworks"][0]
fw.update(cuda=None, cuda_source=None, gpu=False, version_source="metadata")
r, out = judge(f)
check(r.returncode == 0 and ids(out) == [], "torch +cu126 without version.py is a CUDA build: %s"
      % ids(out))
fw["version"] = "2.7.1+cpu"
fw["local"] = "cpu"
r, out = judge(f)
check(ids(out) == ["cpu-torch-on-gpu-host"], "torch +cpu still a CPU build: %s" % ids(out))

# ---- bytes that are not text (docs/probe-schema.md "Strings"): the probe's
# \xHH form and an older probe's \u0000 read alike; --env compares bytes
f = healthy()
f["environments"][0]["distributions"][0]["requires"].append("x\\x00y; extra == '\\xff'")
f["environments"][0]["distributions"].append({"name": "caf\\xe9", "normalized": "caf\\xe9",
                                              "version": "1.0\\x00", "requires": []})
r, out = judge(f)
check(r.returncode == 0 and ids(out) == [], "\\x00 / \\xff in strings: %r %s" % (r.stderr[:200], ids(out)))
text = json.dumps(healthy())
text = text.replace('"version": "2.7.1+cu126"', '"version": "2.7.1+cu126\\u0000"', 1)
text = text.replace('"nvidia-cudnn-cu12", "version": "9.5.1.17"', '"nvidia-cudnn-cu12", "version": "9.5.1.17\\u0000"', 1)
check("\\u0000" in text, "test facts hold a \\u0000")
r = run("doctor", "--facts", "-", "--json", stdin=text)
check(r.returncode in (0, 1, 3) and json.loads(r.stdout or "null") is not None,
      "a \\u0000 in METADATA is read, not refused: %d %r" % (r.returncode, r.stderr[:200]))
f = healthy()
for key in ("prefix",):
    f["environments"][0][key] = "/srv/caf\\xe9"
f["environments"][0]["sites"] = ["/srv/caf\\xe9/lib/python3.12/site-packages"]
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as t:
    json.dump(f, t)
r = subprocess.run([BIN, "doctor", "--facts", t.name, "--env", b"/srv/caf\xe9"], capture_output=True,
                   timeout=60)
check(r.returncode == 0, "--env of a non-UTF-8 path matches the facts' escaped prefix: %d %r"
      % (r.returncode, r.stderr[:300]))
r = subprocess.run([BIN, "doctor", "--facts", t.name, "--env", b"/srv/caf\xe8"], capture_output=True,
                   timeout=60)
check(r.returncode == 4 and b"/srv/caf\\xe8" in r.stderr and b"/srv/caf\\xe9" in r.stderr,
      "--env unknown names it escaped and lists the facts' environments: %r" % r.stderr[:300])
os.unlink(t.name)

# ---- facts errors: the file, the position, our own words, a fix
r = run("doctor", "--facts", "-", stdin='{"schema": "gpuenv.facts/1", "x": 123456789012345678901234567890}')
check(r.returncode == 4 and "<stdin>:1:" in r.stderr and "too big integer" not in r.stderr and
      "64-bit" in r.stderr and "hint:" in r.stderr, "a huge number: our words: %r" % r.stderr)
r = run("doctor", "--facts", "-", stdin='{"schema": "gpuenv.facts/1", "a\\u0000b": 1}')
check(r.returncode == 4 and "JSON_ALLOW_NUL" not in r.stderr and "<stdin>:1:" in r.stderr,
      "a NUL in a key: our words: %r" % r.stderr)
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as t:
    t.write('{"schema": "other/1"}')
r = run("doctor", "--facts", t.name)
check(r.returncode == 4 and t.name in r.stderr and "hint:" in r.stderr,
      "a schema error names the file: %r" % r.stderr)
first = r.stderr
r = run("preflight", "--cuda", "12.4", "--facts", t.name)
check(r.returncode == 4 and r.stderr == first, "preflight: the same message: %r" % r.stderr)
r = run("diagnose", "--facts", t.name, str(SRC / "tests" / "fixtures" / "logs" / "clean.log"))
check(r.returncode == 4 and r.stderr == first, "diagnose: the same message: %r" % r.stderr)
os.unlink(t.name)

# ---- --env of a folder that is not there: say so (no snapshot to suggest)
r = run("doctor", "--env", "/nonexistent/venv")
check(r.returncode == 4 and "/nonexistent/venv" in r.stderr and "No such file" in r.stderr and
      "gpuenv probe" not in r.stderr, "--env missing folder: %r" % r.stderr)

# ---- the driver loaded, NVML and libcuda missing: preflight says no-go
lm = FIX / "driver-libraries-missing" / "facts.json"
r = run("preflight", "--cuda", "12.4", "--facts", str(lm), "--json")
out = json.loads(r.stdout)
check(r.returncode == 1 and out["go"] is False and
      "driver-libraries-missing" in [v["id"] for v in out["verdicts"]],
      "preflight: driver without its libraries is no-go: %s" % r.stdout[:300])

# ---- the NVIDIA Container Toolkit (issue 25): the probe reads a test tree
# (the H200 tree, a GPU on PCI) with Docker/Podman files added; doctor judges it
def container_verdicts(root, env_path="/usr/bin:/bin"):
    env = dict(os.environ, PATH=env_path)
    p = subprocess.run([BIN, "probe", "--root", str(root), "--json", "--nvml-lib", "/nonexistent",
                        "--cuda-lib", "/nonexistent"], capture_output=True, text=True, env=env,
                       timeout=60)
    facts = json.loads(p.stdout)
    r, out = judge(facts)
    vs = [v for v in (out or {"verdicts": []})["verdicts"] if v["id"].startswith("container-")]
    return facts["container"], vs


import shutil
with tempfile.TemporaryDirectory() as td:
    root = Path(td) / "root"
    shutil.copytree(SRC / "tests" / "fixtures" / "hw" / "h200", root, symlinks=True)
    c, vs = container_verdicts(root)
    check(c == {"docker": False, "podman": False, "nvidia_ctk": None,
                "docker_runtime_nvidia": False, "cdi_specs": []} and vs == [],
          "no docker: no container verdict: %r %r" % (c, vs))
    (root / "etc" / "docker").mkdir(parents=True)
    c, vs = container_verdicts(root)
    check(c["docker"] and [v["id"] for v in vs] == ["container-toolkit-missing"] and
          vs[0]["severity"] == "warning" and "nvidia-container-toolkit" in vs[0]["fix"] and
          "nvidia-ctk runtime configure --runtime=docker" in vs[0]["fix"] and
          "install-guide" in vs[0]["fix"], "docker without the toolkit: %r" % vs)
    # nvidia-ctk on a PATH folder under the root
    (root / "opt" / "ctk").mkdir(parents=True)
    (root / "opt" / "ctk" / "nvidia-ctk").write_text("")
    c, vs = container_verdicts(root, "/nowhere:/opt/ctk")
    check(c["nvidia_ctk"] == "/opt/ctk/nvidia-ctk" and
          [v["id"] for v in vs] == ["container-toolkit-unconfigured"] and
          "daemon.json" in vs[0]["message"] and
          vs[0]["fix"].startswith("sudo nvidia-ctk runtime configure --runtime=docker"),
          "toolkit without the docker runtime: %r %r" % (c, vs))
    (root / "usr" / "bin").mkdir(parents=True, exist_ok=True)
    (root / "usr" / "bin" / "nvidia-ctk").write_text("")
    (root / "etc" / "docker" / "daemon.json").write_text(
        '{"runtimes": {"nvidia": {"path": "nvidia-container-runtime", "args": []}}}')
    c, vs = container_verdicts(root)
    check(c["nvidia_ctk"] == "/usr/bin/nvidia-ctk" and c["docker_runtime_nvidia"] and
          [(v["id"], v["severity"]) for v in vs] == [("container-toolkit-ok", "info")],
          "configured docker: %r %r" % (c, vs))
    # podman needs a CDI spec
    (root / "usr" / "bin" / "podman").write_text("")
    c, vs = container_verdicts(root)
    check([v["id"] for v in vs] == ["container-toolkit-unconfigured"] and
          "cdi generate --output=/etc/cdi/nvidia.yaml" in vs[0]["fix"] and
          "runtime configure" not in vs[0]["fix"], "podman without CDI: %r" % vs)
    (root / "var" / "run" / "cdi").mkdir(parents=True)
    (root / "var" / "run" / "cdi" / "nvidia.yaml").write_text("cdiVersion: 0.5.0\n")
    (root / "var" / "run" / "cdi" / "other.yaml").write_text("")
    c, vs = container_verdicts(root)
    check(c["cdi_specs"] == ["/var/run/cdi/nvidia.yaml"] and
          [v["id"] for v in vs] == ["container-toolkit-ok"], "podman with CDI: %r %r" % (c, vs))
    # a machine without an NVIDIA GPU: nothing to say
    f = healthy()
    f["gpus"], f["pci"] = [], []
    f["container"] = {"docker": True, "podman": False, "nvidia_ctk": None,
                      "docker_runtime_nvidia": False, "cdi_specs": []}
    r, out = judge(f)
    check(out is not None and not [v for v in out["verdicts"] if v["id"].startswith("container-")],
          "no GPU: no container verdict: %r" % (out and ids(out)))

print("%d scenarios (%d broken), %d failures" % (len(scenarios), broken, len(failures)))
sys.exit(1 if failures else 0)
