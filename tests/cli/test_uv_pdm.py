"""uv's and PDM's tables (docs/manifest.md, "uv" and "PDM") locked on the
PyTorch-shaped fixture index (tests/fixtures/torch_index.py, file://):

  - uv's documented PyTorch recipe: an explicit index pytorch-cu128 and
    torch = [{ index = "pytorch-cu128", marker = "sys_platform == 'linux'" }]
    locks torch (and torchvision with it) from that index, numpy from the
    default one;
  - sources by marker choose per target: the cpu index for an aarch64
    target, cu128 for the x86_64 H200;
  - a PDM project with a find_links source locks a package only it has
    from it, and include_packages pins a name PyPI also has to it;
  - bad input with file:line:col: an index no [[tool.uv.index]] declares,
    a source list whose markers overlap, an unknown key, a git source (read,
    refused at lock time), two conflicting extras on one target; and the
    required-environments warning."""
import json
import os
import subprocess
import sys
import tempfile
import tomllib

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import mkwheel  # noqa: E402
import torch_index  # noqa: E402

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-uvpdm-test-")
CACHE = os.path.join(TMP, "cache")
URLS = torch_index.build(os.path.join(TMP, "index"), series=["2.8"])
PYPI, TORCH = URLS["pypi"], URLS["torch-index"]


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def project(name, text):
    d = os.path.join(TMP, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "pyproject.toml"), "w") as f:
        f.write(text)
    return d


def lock(d, *extra):
    return run("lock", "--project", d, "--index-url", PYPI, "--torch-index", TORCH, "--cache-dir", CACHE, *extra)


def pkgs(d, target):
    with open(os.path.join(d, "pylock.%s.toml" % target), "rb") as f:
        return {p["name"]: p for p in tomllib.load(f)["packages"]}


H200 = ('[tool.gpuenv.targets.h200]\ngpu = "H200"\ndriver = "580.159.04"\npython = "3.12"\n'
        'platform = "manylinux_2_28_x86_64"\n')
ARM = '[tool.gpuenv.targets.arm]\ngpu = "none"\npython = "3.12"\nplatform = "manylinux_2_28_aarch64"\n'

# ---- uv's PyTorch recipe -----------------------------------------------------------------
RECIPE = ('[project]\nname = "uvproj"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
          'dependencies = ["torch>=2.8", "torchvision", "numpy"]\n\n'
          '[[tool.uv.index]]\nname = "pytorch-cu128"\nurl = "https://download.pytorch.org/whl/cu128"\n'
          'explicit = true\n\n'
          '[tool.uv.sources]\n'
          'torch = [{ index = "pytorch-cu128", marker = "sys_platform == \'linux\'" }]\n'
          'torchvision = [{ index = "pytorch-cu128", marker = "sys_platform == \'linux\'" }]\n\n' + H200)
UV = project("uv-recipe", RECIPE)
rc, out, err = lock(UV, "--source-url", "pytorch-cu128=%s/cu128/" % TORCH)
check(rc == 0, "uv recipe: lock exit 0: %d %s%s" % (rc, out, err))
if rc == 0:
    p = pkgs(UV, "h200")
    check(p["torch"]["version"].endswith("+cu128") and "/cu128/" in p["torch"]["index"],
          "uv recipe: torch from the explicit pytorch-cu128 index: %s %s" % (p["torch"]["version"], p["torch"]["index"]))
    check("/cu128/" in p["torchvision"]["index"], "uv recipe: torchvision too: %s" % p["torchvision"]["index"])
    check("/pypi/" in p["numpy"]["index"], "uv recipe: numpy from the default index: %s" % p["numpy"]["index"])
    check("/pypi/" in p["filelock"]["index"], "uv recipe: torch's own dependencies from the default index")
rc, out, err = run("debug", "manifest", "--project", UV, "--json")
doc = json.loads(out) if rc == 0 else {}
check(doc.get("dialects") == ["uv"], "debug manifest: uv's tables read: %r" % doc.get("dialects"))
src = {s["name"]: s for s in doc.get("sources", [])}
check(src.get("pytorch-cu128", {}).get("priority") == "explicit"
      and src["pytorch-cu128"]["from"] == "[[tool.uv.index]]" and src["pytorch-cu128"]["line"] == 7,
      "debug manifest: the index, explicit, from [[tool.uv.index]] line 7: %r" % src.get("pytorch-cu128"))
