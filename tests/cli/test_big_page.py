"""A project whose index page is tens of MB (issue 22 item 16: a 38 MB page
took 834 MB; the page is now read token by token and released as it is
read).  tests/fixtures/bigpage.py writes a 24 MiB PEP 691 page of ~40,000
files and its PEP 503 HTML form, three of them real wheels (first, middle,
last); tests/fixtures/index_server.py serves each form on 127.0.0.1.

  - `gpuenv lock` picks the newest real wheel, with its hash, from either
    form, cold (downloaded and cached) and warm: from a fresh cache entry
    (HTML server, max-age 600) and after a 304 (JSON server, max-age 0,
    so the entry's body is read and written again);
  - `big==<the middle version>` finds the file in the middle of the page;
  - `debug index --format json` gives every file of the page with the
    generator's values (hashes, sizes, requires-python, yanked reasons with
    escapes and characters past the BMP), the same from both forms;
  - a page cut short in the cache is a miss, fetched again.
Peak RSS is bench/mem.sh's (meaningless under ASan)."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import bigpage  # noqa: E402
import index_server  # noqa: E402

TMP = tempfile.mkdtemp(prefix="gpuenv-bigpage-")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def gpuenv(*args):
    e = dict(os.environ)
    e.pop("VIRTUAL_ENV", None)
    return subprocess.run([BIN, *args], capture_output=True, text=True, env=e, timeout=600)


def project(name, dep):
    d = os.path.join(TMP, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "pyproject.toml"), "w") as f:
        f.write('[project]\nname = "%s"\nversion = "0.1"\ndependencies = ["%s"]\n\n'
                '[tool.gpuenv.targets.cpu]\ngpu = "none"\npython = "3.12"\n'
                'platform = "manylinux_2_28_x86_64"\n' % (name, dep))
    return d


def lock(proj, url, cache):
    r = gpuenv("lock", "--project", proj, "--index-url", url, "--cache-dir", cache)
    if not check(r.returncode == 0, "lock %s: %d %s" % (proj, r.returncode, r.stderr[-2000:])):
        return None
    with open(os.path.join(proj, "pylock.cpu.toml"), "rb") as f:
        lk = tomllib.load(f)
    return {p["name"]: p for p in lk["packages"]}


def main():
    info = bigpage.write(os.path.join(TMP, "idx"), 24)
    n, real = info["files"], info["real"]
    check(info["json"] > 20 << 20 and info["html"] > 15 << 20, "page sizes: %s" % info)
    newest, middle = real[-1], real[1]
    servers = []
    urls = {}
    for fmt, extra in (("json", ["--max-age", "0"]), ("html", [])):
        proc, port = index_server.start(os.path.join(TMP, "idx"), "--formats", fmt, *extra)
        servers.append(proc)
        urls[fmt] = "http://127.0.0.1:%d/simple/" % port
    try:
        listings = {}
        for fmt, url in urls.items():
            cache = os.path.join(TMP, "cache-" + fmt)
            for run in ("cold", "warm"):
                p = lock(project("p-%s-%s" % (fmt, run), "big"), url, cache)
                if p:
                    w = p.get("big", {}).get("wheels", [{}])[0]
                    check(p["big"]["version"] == newest.version and w.get("name") == newest.filename and
                          w.get("hashes", {}).get("sha256") == newest.sha256,
                          "%s %s: the newest wheel: %s" % (fmt, run, p.get("big")))
            p = lock(project("p-%s-mid" % fmt, "big==" + middle.version), url, cache)
            if p:
                w = p["big"]["wheels"][0]
                check(w["name"] == middle.filename and w["hashes"]["sha256"] == middle.sha256,
                      "%s: the middle wheel: %s" % (fmt, p["big"]))
            r = gpuenv("debug", "index", "--index-url", url, "--cache-dir", cache, "--json", "big")
            if check(r.returncode == 0, "debug index %s: %s" % (fmt, r.stderr[-2000:])):
                doc = json.loads(r.stdout)
                listings[fmt] = doc["projects"][0]["files"] if "projects" in doc else doc[0]["files"]
        for fmt, files in listings.items():
            if not check(len(files) == n, "%s: %d files listed, %d on the page" % (fmt, len(files), n)):
                continue
            for i in (0, 1, 2, 5, 102, n // 2, n - 2, n - 1):
                want = bigpage.real_entry(real[info["real_index"].index(i)]) if i in info["real_index"] \
                    else bigpage.fake_entry(i)
                f = files[i]
                ok = (f["filename"] == want["filename"] and f["url"].endswith("/files/" + want["filename"]) and
                      f["sha256"] == want["hashes"]["sha256"] and
                      f["metadata_sha256"] == want["core-metadata"]["sha256"] and
                      f["requires_python"] == want["requires-python"] and
                      f["yanked"] == bool(want["yanked"]) and
                      f["yanked_reason"] == (want["yanked"] if isinstance(want["yanked"], str) else None))
                if fmt == "json":  # PEP 503 pages carry neither
                    ok = ok and f["size"] == want["size"] and f["upload_time"] == want["upload-time"]
                check(ok, "%s: file %d: %s, want %s" % (fmt, i, f, want))
        if len(listings) == 2:
            def same(f):  # PEP 503 has no size, no upload-time; the servers' ports differ
                g = {k: v for k, v in f.items() if k not in ("size", "upload_time")}
                g["url"] = g["url"].split("/", 3)[3]
                return g
            check([same(f) for f in listings["json"]] == [same(f) for f in listings["html"]],
                  "the JSON and HTML forms give other files")
        # a cached page cut short: a miss, fetched again
        cache = os.path.join(TMP, "cache-html")
        entries = [p for p in glob.glob(os.path.join(cache, "**", "*"), recursive=True)
                   if os.path.isfile(p) and os.path.getsize(p) > 10 << 20]
        if check(len(entries) == 1, "one big cache entry: %s" % entries):
            with open(entries[0], "r+b") as f:
                f.truncate(os.path.getsize(entries[0]) - 1000)
            p = lock(project("p-html-cut", "big"), urls["html"], cache)
            check(p and p["big"]["version"] == newest.version, "after a cut entry: %s" % p)
            check(os.path.getsize(entries[0]) > info["html"], "the entry was written again")
    finally:
        for proc in servers:
            proc.terminate()
            proc.wait()
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    shutil.rmtree(TMP, ignore_errors=True)
    print("ok: a %.1f MB JSON page and a %.1f MB HTML page of %d files" % (info["json"] / 1e6, info["html"] / 1e6, n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
