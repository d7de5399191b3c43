"""CLI conventions every verb shares: help, version, unknown verbs and
options (one line, a suggestion, exit 2), colour rules, and one table of
exit codes (cli/cli.h = gpuenv --help = docs/exit-codes.md = each verb's
help; an unwritable output is 4 for every verb)."""
import os
import re
import subprocess
import sys

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC") or os.path.join(os.path.dirname(__file__), "..", "..")
failures = []


def run(*args, env=None, stdin=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run([BIN, *args], capture_output=True, text=True, env=e,
                          input=stdin, timeout=60)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


r = run("--help")
check(r.returncode == 0 and "usage: gpuenv" in r.stdout and "debug" in r.stdout, "--help")
r = run("--version")
check(r.returncode == 0 and r.stdout.startswith("gpuenv "), "--version")
r = run()
check(r.returncode == 2 and "usage" in r.stderr, "no verb -> 2")
r = run("debg")
check(r.returncode == 2 and "did you mean 'debug'" in r.stderr and r.stderr.count("\n") == 1,
      "unknown verb -> one line, suggestion, exit 2: %r" % r.stderr)
r = run("--jsn", "debug")
check(r.returncode == 2 and "did you mean '--json'" in r.stderr, "unknown global option")
r = run("debug", "--help")
check(r.returncode == 0 and "toml-decode" in r.stdout, "debug --help")
r = run("debug", "toml-decod")
check(r.returncode == 2 and "did you mean 'toml-decode'" in r.stderr, "debug subcommand suggestion")
subs = ["fatbin", "gpus", "libs", "pyenv", "ldd", "toml-decode", "toml-encode", "version-sort", "specifier", "marker", "requirement",
        "wheel-name", "metadata", "sha256"]
for s in subs:
    r = run("debug", s, "--help")
    check(r.returncode == 0 and r.stdout.startswith("usage: gpuenv debug " + s),
          "debug %s --help: %r" % (s, r.stdout[:80]))
r = run("debug", "sha256", "--hepl", "x")
check(r.returncode == 2 and "did you mean '--help'" in r.stderr and r.stderr.count("\n") == 1,
      "unknown verb option -> one line with suggestion: %r" % r.stderr)
r = run("--color=sometimes", "debug")
check(r.returncode == 2, "--color value checked")
r = run("--color=always", "debg", env={"NO_COLOR": "1"})
check("\033[" not in r.stderr, "NO_COLOR wins over --color=always")
r = run("--color=always", "debg", env={"NO_COLOR": ""})
check("\033[" in r.stderr, "--color=always colours")
r = run("debg")
check("\033[" not in r.stderr, "no colour when not a terminal")
r = run("debug", "sha256", "/nonexistent/file")
check(r.returncode == 1 and "/nonexistent/file" in r.stderr, "missing file -> 1 with path")
# ---- one table of exit codes ----


def norm(text):
    return " ".join(text.split())


def enum_codes():
    """CLI_EXIT_CODES of cli/cli.h: {value: (name, meaning)}."""
    with open(os.path.join(SRC, "cli", "cli.h")) as f:
        h = f.read()
    body = h[h.index("#define CLI_EXIT_CODES(X)"):]
    body = body[:body.index("#define CLI_EXIT_ENUM")]
    out = {}
    for m in re.finditer(r'X\((CLI_EXIT_\w+), (\d+), ((?:\s*"(?:[^"\\]|\\.)*"\s*\\?)+)\)', body):
        meaning = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(3))).replace("\\n", "\n")
        out[int(m.group(2))] = (m.group(1), norm(meaning))
    return out


codes = enum_codes()
check(sorted(codes) == [0, 1, 2, 3, 4], "cli.h exit table: %r" % codes)

# gpuenv --help prints the same table
r = run("--help")
tail = r.stdout[r.stdout.index("exit status, for every verb"):]
helped = {int(m.group(1)): norm(m.group(2))
          for m in re.finditer(r"^  (\d)  (.*(?:\n     .*)*)", tail, re.M)}
check(helped == {v: m for v, (_, m) in codes.items()}, "--help exit table = cli.h: %r" % helped)

# docs/exit-codes.md: the same rows, and each verb's block as its help says it
with open(os.path.join(SRC, "docs", "exit-codes.md")) as f:
    doc = f.read()
rows = {int(m.group(1)): (m.group(2), norm(m.group(3)))
        for m in re.finditer(r"^\| (\d) \| `(\w+)` \| (.*) \|$", doc, re.M)}
check(rows == codes, "docs/exit-codes.md table = cli.h: %r" % rows)
with open(os.path.join(SRC, "README.md")) as f:
    readme = f.read()
check("docs/exit-codes.md" in readme, "README links docs/exit-codes.md")
rrows = {int(m.group(1)): norm(m.group(2)) for m in re.finditer(r"^\| (\d) \| (.*) \|$", readme, re.M)}
check(rrows == {v: m for v, (_, m) in codes.items()}, "README exit table = cli.h: %r" % rrows)
blocks = {m.group(1): norm(m.group(2))
          for m in re.finditer(r"^`gpuenv ([a-z -]+) --help`:\n\n```\n(.*?)```", doc, re.M | re.S)}

verbs = ["probe", "doctor", "preflight", "diagnose", "kb", "init", "add", "remove", "source", "lock", "outdated", "tree", "export", "image", "labels", "sync", "run", "profile", "venv", "cache", "drift", "trt", "triton", "debug"]
subs = {"kb": ["torch", "driver", "gpu", "image", "sources", "info", "update", "bundle"],
        "image": ["lock", "check"],
        "source": ["add", "remove"],
        "cache": ["dir", "size", "prune", "clean"],
        "trt": ["inspect", "optimize", "build", "check"],
        "triton": ["check"],
        "debug": ["toml-decode", "toml-encode", "version-sort", "specifier", "marker",
                  "requirement", "wheel-name", "wheel-tags", "metadata", "fatbin", "gpus",
                  "libs", "pyenv", "pythons", "ldd", "sha256", "pylock", "shim-run"]}
