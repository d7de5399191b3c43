"""Module boundaries you can see (issue 7, item 4): read the #include graph
of lib/ and include/ and fail on

  - a cycle between modules: a module is a directory under lib/ (core,
    formats, pep, hw, env, kb, check, facts, ...); include/gpuenv/X.h belongs
    to the module whose lib/ files define the functions X.h declares (or,
    for a header of types only, the module whose files include it most);
  - a public header (include/gpuenv/*.h) that includes a private one
    (anything under lib/, or any quoted include that is not gpuenv/...).

It also reads who calls whom, file by file (a file that calls a function
another file defines depends on it), and fails on

  - a cycle between any two (or more) files of lib/, within a module or
    across modules (issue 20), unless FILE_CYCLES_ALLOWED lists exactly
    that cycle: the entries name cycles that other branches own and remove;
    an entry that matches no cycle any more fails too, so the list stays
    exact.  A cycle among lib/hw's files is named "file cycle in lib/hw"
    (that check was a warning until the lib/hw split landed; --hw-warn
    makes lib/hw's cycles warnings again);
  - a file of lib/kb that calls a layer above its own (KB_LAYERS: values
    and rows, then the KB's age, bundles and loading, lookups, judgements,
    answers; docs/ARCHITECTURE.md, "Inside lib/kb").  A file KB_LAYERS does
    not name takes the layer of the highest file it calls, so a new file
    is accepted wherever it sits as long as nothing below that layer calls
    it.

usage: include_graph.py [--hw-warn] [ROOT]       (ROOT: the source tree)
       include_graph.py --self-test               (the checks on made-up trees)
"""
import os
import re
import sys
import tempfile

HW_STRICT = True  # lib/hw is a DAG of files since the hw split

# lib/kb's files by layer, bottom first: a file calls its own layer and those
# below, never one above (docs/ARCHITECTURE.md, "Inside lib/kb").
KB_LAYERS = [
    ("values and rows", ("kb.c",)),
    ("age, bundles, loading", ("age.c", "bundle.c", "load.c")),
    ("lookups", ("hub.c", "lookup.c")),
    ("judgements", ("compat.c",)),
    ("answers", ("answer.c", "info.c")),
]

