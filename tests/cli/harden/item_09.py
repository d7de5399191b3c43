"""Item 9: `lock --dump DIR` into a place that cannot be written printed an
error and exited 0.  Every verb exits 4 when an output it was asked for
cannot be written: a file named by an option (--dump, -o, --profile) under
something that is not a folder, or standard output on a full device."""
import os
import subprocess


def to_full(h, *args):
    """gpuenv args with stdout on /dev/full: (exit status, stderr)."""
    e = dict(os.environ)
    e.pop("VIRTUAL_ENV", None)
    with open("/dev/full", "w") as full:
        p = subprocess.run([h.BIN, *args], stdout=full, stderr=subprocess.PIPE, text=True, env=e, timeout=120)
    return p.returncode, p.stderr


def run(h):
    proj = h.project("p09")
    # a regular file where a folder should be: unwritable even for root
    notdir = os.path.join(h.TMP, "p09-file")
    with open(notdir, "w") as f:
        f.write("x")
    bad = os.path.join(notdir, "sub")

    r = h.lock(proj, "--dump", bad)
    h.check(r.returncode == 4 and "--dump" in r.stderr and bad in r.stderr,
            "item 9: lock --dump into a non-folder: %d %s" % (r.returncode, r.stderr))
    h.check(os.path.exists(os.path.join(proj, "pylock.cpu.toml")), "item 9: the lock itself is written")
    r = h.lock(proj, "--dump", bad, "--json")
    h.check(r.returncode == 4, "item 9: lock --json --dump into a non-folder: %d %s" % (r.returncode, r.stderr))
    r = h.lock(proj, "--dump", os.path.join(h.TMP, "p09-dump"))
    h.check(r.returncode == 0 and os.path.exists(os.path.join(h.TMP, "p09-dump", "scenario.cpu.toml")),
            "item 9: lock --dump into a folder: %d %s" % (r.returncode, r.stderr))

    r = h.lock(proj, "--profile", os.path.join(bad, "trace.json"))
    h.check(r.returncode == 4, "item 9: lock --profile into a non-folder: %d %s" % (r.returncode, r.stderr))
    for fmt in ("requirements", "constraints"):
        r = h.gpuenv("export", "--project", proj, "--format", fmt, "-o", os.path.join(bad, "req.txt"))
        h.check(r.returncode == 4 and bad in r.stderr,
                "item 9: export --format %s -o into a non-folder: %d %s" % (fmt, r.returncode, r.stderr))

    # standard output on a full device, for the project verbs
    lk = os.path.join(proj, "pylock.cpu.toml")
    for args in (["lock", "--project", proj, "--index-url", h.index(), "--cache-dir", h.CACHE],
                 ["--json", "lock", "--project", proj, "--index-url", h.index(), "--cache-dir", h.CACHE],
                 ["lock", "--check", "--project", proj],
                 ["tree", "--project", proj], ["export", "--project", proj], ["export", "--lock", lk],
                 ["preflight", "--lock", lk, "--facts",
                  os.path.join(h.SRC, "docs", "hardware", "h200-2026-11-29", "probe.json")],
                 ["sync", "--project", proj, "--venv", os.path.join(h.TMP, "v09"), "--python", h.PY,
                  "--index-url", h.index(), "--cache-dir", h.CACHE]):
        st, err = to_full(h, *args)
        h.check(st == 4 and "write error" in err,
                "item 9: %s > /dev/full: exit %d (want 4) %s" % (" ".join(args[:2]), st, err[-300:]))
