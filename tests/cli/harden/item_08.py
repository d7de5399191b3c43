"""Item 8: the lock's size was not checked for a wheel already in the cache
(keyed by hash): a wrong size installed from a warm cache and failed from a
cold one.  Now both fail alike: the tree records its wheel's size, else the
cached wheel's is read."""
import os
import shutil


def run(h):
    proj = h.project("p08")
    cache = os.path.join(h.TMP, "cache08")
    r = h.lock(proj)
    h.check(r.returncode == 0, "item 8: lock: %s" % r.stderr)
    path = os.path.join(proj, "pylock.cpu.toml")
    with open(path) as f:
        text = f.read()
    i = text.index('{ name = "beta-1.0-py3-none-any.whl"')
    j = text.index("size = ", i) + len("size = ")
    k = text.index(",", j)
    size = int(text[j:k])
    with open(path, "w") as f:
        f.write(text[:j] + str(size + 1) + text[k:])
    want = "beta-1.0-py3-none-any.whl has %d bytes" % size

    def fill(drop):
        """The cache as a good sync leaves it, less `drop` (trees, wheels)."""
        shutil.rmtree(cache, ignore_errors=True)
        with open(path, "w") as f:
            f.write(text)
        r = h.sync(proj, os.path.join(h.TMP, "v08-fill"), "--cache-dir", cache, "--reinstall")
        h.check(r.returncode == 0, "item 8: filling the cache: %s" % r.stderr)
        if drop:
            shutil.rmtree(os.path.join(cache, drop) if drop != "." else cache)
        with open(path, "w") as f:
            f.write(text[:j] + str(size + 1) + text[k:])

    for what, drop in (("tree and wheel cached", None), ("tree cached", "wheels"), ("wheel cached", "trees"),
                       ("cold cache", ".")):
        fill(drop)
        venv = os.path.join(h.TMP, "v08-" + what.replace(" ", "-"))
        r = h.sync(proj, venv, "--locked", "--cache-dir", cache)
        h.check(r.returncode == 4 and want in r.stderr and "expected %d" % (size + 1) in r.stderr,
                "item 8: %s: the wrong size is an error: %d %s" % (what, r.returncode, r.stderr))
        site = os.path.join(venv, "lib", "python" + h.PYXY, "site-packages")
        h.check(not os.path.exists(os.path.join(site, "beta")), "item 8: %s: beta not installed" % what)