check(src.get("pypi", {}).get("from") == "implicit", "debug manifest: PyPI stays the default: %r" % src.get("pypi"))
torch = [d for d in doc.get("dependencies", []) if d["name"] == "torch"]
check(torch and torch[0]["sources_by"][0]["marker"] == 'sys_platform == "linux"'
      and torch[0]["from"] == "project.dependencies",
      "debug manifest: torch's source by marker and where torch was read: %r" % torch)

# ---- sources by marker, per target ---------------------------------------------------------
BYM = project("by-marker", '[project]\nname = "m"\nversion = "0"\ndependencies = ["torch>=2.8", "numpy"]\n'
              '[[tool.uv.index]]\nname = "torch-cpu"\nurl = "https://download.pytorch.org/whl/cpu"\nexplicit = true\n'
              '[[tool.uv.index]]\nname = "torch-gpu"\nurl = "https://download.pytorch.org/whl/cu128"\nexplicit = true\n'
              '[tool.uv.sources]\ntorch = [\n'
              '  { index = "torch-cpu", marker = "platform_machine == \'aarch64\'" },\n'
              '  { index = "torch-gpu", marker = "platform_machine == \'x86_64\'" },\n]\n' + H200 + ARM)
rc, out, err = lock(BYM, "--source-url", "torch-cpu=%s/cpu/" % TORCH, "--source-url", "torch-gpu=%s/cu128/" % TORCH)
check(rc == 0, "by marker: lock exit 0: %d %s%s" % (rc, out, err))
if rc == 0:
    h, a = pkgs(BYM, "h200"), pkgs(BYM, "arm")
    check(h["torch"]["version"].endswith("+cu128") and "/cu128/" in h["torch"]["index"],
          "by marker: h200 (x86_64) gets torch-gpu: %s" % h["torch"]["index"])
    check(a["torch"]["version"].endswith("+cpu") and "/cpu/" in a["torch"]["index"]
          and "aarch64" in a["torch"]["wheels"][0]["name"],
          "by marker: arm (aarch64) gets torch-cpu: %s" % a["torch"]["index"])

# ---- PDM: a find_links source, include_packages -------------------------------------------
LINKS = os.path.join(TMP, "links")
os.makedirs(LINKS)
mkwheel.make_wheel(LINKS, "internal-tool", "1.2.0")
mkwheel.make_wheel(LINKS, "numpy", "1.99.0")
PDM = project("pdm", '[project]\nname = "p"\nversion = "0"\nrequires-python = ">=3.10"\n'
              'dependencies = ["internal-tool", "numpy"]\n'
              '[[tool.pdm.source]]\nname = "internal"\nurl = "file://%s"\ntype = "find_links"\n'
              'verify_ssl = true\n\n%s' % (LINKS, H200))
rc, out, err = lock(PDM)
check(rc == 0, "pdm: lock exit 0: %d %s%s" % (rc, out, err))
if rc == 0:
    p = pkgs(PDM, "h200")
    check(p["internal-tool"]["version"] == "1.2.0" and LINKS in json.dumps(p["internal-tool"]),
          "pdm: internal-tool from the PDM source: %r" % p["internal-tool"])
    check(p["numpy"]["version"] != "1.99.0", "pdm: numpy from PyPI, asked first: %s" % p["numpy"]["version"])
with open(os.path.join(PDM, "pyproject.toml")) as f:
    text = f.read()
with open(os.path.join(PDM, "pyproject.toml"), "w") as f:
    f.write(text.replace('type = "find_links"\n', 'type = "find_links"\ninclude_packages = ["num*"]\n'))
rc, out, err = lock(PDM)
check(rc == 0 and pkgs(PDM, "h200")["numpy"]["version"] == "1.99.0",
      "pdm: include_packages = [\"num*\"] pins numpy to the source: %d %s%s" % (rc, out, err))

