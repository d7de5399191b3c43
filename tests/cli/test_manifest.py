"""gpuenv debug manifest: pyproject.toml as gpuenv reads it.

The satellite example (../shared/examples/satellite-classifier) loads as it
is, with its four targets and the torch build each gets, and why:

  a100    cu118  its group pins torch to the pytorch source, whose URL ends in
                 /cu118; driver 535.104.05 runs CUDA 11.8 (>= 520.61.05)
  h200    cu118  no group: the main torch, from the same cu118 source;
                 driver 580.159.04 runs it
  jetson  cu126  its group pins torch to nvidia-jetpack (.../jp6/cu126); the
                 target declares cuda = "12.6"
  t4      cu118  driver 525.85.12 >= 520.61.05, the minimum for CUDA 11.8:
                 the pin is accepted (no minor-version compatibility needed)

Malformed manifests (not TOML, a bad constraint, an unknown source, an
unknown GPU, missing keys) each fail with file:line:col and what is wrong."""
import json
import os
import subprocess
import tempfile

BIN = os.environ["GPUENV_BIN"]
SHARED = os.environ.get("GPUENV_SHARED") or os.path.join(os.environ.get("GPUENV_SRC", "."), "..", "shared")
SATELLITE = os.path.join(SHARED, "examples", "satellite-classifier")
failures = []


def run(*args):
    return subprocess.run([BIN, "debug", "manifest", *args], capture_output=True, text=True, timeout=60)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


# ---- the satellite example, as it is --------------------------------------------------
r = run("--project", SATELLITE, "--json")
check(r.returncode == 0, "satellite: exit %d %s" % (r.returncode, r.stderr))
doc = json.loads(r.stdout) if r.returncode == 0 else {"targets": [], "sources": [], "groups": []}
check(doc.get("name") == "satellite-classifier", "satellite: the Poetry name")
check(doc.get("requires_python") == ">=3.10,<4.0", "satellite: python = ^3.10 -> >=3.10,<4.0")
check([s["name"] for s in doc["sources"]] == ["pytorch", "nvidia", "nvidia-jetpack", "pypi"],
      "satellite: three explicit sources, PyPI stays the default: %r" % doc["sources"])
check(sorted(g["name"] for g in doc["groups"]) == ["a100", "dev", "jetson", "t4"], "satellite: groups")
targets = {t["name"]: t for t in doc["targets"]}
check(sorted(targets) == ["a100", "h200", "jetson", "t4"], "satellite: four targets: %r" % sorted(targets))
want = {
    "a100": ("cu118", "https://download.pytorch.org/whl/cu118", "pytorch"),
    "h200": ("cu118", "https://download.pytorch.org/whl/cu118", "pytorch"),
    "jetson": ("cu126", "https://pypi.jetson-ai-lab.io/jp6/cu126", "nvidia-jetpack"),
    "t4": ("cu118", "https://download.pytorch.org/whl/cu118", "pytorch"),
}
for name, (backend, url, source) in want.items():
    t = targets.get(name, {})
    b = t.get("backend")
    check(b is not None, "%s: a backend (%r)" % (name, t.get("error")))
    if not b:
        continue
    check(b["backend"] == backend, "%s: backend %s, wanted %s" % (name, b["backend"], backend))
    check(b["index_url"] == url and b["source"] == source and b["user_pinned"],
          "%s: the user's source kept: %r" % (name, b))
    check("[torch.toml:" in b["reason"] and "[cuda.toml:" in b["reason"], "%s: the reason cites KB rows" % name)
t4 = targets.get("t4", {})
check("driver 525.85.12 >= 520.61.05, the minimum for CUDA 11.8" in t4.get("backend", {}).get("reason", ""),
      "t4: accepted because the driver runs CUDA 11.8")
check(any(d.startswith("torch<3.0.0,>=2.0.1") for d in t4.get("dependencies", [])),
      "t4: its group's torch replaces the main one: %r" % t4.get("dependencies"))
check(not any(d.startswith("triton") or d.startswith("pytest") for d in t4.get("dependencies", [])),
      "t4: no optional triton, no dev group")
jet = targets.get("jetson", {})
check(jet.get("machine") == "aarch64" and jet.get("libc") is None and jet.get("driver_cuda") == "12.6",
      "jetson: linux_aarch64, cuda 12.6: %r" % jet)
