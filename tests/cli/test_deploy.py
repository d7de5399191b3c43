"""deploy/: the DaemonSet and its kustomization parse as Kubernetes objects
(Debian's python3-kubernetes models: yaml.safe_load_all, ApiClient
deserialize, and serialized back to the same document, so an unknown field
or a wrong type fails), run non-root with a read-only root file system and no
privilege, mount only the two output folders from the host, and run exactly
the command lines issue 12 names; the expect file they ship is one gpuenv
reads; the loop survives drift; the image recipe's final stage is what the
manifest assumes (user, entry point) and gpuenv's own Dockerfile reader
finds its base."""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
DEPLOY = os.path.join(SRC, "deploy")
FACTS = os.path.join(SRC, "tests", "fixtures", "doctor", "h200-2026-11-29", "facts.json")
TMP = tempfile.mkdtemp(prefix="gpuenv-deploy-")
failures = []

LABELS_CMD = "gpuenv labels --format nfd -o /etc/kubernetes/node-feature-discovery/features.d/gpuenv"
DRIFT_CMD = ("gpuenv drift --expect /etc/gpuenv/expect.toml --format prometheus "
             "-o /var/lib/node_exporter/textfile_collector/gpuenv.prom")


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


try:
    import yaml
    from kubernetes.client import ApiClient
except ImportError as e:  # Debian's python3-yaml / python3-kubernetes (scripts/dev test installs them)
    print("SKIP: %s (run under /usr/bin/python3 with python3-kubernetes)" % e)
    sys.exit(77)

api = ApiClient()
MODELS = {("v1", "Namespace"): "V1Namespace", ("v1", "ServiceAccount"): "V1ServiceAccount",
          ("v1", "ConfigMap"): "V1ConfigMap", ("apps/v1", "DaemonSet"): "V1DaemonSet"}


class Response:
    def __init__(self, doc):
        self.data = json.dumps(doc)


def deserialize(doc):
    model = MODELS.get((doc.get("apiVersion"), doc.get("kind")))
    if not model:
        return None, None
    obj = api.deserialize(Response(doc), model)
    return obj, api.sanitize_for_serialization(obj)


# ---- every manifest is a Kubernetes object, exactly ----------------------
with open(os.path.join(DEPLOY, "kustomization.yaml")) as f:
    kust = yaml.safe_load(f)
check(kust.get("apiVersion") == "kustomize.config.k8s.io/v1beta1" and kust.get("kind") == "Kustomization",
      "kustomization: %r" % kust)
manifests = sorted(n for n in os.listdir(DEPLOY) if n.endswith(".yaml") and n != "kustomization.yaml")
check(sorted(kust.get("resources", [])) == manifests, "kustomization lists every manifest: %r" % kust.get("resources"))
check("helm" not in json.dumps(kust).lower(), "Helm-free")
objs = {}
for name in manifests:
    with open(os.path.join(DEPLOY, name)) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    check(docs, "%s: no document" % name)
    for d in docs:
        obj, back = deserialize(d)
        check(obj is not None, "%s: %s/%s is not a kind the test knows" % (name, d.get("apiVersion"), d.get("kind")))
        if obj is None:
            continue
        # the models drop what they do not know: a round trip shows it
        check(back == d, "%s: %s round trip differs:\n%s\n%s" % (name, d["kind"], json.dumps(d, sort_keys=True),
                                                                 json.dumps(back, sort_keys=True)))
        ns = d["metadata"].get("namespace")
        check(d["kind"] == "Namespace" or ns == kust.get("namespace"), "%s: namespace %r" % (name, ns))
        objs[d["kind"]] = (obj, d)
check(set(objs) == {"Namespace", "ServiceAccount", "ConfigMap", "DaemonSet"}, "objects: %r" % sorted(objs))
check(objs["Namespace"][1]["metadata"]["name"] == kust["namespace"], "the namespace is the kustomization's")