# File cycles that exist in files other branches own (issue 20 was split
# between four branches): each entry is (owner, the files of the cycle,
# what to do).  The check fails when a cycle differs from its entry (a file
# more or less) and when an entry matches no cycle, so the lead empties this
# list as the owners' branches land.
FILE_CYCLES_ALLOWED = [
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
API = re.compile(r'\bGPUENV_API\b[^;{]*?\b(gpuenv_\w+)\s*\(', re.S)
# a function definition at the start of a line: "type name(args)\n{"
DEFN = re.compile(r'^(?!static\b)[A-Za-z_][\w \t\*]*?\b([a-z_]\w*)\s*\([^;{}]*\)\s*\{', re.M)
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return COMMENT.sub(" ", f.read())


def sources(root):
    """{relative path: text without comments} of lib/**/*.[ch] and include/gpuenv/*.h"""
    out = {}
    for top in ("lib", "include"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith((".c", ".h")):
                    p = os.path.join(d, f)
                    out[os.path.relpath(p, root)] = read(p)
    return out


def module_of_lib(rel):
    parts = rel.split(os.sep)
    return parts[1] if len(parts) > 2 and parts[0] == "lib" else None


def header_modules(src):
    """include/gpuenv/X.h -> the module that implements it."""
    defined = {}  # function -> module
    for rel, text in src.items():
        m = module_of_lib(rel)
        if m and rel.endswith(".c"):
            for f in DEFN.findall(text):
                defined.setdefault(f, m)
    owners, problems = {}, []
    for rel, text in src.items():
        if not rel.startswith(os.path.join("include", "gpuenv") + os.sep):
            continue
        votes = {}
        for f in API.findall(text):
            if f in defined:
                votes[defined[f]] = votes.get(defined[f], 0) + 1
        if not votes:
            # types only: the module whose files include it most
            name = "gpuenv/" + os.path.basename(rel)
            for r2, t2 in src.items():
                m = module_of_lib(r2)
                if m and name in INCLUDE.findall(t2):
                    votes[m] = votes.get(m, 0) + 1
        if not votes:
            problems.append("%s: no lib/ module defines what it declares or includes it" % rel)
            continue
        owners[rel] = max(sorted(votes), key=lambda m: votes[m])
    return owners, problems


def resolve(rel, inc, root):
    """The relative path an #include "inc" in file rel names, or None."""
    if inc.startswith("gpuenv/"):
        return os.path.join("include", inc)
    p = os.path.normpath(os.path.join(os.path.dirname(rel), inc))
    return p if os.path.exists(os.path.join(root, p)) else None


def find_cycles(nodes, edges):
    """Strongly connected components with more than one node (or a self loop)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in edges.get(v, ()):
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            strong(v)
    return out


def one_cycle(comp, edges):
    """A readable cycle a -> b -> ... -> a inside a component."""
    comp = set(comp)
    start = min(comp)
    path, seen = [start], {start}
    while True:
        nxt = sorted(w for w in edges.get(path[-1], ()) if w in comp)
        back = [w for w in nxt if w == start]
        if back and len(path) > 1:
            return path + [start]
        nxt = [w for w in nxt if w not in seen]
        if not nxt:
            return sorted(comp) + [min(comp)]
        path.append(nxt[0])
        seen.add(nxt[0])


CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def file_graph(src):
    """(files, edges, why) of lib/**/*.c: file -> the files whose functions it calls."""
    files = {r: t for r, t in src.items() if module_of_lib(r) and r.endswith(".c")}
    defs = {}
    for rel, text in sorted(files.items()):
        for f in DEFN.findall(text):
            defs.setdefault(f, rel)
    edges, why = {}, {}
    for rel, text in sorted(files.items()):
        for f in sorted(set(CALL.findall(text))):
            owner = defs.get(f)
            if owner and owner != rel:
                edges.setdefault(rel, set()).add(owner)
                why.setdefault((rel, owner), "%s calls %s" % (short(rel), f))
    return set(files), edges, why


def short(rel):
    """lib/kb/kb.c -> kb/kb.c"""
    return rel[4:] if rel.startswith("lib" + os.sep) else rel


def cycle_text(comp, edges, why):
    cyc = one_cycle(comp, edges)
    steps = "; ".join(why[(cyc[i], cyc[i + 1])] for i in range(len(cyc) - 1))
    mods = {module_of_lib(c) for c in comp}
    if len(mods) == 1:
        mod = mods.pop()
        head = "file cycle in lib/%s: %s" % (mod, " -> ".join(os.path.basename(c) for c in cyc))
    else:
        head = "file cycle across lib/: %s" % " -> ".join(short(c) for c in cyc)
    msg = "%s (%s)" % (head, steps)
    if len(comp) > len(cyc) - 1:
        msg += "; the files calling each other: " + ", ".join(short(c) for c in comp)
    return msg


def kb_layers(files, edges, why):
    """Calls from a file of lib/kb to a layer above its own."""
    rank = {}
    for i, (_, names) in enumerate(KB_LAYERS):
        for n in names:
            rank[os.path.join("lib", "kb", n)] = i
    kb = sorted(f for f in files if module_of_lib(f) == "kb")

    def floor(f, seen):
        """a file KB_LAYERS leaves out: the layer of the highest file it calls"""
        if f in rank:
            return rank[f]
        if f in seen:
            return 0
        seen.add(f)
        return max([floor(g, seen) for g in edges.get(f, ()) if module_of_lib(g) == "kb"] or [0])

    out = []
    for f in kb:
        if f not in rank:
            continue
        for g in sorted(edges.get(f, ())):
            if module_of_lib(g) != "kb":
                continue
            lg = floor(g, set())
            if lg > rank[f]:
                out.append("lib/kb layering: %s (%s) calls a layer above its own: %s, %s (%s)%s" % (
                    os.path.basename(f), KB_LAYERS[rank[f]][0], why[(f, g)].split(" calls ")[1],
                    os.path.basename(g), KB_LAYERS[lg][0],
                    "" if g in rank else ", by what it calls"))
    return out


def check_files(src, hw_strict, allowed):
    """(errors, warnings) of the file-level checks: cycles anywhere in lib/
    (less the allowed ones, exactly) and lib/kb's layers."""
    files, edges, why = file_graph(src)
    errors, warnings = [], []
    allow = {frozenset(os.path.normpath(p) for p in e[1]): e for e in allowed}
    found = []
    for comp in find_cycles(files, edges):
        key = frozenset(comp)
        found.append(key)
        msg = cycle_text(comp, edges, why)
        if key in allow:
            continue
        near = [e for k, e in allow.items() if k & key]
        if near:
            msg += "; FILE_CYCLES_ALLOWED lists %s (%s), not these files" % (
                ", ".join(short(p) for p in near[0][1]), near[0][0])
        if not hw_strict and {module_of_lib(c) for c in comp} == {"hw"}:
            warnings.append(msg)
        else:
            errors.append(msg)
    for key, e in sorted(allow.items(), key=lambda kv: kv[1][1]):
        if not any(key & k for k in found):
            errors.append("FILE_CYCLES_ALLOWED: %s (%s) is no cycle any more: remove the entry" % (
                ", ".join(short(p) for p in e[1]), e[0]))
    errors += kb_layers(files, edges, why)
    return errors, warnings


def check_tree(root, hw_strict=HW_STRICT, quiet=False, allowed=()):
    """(errors, warnings) of the tree at root."""
    src = sources(root)
    owners, errors = header_modules(src)
    warnings = []
    modules = {module_of_lib(r) for r in src if module_of_lib(r)}
    edges, why = {}, {}

    def module(rel):
        return module_of_lib(rel) or owners.get(rel)

    for rel, text in sorted(src.items()):
        public = rel.startswith(os.path.join("include", "gpuenv") + os.sep)
        for inc in INCLUDE.findall(text):
            target = resolve(rel, inc, root)
            if public and not inc.startswith("gpuenv/"):
                errors.append('%s: a public header includes "%s", a private one' % (rel, inc))
                continue
            if public and target and not os.path.exists(os.path.join(root, target)):
                errors.append('%s: includes "%s", which is not in include/' % (rel, inc))
                continue
            if not target:
                continue
            a, b = module(rel), module(target)
            if a and b and a != b:
                edges.setdefault(a, set()).add(b)
                why.setdefault((a, b), "%s includes %s" % (rel, inc))
    for comp in find_cycles(modules, edges):
        cyc = one_cycle(comp, edges)
        steps = "; ".join(why[(cyc[i], cyc[i + 1])] for i in range(len(cyc) - 1))
        errors.append("module cycle %s (%s)%s" % (" -> ".join(cyc), steps, (
            "; the whole cycle: " + ", ".join(comp)) if len(comp) > len(cyc) - 1 else ""))

    errors_f, warnings_f = check_files(src, hw_strict, allowed)
    errors += errors_f
    warnings += warnings_f
    if not quiet:
        print("modules: %s" % ", ".join(sorted(modules)))
        for a in sorted(edges):
            print("  %s -> %s" % (a, ", ".join(sorted(edges[a]))))
        print("public headers: %s" % ", ".join("%s=%s" % (os.path.basename(h), m)
                                               for h, m in sorted(owners.items())))
    return errors, warnings


def write(root, files):
    for rel, text in files.items():
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)


def self_test():
    """The checks catch what they are for, on made-up trees."""
    base = {
        "include/gpuenv/core.h": "int gpuenv_x(void);\n",
        "include/gpuenv/a.h": '#include "gpuenv/core.h"\nGPUENV_API int gpuenv_a(void);\n',
        "include/gpuenv/b.h": '#include "gpuenv/core.h"\nGPUENV_API int gpuenv_b(void);\n',
        "lib/core/core.c": '#include "gpuenv/core.h"\nint gpuenv_x(void)\n{\n\treturn 0;\n}\n',
        "lib/a/a.c": '#include "gpuenv/a.h"\nint gpuenv_a(void)\n{\n\treturn 1;\n}\n',
        "lib/b/b.c": '#include "gpuenv/b.h"\n#include "gpuenv/a.h"\nint gpuenv_b(void)\n{\n\treturn gpuenv_a();\n}\n',
        "lib/hw/x.c": "int hw_x(void)\n{\n\treturn 0;\n}\n",
        "lib/hw/y.c": "int hw_x(void);\nint hw_y(void)\n{\n\treturn hw_x();\n}\n",
    }
    cases = [
        ("a clean tree", {}, lambda e, w: not e and not w),
        ("a module cycle", {"lib/a/a2.c": '#include "gpuenv/b.h"\n'},
         lambda e, w: any("module cycle" in x and "a -> b -> a" in x for x in e)),
        ("a cycle through a public header",
         {"include/gpuenv/a.h": '#include "gpuenv/b.h"\nGPUENV_API int gpuenv_a(void);\n'},
         lambda e, w: any("module cycle" in x for x in e)),
        ("a public header including a private one",
         {"include/gpuenv/a.h": '#include "../../lib/a/a_int.h"\nGPUENV_API int gpuenv_a(void);\n',
          "lib/a/a_int.h": "int a_private;\n"},
         lambda e, w: any("private" in x and "include/gpuenv/a.h" in x for x in e)),
        ("a public header including a sibling by a bare name",
         {"include/gpuenv/a.h": '#include "b.h"\nGPUENV_API int gpuenv_a(void);\n'},
         lambda e, w: any("private" in x for x in e)),
        ("a file cycle in lib/hw (warning)",
         {"lib/hw/x.c": "int hw_y(void);\nint hw_x(void)\n{\n\treturn hw_y();\n}\n"},
         lambda e, w: not e and any("file cycle in lib/hw" in x and "x.c" in x for x in w)),
    ]
    fn = lambda name, calls="": "int %s(void)\n{\n\treturn %s;\n}\n" % (name, calls or "0")
    kb = {
        "lib/kb/kb.c": fn("gpuenv_kb_ver_cmp"),
        "lib/kb/lookup.c": fn("gpuenv_kb_toolkit", "gpuenv_kb_ver_cmp()"),
        "lib/kb/compat.c": fn("gpuenv_kb_torch_check", "gpuenv_kb_toolkit()"),
        "lib/kb/answer.c": fn("gpuenv_kb_torch_json", "gpuenv_kb_torch_check()"),
    }
    cycle_ab = {"lib/a/p.c": fn("a_p", "b_q()"), "lib/b/q.c": fn("b_q", "a_p()")}
    allow_ab = [("someone", ("lib/a/p.c", "lib/b/q.c"), "made up")]
    cases += [
        ("a file cycle inside a module",
         {"lib/a/x.c": fn("a_x", "a_y()"), "lib/a/y.c": fn("a_y", "a_x()")},
         lambda e, w: any("file cycle in lib/a: x.c -> y.c -> x.c" in x for x in e)),
        ("a file cycle across modules", cycle_ab,
         lambda e, w: any("file cycle across lib/: a/p.c -> b/q.c -> a/p.c" in x for x in e)),
        ("lib/kb in layers", kb, lambda e, w: not e and not w),
        ("a cycle in lib/kb", dict(kb, **{"lib/kb/kb.c": fn("gpuenv_kb_ver_cmp", "gpuenv_kb_toolkit()")}),
         lambda e, w: any("file cycle in lib/kb" in x for x in e)),
        ("a lookup that judges", dict(kb, **{
            "lib/kb/lookup.c": fn("gpuenv_kb_toolkit", "gpuenv_kb_ver_cmp() + gpuenv_kb_torch_check()"),
            "lib/kb/compat.c": fn("gpuenv_kb_torch_check", "gpuenv_kb_ver_cmp()")}),
         lambda e, w: any("lib/kb layering: lookup.c (lookups) calls a layer above its own: "
                          "gpuenv_kb_torch_check, compat.c (judgements)" in x for x in e)),
        ("a new lib/kb file above the judgements", dict(kb, **{
            "lib/kb/trt.c": fn("gpuenv_kb_trt_check", "gpuenv_kb_torch_check()"),
            "lib/kb/answer.c": fn("gpuenv_kb_torch_json", "gpuenv_kb_trt_check()")}),
         lambda e, w: not e and not w),
        ("a new lib/kb file of lookups", dict(kb, **{
            "lib/kb/trt.c": fn("gpuenv_kb_trt_row", "gpuenv_kb_ver_cmp()"),
            "lib/kb/compat.c": fn("gpuenv_kb_torch_check", "gpuenv_kb_trt_row()")}),
         lambda e, w: not e and not w),
        ("a new lib/kb file that judges, called by a lookup", dict(kb, **{
            "lib/kb/trt.c": fn("gpuenv_kb_trt_check", "gpuenv_kb_torch_check()"),
            "lib/kb/lookup.c": fn("gpuenv_kb_toolkit", "gpuenv_kb_trt_check()"),
            "lib/kb/compat.c": fn("gpuenv_kb_torch_check", "0")}),
         lambda e, w: any("lookup.c (lookups) calls a layer above its own: gpuenv_kb_trt_check, "
                          "trt.c (judgements), by what it calls" in x for x in e)),
    ]
    bad = 0
    for what, change, ok, allowed in [
            ("an allowed file cycle", cycle_ab, lambda e, w: not e, allow_ab),
            ("an allowed file cycle that grew",
             dict(cycle_ab, **{"lib/b/q.c": fn("b_q", "c_r()"), "lib/c/r.c": fn("c_r", "a_p()")}),
             lambda e, w: any("file cycle across lib/" in x and "FILE_CYCLES_ALLOWED lists" in x
                              for x in e), allow_ab),
            ("an allowed file cycle that is gone", {},
             lambda e, w: any("is no cycle any more" in x for x in e), allow_ab),
    ]:
        with tempfile.TemporaryDirectory() as d:
            files = dict(base)
            files.update(change)
            write(d, files)
            e, w = check_tree(d, hw_strict=True, quiet=True, allowed=allowed)
            if not ok(e, w):
                print("FAIL: self-test %s: errors %r, warnings %r" % (what, e, w))
                bad += 1
            else:
                print("ok: self-test %s" % what)
    for what, change, ok in cases:
        with tempfile.TemporaryDirectory() as d:
            files = dict(base)
            files.update(change)
            write(d, files)
            e, w = check_tree(d, hw_strict=False, quiet=True)
            if not ok(e, w):
                print("FAIL: self-test %s: errors %r, warnings %r" % (what, e, w))
                bad += 1
            else:
                print("ok: self-test %s" % what)
    with tempfile.TemporaryDirectory() as d:
        files = dict(base)
        files["lib/hw/x.c"] = "int hw_y(void);\nint hw_x(void)\n{\n\treturn hw_y();\n}\n"
        write(d, files)
        e, _ = check_tree(d, hw_strict=True, quiet=True)
        if not any("file cycle in lib/hw" in x for x in e):
            print("FAIL: self-test the lib/hw cycle is an error by default: %r" % e)
            bad += 1
    return bad


def main(argv):
    if "--self-test" in argv:
        return 1 if self_test() else 0
    strict = HW_STRICT and "--hw-warn" not in argv
    args = [a for a in argv if not a.startswith("--")]
    root = args[0] if args else (os.environ.get("GPUENV_SRC") or
                                 os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    errors, warnings = check_tree(root, hw_strict=strict, allowed=FILE_CYCLES_ALLOWED)
    for w in warnings:
        print("warning: %s (--hw-warn: a warning, not an error)" % w)
    for e in errors:
        print("FAIL: %s" % e)
    print("%d error(s), %d warning(s)" % (len(errors), len(warnings)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
