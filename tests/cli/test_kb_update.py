"""gpuenv kb info, the "newer than the knowledge base" answers, and kb update /
kb bundle: signed bundles served by a local HTTP server; a good one installs and
every verb uses it; tampered, truncated, unsigned, foreign-signed and older ones
are refused and the knowledge base in use stays; a bundle damaged on disk is
passed over; --kb-dir and GPUENV_NO_KB_BUNDLE bypass bundles.

Needs a binary that trusts the test key (tests/fixtures/kb-keys; the test build,
-Dkb_test_key=true); with another binary the bundle half is skipped (exit 77)."""
import http.server
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import tomllib
import zipfile

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
KB = os.path.join(SRC, "data", "kb")
KEYS = os.path.join(SRC, "tests", "fixtures", "kb-keys")
failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-kbup-")
ENV = dict(os.environ, GPUENV_DATA_DIR=os.path.join(TMP, "data"))
ENV.pop("GPUENV_NO_KB_BUNDLE", None)


def run(*args, env=None):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120, env=env or ENV)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def js(*args, env=None):
    r = run("--json", *args, env=env)
    try:
        return r.returncode, json.loads(r.stdout), r.stderr
    except ValueError:
        return r.returncode, {}, r.stderr + r.stdout


def load(name):
    with open(os.path.join(KB, name), "rb") as f:
        return tomllib.load(f)


def ver(s):
    return tuple(int(x) for x in s.split("."))


# --- kb info -------------------------------------------------------------------------
about = load("about.toml")["about"][0]["date"]
rc, info, err = js("kb", "info")
check(rc == 0, "kb info: exit 0 (%s)" % err)
check(info.get("date") == about and info.get("embedded_date") == about, "kb info: the date of about.toml")
check(info.get("from") == "embedded" and info.get("bundle") is None, "kb info: built in")
rc2, src, _ = js("kb", "sources")
check(info.get("rows") == src.get("rows") and info["rows"] > 500, "kb info: rows agree with kb sources")
check(sum(d["rows"] for d in info.get("documents", {}).values()) == info.get("rows"),
      "kb info: every row counted under one document")
check(any(h.startswith("docs.nvidia.com") for h in info.get("hosts", {})), "kb info: hosts")
torch_newest = max((r["torch"] for r in load("torch.toml")["release"]), key=ver)
cuda_rows = load("cuda.toml")
cuda_newest = max((r["cuda"] for r in cuda_rows["toolkit"] + cuda_rows.get("toolkit_known", [])), key=ver)
check(info.get("newest", {}).get("torch") == torch_newest, "kb info: newest torch %s" % torch_newest)
check(info.get("newest", {}).get("cuda") == cuda_newest, "kb info: newest CUDA %s" % cuda_newest)
ngc = load("ngc.toml")["container"]
pt = max((r["release"] for r in ngc if r["image"] == "nvcr.io/nvidia/pytorch"), key=ver)
check(info.get("newest", {}).get("ngc", {}).get("nvcr.io/nvidia/pytorch") == pt, "kb info: newest pytorch release")
r = run("kb", "info")
check(r.returncode == 0 and ("knowledge base: %s (built in)" % about) in r.stdout and "sources:" in r.stdout
      and "trusted signing keys:" in r.stdout, "kb info text: %s" % r.stdout[:300])

# --- newer than the knowledge base -----------------------------------------------------
month = about[:7]
tv = ver(torch_newest)
newer_torch = "%d.%d" % (tv[0], tv[1] + 1)
r = run("kb", "torch", "--version", newer_torch)
check(r.returncode == 1 and ("the knowledge base is from %s; torch %s is newer" % (month, newer_torch)) in r.stderr
      and "gpuenv kb update" in r.stderr, "kb torch --version %s: %s" % (newer_torch, r.stderr))
cv = ver(cuda_newest)
newer_cuda = "%d.%d" % (cv[0], cv[1] + 1)
r = run("kb", "driver", "--cuda", newer_cuda)
check(r.returncode == 1 and ("CUDA %s is newer" % newer_cuda) in r.stderr, "kb driver --cuda %s: %s" % (newer_cuda, r.stderr))
yy = int(pt.split(".")[0]) + 1
r = run("kb", "image", "nvcr.io/nvidia/pytorch:%d.01-py3" % yy)
check(r.returncode == 1 and ("release %d.01 is newer than the newest it knows, %s" % (yy, pt)) in r.stderr,
      "kb image of a newer NGC release: %s" % r.stderr)
r = run("kb", "image", "nvcr.io/nvidia/pytorch:22.13-py3")
check(r.returncode == 1 and "is newer" not in r.stderr and "not in the knowledge base" in r.stderr,
      "an unknown release that is not newer: plain not found: %s" % r.stderr)