check(any('platform_machine == "aarch64"' in d for d in jet.get("dependencies", [])), "jetson: the marker kept")
check(targets.get("a100", {}).get("gpus") == [{"name": "NVIDIA A100", "compute_capability": "8.0"}],
      "a100: the KB's GPU")
check(len(doc.get("inputs_hash", "")) == 64, "an inputs hash")

# the text view says the same
r = run("--project", os.path.join(SATELLITE, "pyproject.toml"))
check(r.returncode == 0 and "torch build: cu126 (https://pypi.jetson-ai-lab.io/jp6/cu126)" in r.stdout,
      "text view: jetson's build\n" + r.stdout + r.stderr)

# ---- malformed manifests: file:line:col and what is wrong ----------------------------------
TARGET = '[tool.gpuenv.targets.t4]\ngpu = "T4"\ndriver = "525.85.12"\npython = "3.10"\nplatform = "manylinux_2_28_x86_64"\n'
bad = [
    ("not TOML", '[project\nname = "x"\n', ":1:9:", None),
    ("bad constraint", '[tool.poetry.dependencies]\nnumpy = "^1.2 || ^2"\n', ":2:9:", "union"),
    ("garbage constraint", '[tool.poetry.dependencies]\nnumpy = ">=one"\n', ":2:9:", "Poetry version constraint"),
    ("unknown source", '[tool.poetry.dependencies]\ntorch = {version = "^2", source = "pytroch"}\n'
     '[[tool.poetry.source]]\nname = "pytorch"\nurl = "https://download.pytorch.org/whl/cu121"\npriority = "explicit"\n',
     ":2:35:", "'pytorch', 'pypi'"),
    ("unknown GPU", TARGET.replace('"T4"', '"T5"'), ":2:7:", "did you mean 'NVIDIA T4'"),
    ("missing python", TARGET.replace('python = "3.10"\n', ''), ":1:22:", "missing python"),
    ("missing platform", TARGET.replace('platform = "manylinux_2_28_x86_64"\n', ''), ":1:22:", "missing platform"),
    ("missing driver", TARGET.replace('driver = "525.85.12"\n', ''), ":1:22:", "driver"),
    ("unknown key", TARGET + 'grups = ["x"]\n', ":6:1:", "did you mean 'groups'"),
    ("bad PEP 508", '[project]\ndependencies = ["requests >="]\n', ":2:", "PEP 508"),
    ("include cycle", '[dependency-groups]\na = [{include-group = "b"}]\nb = [{include-group = "a"}]\n',
     ":3:23:", "cycle"),
]
with tempfile.TemporaryDirectory() as tmp:
    for what, text, pos, needle in bad:
        path = os.path.join(tmp, "pyproject.toml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        r = run("--project", tmp)
        check(r.returncode == 1, "%s: exit %d" % (what, r.returncode))
        check((path + pos) in r.stderr, "%s: wanted %s in: %s" % (what, path + pos, r.stderr))
        check(needle is None or needle in r.stderr, "%s: wanted '%s' in: %s" % (what, needle, r.stderr))
    # a target whose build cannot run: the manifest loads, the target's error says why
    path = os.path.join(tmp, "pyproject.toml")
    with open(path, "w", encoding="utf-8") as f:
        f.write('[project]\nname = "k"\ndependencies = ["torch>=2.8"]\n'
                '[tool.gpuenv.targets.k80]\ngpu = "Tesla K80"\ndriver = "470.82.01"\n'
                'python = "3.10"\nplatform = "manylinux_2_28_x86_64"\n')
    r = run("--project", tmp, "--json")
    check(r.returncode == 1, "k80: exit %d" % r.returncode)
    err = json.loads(r.stdout)["targets"][0].get("error", {}) if r.stdout else {}
    check("no torch build within torch>=2.8" in err.get("message", "") and "sm_37" in err.get("message", ""),
          "k80: explained: %r" % err)
    # no targets: none declared (the lead's lock probes this machine)
    with open(path, "w", encoding="utf-8") as f:
        f.write('[project]\nname = "plain"\ndependencies = ["requests"]\n')
    r = run("--project", tmp, "--json")
    check(r.returncode == 0 and json.loads(r.stdout)["targets"] == [], "no targets: an empty list")
    r = run("--project", os.path.join(tmp, "missing.toml"))
    check(r.returncode == 1 and "missing.toml" in r.stderr, "a missing file is named: " + r.stderr)

print("%d failures" % len(failures))
raise SystemExit(1 if failures else 0)
