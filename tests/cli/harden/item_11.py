"""Item 11: GPU names took the first known name and ignored the rest:
`gpu = "T4 H100"` was a T4, "A100 or T4" an A100, "T4; rm -rf /" a T4.  A
name that is not exactly one GPU is now an error with suggestions, at
pyproject.toml:LINE:COL in a target and on the command line alike; board
words after a name ("A100-SXM4-80GB", "H100 80GB HBM3") still name it."""
import os
import re


def run(h):
    for i, (gpu, want_msg, want_hint) in enumerate((
            ("T4 H100", "names 2 GPUs, not one", "give one name: 'NVIDIA T4' or 'NVIDIA H100'"),
            ("A100 or T4", "names 2 GPUs, not one", "give one name: 'NVIDIA A100' or 'NVIDIA T4'"),
            ("T4; rm -rf /", "words around 'NVIDIA T4' are not part of a GPU's name",
             "did you mean 'NVIDIA T4'?"))):
        proj = h.project("p11-%d" % i, target={"gpu": gpu, "driver": "570.86.15"})
        r = h.lock(proj)
        # the gpu key is line 7 (after [project]'s four lines, a blank and the table)
        pos = re.search(r"pyproject\.toml:(\d+):(\d+): ", r.stderr)
        h.check(r.returncode == 4 and pos and pos.group(1) == "7" and want_msg in r.stderr and want_hint in r.stderr,
                "item 11: lock with gpu = %r: %d %s" % (gpu, r.returncode, r.stderr))
        h.check(not os.path.exists(os.path.join(proj, "pylock.cpu.toml")), "item 11: %r: no lock written" % gpu)

        r = h.gpuenv("kb", "gpu", gpu)
        h.check(r.returncode != 0 and want_msg in r.stderr and want_hint in r.stderr,
                "item 11: kb gpu %r: %d %s %s" % (gpu, r.returncode, r.stdout, r.stderr))
        r = h.gpuenv("kb", "torch", "--gpu", gpu)
        h.check(r.returncode != 0 and want_hint in r.stderr,
                "item 11: kb torch --gpu %r: %d %s" % (gpu, r.returncode, r.stderr))

    # the names drivers print still name their GPU
    for name, want in (("NVIDIA A100-SXM4-80GB", "NVIDIA A100"), ("NVIDIA H100 80GB HBM3", "NVIDIA H100"),
                       ("Tesla T4", "NVIDIA T4")):
        r = h.gpuenv("kb", "gpu", "--json", name)
        h.check(r.returncode == 0 and want in r.stdout, "item 11: kb gpu %r: %d %s" % (name, r.returncode, r.stderr))
    proj = h.project("p11-ok", target={"gpu": "NVIDIA A100-SXM4-80GB", "driver": "570.86.15"})
    r = h.gpuenv("debug", "manifest", "--project", proj)
    h.check(r.returncode == 0 and "NVIDIA A100" in r.stdout,
            "item 11: a driver's name in a target: %d %s %s" % (r.returncode, r.stdout[-300:], r.stderr))