# ---- bad input: file:line:col ------------------------------------------------------------
BASE = '[project]\nname = "b"\nversion = "0"\ndependencies = ["torch", "httpx"]\n'
IDX = '[[tool.uv.index]]\nname = "a"\nurl = "https://a/simple"\n[[tool.uv.index]]\nname = "b"\nurl = "https://b/simple"\n'
bad = [
    ("unknown index", BASE + IDX + '[tool.uv.sources]\ntorch = { index = "c" }\n', ":12:19:", "'a', 'b'"),
    ("overlapping markers", BASE + IDX + '[tool.uv.sources]\ntorch = [\n'
     '  { index = "a", marker = "sys_platform == \'linux\'" },\n'
     '  { index = "b", marker = "platform_machine == \'x86_64\'" },\n]\n', ":14:3:", "disjoint"),
    ("unknown key", BASE + IDX + '[tool.uv.sources]\ntorch = { index = "a", markers = "x" }\n', ":12:24:",
     "did you mean 'marker'"),
    ("unknown key in an index", BASE + '[[tool.uv.index]]\nname = "a"\nurl = "https://a/"\nexplict = true\n',
     ":8:1:", "did you mean 'explicit'"),
    ("pdm exclude_packages", BASE + '[[tool.pdm.source]]\nname = "x"\nurl = "https://x/"\nexclude_packages = ["a"]\n',
     ":8:20:", "exclude_packages"),
    ("conflicting extras on one target", '[project]\nname = "c"\nversion = "0"\n'
     '[project.optional-dependencies]\ncpu = ["torch"]\ngpu = ["torch"]\n'
     '[tool.uv]\nconflicts = [[{ extra = "cpu" }, { extra = "gpu" }]]\n'
     + H200 + 'extras = ["cpu", "gpu"]\n', ":9:1:", "conflicting"),
]
for what, text, pos, needle in bad:
    d = project("bad", text)
    path = os.path.join(d, "pyproject.toml")
    rc, out, err = run("debug", "manifest", "--project", d)
    check(rc == 1 and (path + pos) in err and needle in err,
          "%s: exit 1 with %s and '%s': %d %s" % (what, path + pos, needle, rc, err))

# a git source is read (debug manifest shows it); one that cannot be fetched is
# an error at its position (no network: a repository that is not there)
GIT = project("git", BASE + '[tool.uv.sources]\nhttpx = { git = "file:///nonexistent/httpx", tag = "0.27.0" }\n'
              + H200)
rc, out, err = run("debug", "manifest", "--project", GIT, "--json")
httpx = [d for d in json.loads(out)["dependencies"] if d["name"] == "httpx"] if rc == 0 else []
check(httpx and httpx[0]["direct"]["kind"] == "git" and httpx[0]["direct"]["tag"] == "0.27.0",
      "git source read as a direct reference: %r %s" % (httpx, err))
rc, out, err = lock(GIT)
path = os.path.join(GIT, "pyproject.toml")
check(rc != 0 and (path + ":6:17:") in out + err and "git dependency" in out + err,
      "git source refused at lock time at 6:17: %d %s%s" % (rc, out, err))
check(not os.path.exists(os.path.join(GIT, "pylock.h200.toml")), "git source: no lock written")

# required-environments a target is outside of: a warning, the lock goes on
REQ = project("req-env", '[project]\nname = "r"\nversion = "0"\ndependencies = ["numpy"]\n'
              '[tool.uv]\nrequired-environments = ["sys_platform == \'darwin\' and platform_machine == \'arm64\'"]\n'
              + H200)
rc, out, err = lock(REQ)
path = os.path.join(REQ, "pyproject.toml")
check(rc == 0 and "warning" in err and (path + ":7:1:") in err and "required-environments" in err,
      "required-environments: a warning at the target, the lock done: %d %s%s" % (rc, out, err))
check("no declared target" in err, "required-environments: the uncovered environment said: %s" % err)
# environments (uv's only environments): a target outside them is an error
ENV = project("env", '[project]\nname = "e"\nversion = "0"\ndependencies = ["numpy"]\n'
              '[tool.uv]\nenvironments = ["sys_platform == \'darwin\'"]\n' + H200)
rc, out, err = run("debug", "manifest", "--project", ENV)
check(rc == 1 and "outside [tool.uv] environments" in err, "environments: a target outside is an error: %s" % err)

print("%d failures" % len(failures))
raise SystemExit(1 if failures else 0)
