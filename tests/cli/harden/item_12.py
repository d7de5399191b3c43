"""Item 12: out of memory was printed as "gpuenv: success" (exit 4), or with
no message, a wrong one, or a bare "out of memory".  With every allocation
failing from the Nth on (GPUENV_TEST_ALLOC_FAIL, cli/alloc_inject.c, the
sanitizer build), a failing run exits 4 saying "out of memory" and what was
being done, never "success".  The whole sweep over lock, sync, export,
tree, doctor, preflight and labels is tests/cli/test_alloc_sweep.py; this
is the quick reproduction."""
import os


def run(h):
    proj = h.project("p12")
    r = h.lock(proj)
    if not h.check(r.returncode == 0, "item 12: lock: %d %s" % (r.returncode, r.stderr)):
        return
    # the failing allocator is in sanitizer builds only (GPUENV_ALLOC_INJECT):
    # it counts allocations into GPUENV_TEST_ALLOC_COUNT's file
    count = os.path.join(h.TMP, "p12.count")
    r = h.gpuenv("tree", "--project", proj, env={"GPUENV_TEST_ALLOC_COUNT": count})
    if not os.path.exists(count):
        h.check(r.returncode == 0, "item 12: tree (no failing allocator in this build): %d %s"
                % (r.returncode, r.stderr))
        return
    env = {"GPUENV_TEST_ALLOC_FAIL": "", "ASAN_OPTIONS": "detect_leaks=0:" + os.environ.get("ASAN_OPTIONS", "")}
    seen = 0
    for n in (2, 3, 6, 11, 20):
        env["GPUENV_TEST_ALLOC_FAIL"] = str(n)
        r = h.gpuenv("tree", "--project", proj, env=env)
        if r.returncode == 0:
            continue
        seen += 1
        err = r.stderr
        h.check(r.returncode == 4 and "out of memory" in err, "item 12: tree, failing from %d: %d %s"
                % (n, r.returncode, err))
        h.check("success" not in err, "item 12: tree, failing from %d: 'success': %s" % (n, err))
        h.check("out of memory while running `gpuenv tree`" in err or
                not any(line.rstrip().endswith(": out of memory") for line in err.splitlines()),
                "item 12: tree, failing from %d: a bare 'out of memory': %s" % (n, err))
        h.check(r.stdout == "", "item 12: tree, failing from %d: a partial output: %r" % (n, r.stdout))
    h.check(seen >= 3, "item 12: the failing allocator made no run fail (%d): is this the sanitizer build?" % seen)
