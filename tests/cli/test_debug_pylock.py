"""gpuenv debug pylock: PEP 751 locks read strictly and written back.

parse(write(x)) == x: a lock in gpuenv's own layout comes back byte for byte
and as the same data; the PEP's example (and other tools' sources) parse, and
their rewrite is a fixed point; refusals are one message with file:line:col;
--json carries the same data as the TOML."""
import json
import os
import subprocess
import sys
import tempfile
import tomllib

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", ".")
CORPUS = os.path.join(SRC, "tests", "fuzz", "corpus", "pylock")
failures = []


def run(*args, stdin=None):
    return subprocess.run([BIN, "debug", "pylock", *args], capture_output=True, text=True,
                          input=stdin, timeout=60)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def read(name):
    with open(os.path.join(CORPUS, name), encoding="utf-8") as f:
        return f.read()


# a lock gpuenv wrote: the same bytes and the same data back
own = read("gpuenv-h200.toml")
r = run(os.path.join(CORPUS, "gpuenv-h200.toml"))
check(r.returncode == 0, "own lock: exit %d %s" % (r.returncode, r.stderr))
check(r.stdout == own, "own lock is not written back byte for byte:\n" + r.stdout)
check(tomllib.loads(r.stdout) == tomllib.loads(own), "own lock: the data differs")
data = tomllib.loads(r.stdout)
check(data["tool"]["gpuenv"]["backend"] == "cu128", "[tool.gpuenv] backend kept")
check([p["name"] for p in data["packages"]] == ["filelock", "nvidia-cudnn-cu12", "torch"],
      "packages sorted by name")

# the PEP's example, as the PEP writes it (pip-style: single quotes, inline
# wheels, attestation identities, another tool's [tool] table)
pep = os.path.join(CORPUS, "pep751-example.toml")
r = run(pep)
check(r.returncode == 0, "PEP example: exit %d %s" % (r.returncode, r.stderr))
if r.returncode == 0:
    out = tomllib.loads(r.stdout)
    src = tomllib.loads(read("pep751-example.toml"))
    for p in src["packages"]:
        p.pop("attestation-identities", None)
    src.pop("tool")
    src.setdefault("extras", [])
    src.setdefault("dependency-groups", [])
    check(out == src, "PEP example: the rewrite holds other data:\n%r\n%r" % (out, src))
    r2 = run("-", stdin=r.stdout)
    check(r2.returncode == 0 and r2.stdout == r.stdout, "the rewrite is not a fixed point")

# other tools' sources: directory, vcs, archive, sdist only, names from URLs
r = run(os.path.join(CORPUS, "other-sources.toml"))
check(r.returncode == 0, "other sources: exit %d %s" % (r.returncode, r.stderr))
if r.returncode == 0:
    out = tomllib.loads(r.stdout)
    by = {p["name"]: p for p in out["packages"]}
    check(by["myproject"]["directory"] == {"path": ".", "editable": True}, "directory kept")
    check(by["fromgit"]["vcs"]["commit-id"] == "deadbeef" and by["fromgit"]["vcs"]["subdirectory"] == "py",
          "vcs kept")
    check(by["tarball"]["archive"]["subdirectory"] == "src", "archive kept")
    check(by["torch"]["wheels"][0]["name"] == "torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl",
          "a wheel's name from its percent-encoded URL")
    check(run("-", stdin=r.stdout).stdout == r.stdout, "other sources: not a fixed point")

# --json: the same data as the TOML
r = run("--json", os.path.join(CORPUS, "gpuenv-h200.toml"))
check(r.returncode == 0, "--json: exit %d %s" % (r.returncode, r.stderr))
if r.returncode == 0:
    j = json.loads(r.stdout)
    check(j["target"]["gpu"] == data["tool"]["gpuenv"]["gpu"], "--json target")
    torch = [p for p in j["packages"] if p["name"] == "torch"][0]
    want = [p for p in data["packages"] if p["name"] == "torch"][0]
    check(torch["wheels"][0]["hashes"] == want["wheels"][0]["hashes"], "--json hashes")
    check(torch["wheels"][0]["upload-time"] == "2025-08-06T17:00:00Z", "--json upload-time as text")
    check(torch["reason"] == want["tool"]["gpuenv"]["reason"], "--json reason")
    check(torch["dependencies"] == want["dependencies"], "--json dependencies")

# refusals: exit 1, file:line:col, nothing on stdout
for name, where, text in [
        ("bad-no-hash.toml", ":27:263:", "has no hash"),
        ("bad-version-2.toml", ":1:16:", "newer than this gpuenv reads"),
        ("bad-two-sources.toml", ":3:3:", "exclude every other source")]:
    r = run(os.path.join(CORPUS, name))
    check(r.returncode == 1 and r.stdout == "" and where in r.stderr and text in r.stderr,
          "%s: %d %r" % (name, r.returncode, r.stderr))
with tempfile.TemporaryDirectory() as d:
    p = os.path.join(d, "pylock.toml")
    with open(p, "w") as f:
        f.write('lock-version = "1.0"\ncreated-by = "t"\n[[packages]]\nname = "a"\nverison = "1"\n'
                'directory = { path = "." }\n')
    r = run(p)
    check(r.returncode == 1 and (p + ":5:1: unknown key 'verison'") in r.stderr
          and "did you mean 'version'" in r.stderr, "typo: %r" % r.stderr)
    r = run(os.path.join(d, "missing.toml"))
    check(r.returncode in (1, 4) and "missing.toml" in r.stderr, "missing file: %d %r" % (r.returncode, r.stderr))
r = run()
check(r.returncode == 2, "no FILE is a usage error: %d" % r.returncode)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("debug pylock: ok")