listed = re.findall(r"^  (\w+) ", r.stdout[r.stdout.index("verbs:"):r.stdout.index("options:")], re.M)
check(listed == verbs, "verbs listed: %r" % listed)
helps = {}
for v in verbs:
    helps[v] = run(v, "--help").stdout
    for sub in subs.get(v, []):
        helps[v + " " + sub] = run(v, sub, "--help").stdout
for name, text in helps.items():
    check(text.startswith("usage: gpuenv " + name), "%s --help: %r" % (name, text[:60]))
    m = re.search(r"^exit status: (.*?)(?:\n\n|\n  -h, --help|\Z)", text, re.M | re.S)
    if name in blocks:
        check(m is not None and norm("exit status: " + m.group(1)) == blocks[name],
              "%s --help exit status = docs/exit-codes.md: %r" % (name, m and m.group(1)))
    else:
        check(m is None, "%s --help has an exit status; docs/exit-codes.md lacks it" % name)
    said = [int(c) for c in re.findall(r"(?:exit status:|,) ([0-9]) ", m.group(1) if m else "")]
    said += [int(c) for c in re.findall(r"\bexit(?: status)?(?: is)? ([0-9])\b", text)]
    for c in said:
        check(c in codes, "%s --help: exit %d is not in cli.h's table" % (name, c))
check(set(blocks) <= set(helps), "docs/exit-codes.md blocks name verbs: %r" % sorted(blocks))

# a knowledge base that cannot be read: the job cannot be done, for every verb
facts = os.path.join(SRC, "docs", "hardware", "h200-2026-11-29", "probe.json")
for args in (["kb", "torch"], ["kb", "sources"], ["kb", "gpu", "H100"], ["doctor", "--facts", facts],
             ["preflight", "--facts", facts, "--cuda", "12.2"], ["diagnose", "-"]):
    r = run(*args, "--kb-dir", "/nonexistent/kb", stdin="")
    check(r.returncode == 4 and "/nonexistent/kb" in r.stderr,
          "%s --kb-dir /nonexistent/kb: exit %d (want 4): %r" % (" ".join(args), r.returncode, r.stderr))

# the shared options (CLI_OPTION_GROUPS in cli/cli.h): a verb that takes a
# group lists each of its options once in --help, accepts it (a prefix too,
# as getopt_long does), and asks for its value like any other option
for verb, opts in ((["drift"], ["--facts", "--format", "--output", "--kb-dir"]),
                   (["labels"], ["--facts", "--project", "--format", "--output", "--kb-dir"]),
                   (["image", "lock"], ["--project", "--output", "--kb-dir"]),
                   (["debug", "manifest"], ["--project", "--kb-dir"]),
                   (["debug", "download"], ["--index-url", "--cache-dir", "--offline"])):
    text = run(*verb, "--help").stdout
    for o in opts:
        check(len(re.findall(r"^  (?:-\w, )?%s\b" % o, text, re.M)) == 1,
              "%s --help lists %s once: %r" % (" ".join(verb), o, text))
        if o != "--offline":
            r = run(*verb, o)
            check(r.returncode == 2 and "needs a value" in r.stderr,
                  "%s %s without a value: exit %d %r" % (" ".join(verb), o, r.returncode, r.stderr))
r = run("drift", "--expect", "/nonexistent/expect.toml", "--kb-d", "/nonexistent/kb")
check(r.returncode == 4 and "/nonexistent/kb" in r.stderr, "drift --kb-d (a prefix): %r" % r.stderr)
r = run("debug", "manifest", "--facts", "x")
check(r.returncode == 2 and "unknown option '--facts'" in r.stderr,
      "debug manifest takes no --facts group: %r" % r.stderr)

# writing to a full device must not pass as success, nor as an answer (1 is
# diagnose's "known failures found"): 4, the code for "could not do the job"
if os.path.exists("/dev/full"):
    facts = os.path.join(SRC, "docs", "hardware", "h200-2026-11-29", "probe.json")
    log = os.path.join(SRC, "tests", "fixtures", "logs", "cuda-oom.log")
    runs = [["--help"], ["--version"], ["debug", "sha256", BIN], ["doctor", "--help"],
            ["doctor", "--facts", facts], ["--json", "doctor", "--facts", facts],
            ["preflight", "--facts", facts, "--cuda", "12.2"],
            ["preflight", "--json", "--facts", facts, "--cuda", "12.2"],
            ["diagnose", log], ["diagnose", "--json", log], ["kb", "gpu", "H100"],
            ["kb", "gpu", "--json", "H100"], ["kb", "sources"],
            ["probe", "--gpus-only", "--root", os.path.join(SRC, "tests", "fixtures", "hw", "h200")],
            # --json prints head, stack and tail in turn (cli/probe.c's probe_json)
            ["probe", "--json", "--root", os.path.join(SRC, "tests", "fixtures", "hw", "h200")],
            ["probe", "--json"],
            ["debug", "version-sort"], ["cache", "dir", "--cache-dir", "/x"]]
    for args in runs:
        with open("/dev/full", "w") as full:
            p = subprocess.run([BIN, *args], stdout=full, stderr=subprocess.PIPE, text=True,
                               input="1.0\n", timeout=60)
        check(p.returncode == 4 and "write error" in p.stderr,
              "%s > /dev/full: exit %d (want 4), %r" % (" ".join(args), p.returncode, p.stderr[-200:]))

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