ds, dsd = objs["DaemonSet"]
spec = ds.spec.template.spec
check(ds.spec.selector.match_labels.items() <= ds.spec.template.metadata.labels.items(), "selector matches the pod")
check(spec.service_account_name == objs["ServiceAccount"][1]["metadata"]["name"], "service account")
check(objs["ServiceAccount"][0].automount_service_account_token is False and spec.automount_service_account_token is False,
      "no API token")
check(not spec.host_network and not spec.host_pid and not spec.host_ipc, "no host namespaces")

# ---- non-root, read-only, no privilege ----------------------------------
psc = spec.security_context
check(psc.run_as_non_root is True and isinstance(psc.run_as_user, int) and psc.run_as_user > 0 and
      psc.run_as_group and psc.run_as_group > 0, "pod: non-root %r" % psc)
check(psc.seccomp_profile and psc.seccomp_profile.type == "RuntimeDefault", "seccomp RuntimeDefault")
check(len(spec.containers) == 1 and not spec.init_containers, "one container, no init container")
c = spec.containers[0]
sc = c.security_context
check(sc.allow_privilege_escalation is False and sc.read_only_root_filesystem is True and
      sc.privileged in (False, None) and sc.capabilities.drop == ["ALL"] and not sc.capabilities.add and
      sc.run_as_user in (None, psc.run_as_user) and sc.run_as_non_root in (None, True),
      "container security context: %r" % sc)
check(c.resources and c.resources.limits and "memory" in c.resources.limits, "a memory limit")

# ---- GPU nodes only, tainted ones too -----------------------------------
terms = spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms
keys = {e.key for t in terms for e in t.match_expressions}
check("feature.node.kubernetes.io/pci-10de.present" in keys and "nvidia.com/gpu.present" in keys,
      "node affinity for GPU nodes: %r" % keys)
tol = [(t.key, t.operator, t.effect) for t in spec.tolerations]
check(("nvidia.com/gpu", "Exists", "NoSchedule") in tol, "tolerates nvidia.com/gpu taints: %r" % tol)

# ---- the device access: the NVIDIA runtime, no GPU claimed -----------------
env = {e.name: e.value for e in c.env}
check(spec.runtime_class_name == "nvidia" and env.get("NVIDIA_VISIBLE_DEVICES") == "all" and
      "utility" in env.get("NVIDIA_DRIVER_CAPABILITIES", "").split(","), "NVIDIA runtime: %r" % env)
check(not (c.resources.limits or {}).get("nvidia.com/gpu") and not (c.resources.requests or {}).get("nvidia.com/gpu"),
      "claims no GPU")

# ---- mounts: the two output folders from the host, nothing else -------------
vols = {v.name: v for v in spec.volumes}
mounts = {m.name: m for m in c.volume_mounts}
check(set(vols) == set(mounts), "every volume mounted: %r %r" % (sorted(vols), sorted(mounts)))
host = {v.host_path.path: mounts[n] for n, v in vols.items() if v.host_path}
check(set(host) == {"/etc/kubernetes/node-feature-discovery/features.d", "/var/lib/node_exporter/textfile_collector"},
      "hostPath volumes: %r" % sorted(host))
for path, m in host.items():
    check(m.mount_path == path and not m.sub_path, "%s mounted at its own path: %r" % (path, m))
    check(vols[m.name].host_path.type == "Directory", "%s: type Directory (a missing folder is an error)" % path)
for n, m in mounts.items():
    if not vols[n].host_path:
        check(m.read_only is True, "%s: read-only" % n)
cm_vol = [v for v in vols.values() if v.config_map]
check(len(cm_vol) == 1 and cm_vol[0].config_map.name == objs["ConfigMap"][1]["metadata"]["name"], "expect ConfigMap mounted")
expect_dir = mounts[cm_vol[0].name].mount_path

