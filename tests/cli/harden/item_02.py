"""Item 2: --timeout did not bound a download: sync used a stall timer of 1
byte/s, so a server trickling 2 bytes/s kept `sync --timeout 3` running for
ever.  Now a download gives up below a minimum rate (1 KiB/s over the
timeout) and, its size known, past a deadline scaled to that size; the
error says which applied.  The fixture server's "trickle" fault sends the
wheel slowly."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures"))
import index_server  # noqa: E402


def run(h):
    root = os.path.join(h.TMP, "index02")
    h.mkwheel.build_index(root, [
        {"name": "alpha", "version": "1.0", "requires": ["beta>=1.0"], "sdist": False},
        # 40 kB that do not compress: the download takes a while at 1.5 kB/s
        {"name": "beta", "version": "1.0", "sdist": False, "files": {"beta/blob.bin": os.urandom(40000)}},
    ])
    faults = os.path.join(h.TMP, "faults02.json")
    with open(faults, "w") as f:
        f.write("{}")
    proc, port = index_server.start(root, "--faults", faults)
    try:
        url = "http://127.0.0.1:%d/simple/" % port
        proj = h.project("p02")
        r = h.lock(proj, idx=url)
        h.check(r.returncode == 0, "item 2: lock over HTTP: %s" % r.stderr)
        for rate, want in ((2, "the download ran below the minimum rate of 1024 bytes/s for 3 s"),
                           (1500, "did not finish within its deadline of 3.6 s (--timeout 3 s plus the size at "
                                  "64 KiB/s)")):
            with open(faults, "w") as f:
                json.dump({"/files/beta-*.whl": {"trickle": rate}}, f)
            venv = os.path.join(h.TMP, "v02-%d" % rate)
            t0 = time.monotonic()
            r = h.sync(proj, venv, "--locked", "--timeout", "3", "--retries", "1", "--cache-dir",
                       os.path.join(h.TMP, "cache02-%d" % rate), idx=url)
            took = time.monotonic() - t0
            h.check(r.returncode == 4 and want in r.stderr and "(after 2 attempts)" in r.stderr,
                    "item 2: a download trickling %d bytes/s: %d %s" % (rate, r.returncode, r.stderr))
            h.check(took < 25, "item 2: %d bytes/s: bounded by the timeout, took %.1f s" % (rate, took))
        with open(faults, "w") as f:
            f.write("{}")
        r = h.sync(proj, os.path.join(h.TMP, "v02-ok"), "--locked", "--timeout", "3", "--cache-dir",
                   os.path.join(h.TMP, "cache02-ok"), idx=url)
        h.check(r.returncode == 0, "item 2: the same sync, no fault: %d %s" % (r.returncode, r.stderr))
    finally:
        proc.terminate()
        proc.wait()
