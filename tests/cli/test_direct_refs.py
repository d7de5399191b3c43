"""Direct references in the lock (issue 23 item 5; docs/lock.md "Direct
references"): dependencies that do not come from an index, locked as PEP 751
`directory` and `vcs` entries with their metadata asked of their build
backend (the sdist path of docs/build.md, a source tree being an sdist already
unpacked), built and installed by sync.  Offline: Debian's setuptools and wheel
wheels on a fixture index, a git repository made here with `git init`.

  - a path dependency (PEP 508 `name @ file:///...`) locks as a directory
    entry, a Poetry `path` with `develop = true` as an editable one, a git
    dependency (`name @ git+file:///...@v1`, a tag) as a vcs entry with the
    commit; their own dependencies come from their metadata;
  - sync builds and installs them; `import` works; the editable one is
    installed the PEP 660 way (setuptools' build_editable: an
    __editable__ .pth, direct_url.json with "editable": true), so an edit of
    its source shows without a sync;
  - moving the tag makes `lock --check` say stale (exit 1), naming the ref;
    a re-lock takes the new commit;
  - bad input: a path that does not exist, a git URL that cannot be cloned, a
    ref the repository lacks: errors at pyproject.toml:LINE:COL, no lock.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import mkwheel  # noqa: E402
from buildtest import PY, SETUPTOOLS, WHEEL, check, cpu_project, entries, finish, need_build_tools, run  # noqa: E402

need_build_tools(git=True)
TMP = tempfile.mkdtemp(prefix="gpuenv-direct-refs-test-")
CACHE = os.path.join(TMP, "cache")


def git(repo, *args):
    e = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
             GIT_COMMITTER_EMAIL="t@example.com", GIT_CONFIG_NOSYSTEM="1", HOME=TMP)
    p = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, env=e)
    assert p.returncode == 0, (args, p.stderr)
    return p.stdout.strip()


def source_tree(d, name, version, requires=(), value=None):
    """A setuptools project (PEP 621 [project]) in folder d."""
    mod = mkwheel.module_name(name)
    os.makedirs(os.path.join(d, mod), exist_ok=True)
    with open(os.path.join(d, "pyproject.toml"), "w") as f:
        f.write('[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n'
                '[project]\nname = "%s"\nversion = "%s"\ndependencies = [%s]\n\n'
                '[tool.setuptools]\npackages = ["%s"]\n'
                % (name, version, ", ".join('"%s"' % r for r in requires), mod))
    with open(os.path.join(d, mod, "__init__.py"), "w") as f:
        f.write("VALUE = %r\n" % (value or "%s %s" % (name, version)))


stage = os.path.join(TMP, "stage")
dists = [mkwheel.wheel_from_file(SETUPTOOLS, stage), mkwheel.wheel_from_file(WHEEL, stage),
         mkwheel.make_wheel(stage, "helper", "1.0"), mkwheel.make_wheel(stage, "other", "2.0")]
INDEX = os.path.join(TMP, "index")
mkwheel.write_index(INDEX, dists)
SIMPLE = "file://" + os.path.join(INDEX, "simple") + "/"

ALPHA = os.path.join(TMP, "src", "alpha")
source_tree(ALPHA, "alpha", "1.0", requires=["helper>=1.0"])
BETA = os.path.join(TMP, "src", "beta")
source_tree(BETA, "beta", "0.5", value="beta as first written")
REPO = os.path.join(TMP, "src", "gamma-repo")
source_tree(REPO, "gamma", "1.0", requires=["other"])
git(REPO, "init", "-q", "-b", "main")
git(REPO, "add", "-A")
git(REPO, "commit", "-q", "-m", "gamma 1.0")
git(REPO, "tag", "v1")
C1 = git(REPO, "rev-parse", "HEAD")
REPO_URL = "file://" + REPO


def project(name, body):
    return cpu_project(TMP, name, body, mkwheel.platform_tag())


def lock(proj, *extra):
    return run("lock", "--project", proj, "--index-url", SIMPLE, "--cache-dir", CACHE, *extra)


# ---- PEP 621: a path and a git dependency ---------------------------------

APP = project("app", '[project]\nname = "app"\nversion = "0.1"\ndependencies = [\n'
              '  "alpha @ file://%s",\n  "gamma @ git+%s@v1",\n]\n' % (ALPHA, REPO_URL))
rc, out, err = lock(APP)
check(rc == 0, "a path and a git dependency lock: exit %d\n%s%s" % (rc, out, err))
LOCKF = os.path.join(APP, "pylock.cpu.toml")
text = open(LOCKF).read() if os.path.exists(LOCKF) else ""
pk = entries(text)
check("alpha" in pk and 'directory = { path = "%s" }' % ALPHA in pk["alpha"],
      "alpha is a directory entry:\n" + text)
check("gamma" in pk and 'commit-id = "%s"' % C1 in pk["gamma"] and 'requested-revision = "v1"' in pk["gamma"]
      and 'type = "git"' in pk["gamma"] and 'url = "%s"' % REPO_URL in pk["gamma"],
      "gamma is a vcs entry with the tag's commit:\n" + text)
check("helper" in pk and "other" in pk, "their own dependencies come from their metadata (helper, other):\n" + text)
check("wheels" not in pk.get("alpha", "") and "wheels" not in pk.get("gamma", ""), "no wheel for them:\n" + text)

# the strict reader reads them back (gpuenv debug pylock)
rc, out, err = run("debug", "pylock", LOCKF, "--json")
try:
    doc = json.loads(out)
except ValueError:
    doc = None
check(rc == 0 and doc is not None, "debug pylock reads the lock: exit %d\n%s%s" % (rc, out[:2000], err))
if doc is not None:
    dump = json.dumps(doc)
    check(C1 in dump and ALPHA in dump, "debug pylock shows the vcs commit and the directory:\n" + dump[:3000])

rc, out, err = run("lock", "--check", "--project", APP)
check(rc == 0 and "fresh" in out, "lock --check: fresh while the tag stays: exit %d\n%s%s" % (rc, out, err))

VENV = os.path.join(TMP, "venv")
rc, out, err = run("sync", "--project", APP, "--venv", VENV, "--python", PY, "--index-url", SIMPLE,
                   "--cache-dir", CACHE)
check(rc == 0, "sync builds and installs them: exit %d\n%s%s" % (rc, out, err))
VPY = os.path.join(VENV, "bin", "python")
p = subprocess.run([VPY, "-c", "import alpha, gamma, helper, other; print(alpha.VALUE, '|', gamma.VALUE)"],
                   capture_output=True, text=True)
check(p.returncode == 0 and p.stdout.strip() == "alpha 1.0 | gamma 1.0", "import works: %s%s"
      % (p.stdout, p.stderr))

# ---- the tag moves: the lock is stale ---------------------------------------

with open(os.path.join(REPO, "gamma", "__init__.py"), "w") as f:
    f.write("VALUE = 'gamma 1.0, retagged'\n")
git(REPO, "commit", "-q", "-am", "retag")
git(REPO, "tag", "-f", "v1")
C2 = git(REPO, "rev-parse", "HEAD")
rc, out, err = run("lock", "--check", "--project", APP)
check(rc == 1 and "stale" in out and "v1" in out and C1[:12] in out and C2[:12] in out,
      "a moved tag makes the lock stale, naming the ref and both commits: exit %d\n%s%s" % (rc, out, err))
rc, out, err = lock(APP)
text = open(LOCKF).read() if os.path.exists(LOCKF) else ""
check(rc == 0 and 'commit-id = "%s"' % C2 in text, "a re-lock takes the new commit: exit %d\n%s%s"
      % (rc, out, err))
rc, out, err = run("lock", "--check", "--project", APP)
check(rc == 0, "fresh again after the re-lock: exit %d\n%s%s" % (rc, out, err))
rc, out, err = run("sync", "--project", APP, "--venv", VENV, "--python", PY, "--index-url", SIMPLE,
                   "--cache-dir", CACHE)
p = subprocess.run([VPY, "-c", "import gamma; print(gamma.VALUE)"], capture_output=True, text=True)
check(rc == 0 and p.stdout.strip() == "gamma 1.0, retagged", "sync installs the new commit: exit %d %s%s%s"
      % (rc, err, p.stdout, p.stderr))

# ---- Poetry: an editable path dependency, a git branch ----------------------

POETRY = project("poetryapp", '[tool.poetry]\nname = "poetryapp"\nversion = "0.1.0"\ndescription = ""\n'
                 'authors = []\n\n[tool.poetry.dependencies]\npython = "^3.11"\n'
                 'beta = { path = "../../src/beta", develop = true }\n'
                 'gamma = { git = "%s", branch = "main" }\n' % REPO_URL)
rc, out, err = lock(POETRY)
PLOCK = os.path.join(POETRY, "pylock.cpu.toml")
text = open(PLOCK).read() if os.path.exists(PLOCK) else ""
pk = entries(text)
check(rc == 0 and 'directory = { path = "../../src/beta", editable = true }' in pk.get("beta", ""),
      "Poetry develop = true: an editable directory entry (relative to the lock): exit %d\n%s%s%s"
      % (rc, out, err, text))
check('requested-revision = "main"' in pk.get("gamma", "") and C2 in pk.get("gamma", ""),
      "Poetry git with a branch: the branch's commit:\n" + text)
# from the project's folder (the manifest named relative to it): the same lock
rc, out, err = run("lock", "--index-url", SIMPLE, "--cache-dir", CACHE, cwd=POETRY)
check(rc == 0 and os.path.exists(PLOCK) and open(PLOCK).read() == text,
      "locked from its folder, the same lock: exit %d\n%s%s" % (rc, out, err))
PVENV = os.path.join(TMP, "pvenv")
rc, out, err = run("sync", "--project", POETRY, "--venv", PVENV, "--python", PY, "--index-url", SIMPLE,
                   "--cache-dir", CACHE)
check(rc == 0, "sync of the editable dependency: exit %d\n%s%s" % (rc, out, err))
PPY = os.path.join(PVENV, "bin", "python")
site = subprocess.run([PPY, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                      capture_output=True, text=True).stdout.strip()
pth = [f for f in os.listdir(site) if f.startswith("__editable__") and "beta" in f] if os.path.isdir(site) else []
check(pth, "the PEP 660 editable install leaves an __editable__ file for beta in %s: %r"
      % (site, os.listdir(site) if os.path.isdir(site) else None))
durl = [os.path.join(site, d, "direct_url.json") for d in (os.listdir(site) if os.path.isdir(site) else [])
        if d.startswith("beta-") and d.endswith(".dist-info")]
dj = json.load(open(durl[0])) if durl and os.path.exists(durl[0]) else {}
check(dj.get("dir_info", {}).get("editable") is True, "direct_url.json says editable: %r" % dj)
with open(os.path.join(BETA, "beta", "__init__.py"), "w") as f:
    f.write("VALUE = 'beta edited in place'\n")
p = subprocess.run([PPY, "-c", "import beta; print(beta.VALUE)"], capture_output=True, text=True)
check(p.returncode == 0 and p.stdout.strip() == "beta edited in place",
      "an edit of the editable source shows without a sync: %s%s" % (p.stdout, p.stderr))

# ---- bad input ------------------------------------------------------------


def bad(name, dep, want_msg, want_rc=4):
    body = '[project]\nname = "%s"\nversion = "0.1"\ndependencies = [\n  "%s",\n]\n' % (name, dep)
    d = project(name, body)
    rc, out, err = lock(d)
    pos = "%s:5:3" % os.path.join(d, "pyproject.toml")
    check(rc == want_rc and pos in err and want_msg in err,
          "%s: exit %d (want %d), the error at %s saying %r:\n%s%s" % (name, rc, want_rc, pos, want_msg, out, err))
    check(not os.path.exists(os.path.join(d, "pylock.cpu.toml")), "%s: no lock is written" % name)


bad("nopath", "alpha @ file://%s/missing" % TMP, "does not exist")
bad("noclone", "gamma @ git+file://%s/no-such-repo@v1" % TMP, "git fetch of file://%s/no-such-repo failed: fatal:" % TMP)
bad("noref", "gamma @ git+%s@v9" % REPO_URL, "the git ref 'v9' is not in")

# no git on PATH: a clear error
NOGIT = project("nogit", '[project]\nname = "nogit"\nversion = "0.1"\ndependencies = [\n  "gamma @ git+%s@v1",\n]\n'
                % (REPO_URL + "-other"))
rc, out, err = run("lock", "--project", NOGIT, "--index-url", SIMPLE, "--cache-dir", os.path.join(TMP, "cache2"),
                   env={"PATH": "/nonexistent"})
check(rc == 4 and "the git program is not on PATH" in err, "no git: a clear error: exit %d\n%s%s" % (rc, out, err))

shutil.rmtree(TMP, ignore_errors=True)
finish()