# ---- the command lines: exactly issue 12's, paths inside the mounts --------
check(c.command == ["/bin/busybox", "sh", "-c"] and len(c.args) == 1, "command: %r %r" % (c.command, c.args))
script = c.args[0]
lines = [ln.strip() for ln in script.splitlines()]
check(any(ln.startswith(LABELS_CMD + " ") or ln == LABELS_CMD for ln in lines), "labels command: %r" % script)
check(DRIFT_CMD in lines, "drift command: %r" % script)
for out in re.findall(r" -o (\S+)", script):
    check(any(out.startswith(p + "/") for p in host), "%s is inside a hostPath mount" % out)
m = re.search(r"--expect (\S+)", script)
check(m and os.path.dirname(m.group(1)) == expect_dir and os.path.basename(m.group(1)) in objs["ConfigMap"][1]["data"],
      "--expect names the ConfigMap's file: %r" % (m and m.group(1)))
check("GPUENV_INTERVAL" in env and int(env["GPUENV_INTERVAL"]) > 0 and "$GPUENV_INTERVAL" in script, "interval")

# ---- the shipped expect file is one gpuenv reads; its metrics are valid -----
expect = os.path.join(TMP, "expect.toml")
with open(expect, "w") as f:
    f.write(objs["ConfigMap"][1]["data"]["expect.toml"])
prom = os.path.join(TMP, "gpuenv.prom")
args = DRIFT_CMD.split()[1:]
args[args.index("/etc/gpuenv/expect.toml")] = expect
args[args.index("/var/lib/node_exporter/textfile_collector/gpuenv.prom")] = prom
r = subprocess.run([BIN, *args, "--facts", FACTS], capture_output=True, text=True, timeout=60)
check(r.returncode in (0, 1) and os.path.exists(prom), "the DaemonSet's drift line: %d %r" % (r.returncode, r.stderr))
promtool = shutil.which("promtool") or "/usr/bin/promtool"
if os.path.exists(prom) and os.path.exists(promtool):
    p = subprocess.run([promtool, "check", "metrics"], stdin=open(prom), capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "promtool: %r" % p.stderr)
has_labels = subprocess.run([BIN, "labels", "--help"], capture_output=True, text=True).returncode == 0
if has_labels:
    nfd = os.path.join(TMP, "features.d", "gpuenv")
    os.makedirs(os.path.dirname(nfd))
    a = LABELS_CMD.split()[1:]
    a[a.index("/etc/kubernetes/node-feature-discovery/features.d/gpuenv")] = nfd
    r = subprocess.run([BIN, *a, "--facts", FACTS], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and os.path.exists(nfd), "the DaemonSet's labels line: %d %r" % (r.returncode, r.stderr))
    # the ConfigMap's project: the labels line gets --project /etc/gpuenv
    check(re.search(r'\[ -f /etc/gpuenv/pyproject.toml \] && proj="--project /etc/gpuenv"', script)
          and re.search(re.escape(LABELS_CMD) + r" \$proj", script) and os.path.dirname("/etc/gpuenv/expect.toml")
          == expect_dir, "the project in the ConfigMap reaches labels: %r" % script)
    sat = os.path.join(SRC, "..", "shared", "examples", "satellite-classifier")
    if os.path.isfile(os.path.join(sat, "pyproject.toml")):
        r = subprocess.run([BIN, *a, "--facts", FACTS, "--project", sat], capture_output=True, text=True, timeout=120)
        with open(nfd) as f:
            tl = [ln for ln in f.read().splitlines() if "/target." in ln]
        check(r.returncode == 0 and len(tl) == 4, "labels with the project: %d %r %r" % (r.returncode, tl, r.stderr))
else:
    print("SKIP: this gpuenv has no labels verb yet; its command line is checked as text only")

# ---- the loop: drift (exit 1) is not an error, 4 is; it keeps going ---------
stubs = os.path.join(TMP, "bin")
os.makedirs(stubs)
log = os.path.join(TMP, "calls")
with open(os.path.join(stubs, "gpuenv"), "w") as f:
    f.write('#!/bin/sh\necho "gpuenv $*" >> %s\n[ "$1" = drift ] && exit "${DRIFT_EXIT:-0}"\nexit 0\n' % log)
