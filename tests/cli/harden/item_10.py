"""Item 10: a killed lock left pylock.*.toml.tmp.* in the project, and killed
syncs left partial downloads and half-unpacked trees in the cache's tmp/
(removed only by `cache prune`).  Now the next run clears a dead process's
temporaries: an atomic write's temporary is flocked by its writer until the
rename, so one that can be locked (and is not brand new) is a dead one's; the
cache's tmp/ is cleared when the cache is opened and no other process holds
it.  A live writer's files stay: both are tried here with a live holder."""
import os
import subprocess
import sys
import time

HOLD = r"""
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_SH if sys.argv[2] == "sh" else fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(120)
"""


def holder(path, mode):
    """A live process holding a flock on path until killed."""
    p = subprocess.Popen([sys.executable, "-c", HOLD, path, mode], stdout=subprocess.PIPE, text=True)
    p.stdout.readline()
    return p


def old(path):
    t = time.time() - 3600
    os.utime(path, (t, t))


def run(h):
    proj = h.project("p10")
    r = h.lock(proj)
    h.check(r.returncode == 0, "item 10: lock: %s" % r.stderr)
    dead = os.path.join(proj, "pylock.cpu.toml.tmp.Dead01")
    live = os.path.join(proj, "pylock.cpu.toml.tmp.Live01")
    fresh = os.path.join(proj, "pylock.cpu.toml.tmp.New001")
    for p in (dead, live, fresh):
        with open(p, "w") as f:
            f.write("lock-version = ")
    old(dead)
    old(live)
    hp = holder(live, "ex")
    try:
        r = h.lock(proj)  # unchanged: the lock itself is not written
        h.check(r.returncode == 0, "item 10: lock again: %s" % r.stderr)
        h.check(not os.path.exists(dead), "item 10: a killed lock's temporary is removed")
        h.check(os.path.exists(live), "item 10: a live writer's temporary stays")
        h.check(os.path.exists(fresh), "item 10: a temporary of seconds ago stays (its writer may not hold it yet)")
    finally:
        hp.kill()
        hp.wait()

    cache = os.path.join(h.TMP, "cache10")
    r = h.sync(proj, os.path.join(h.TMP, "v10"), "--cache-dir", cache)
    h.check(r.returncode == 0, "item 10: sync: %s" % r.stderr)
    left = os.path.join(cache, "tmp", "4000000-1-abc-tree")
    os.makedirs(os.path.join(left, "beta"))
    with open(os.path.join(left, "beta", "__init__.py"), "w") as f:
        f.write("# half\n")
    with open(os.path.join(cache, "tmp", "4000000-2-abd-whl"), "wb") as f:
        f.write(b"PK\x03\x04partial")
    hp = holder(os.path.join(cache, ".lock"), "sh")  # another sync in progress
    try:
        r = h.sync(proj, os.path.join(h.TMP, "v10"), "--cache-dir", cache, "--reinstall")
        h.check(r.returncode == 0 and os.path.exists(left),
                "item 10: the cache in use by another process: its tmp/ stays: %d %s" % (r.returncode, r.stderr))
    finally:
        hp.kill()
        hp.wait()
    r = h.sync(proj, os.path.join(h.TMP, "v10"), "--cache-dir", cache, "--reinstall")
    h.check(r.returncode == 0 and os.listdir(os.path.join(cache, "tmp")) == [],
            "item 10: a killed sync's tmp/ is cleared: %d %s %s" % (r.returncode, r.stderr,
                                                                   os.listdir(os.path.join(cache, "tmp"))))