r = run("kb", "torch", "--version", "1.99")
check(r.returncode == 1 and "is newer" not in r.stderr, "an old unknown torch is not 'newer': %s" % r.stderr)
facts = os.path.join(SRC, "tests", "fixtures", "doctor", "driver-too-old-cu130", "facts.json")
r = run("preflight", "--torch", newer_torch + ".0+cu130", "--facts", facts)
check(r.returncode == 4 and "is newer than the newest it knows" in r.stderr, "preflight --torch newer: %s" % r.stderr)

# --- bundles ---------------------------------------------------------------------------------
rc, info, _ = js("kb", "info")
if not any(k["name"] == "test" for k in info.get("trusted_keys", [])):
    print("this binary does not trust the test key (build with -Dkb_test_key=true): bundle tests skipped")
    shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(1 if failures else 77)

TEST_KEY = os.path.join(KEYS, "test-signing-key.pem")
OTHER_KEY = os.path.join(KEYS, "untrusted-key.pem")


def kb_copy(name, date, extra_toolkit=None):
    d = os.path.join(TMP, name)
    shutil.copytree(KB, d)
    p = os.path.join(d, "about.toml")
    with open(p) as f:
        t = f.read()
    with open(p, "w") as f:
        f.write(re.sub(r'date = "[0-9-]+"', 'date = "%s"' % date, t))
    if extra_toolkit:
        with open(os.path.join(d, "cuda.toml"), "a") as f:
            f.write('\n[[toolkit]]\ncuda = "%s"\nupdate = 0\nlabel = "CUDA %s (test)"\n'
                    'driver_linux = "%s"\nsource = "tests/cli/test_kb_update.py"\n' % extra_toolkit)
    return d


def bundle(d, out, key=TEST_KEY):
    r = run("kb", "bundle", d, "--key", key, "-o", out)
    check(r.returncode == 0 and os.path.getsize(out) > 1000, "kb bundle %s: %s" % (out, r.stderr))
    return out


serve = os.path.join(TMP, "www")
os.makedirs(serve)
good = bundle(kb_copy("kb-new", "2099-01-01", ("13.99", "13.99", "999.1.2")), os.path.join(serve, "good.zip"))
old = bundle(kb_copy("kb-old", "2000-01-01"), os.path.join(serve, "old.zip"))
foreign = bundle(kb_copy("kb-foreign", "2099-02-01"), os.path.join(serve, "foreign.zip"), OTHER_KEY)
with open(good, "rb") as f:
    good_bytes = f.read()
