#!/usr/bin/env python3
"""Turn the distributions installed in a site-packages folder back into wheels
and a file:// index, so gpuenv sync can install a real GPU stack (torch with its
nvidia-* CUDA libraries) on a machine that reaches no index.

usage: repack_env.py SITE_PACKAGES OUT_DIR [--only NAME,NAME...]

For each *.dist-info with a RECORD and a WHEEL: a wheel NAME-VER-TAGS.whl
(stored, not deflated: the payload is mostly shared libraries) holding every
file RECORD lists under the site folder, files of the prefix's share/,
include/, etc. under NAME-VER.data/data/, bin/ files that are not console
scripts under .data/scripts/ (console scripts are made again from
entry_points.txt), no .pyc, and a RECORD made from the bytes written.  The
index: OUT_DIR/simple/<name>/ and, for the torch index layout gpuenv lock
--torch-index expects, OUT_DIR/whl/<backend>/<name>/ for every backend named
by a local version label found (cu130, ...), all pointing at OUT_DIR/files.
"""
import base64
import hashlib
import html
import os
import re
import sys
import zipfile
from email.parser import HeaderParser


def norm(n):
    return re.sub(r"[-_.]+", "-", n).lower()


def rhash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def repack(site, di, files_dir):
    info = os.path.join(site, di)
    md = open(os.path.join(info, "METADATA"), "rb").read()
    h = HeaderParser().parsestr(md.decode("utf-8", "replace"))
    name, version = h["Name"], h["Version"]
    wheel = open(os.path.join(info, "WHEEL")).read()
    tags = [l.split(":", 1)[1].strip() for l in wheel.splitlines() if l.startswith("Tag:")] or ["py3-none-any"]
    scripts = set()
    ep = os.path.join(info, "entry_points.txt")
    if os.path.exists(ep):
        group = None
        for line in open(ep):
            line = line.strip()
            if line.startswith("["):
                group = line.strip("[]")
            elif "=" in line and group in ("console_scripts", "gui_scripts"):
                scripts.add(line.split("=", 1)[0].strip())
    dname = re.sub(r"[-_.]+", "_", name)
    new_info = "%s-%s.dist-info" % (dname, version)
    data_dir = "%s-%s.data" % (dname, version)
    py = ".".join(sorted({t.split("-")[0] for t in tags}))
    abi = ".".join(sorted({t.split("-")[1] for t in tags}))
    plat = ".".join(sorted({t.split("-")[2] for t in tags}))
    fn = "%s-%s-%s-%s-%s.whl" % (dname, version, py, abi, plat)
    entries = []
    prefix = os.path.normpath(os.path.join(site, "..", "..", ".."))
    for line in open(os.path.join(info, "RECORD"), encoding="utf-8"):
        path = line.rstrip("\n").rsplit(",", 2)[0].strip('"')
        if not path or path.endswith(".pyc") or "/__pycache__/" in path:
            continue
        full = os.path.normpath(os.path.join(site, path))
        if not os.path.isfile(full) or os.path.islink(full):
            continue
        if path.startswith(di + "/"):
            base = path[len(di) + 1:]
            if base in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json") or base.startswith("RECORD."):
                continue
            arc = new_info + "/" + base
        elif path.startswith(".."):
            rel = os.path.relpath(full, prefix)
            if rel.startswith(".."):
                continue
            if rel.startswith("bin/"):
                if os.path.basename(rel) in scripts:
                    continue
                arc = data_dir + "/scripts/" + rel[4:]
            else:
                arc = data_dir + "/data/" + rel
        else:
            arc = path
        entries.append((arc, full))
    out = os.path.join(files_dir, fn)
    rec = []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for arc, full in entries:
            data = open(full, "rb").read()
            zi = zipfile.ZipInfo(arc, (2020, 1, 1, 0, 0, 0))
            zi.external_attr = (0o755 if os.access(full, os.X_OK) else 0o644) << 16
            z.writestr(zi, data)
            rec.append("%s,%s,%d" % (arc, rhash(data), len(data)))
        rec.append(new_info + "/RECORD,,")
        z.writestr(zipfile.ZipInfo(new_info + "/RECORD", (2020, 1, 1, 0, 0, 0)), "\n".join(rec) + "\n")
    sha = hashlib.sha256()
    with open(out, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            sha.update(chunk)
    open(out + ".metadata", "wb").write(md)
    return norm(name), version, fn, sha.hexdigest(), hashlib.sha256(md).hexdigest(), h.get("Requires-Python")


def page(links):
    return "<!DOCTYPE html><html><body>\n%s</body></html>\n" % "".join(links)


def main():
    site, out = sys.argv[1], sys.argv[2]
    only = None
    if "--only" in sys.argv:
        only = {norm(x) for x in sys.argv[sys.argv.index("--only") + 1].split(",")}
    files_dir = os.path.join(out, "files")
    os.makedirs(files_dir, exist_ok=True)
    projects = {}
    backends = set()
    for di in sorted(os.listdir(site)):
        if not di.endswith(".dist-info") or not os.path.exists(os.path.join(site, di, "RECORD")):
            continue
        if not os.path.exists(os.path.join(site, di, "WHEEL")):
            continue
        n = norm(di[:-len(".dist-info")].rsplit("-", 1)[0])
        if only and n not in only or n == "pip":
            continue
        p = repack(site, di, files_dir)
        projects.setdefault(p[0], []).append(p)
        m = re.search(r"\+(cu\d+|cpu|rocm[\d.]+)$", p[1])
        if m:
            backends.add(m.group(1))
        print("%s %s -> %s" % (p[0], p[1], p[2]), flush=True)
    for root in ["simple"] + ["whl/" + b for b in sorted(backends)]:
        d = os.path.join(out, root)
        os.makedirs(d, exist_ok=True)
        depth = root.count("/") + 2
        with open(os.path.join(d, "index.html"), "w") as f:
            f.write(page('<a href="%s/">%s</a>\n' % (n, n) for n in sorted(projects)))
        for n, fl in projects.items():
            os.makedirs(os.path.join(d, n), exist_ok=True)
            links = []
            for _, _, fn, sha, msha, rp in fl:
                rpa = ' data-requires-python="%s"' % html.escape(rp) if rp else ""
                links.append('<a href="%sfiles/%s#sha256=%s"%s data-core-metadata="sha256=%s">%s</a>\n'
                             % ("../" * depth, fn, sha, rpa, msha, fn))
            with open(os.path.join(d, n, "index.html"), "w") as f:
                f.write(page(links))
    print("%d projects, backends %s" % (len(projects), sorted(backends)))


if __name__ == "__main__":
    main()
