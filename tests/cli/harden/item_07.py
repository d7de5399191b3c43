"""Item 7: a venv with no interpreter was reported healthy: after bin/python
was removed, `gpuenv venv` said "kept", sync "already match" and doctor
--env "no problem found".  Now venv repairs it (packages kept), sync refuses
it with that fix, and doctor reports venv-no-interpreter."""
import os


def run(h):
    proj = h.project("p07")
    venv = os.path.join(h.TMP, "v07")
    r = h.sync(proj, venv)
    h.check(r.returncode == 0, "item 7: a first sync: %s" % r.stderr)
    os.unlink(os.path.join(venv, "bin", "python"))

    r = h.gpuenv("doctor", "--env", venv)
    h.check(r.returncode == 3 and "venv-no-interpreter" in r.stdout and "gpuenv venv %s" % venv in r.stdout,
            "item 7: doctor --env reports it: %d %s %s" % (r.returncode, r.stdout, r.stderr))
    r = h.sync(proj, venv)
    h.check(r.returncode == 4 and "the venv has no working interpreter: bin/python is missing" in r.stderr and
            "gpuenv venv %s repairs it" % venv in r.stderr, "item 7: sync refuses: %d %s" % (r.returncode, r.stderr))
    r = h.gpuenv("venv", venv, "--python", h.PY)
    h.check(r.returncode == 0 and ("repaired %s" % venv) in r.stdout + r.stderr,
            "item 7: venv repairs it: %d %s %s" % (r.returncode, r.stdout, r.stderr))
    py = h.subprocess.run([os.path.join(venv, "bin", "python3"), "-c", "import alpha, beta; print('ok')"],
                          capture_output=True, text=True, timeout=60)
    h.check(py.stdout.strip() == "ok", "item 7: the interpreter runs, the packages kept: %r" % py.stderr)
    r = h.sync(proj, venv)
    h.check(r.returncode == 0, "item 7: sync after the repair: %s" % r.stderr)
    r = h.gpuenv("doctor", "--env", venv)
    h.check(r.returncode == 0, "item 7: doctor --env after the repair: %d %s" % (r.returncode, r.stdout))

    # a link to an interpreter that is gone
    os.unlink(os.path.join(venv, "bin", "python"))
    os.symlink("/nonexistent/python3", os.path.join(venv, "bin", "python"))
    r = h.sync(proj, venv)
    h.check(r.returncode == 4 and "bin/python is a link to something that is gone" in r.stderr,
            "item 7: a dangling bin/python: %d %s" % (r.returncode, r.stderr))
