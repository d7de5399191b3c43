# gpuenv's PEP 517 hook runner (docs/build.md, "The hook runner").
#
# Embedded in libgpuenv (scripts/embed.py), written into each build's
# temporary folder and run by the build environment's interpreter:
#
#     python -I hook_runner.py REQUEST.json RESULT.json
#
# REQUEST: {"hook": NAME, "source_dir": DIR, "backend": "mod.path[:obj]",
#           "backend_path": [REL, ...], "wheel_directory": DIR,
#           "config_settings": {...} | null}
#   or     {"hook": "_unpack", "sdist": FILE, "dest": DIR}
#   "prepare_metadata_for_build_wheel" also takes "metadata_directory" and
#   returns the path of the METADATA file: the backend's hook when it has
#   one, else (PEP 517's fallback) build_wheel into wheel_directory and the
#   wheel's own METADATA copied out of it
# RESULT (written last, by rename): {"ok": true, "return": VALUE}
#   or {"ok": false, "kind": "missing"|"error"|"unsupported",
#       "message": TEXT, "traceback": TEXT}
# The backend's own output goes to this process's stdout and stderr, which
# gpuenv points at the package's build log.  Standard library only.
import importlib
import json
import os
import sys
import traceback

HOOKS = {
    "get_requires_for_build_wheel": ("config_settings",),
    "get_requires_for_build_editable": ("config_settings",),
    "build_wheel": ("wheel_directory", "config_settings"),
    "build_editable": ("wheel_directory", "config_settings"),
    "prepare_metadata_for_build_wheel": ("metadata_directory", "config_settings"),
}
OPTIONAL = {"get_requires_for_build_wheel", "get_requires_for_build_editable", "build_editable"}