with open(os.path.join(stubs, "busybox"), "w") as f:  # the second sleep ends the test
    f.write('#!/bin/sh\necho "busybox $*" >> %s\n[ "$(grep -c ^busybox %s)" -ge 2 ] && kill -TERM $PPID\nexit 0\n'
            % (log, log))
for s in os.listdir(stubs):
    os.chmod(os.path.join(stubs, s), stat.S_IRWXU)
sh = "/bin/sh"
for code, noisy in ((1, False), (4, True)):
    open(log, "w").close()
    e = dict(os.environ, PATH=stubs + ":/usr/bin:/bin", DRIFT_EXIT=str(code), GPUENV_INTERVAL="7")
    p = subprocess.run([sh, "-c", script], env=e, capture_output=True, text=True, timeout=60)
    with open(log) as f:
        calls = f.read().splitlines()
    check(calls.count(LABELS_CMD) == 2 and calls.count(DRIFT_CMD) == 2 and
          calls.count("busybox sleep 7") == 2, "loop with drift exit %d: %r" % (code, calls))
    check(("gpuenv drift: exit 4" in p.stderr) == noisy and "labels" not in p.stderr,
          "loop stderr with drift exit %d: %r" % (code, p.stderr))

# ---- the image recipe ------------------------------------------------------
with open(os.path.join(DEPLOY, "Dockerfile")) as f:
    df = f.read()
froms = re.findall(r"^FROM\s+(\S+)(?:\s+AS\s+(\S+))?", df, re.M | re.I)
check(len(froms) >= 2, "multi-stage: %r" % froms)
final = froms[-1][0]
check(final.startswith("gcr.io/distroless/cc-"), "final stage distroless with glibc: %r" % final)
build_release = re.search(r"debian:(\w+)", froms[0][0])
check(build_release and {"bookworm": "debian12", "trixie": "debian13"}.get(build_release.group(1)) in final,
      "build and final stage of one Debian release: %r" % froms)
check(re.search(r"COPY --from=%s " % re.escape(froms[0][1]), df), "the final stage copies from the build stage")
check(re.search(r"^USER %d:%d$" % (psc.run_as_user, psc.run_as_group), df, re.M), "USER = runAsUser:runAsGroup")
check("/usr/local/bin/gpuenv" in df and "/bin/busybox" in df, "gpuenv and busybox where the manifest runs them")
with open(os.path.join(SRC, "meson_options.txt")) as f:
    check("option('tests'" in f.read(), "-Dtests=false exists")
with open(os.path.join(SRC, "scripts", "dev")) as f:
    dev_pkgs = set(re.search(r'PKGS="([^"]*)"', f.read()).group(1).split())
apt = set(re.findall(r"^\s+([a-z0-9][a-z0-9.+-]+(?:\s+[a-z0-9][a-z0-9.+-]+)*)\s*\\?$",
                     df.split("apt-get install", 1)[1].split("rm -rf", 1)[0], re.M))
apt = {w for ln in apt for w in ln.split()} - {"busybox-static", "&&"}
check(apt and apt <= dev_pkgs, "the image builds with scripts/dev's packages: %r" % (apt - dev_pkgs))
# gpuenv's own Dockerfile reader finds the final stage's base (preflight then
# says it has no CUDA to judge: by design, the driver comes from the host)
r = subprocess.run([BIN, "preflight", "--dockerfile", os.path.join(DEPLOY, "Dockerfile"), "--facts", FACTS],
                   capture_output=True, text=True, timeout=60)
check(final in r.stderr + r.stdout, "preflight --dockerfile reads the final base: %r" % (r.stderr + r.stdout))

shutil.rmtree(TMP, ignore_errors=True)
print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