with open(os.path.join(serve, "truncated.zip"), "wb") as f:
    f.write(good_bytes[: len(good_bytes) // 2])


def rezip(dst, change=None, drop=None):
    """good.zip with one entry changed (name -> function of bytes) or dropped"""
    zin = zipfile.ZipFile(io.BytesIO(good_bytes))
    with zipfile.ZipFile(dst, "w") as zout:
        for n in zin.namelist():
            if n == drop:
                continue
            data = zin.read(n)
            if change and n in change:
                data = change[n](data)
            zout.writestr(n, data)


rezip(os.path.join(serve, "tampered.zip"), change={"cuda.toml": lambda b: b.replace(b'driver_linux = "570.26"', b'driver_linux = "470.26"', 1)})
rezip(os.path.join(serve, "unsigned.zip"), drop="MANIFEST.sig")
rezip(os.path.join(serve, "redated.zip"), change={"MANIFEST": lambda b: b.replace(b"2099-01-01", b"2099-12-31")})
rezip(os.path.join(serve, "extra.zip"), change={})
with zipfile.ZipFile(os.path.join(serve, "extra.zip"), "a") as z:
    z.writestr("notes.txt", "not listed")


class Quiet(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **k):
        super().__init__(*a, directory=serve, **k)

    def log_message(self, *a):
        pass


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
threading.Thread(target=srv.serve_forever, daemon=True).start()
URL = "http://127.0.0.1:%d/" % srv.server_address[1]


def in_use():
    rc, d, _ = js("kb", "info")
    return d.get("date"), d.get("from")


# refused ones first: nothing installed, the built-in KB stays
for name, words in [("tampered.zip", "does not have the SHA-256"), ("truncated.zip", "not a readable zip file"),
                    ("unsigned.zip", "no MANIFEST.sig"), ("foreign.zip", "does not verify with a key"),
                    ("redated.zip", "does not verify with a key"), ("extra.zip", "not in its signed manifest"),
                    ("missing.zip", "404")]:
    r = run("kb", "update", "--from", URL + name)
    check(r.returncode == 4 and words in r.stderr and "the knowledge base in use stays: %s" % about in r.stderr,
          "%s refused (%s): rc %d %s" % (name, words, r.returncode, r.stderr[-400:]))
    check(in_use() == (about, "embedded"), "%s: the built-in KB stays" % name)
check(not os.path.exists(os.path.join(TMP, "data", "kb")) or
      [n for n in os.listdir(os.path.join(TMP, "data", "kb")) if not n.startswith(".")] == [],
      "nothing installed by refused bundles: %s" % os.listdir(os.path.join(TMP, "data")) if os.path.exists(os.path.join(TMP, "data")) else "")
leftovers = [n for n in os.listdir(os.path.join(TMP, "data", "kb"))] if os.path.exists(os.path.join(TMP, "data", "kb")) else []
check(leftovers == [], "no staging or download files left: %s" % leftovers)

r = run("kb", "update", "--from", URL + "old.zip")
check(r.returncode == 0 and "nothing installed" in r.stdout and in_use() == (about, "embedded"),
      "an older bundle: nothing installed: %s %s" % (r.stdout, r.stderr))

# the good one, over HTTP
rc, d, err = js("kb", "update", "--from", URL + "good.zip")
check(rc == 0 and d.get("status") == "installed" and d.get("date") == "2099-01-01" and d.get("key") == "test",
      "good bundle installed: %s %s" % (d, err))
check(in_use() == ("2099-01-01", "bundle"), "kb info: the bundle is in use")
rc, d, err = js("kb", "driver", "--cuda", "13.99")
check(rc == 0 and d.get("min_driver") == "999.1.2", "a verb answers from the bundle: %s %s" % (d, err))
rc, d, _ = js("kb", "sources")
check(all(f["origin"].startswith(os.path.join(TMP, "data", "kb")) for f in d.get("files", [])),
      "kb sources: the files come from the bundle")
r = run("kb", "update", "--from", good)
check(r.returncode == 0 and "as new as the bundle" in r.stdout, "the same bundle again, from a file: current")
# the refused ones again, now with a bundle in use: it stays
r = run("kb", "update", "--from", URL + "tampered.zip")
check(r.returncode == 4 and "stays: 2099-01-01 (installed bundle)" in r.stderr and in_use() == ("2099-01-01", "bundle"),
      "tampered with a bundle in use: it stays: %s" % r.stderr[-300:])

# bypasses
rc, d, _ = js("kb", "info", "--kb-dir", KB)
check(d.get("date") == about and d.get("from") == "kb-dir", "--kb-dir bypasses bundles: %s" % d.get("from"))
rc, d, _ = js("kb", "info", env=dict(ENV, GPUENV_NO_KB_BUNDLE="1"))
check(d.get("date") == about and d.get("from") == "embedded", "GPUENV_NO_KB_BUNDLE=1: built in")

# damaged on disk: passed over with a warning, repaired by installing again
inst = [n for n in os.listdir(os.path.join(TMP, "data", "kb")) if not n.startswith(".")]
check(len(inst) == 1 and inst[0].startswith("2099-01-01-"), "one bundle folder: %s" % inst)
with open(os.path.join(TMP, "data", "kb", inst[0], "cuda.toml"), "a") as f:
    f.write("# changed\n")
r = run("kb", "driver", "--cuda", "12.8")
check(r.returncode == 0 and "knowledge-base bundle not used" in r.stderr and "cuda.toml has" in r.stderr,
      "a damaged bundle is passed over with a warning: %s" % r.stderr)
r = run("kb", "driver", "--cuda", "13.99")
check(r.returncode == 1, "the damaged bundle's rows are not used")
check(in_use() == (about, "embedded"), "the built-in KB in its place")
rc, d, _ = js("kb", "update", "--from", URL + "good.zip")
check(rc == 0 and d.get("status") == "installed" and in_use() == ("2099-01-01", "bundle"),
      "installing again repairs it: %s" % d)

# usage and bad input to kb bundle
r = run("kb", "update", env=dict(ENV, GPUENV_KB_URL=""))
check(r.returncode == 2 and "--from" in r.stderr, "kb update without a source: usage error")
with open(os.path.join(TMP, "notakey.pem"), "w") as f:
    f.write("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
r = run("kb", "bundle", KB, "--key", os.path.join(TMP, "notakey.pem"), "-o", os.path.join(TMP, "x.zip"))
check(r.returncode == 4 and "not an Ed25519 private key" in r.stderr and not os.path.exists(os.path.join(TMP, "x.zip")),
      "kb bundle with a bad key: refused, nothing written: %s" % r.stderr)
r = run("kb", "bundle", os.path.join(TMP, "www"), "--key", TEST_KEY, "-o", os.path.join(TMP, "y.zip"))
check(r.returncode == 4 and "about.toml" in r.stderr, "kb bundle of a folder without about.toml: %s" % r.stderr)

srv.shutdown()
shutil.rmtree(TMP, ignore_errors=True)
print("ok" if not failures else "%d failures" % len(failures))
sys.exit(1 if failures else 0)