class Refused(Exception):
    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def answer(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def _inside(base, path):
    base = os.path.realpath(base)
    path = os.path.realpath(path)
    return path == base or path.startswith(base + os.sep)


def unpack(sdist, dest):
    """Unpack an sdist (.tar.gz or .zip) into dest, refusing members that
    would land outside it (absolute paths, '..', links leaving it) and
    anything but files, folders and links; return the top-level folder."""
    import tarfile
    import zipfile
    os.makedirs(dest, exist_ok=True)
    tops = set()

    def target(name):
        while name.startswith("./"):
            name = name[2:]
        if not name or name.startswith("/") or "\\" in name or "\0" in name:
            raise Refused("error", "%s: member %r: not a relative path" % (sdist, name))
        parts = [p for p in name.split("/") if p not in ("", ".")]
        if ".." in parts or not parts:
            raise Refused("error", "%s: member %r leaves the archive's folder" % (sdist, name))
        tops.add(parts[0])
        return os.path.join(dest, *parts)

    if sdist.endswith(".zip"):
        with zipfile.ZipFile(sdist) as z:
            for info in z.infolist():
                out = target(info.filename)
                if info.is_dir():
                    os.makedirs(out, exist_ok=True)
                    continue
                os.makedirs(os.path.dirname(out), exist_ok=True)
                with z.open(info) as src, open(out, "wb") as dst:
                    dst.write(src.read())
                if (info.external_attr >> 16) & 0o111:
                    os.chmod(out, 0o755)
    else:
        with tarfile.open(sdist, "r:*") as t:
            for m in t:
                out = target(m.name)
                if m.isdir():
                    os.makedirs(out, exist_ok=True)
                elif m.isfile():
                    os.makedirs(os.path.dirname(out), exist_ok=True)
                    src = t.extractfile(m)
                    with open(out, "wb") as dst:
                        while True:
                            b = src.read(1 << 20)
                            if not b:
                                break
                            dst.write(b)
                    os.chmod(out, 0o755 if m.mode & 0o111 else 0o644)
                elif m.issym() or m.islnk():
                    link = m.linkname
                    base = os.path.dirname(out) if m.issym() else dest
                    if link.startswith("/") or not _inside(dest, os.path.join(base, link)):
                        raise Refused("error", "%s: link %r -> %r leaves the archive's folder"
                                      % (sdist, m.name, link))
                    os.makedirs(os.path.dirname(out), exist_ok=True)
                    if m.issym():
                        os.symlink(link, out)
                    else:
                        os.link(os.path.join(dest, link), out)
                else:
                    raise Refused("error", "%s: member %r is a device or fifo" % (sdist, m.name))
    if len(tops) != 1:
        raise Refused("error", "%s: an sdist holds one top-level folder; this one has %d"
                      % (sdist, len(tops)))
    top = os.path.join(dest, tops.pop())
    if not os.path.isdir(top):
        raise Refused("error", "%s: the top-level entry is not a folder" % sdist)
    return top


def load_backend(spec, backend_path, source_dir):
    mod_path, _, obj_path = spec.partition(":")
    extra = [os.path.abspath(os.path.join(source_dir, p)) for p in backend_path]
    sys.path[:0] = extra
    try:
        obj = importlib.import_module(mod_path)
    except ImportError as e:
        raise Refused("error", "cannot import the build backend %r: %s" % (mod_path, e))
    if extra:
        # PEP 517: a backend-path backend must come from there, not from
        # an installed package of the same name
        f = getattr(obj, "__file__", None) or ""
        if not any(_inside(p, f) for p in extra):
            raise Refused("error", "the build backend %r was loaded from %s, not from backend-path %s"
                          % (mod_path, f, backend_path))
    for part in filter(None, obj_path.split(".")):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise Refused("error", "the build backend %r has no %r" % (mod_path, obj_path))
    return obj


def _dist_info(names, where):
    """The one top-level .dist-info folder among names."""
    tops = {n.split("/", 1)[0] for n in names if n.split("/", 1)[0].endswith(".dist-info")}
    if len(tops) != 1:
        raise Refused("error", "%s holds %d .dist-info folders, not one" % (where, len(tops)))
    return tops.pop()


def metadata(backend, req, cs):
    """PEP 517 metadata: prepare_metadata_for_build_wheel, or the wheel's."""
    md_dir = req["metadata_directory"]
    os.makedirs(md_dir, exist_ok=True)
    fn = getattr(backend, "prepare_metadata_for_build_wheel", None)
    if fn is not None:
        ret = fn(md_dir, cs)
        if not isinstance(ret, str) or "/" in ret.strip("/") or not ret.endswith(".dist-info"):
            raise Refused("error", "prepare_metadata_for_build_wheel returned %r, not a .dist-info "
                          "folder name" % (ret,))
        path = os.path.join(md_dir, ret.strip("/"), "METADATA")
        if not _inside(md_dir, path) or not os.path.isfile(path):
            raise Refused("error", "prepare_metadata_for_build_wheel made no %s" % path)
        print("== hook_runner: METADATA from prepare_metadata_for_build_wheel ==", flush=True)
        return path
    import zipfile
    print("== hook_runner: the backend has no prepare_metadata_for_build_wheel: building the wheel "
          "for its METADATA (PEP 517's fallback) ==", flush=True)
    wd = req["wheel_directory"]
    os.makedirs(wd, exist_ok=True)
    name = backend.build_wheel(wd, cs)
    if not isinstance(name, str) or "/" in name:
        raise Refused("error", "build_wheel returned %r, not a file name" % (name,))
    whl = os.path.join(wd, name)
    with zipfile.ZipFile(whl) as z:
        member = _dist_info(z.namelist(), name) + "/METADATA"
        try:
            data = z.read(member)
        except KeyError:
            raise Refused("error", "%s has no %s" % (name, member))
    path = os.path.join(md_dir, "METADATA")
    with open(path, "wb") as f:
        f.write(data)
    return path


def run(req):
    hook = req.get("hook")
    if hook == "_unpack":
        return unpack(req["sdist"], req["dest"])
    if hook not in HOOKS:
        raise Refused("unsupported", "unknown hook %r" % hook)
    source_dir = req["source_dir"]
    os.chdir(source_dir)
    backend = load_backend(req["backend"], req.get("backend_path") or [], source_dir)
    fn = getattr(backend, hook, None)
    if fn is None and hook != "prepare_metadata_for_build_wheel":
        if hook in OPTIONAL:
            raise Refused("missing", "the build backend %s has no %s hook" % (req["backend"], hook))
        raise Refused("error", "the build backend %s has no %s hook" % (req["backend"], hook))
    cs = req.get("config_settings")
    if hook == "prepare_metadata_for_build_wheel":
        return metadata(backend, req, cs)
    if hook.startswith("get_requires"):
        ret = fn(cs)
        if not isinstance(ret, (list, tuple)) or not all(isinstance(x, str) for x in ret):
            raise Refused("error", "%s returned %r, not a list of requirement strings" % (hook, ret))
        return list(ret)
    ret = fn(req["wheel_directory"], cs)
    if not isinstance(ret, str):
        raise Refused("error", "%s returned %r, not a file name" % (hook, ret))
    return ret


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: hook_runner.py REQUEST.json RESULT.json\n")
        return 2
    with open(argv[1], encoding="utf-8") as f:
        req = json.load(f)
    try:
        ret = run(req)
    except Refused as e:
        answer(argv[2], {"ok": False, "kind": e.kind, "message": str(e), "traceback": ""})
        return 1
    except BaseException as e:  # the backend's failure, whatever it raised
        tb = traceback.format_exc()
        sys.stderr.write(tb)
        answer(argv[2], {"ok": False, "kind": "error", "message": "%s: %s" % (type(e).__name__, e),
                         "traceback": tb})
        return 1
    sys.stdout.flush()
    answer(argv[2], {"ok": True, "return": ret})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
