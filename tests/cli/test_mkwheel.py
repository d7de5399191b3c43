"""tests/fixtures/mkwheel.py makes what it says: wheels whose RECORD, METADATA,
WHEEL and entry points gpuenv's own parsers accept (debug metadata
--validate-record), sdists with static PKG-INFO, the same bytes on every run,
and a PEP 503 tree (hashes, data-requires-python, data-yanked, PEP 658
metadata) that pip resolves from when the pyenv pip 23.2.1 is there."""
import hashlib
import html.parser
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", ".")
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import mkwheel  # noqa: E402

PIP = "/root/.pyenv/versions/3.11.7/bin/python"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def gpuenv(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60)


SPEC = [
    {"name": "a", "version": "1.0.0", "requires": ["b>1.0.0"],
     "extras": {"x": ["c; python_version >= '3'"]}},
    {"name": "b", "version": "1.0.0"},
    {"name": "b", "version": "2.0.0", "requires_python": ">=3.8"},
    {"name": "b", "version": "3.0.0", "requires": ["c"], "yanked": "broken"},
    {"name": "c", "version": "1.0", "wheel": False},
    {"name": "Some_Pkg", "version": "0.1",
     "wheel_tags": ["cp312-cp312-manylinux_2_28_x86_64", "cp312-cp312-manylinux_2_28_aarch64"],
     "entry_points": {"console_scripts": {"sp": "some_pkg:main"}}},
]

with tempfile.TemporaryDirectory() as tmp:
    # one wheel, through gpuenv's parsers
    w = mkwheel.make_wheel(os.path.join(tmp, "w"), "Some_Pkg", "0.1+cu128", tags="py2.py3-none-any",
                           requires=["numpy>=1.26", "torch==2.8.0; sys_platform == 'linux'"],
                           requires_python=">=3.9", extras={"cli": ["click"]}, build="1",
                           entry_points={"console_scripts": {"sp": "some_pkg:main"}})
    check(w.filename == "some_pkg-0.1+cu128-1-py2.py3-none-any.whl", "wheel name %s" % w.filename)
    r = gpuenv("debug", "wheel-name", w.filename)
    check(r.returncode == 0 and json.loads(r.stdout)["build"] == [1, ""], "wheel-name: %s" % r.stderr)
    with zipfile.ZipFile(w.path) as z:
        z.extractall(os.path.join(tmp, "x"))
        names = z.namelist()
    info = os.path.join(tmp, "x", "some_pkg-0.1+cu128.dist-info")
    check(names[-1].endswith("/RECORD"), "RECORD comes last")
    r = gpuenv("debug", "metadata", "--validate-record", info)
    check(r.returncode == 0, "debug metadata --validate-record: %s" % r.stderr)
    if r.returncode == 0:
        md = json.loads(r.stdout)
        text = json.dumps(md)
        check("numpy>=1.26" in text and 'extra == \\"cli\\"' in text and ">=3.9" in text,
              "METADATA fields: %s" % text[:400])
        check("console_scripts" in text and "some_pkg:main" in text, "entry points")
    # the same bytes again
    w2 = mkwheel.make_wheel(os.path.join(tmp, "w2"), "Some_Pkg", "0.1+cu128", tags="py2.py3-none-any",
                            requires=["numpy>=1.26", "torch==2.8.0; sys_platform == 'linux'"],
                            requires_python=">=3.9", extras={"cli": ["click"]}, build="1",
                            entry_points={"console_scripts": {"sp": "some_pkg:main"}})
    check(w.sha256 == w2.sha256, "the same inputs give the same wheel")

    # an sdist with static metadata (PEP 643)
    s = mkwheel.make_sdist(os.path.join(tmp, "s"), "Some.Pkg", "2.0", requires=["b"], dynamic=["Summary"])
    check(s.filename == "some_pkg-2.0.tar.gz", "sdist name %s" % s.filename)
    with tarfile.open(s.path) as t:
        pkg_info = t.extractfile("some_pkg-2.0/PKG-INFO").read().decode()
    check(pkg_info.startswith("Metadata-Version: 2.2\n") and "Requires-Dist: b\n" in pkg_info
          and "Dynamic: Summary\n" in pkg_info, "PKG-INFO: %r" % pkg_info)
    s2 = mkwheel.make_sdist(os.path.join(tmp, "s2"), "Some.Pkg", "2.0", requires=["b"], dynamic=["Summary"])
    check(s.sha256 == s2.sha256, "the same inputs give the same sdist")

    # an index
    root = os.path.join(tmp, "idx")
    dists = mkwheel.build_index(root, SPEC, json_pages=True)
    check(len(dists) == 12, "12 files, %d" % len(dists))
    with open(os.path.join(root, "simple", "b", "index.html"), encoding="utf-8") as f:
        page = f.read()

    class Links(html.parser.HTMLParser):
        links = []

        def handle_starttag(self, tag, attrs):
            if tag == "a":
                self.links.append(dict(attrs))

    p = Links()
    p.feed(page)
    check(len(p.links) == 6, "b's page lists 6 files")
    for a in p.links:
        href, _, frag = a["href"].partition("#sha256=")
        with open(os.path.join(root, "simple", "b", href), "rb") as f:
            check(hashlib.sha256(f.read()).hexdigest() == frag, "hash of %s" % href)
        if href.endswith(".whl"):
            with open(os.path.join(root, "simple", "b", href + ".metadata"), "rb") as f:
                check("sha256=" + hashlib.sha256(f.read()).hexdigest() == a["data-core-metadata"],
                      "PEP 658 metadata of %s" % href)
    check(sum(a.get("data-requires-python") == ">=3.8" for a in p.links) == 2, "data-requires-python")
    check(sum(a.get("data-yanked") == "broken" for a in p.links) == 2, "data-yanked")
    with open(os.path.join(root, "simple", "some-pkg", "index.json"), encoding="utf-8") as f:
        j = json.load(f)
    check(j["meta"]["api-version"] == "1.1" and len(j["files"]) == 3, "PEP 691 page")
    fl = os.path.join(tmp, "fl")
    mkwheel.build_index(fl, SPEC[:2], find_links=True)
    check(sorted(os.listdir(fl)) == ["a-1.0.0-py3-none-any.whl", "a-1.0.0.tar.gz",
                                     "b-1.0.0-py3-none-any.whl", "b-1.0.0.tar.gz"], "find-links folder")

    # a real client resolves from it: b 3 is yanked, c has no wheel
    if os.path.exists(PIP):
        rep = os.path.join(tmp, "report.json")
        r = subprocess.run([PIP, "-m", "pip", "install", "--dry-run", "--quiet", "--report", rep,
                            "--ignore-installed", "--only-binary", ":all:", "--target", os.path.join(tmp, "t"),
                            "--python-version", "3.12", "--platform", "manylinux_2_28_x86_64",
                            "--index-url", "file://" + root + "/simple/", "a", "some-pkg"],
                           capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, PIP_NO_INDEX="", PIP_CONFIG_FILE=os.devnull))
        check(r.returncode == 0, "pip: %s" % r.stderr[-800:])
        if r.returncode == 0:
            with open(rep, encoding="utf-8") as f:
                got = sorted((i["metadata"]["name"], i["metadata"]["version"]) for i in json.load(f)["install"])
            check(got == [("Some_Pkg", "0.1"), ("a", "1.0.0"), ("b", "2.0.0")], "pip chose %r" % got)
    else:
        print("pip 23.2.1 not found at %s: the pip cross-check is left out" % PIP)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("mkwheel: ok")
