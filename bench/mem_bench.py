#!/usr/bin/env python3
"""Peak RSS of gpuenv lock, sync and probe (bench/mem.sh runs this; docs/benchmarks.md, "Memory").

Every figure is the "Maximum resident set size" of /usr/bin/time -v around one
gpuenv process, median of N runs:

  lock      the h200-env corpus (../shared/corpus/h200-env) as an index built by
            ../shared/tools/mkindex.py and served on 127.0.0.1 by
            bench/lock_bench.py's server (PyPI's Cache-Control), the project
            and target of bench/lock.sh (the H200, torch-backend cu130);
            cold (a fresh cache) and warm, for subsets of the top-level set
            whose locks hold about --sizes packages (the whole set: 195), so
            that the growth per package shows: a least-squares line through
            (packages, peak RSS) gives bytes per package
  sync      gpuenv sync --locked of the whole set's lock into a new venv
            (--python, default /root/.pyenv/versions/3.12.1), cold (empty
            cache: every wheel downloaded, hashed, unpacked) and warm (cache
            kept, venv made again) and no-op; h200-env has no RECORD files,
            so its wheels are mkindex's stubs: this measures the per-package
            cost, not a data volume; then, when lock ran, a cold sync of
            each size's lock, and its least-squares bytes per package
  probe     gpuenv probe --json on this machine
  page      gpuenv lock and gpuenv debug index on one project whose page is
            --page-mb MiB of PEP 691 JSON, and the same files as PEP 503 HTML
            (tests/fixtures/bigpage.py; issue 22 item 16: a 38 MB page took
            834 MB), cold (empty cache) and warm (a fresh cache entry), with
            the wall time of each run
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import lock_bench  # noqa: E402  (its server, its h200-env target)


def peak_rss(cmd, env=None):
    """(exit status, peak RSS in bytes, stdout) of one run under /usr/bin/time -v."""
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True, env=env, timeout=1800)
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    if p.returncode != 0 or not m:
        raise RuntimeError("exit %d: %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-1500:]))
    return int(m.group(1)) * 1024, p.stdout


def requires(corpus):
    """name -> the names its METADATA requires (extras left out), normalised."""
    norm = lambda s: re.sub(r"[-_.]+", "-", s).lower()  # noqa: E731
    deps = {}
    for d in os.listdir(corpus):
        md = os.path.join(corpus, d, "METADATA")
        if not os.path.exists(md):
            continue
        name, req = None, []
        with open(md, encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    break
                if line.startswith("Name:"):
                    name = norm(line[5:].strip())
                elif line.startswith("Requires-Dist:") and "extra ==" not in line:
                    req.append(norm(re.match(r"\s*([A-Za-z0-9._-]+)", line[14:]).group(1)))
        deps[name] = req
    return deps


def closure(deps, roots):
    seen, todo = set(), [re.sub(r"[-_.]+", "-", r).lower() for r in roots]
    while todo:
        n = todo.pop()
        if n in seen or n not in deps:
            continue
        seen.add(n)
        todo.extend(deps[n])
    return seen


def subsets(deps, top, sizes):
    """For each size, top-level names whose closure first reaches it (the
    smallest closures added first)."""
    order = sorted(top, key=lambda t: (len(closure(deps, [t])), t))
    out = []
    for size in sizes:
        pick = []
        for t in order:
            pick.append(t)
            if len(closure(deps, pick)) >= size:
                break
        out.append(pick)
    return out


def line_fit(points):
    """The least-squares line through (x, y) points: (slope, intercept), or
    None with fewer than two distinct x."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    if len(set(xs)) < 2:
        return None
    mx, my = statistics.mean(xs), statistics.mean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return slope, my - slope * mx


