"""Item 13: an unknown `torch-backend = "cu999"` locked with exit 0 and wrote
the error text, with an absolute local path, into the lock.  Now a build no
torch release has is an error at pyproject.toml:LINE:COL (the target's key
and [tool.gpuenv]'s alike), and a torch build that does not run on a target
is still locked around, its reason in the lock naming pyproject.toml
relative to the project, never by the path of the machine that locked."""
import os
import re


def run(h):
    for i, (where, extra) in enumerate((("target", {"torch-backend": "cu999"}), ("tool.gpuenv", None))):
        proj = h.project("p13-%d" % i, target=extra)
        if extra is None:
            path = os.path.join(proj, "pyproject.toml")
            with open(path) as f:
                text = f.read()
            with open(path, "w") as f:
                f.write(text.replace("[tool.gpuenv.targets.cpu]", '[tool.gpuenv]\ntorch-backend = "cu999"\n\n'
                                     "[tool.gpuenv.targets.cpu]"))
        r = h.lock(proj)
        pos = re.search(r"pyproject\.toml:(\d+):(\d+): ", r.stderr)
        h.check(r.returncode == 4 and pos and int(pos.group(1)) in (7, 10) and
                'torch-backend = "cu999": no torch release has a cu999 build' in r.stderr and
                "builds it knows: " in r.stderr and "cu126" in r.stderr,
                "item 13: %s torch-backend = cu999: %d %s" % (where, r.returncode, r.stderr))
        h.check(pos and int(pos.group(1)) == (10 if where == "target" else 7),
                "item 13: %s: the line of the key: %s" % (where, r.stderr))
        h.check(not os.path.exists(os.path.join(proj, "pylock.cpu.toml")), "item 13: %s: no lock" % where)

    # a build the KB has that does not run on the target: the lock is made
    # without torch, and why is in it, with no local path
    proj = h.project("p13-run", target={"gpu": "RTX 5090", "driver": "575.51.03", "torch-backend": "cpu"})
    r = h.lock(proj)
    h.check(r.returncode == 0, "item 13: a cpu build named for an RTX 5090: %d %s" % (r.returncode, r.stderr))
    path = os.path.join(proj, "pylock.cpu.toml")
    text = open(path).read() if os.path.exists(path) else ""
    h.check("backend-reason = " in text and "pyproject.toml:" in text,
            "item 13: the lock says why there is no torch build: %s" % text[-800:])
    # the wheels' URLs name the file:// index the test gave: the user's own
    leaks = [x for x in text.splitlines()
             if h.TMP in x.replace('url = "file://' + h.TMP, "").replace('index = "file://' + h.TMP, "")]
    h.check(not leaks, "item 13: no local path in the lock: %s" % leaks)
