"""Item 16: errors without a position or a hint.  `python = "2.7"` in a
target failed deep in the wheel tags ("target Python 2.7: only Python 3.0
to 3.99 is supported", no file); a lock whose files carry only other hashes
than sha256 (valid PEP 751) failed with "the cache needs its sha256 (64 hex
digits), got ''"; a lock entry without `version` (optional in PEP 751)
failed with "beta : the wheel's METADATA says beta 1.0".  Now the first two
are errors at their file:line with what to do, and a missing version is
taken from the wheel's file name, as PEP 751 allows."""
import hashlib
import os
import re


def run(h):
    proj = h.project("p16-py", target={"python": "2.7"})
    r = h.lock(proj)
    h.check(r.returncode == 4 and re.search(r"pyproject\.toml:8:\d+: .*python = \"2\.7\": gpuenv locks for Python "
                                            r"3\.0 to 3\.99 only", r.stderr) and "hint: " in r.stderr,
            "item 16: python = 2.7: %d %s" % (r.returncode, r.stderr))

    proj = h.project("p16")
    r = h.lock(proj)
    h.check(r.returncode == 0, "item 16: lock: %s" % r.stderr)
    path = os.path.join(proj, "pylock.cpu.toml")
    with open(path) as f:
        text = f.read()
    files = os.path.join(h.index()[len("file://"):], "..", "files")

    def sha512(m):
        with open(os.path.join(files, m.group(1)), "rb") as f:
            digest = hashlib.sha512(f.read()).hexdigest()
        return '{ name = "%s"%shashes = { sha512 = "%s" } }' % (m.group(1), m.group(2), digest)
    only512 = re.sub(r'\{ name = "([^"]+\.whl)"(.*?)hashes = \{ sha256 = "[0-9a-f]+" \} \}', sha512, text)
    h.check(only512.count("sha512") == 2 and "sha256" not in only512, "item 16: the sha512 lock: %s" % only512)
    with open(path, "w") as f:
        f.write(only512)
    r = h.sync(proj, os.path.join(h.TMP, "v16-512"), "--locked")
    line = only512[:only512.index('[[packages]]\nname = "alpha"')].count("\n") + 1
    h.check(r.returncode == 4 and "pylock.cpu.toml:%d: alpha 1.0: alpha-1.0-py3-none-any.whl has no sha256 hash "
            "(the lock gives sha512)" % line in r.stderr and "hint: lock again" in r.stderr,
            "item 16: only sha512 hashes: %d %s" % (r.returncode, r.stderr))

    with open(path, "w") as f:
        f.write(text.replace('name = "beta"\nversion = "1.0"\n', 'name = "beta"\n', 1))
    venv = os.path.join(h.TMP, "v16-nover")
    r = h.sync(proj, venv, "--locked")
    h.check(r.returncode == 0, "item 16: a lock entry without version: %d %s" % (r.returncode, r.stderr))
    r = h.sync(proj, venv, "--locked")
    h.check(r.returncode == 0 and "already match" in r.stdout + r.stderr,
            "item 16: without version, kept on the next sync: %d %s %s" % (r.returncode, r.stdout, r.stderr))