def mb(b):
    return "%.1f MB" % (b / 1e6)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--gpuenv", default=os.path.join(SRC, "build", "gpuenv"))
    ap.add_argument("--shared", default=os.path.join(SRC, "..", "shared"))
    ap.add_argument("--sizes", default="25,50,100,195")
    ap.add_argument("--python", default="/root/.pyenv/versions/3.12.1/bin/python3.12")
    ap.add_argument("--page-mb", type=float, default=38)
    ap.add_argument("--skip", default="", help="comma-separated parts to leave out: lock,sync,probe,page")
    ap.add_argument("--keep", help="work folder to keep")
    a = ap.parse_args()
    skip = set(a.skip.split(","))
    work = a.keep or tempfile.mkdtemp(prefix="gpuenv-bench-mem-")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, HOME=work)
    print("bench/mem: median of %d runs, work folder %s, load average %.1f" % (a.n, work, os.getloadavg()[0]))

    corpus = os.path.join(a.shared, "corpus", "h200-env")
    idx = os.path.join(work, "h200-index")
    if not os.path.isdir(os.path.join(idx, "simple")):
        subprocess.run([sys.executable, os.path.join(a.shared, "tools", "mkindex.py"), corpus, idx],
                       check=True, stdout=subprocess.DEVNULL)
    os.makedirs(os.path.join(idx, "whl"), exist_ok=True)
    for link, target in (("cu130", "../simple"), ("files", "../files")):
        if not os.path.lexists(os.path.join(idx, "whl", link)):
            os.symlink(target, os.path.join(idx, "whl", link))
    top = subprocess.run([sys.executable, os.path.join(a.shared, "tools", "toplevel.py"), corpus],
                         check=True, capture_output=True, text=True).stdout.split()
    httpd, url = lock_bench.serve(idx)
    cfg = lock_bench.SETS["h200-env"]

    def project(name, deps):
        proj = os.path.join(work, "proj-" + name)
        os.makedirs(proj, exist_ok=True)
        with open(os.path.join(proj, "pyproject.toml"), "w") as f:
            f.write('[project]\nname = "mem"\nversion = "0"\nrequires-python = ">=3.12"\n'
                    'dependencies = [%s]\n\n%s[tool.gpuenv.targets.bench]\n%s' % (
                        ", ".join(json.dumps(t) for t in deps), cfg["tool"], cfg["target"]))
        return proj

    def lock(proj, cache):
        lk = os.path.join(proj, "pylock.bench.toml")
        if os.path.exists(lk):
            os.remove(lk)
        rss, _ = peak_rss([a.gpuenv, "lock", "--project", proj, "--index-url", url + "/simple/",
                           "--torch-index", url + "/whl", "--cache-dir", cache], env)
        with open(lk, encoding="utf-8") as f:
            return rss, sum(1 for line in f if line.strip() == "[[packages]]")

    full = None
    locked = []  # (packages, project) of each size, for sync's sizes
    if "lock" not in skip:
        deps = requires(corpus)
        sizes = [int(s) for s in a.sizes.split(",")]
        print("\n| top-level names | packages locked | cold peak RSS | warm peak RSS |")
        print("|---|---|---|---|")
        points = []
        for i, pick in enumerate(subsets(deps, top, sizes)):
            proj = project("s%d" % i, pick)
            cold, warm, n = [], [], 0
            for k in range(a.n):
                cache = os.path.join(work, "cache-lock-%d-%d" % (i, k))
                rss, n = lock(proj, cache)
                cold.append(rss)
                warm.append(lock(proj, cache)[0])
                shutil.rmtree(cache, ignore_errors=True)
            c, w = statistics.median(cold), statistics.median(warm)
            points.append((n, c, w))
            locked.append((n, proj))
            print("| %d | %d | %s (%s-%s) | %s (%s-%s) |" % (len(pick), n, mb(c), mb(min(cold)), mb(max(cold)),
                                                          mb(w), mb(min(warm)), mb(max(warm))), flush=True)
            if len(pick) == len(top) or n >= 195:
                full = proj
        for label, col in (("cold", 1), ("warm", 2)):
            fit = line_fit([(p[0], p[col]) for p in points])
            if fit:
                print("lock %s: %.0f bytes per package (least squares), %s at 0 packages" % (
                    label, fit[0], mb(fit[1])))

    def sync_cmd(proj, venv, cache):
        return [a.gpuenv, "sync", "--locked", "--project", proj, "--target", "bench", "--venv", venv,
                "--python", a.python, "--index-url", url + "/simple/", "--torch-index", url + "/whl",
                "--cache-dir", cache]

    if "sync" not in skip:
        proj = full or project("all", top)
        cache = os.path.join(work, "cache-sync")
        shutil.rmtree(cache, ignore_errors=True)
        lock(proj, cache)
        venv = os.path.join(work, "venv")
        res = {"cold": [], "warm": [], "no-op": []}
        for k in range(a.n):
            shutil.rmtree(cache, ignore_errors=True)
            shutil.rmtree(venv, ignore_errors=True)
            cmd = sync_cmd(proj, venv, cache)
            res["cold"].append(peak_rss(cmd, env)[0])
            res["no-op"].append(peak_rss(cmd, env)[0])
            shutil.rmtree(venv, ignore_errors=True)
            res["warm"].append(peak_rss(cmd, env)[0])
        print("\nsync of the whole set's lock: " + ", ".join(
            "%s %s (%s-%s)" % (k, mb(statistics.median(v)), mb(min(v)), mb(max(v))) for k, v in res.items()))
        # cold sync at each size the lock part locked: its growth per package
        points = []
        for n, sp in locked:
            v = []
            for k in range(a.n):
                shutil.rmtree(cache, ignore_errors=True)
                shutil.rmtree(venv, ignore_errors=True)
                v.append(peak_rss(sync_cmd(sp, venv, cache), env)[0])
            points.append((n, statistics.median(v)))
            print("sync cold, %d packages: %s (%s-%s)" % (n, mb(statistics.median(v)), mb(min(v)), mb(max(v))),
                  flush=True)
        fit = line_fit(points)
        if fit:
            print("sync cold: %.0f bytes per package (least squares), %s at 0 packages" % (fit[0], mb(fit[1])))

    if "probe" not in skip:
        v = [peak_rss([a.gpuenv, "probe", "--json"], env)[0] for _ in range(max(a.n, 5))]
        print("\nprobe --json: %s (%s-%s)" % (mb(statistics.median(v)), mb(min(v)), mb(max(v))))

    httpd.shutdown()

    if "page" not in skip:
        # tests/fixtures/bigpage.py: one project whose page is --page-mb MiB of
        # PEP 691 JSON (PyPI's fields) and the same files as PEP 503 HTML, three
        # of them real wheels, served by tests/fixtures/index_server.py
        sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
        import bigpage
        import index_server
        root = os.path.join(work, "big-index")
        info = bigpage.write(root, a.page_mb)
        proj = os.path.join(work, "proj-big")
        os.makedirs(proj, exist_ok=True)
        with open(os.path.join(proj, "pyproject.toml"), "w") as f:
            f.write('[project]\nname = "mem"\nversion = "0"\ndependencies = ["big"]\n\n'
                    '[tool.gpuenv.targets.bench]\ngpu = "none"\npython = "3.12"\n'
                    'platform = "manylinux_2_28_x86_64"\n')
        print("\na page of %d files: PEP 691 JSON %s, PEP 503 HTML %s (bench/mem.sh --page-mb %g)" % (
            info["files"], mb(info["json"]), mb(info["html"]), a.page_mb))
        print("\n| page | command | cold peak RSS | warm peak RSS | x the page (cold) | cold time | warm time |")
        print("|---|---|---|---|---|---|---|")
        for fmt in ("json", "html"):
            proc, port = index_server.start(root, "--formats", fmt)
            url = "http://127.0.0.1:%d/simple/" % port
            size = info[fmt]
            try:
                cache = os.path.join(work, "cache-page-" + fmt)
                cmds = {"lock": [a.gpuenv, "lock", "--project", proj, "--index-url", url, "--cache-dir", cache],
                        "debug index": [a.gpuenv, "debug", "index", "--index-url", url, "--cache-dir", cache,
                                        "--max-page-bytes", str(64 << 20), "big"]}
                for what, cmd in cmds.items():
                    res = {"cold": ([], []), "warm": ([], [])}
                    for _ in range(a.n):
                        shutil.rmtree(cache, ignore_errors=True)
                        for run in ("cold", "warm"):
                            t0 = time.monotonic()
                            rss, _ = peak_rss(cmd, env)
                            res[run][0].append(rss)
                            res[run][1].append(time.monotonic() - t0)
                    med = {k: (statistics.median(v[0]), statistics.median(v[1])) for k, v in res.items()}
                    print("| %s %s | `%s` | %s (%s-%s) | %s (%s-%s) | %.2fx | %.2f s | %.2f s |" % (
                        fmt.upper(), mb(size), what, mb(med["cold"][0]), mb(min(res["cold"][0])),
                        mb(max(res["cold"][0])), mb(med["warm"][0]), mb(min(res["warm"][0])), mb(max(res["warm"][0])),
                        med["cold"][0] / size, med["cold"][1], med["warm"][1]), flush=True)
            finally:
                proc.terminate()
                proc.wait()
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
