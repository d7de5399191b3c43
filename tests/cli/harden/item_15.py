"""Item 15: an invalid data-requires-python (or requires-python, upload-time)
on an index page failed the whole lock with an error about
`packages[3].requires-python`.  Now the page's bad attribute is ignored, as
pip ignores it, with a warning naming the page and the file; the lock is
made and carries no bad value.  (The JSON pages' keys: tests/unit/test_index.c.)"""
import os


def run(h):
    url = h.index([
        {"name": "alpha", "version": "1.0", "requires": ["beta>=1.0"], "sdist": False},
        {"name": "beta", "version": "1.0", "sdist": False},
    ], name="index15")
    page = os.path.join(url[len("file://"):], "beta", "index.html")
    with open(page) as f:
        text = f.read()
    with open(page, "w") as f:
        f.write(text.replace("<a href=", '<a data-requires-python="&gt;=3.x" href=', 1))

    proj = h.project("p15")
    r = h.lock(proj, idx=url)
    h.check(r.returncode == 0, "item 15: lock with a bad data-requires-python: %d %s" % (r.returncode, r.stderr))
    h.check("requires-python of 1 file ignored" in r.stderr and "beta-1.0-py3-none-any.whl: '>=3.x'" in r.stderr
            and "/beta/" in r.stderr,
            "item 15: the warning names the page and the file: %s" % r.stderr)
    path = os.path.join(proj, "pylock.cpu.toml")
    text = open(path).read() if os.path.exists(path) else ""
    h.check('name = "beta"' in text and ">=3.x" not in text, "item 15: the lock, without the bad value: %s" % text[:600])
