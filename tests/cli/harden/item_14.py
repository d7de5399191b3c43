"""Item 14: a full file system under the venv was reported as
"b2.bin: cannot copy b2.bin to b2.bin" with a hint to prune the cache.
The report names the full paths, the file system that is full (its mount
point, type and free bytes) and the fix: free space on that file system;
`gpuenv cache prune` is offered only where the cache is on it too.

A small tmpfs mounted here holds the venv (and, in the second case, the
cache).  The CI runs this as root; mounting one is part of what is
tested, so a machine that cannot mount fails this item rather than skip."""
import os
import subprocess

BLOB = 5 << 20  # random: the wheel is as large as the file it holds


def mount(h, name, size):
    mnt = os.path.join(h.TMP, name)
    os.makedirs(mnt)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s" % size, "tmpfs", mnt],
                       capture_output=True, text=True)
    h.check(r.returncode == 0, "item 14: mount a tmpfs on %s (needs root): %s" % (mnt, r.stderr))
    return mnt if r.returncode == 0 else None


def sync(h, proj, venv, idx, cache, *extra):
    return h.gpuenv("sync", "--project", proj, "--venv", venv, "--python", h.PY, "--index-url", idx,
                    "--cache-dir", cache, *extra)


def run(h):
    idx = h.index([{"name": "b2", "version": "1.0", "sdist": False,
                    "files": {"b2/b2.bin": os.urandom(BLOB)}}], name="index14")
    proj = h.project("p14", deps=("b2",))
    r = h.lock(proj, idx=idx)
    if not h.check(r.returncode == 0, "item 14: lock: %d %s" % (r.returncode, r.stderr)):
        return

    # the venv on a full tmpfs, the cache elsewhere: the copy fails
    mnt = mount(h, "mnt14a", "2m")
    if mnt:
        try:
            venv = os.path.join(mnt, "venv")
            r = sync(h, proj, venv, idx, h.CACHE)
            err = r.stderr
            h.check(r.returncode == 4, "item 14: full venv: exit %d %s" % (r.returncode, err))
            h.check("b2.bin: cannot copy b2.bin" not in err, "item 14: bare names again: %s" % err)
            # the file by its full path in the venv, the source by its full path in the cache
            h.check(venv + "/" in err and "/b2.bin" in err and os.path.realpath(h.CACHE) in err,
                    "item 14: full paths named: %s" % err)
            h.check("No space left" in err, "item 14: the cause: %s" % err)
            h.check("file system mounted on %s (tmpfs) is full" % mnt in err and "free of 2.0 MiB" in err,
                    "item 14: the full file system, its type and size named: %s" % err)
            h.check("free space on it" in err, "item 14: the fix: %s" % err)
            h.check("prune" not in err, "item 14: the cache is elsewhere, pruning it does not help: %s" % err)
        finally:
            subprocess.run(["umount", mnt])

    # the cache on the same full tmpfs (copies asked for: a hardlink would
    # take no space): pruning the cache is the right advice now
    mnt = mount(h, "mnt14b", "11m")
    if mnt:
        try:
            venv = os.path.join(mnt, "venv")
            r = sync(h, proj, venv, idx, os.path.join(mnt, "cache"), "--link-mode", "copy")
            err = r.stderr
            h.check(r.returncode == 4 and "No space left" in err, "item 14: full tmpfs: %d %s" % (r.returncode, err))
            h.check("file system mounted on %s (tmpfs) is full" % mnt in err,
                    "item 14: the full file system named: %s" % err)
            h.check("gpuenv cache prune" in err, "item 14: the cache shares it: prune offered: %s" % err)
        finally:
            subprocess.run(["umount", mnt])
