#!/usr/bin/env python3
"""The resolver alone on the real corpora: ../shared/corpus/{h200-env,local-env}
turned into packse-format scenarios (each dist-info one version with its real
Requires-Dist, Requires-Python and wheel tags; a name that is required but
absent gets a dependency-free stub, as ../shared/tools/mkindex.py does), the
root the top-level set, then `gpuenv debug resolve --time N` (median CPU time
of the resolver with the metadata in memory).

    bench/resolve_corpus.py [--gpuenv build/gpuenv] [--runs 50] [--keep DIR]
"""
import argparse, os, re, subprocess, sys, tempfile
from email.parser import HeaderParser

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("GPUENV_SHARED", os.path.join(HERE, "..", "..", "shared"))
TARGETS = {"h200-env": "3.12", "local-env": "3.11"}


def norm(n):
    return re.sub(r"[-_.]+", "-", n).lower()


def q(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def scenario(corpus, python):
    dists, needed = {}, set()
    for d in sorted(os.listdir(corpus)):
        if not d.endswith(".dist-info"):
            continue
        h = HeaderParser().parsestr(open(os.path.join(corpus, d, "METADATA"), encoding="utf-8",
                                         errors="replace").read())
        reqs = [r.strip() for r in h.get_all("Requires-Dist") or []]
        tags = []
        wp = os.path.join(corpus, d, "WHEEL")
        if os.path.exists(wp):
            tags = [l.split(":", 1)[1].strip() for l in open(wp) if l.startswith("Tag:")]
        dists[norm(h["Name"])] = (h["Version"], reqs, h.get("Requires-Python"), tags)
        for r in reqs:
            if "extra ==" not in r:
                needed.add(norm(re.match(r"\s*([A-Za-z0-9._-]+)", r).group(1)))
    top = sorted(k for k in dists if k not in needed and k not in ("pip", "setuptools", "wheel"))
    out = ['name = "corpus-%s"' % os.path.basename(corpus),
           "[root]", "requires = [%s]" % ", ".join(q(t) for t in top),
           "[environment]", "python = %s" % q(python),
           # the H200 machine's glibc (Ubuntu 24.04): the real wheels need >= 2.34
           "[resolver_options]", 'python_platform = "x86_64-manylinux_2_39"']
    wanted = set()
    for name, (ver, reqs, rp, tags) in sorted(dists.items()):
        out.append("[packages.%s.versions.%s]" % (q(name), q(ver)))
        if reqs:
            out.append("requires = [%s]" % ", ".join(q(r) for r in reqs))
            wanted |= {norm(re.match(r"\s*([A-Za-z0-9._-]+)", r).group(1)) for r in reqs}
        if rp:
            out.append("requires_python = %s" % q(rp))
        if tags:
            out.append("wheel_tags = [%s]" % ", ".join(q(t) for t in tags))
            out.append("sdist = false")
    for w in sorted(wanted - set(dists)):
        out.append("[packages.%s.versions.\"999.0\"]" % q(w))
    return "\n".join(out) + "\n", len(top)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuenv", default=os.path.join(HERE, "..", "build", "gpuenv"))
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--keep", help="write the scenario files here")
    a = ap.parse_args()
    d = a.keep or tempfile.mkdtemp()
    os.makedirs(d, exist_ok=True)
    for env, py in TARGETS.items():
        text, ntop = scenario(os.path.join(SHARED, "corpus", env), py)
        path = os.path.join(d, env + ".toml")
        open(path, "w").write(text)
        p = subprocess.run([a.gpuenv, "debug", "resolve", "--time", str(a.runs), "--json", path],
                           capture_output=True, text=True)
        if p.returncode not in (0, 1):
            sys.exit("%s: %s" % (env, p.stderr))
        import json
        j = json.loads(p.stdout)
        print("%s (Python %s, %d top-level): %s, %d packages, %d decisions, %d conflicts; %s" % (
            env, py, ntop, "solved" if j["satisfiable"] else "NO SOLUTION", len(j["packages"]),
            j["decisions"], j["conflicts"], p.stderr.strip()))
        if not j["satisfiable"]:
            print(j["explanation"])


if __name__ == "__main__":
    main()
