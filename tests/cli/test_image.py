"""gpuenv image lock / check against tests/fixtures/registry_server.py on
127.0.0.1 (no network): digests recorded and equal to the SHA-256 of what the
server served, per platform (an OCI index with two platforms and an
attestation entry; a single Docker v2 manifest whose config names its
platform), components equal to `gpuenv kb image`'s, a tag the KB does not know
locked with a warning; drift (a tag re-pointed) exits 1 naming the ref and
both digests; the token flow (anonymous, and Basic credentials from a temp
HOME's ~/.docker/config.json or $DOCKER_CONFIG: sent, never written out or
printed), 401 without credentials, refused credentials, a credential helper;
a 404 tag; --registry and [tool.gpuenv] registries; malformed registry
answers (JSON, a Docker-Content-Digest that disagrees, schema 1, a 401 with
no or a malformed challenge); malformed manifest files (file:line:col);
nothing written on any failure; --json of both."""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

BIN = os.path.abspath(os.environ["GPUENV_BIN"])
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import registry_server as rs  # noqa: E402

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-image-test-")
HOME = os.path.join(TMP, "home")
os.makedirs(HOME)
STATE = os.path.join(TMP, "state.json")
USER, PASSWORD = "alice", "s3cret-Pa55"


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, env=None, cwd=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("DOCKER_")}
    e["HOME"] = HOME
    e.update(env or {})
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=e, timeout=120, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


# ---- the registry's content --------------------------------------------------------------
blobs = {}
amd = rs.image_manifest(blobs, "amd64", salt="a1")
arm = rs.image_manifest(blobs, "arm64", variant="v8", salt="a1")
INDEX = rs.image_index(blobs, [(amd[0], amd[1], "linux", "amd64", None),
                               (arm[0], arm[1], "linux", "arm64", "v8")])
# the same tag rebuilt: another index (drift)
amd2 = rs.image_manifest(blobs, "amd64", salt="a2")
INDEX2 = rs.image_index(blobs, [(amd2[0], amd2[1], "linux", "amd64", None),
                                (arm[0], arm[1], "linux", "arm64", "v8")])
CUDA = rs.image_manifest(blobs, "amd64", docker=True, salt="c")[0]
ptamd = rs.image_manifest(blobs, "amd64", docker=True, salt="p")
HUBPT = rs.image_index(blobs, [(ptamd[0], ptamd[1], "linux", "amd64", None)], docker=True)
UNKNOWN = rs.image_index(blobs, [(amd[0], amd[1], "linux", "amd64", None)], docker=True,
                         attestation=False)
SCHEMA1 = rs.add_blob(blobs, "application/vnd.docker.distribution.manifest.v1+prettyjws",
                      {"schemaVersion": 1, "name": "nvidia/old", "tag": "1", "fsLayers": []})
ARTIFACT = rs.add_blob(blobs, "application/vnd.example.thing.v1+json",
                       {"schemaVersion": 2, "mediaType": "application/vnd.example.thing.v1+json"})

PT = "nvcr.io/nvidia/pytorch:25.01-py3"
CU = "nvidia/cuda:12.4.1-runtime-ubuntu22.04"
CU_REF = "docker.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04"
UNK = "nvcr.io/nvidia/notinkb:1.0"
HPT = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"


def state(auth="none", tags=None, faults=None):
    t = {"nvidia/pytorch": {"25.01-py3": INDEX}, "nvidia/cuda": {"12.4.1-runtime-ubuntu22.04": CUDA},
         "nvidia/notinkb": {"1.0": UNKNOWN}, "pytorch/pytorch": {"2.5.1-cuda12.4-cudnn9-runtime": HUBPT}, "nvidia/old": {"1": SCHEMA1},
         "nvidia/artifact": {"1": ARTIFACT}}
    for repo, tt in (tags or {}).items():
        t.setdefault(repo, {}).update(tt)
    rs.write_state(STATE, {"blobs": blobs, "tags": t, "auth": auth, "user": USER,
                           "password": PASSWORD, "faults": faults or {}})


state()
proc, port = rs.start(STATE)
URL = "http://127.0.0.1:%d" % port
MIRRORS = ["--registry", "nvcr.io=" + URL, "--registry", "docker.io=" + URL]


def server_log():
    import urllib.request
    with urllib.request.urlopen(URL + "/_log") as r:
        return json.load(r)


def reset_log():
    import urllib.request
    urllib.request.urlopen(URL + "/_reset").read()


def sha(text):
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def read(path):
    with open(path) as f:
        return f.read()


try:
    out = os.path.join(TMP, "image-manifest.json")

    # ---- lock: digests, platforms, components ---------------------------------------------
    # a pytorch/pytorch tag: components by its grammar and images.toml
    hub = os.path.join(TMP, "hub.json")
    rc, so, se = run("image", "lock", HPT, "-o", hub, *MIRRORS)
    rk, ko, _ = run("kb", "image", HPT, "--json")
    kbp = json.loads(ko)["images"][0] if rk == 0 else {}
    hm = json.loads(read(hub))["images"][0] if rc == 0 else {}
    check(rc == 0 and hm.get("ref") == "docker.io/" + HPT and hm.get("digest") == HUBPT and
          hm.get("components") == {"cuda": kbp.get("cuda"), "torch": kbp.get("torch"),
                                   "cudnn": str(kbp.get("cudnn_major")), "python": kbp.get("python"),
                                   "driver_min": kbp.get("min_driver")},
          "pytorch/pytorch components = kb image: %d %r %r" % (rc, hm.get("components"), se))

    rc, so, se = run("image", "lock", PT, CU, UNK, "-o", out, *MIRRORS)
    check(rc == 0, "lock: exit %d: %s" % (rc, se))
    m = json.loads(read(out)) if os.path.exists(out) else {"images": []}
    check(m.get("schema") == "gpuenv.image-manifest/1", "schema: %r" % m.get("schema"))
    by = {i["ref"]: i for i in m["images"]}
    check([i["ref"] for i in m["images"]] == sorted(by), "images sorted by ref")
    check(set(by) == {PT, CU_REF, UNK}, "refs normalized: %r" % sorted(by))
    pt = by.get(PT, {})
    check(pt.get("digest") == INDEX == sha(blobs[INDEX]["text"]),
          "index digest = sha256 of the served bytes: %r" % pt.get("digest"))
    check(pt.get("media_type") == rs.MT_OCI_INDEX, "index media type: %r" % pt.get("media_type"))
    check(pt.get("registry") == "nvcr.io" and pt.get("repository") == "nvidia/pytorch" and
          pt.get("tag") == "25.01-py3", "parts of the ref")
    check(pt.get("platforms") == [
        {"os": "linux", "architecture": "amd64", "digest": amd[0]},
        {"os": "linux", "architecture": "arm64", "variant": "v8", "digest": arm[0]}],
        "platforms of the index (attestation left out): %r" % pt.get("platforms"))
    cu = by.get(CU_REF, {})
    check(cu.get("digest") == CUDA == sha(blobs[CUDA]["text"]), "single manifest digest")
    check(cu.get("platforms") == [{"os": "linux", "architecture": "amd64", "digest": CUDA}],
          "a single manifest's platform from its config: %r" % cu.get("platforms"))
    # the components are the KB's answer for the tag
    rk, ko, _ = run("kb", "image", PT, "--json")
    kbi = json.loads(ko)["images"][0] if rk == 0 else {}
    want = {"cuda": kbi.get("cuda_full"), "cudnn": kbi.get("cudnn"), "nccl": kbi.get("nccl"),
            "tensorrt": kbi.get("tensorrt"), "torch": kbi.get("torch"), "python": kbi.get("python"),
            "ubuntu": kbi.get("ubuntu"), "driver_min": kbi.get("min_driver")}
    want = {k: v for k, v in want.items() if v is not None}
    check(pt.get("components") == want and want.get("cuda") and want.get("driver_min"),
          "components = kb image: %r vs %r" % (pt.get("components"), want))
    rk, ko, _ = run("kb", "image", CU, "--json")
    kbc = json.loads(ko)["images"][0] if rk == 0 else {}
    check(cu.get("components", {}).get("cuda") == kbc.get("cuda_full") == "12.4.1" and
          cu["components"].get("driver_min") == kbc.get("min_driver") and
          cu["components"].get("ubuntu") == "22.04",
          "nvidia/cuda components = kb image: %r" % cu.get("components"))
    unk = by.get(UNK, {})
    check(unk.get("components") == {} and unk.get("digest") == UNKNOWN and
          unk.get("media_type") == rs.MT_DOCKER_LIST, "a tag the KB does not know: by digest, "
          "no components: %r" % unk)
    check("warning" in se and UNK in se and "without components" in se,
          "the unknown tag's warning: %r" % se)
    check(PT in so and INDEX in so and "CUDA 12.8.0" in so, "lock's text: %r" % so)
    # the Accept header names the four manifest types
    acc = [e["accept"] or "" for e in server_log() if "/manifests/" in e["path"]]
    check(acc and all(t in acc[0] for t in (rs.MT_OCI_INDEX, rs.MT_DOCKER_LIST, rs.MT_OCI_MANIFEST,
                                             rs.MT_DOCKER_MANIFEST)), "Accept: %r" % acc[:1])

    # deterministic: the same answers, the same bytes; stdout without -o is the file
    first = read(out)
    rc, so, se = run("image", "lock", UNK, CU, PT, "-o", out, *MIRRORS)
    check(rc == 0 and read(out) == first, "a second lock writes the same bytes")
    rc, so, se = run("image", "lock", PT, CU, UNK, *MIRRORS)
    check(rc == 0 and so == first, "without -o the manifest goes to stdout")
    # lock one image into the file: the other entries stay
    rc, so, se = run("image", "lock", CU, "-o", out, *MIRRORS)
    check(rc == 0 and read(out) == first, "re-locking one image keeps the others")

    # ---- check: unchanged, then drift --------------------------------------------------------
    rc, so, se = run("image", "check", out, *MIRRORS)
    check(rc == 0 and so.count("ok ") == 3, "check unchanged: exit %d %r %r" % (rc, so, se))
    state(tags={"nvidia/pytorch": {"25.01-py3": INDEX2}})
    rc, so, se = run("image", "check", out, *MIRRORS)
    check(rc == 1, "drift: exit %d (want 1): %r" % (rc, se))
    check("drift " + PT in so and INDEX in so and INDEX2 in so,
          "drift names the ref, the recorded and current digests: %r" % so)
    rc, so, se = run("--json", "image", "check", out, *MIRRORS)
    j = json.loads(so) if so.strip().startswith("{") else {}
    st = {i["ref"]: i for i in j.get("images", [])}
    check(rc == 1 and j.get("drift") == 1 and st.get(PT, {}).get("status") == "drift" and
          st[PT].get("recorded") == INDEX and st[PT].get("current") == INDEX2 and
          st.get(CU_REF, {}).get("status") == "unchanged", "check --json: %r" % j)
    check(read(out) == first, "check writes nothing")
    # a relock records the new digest; check is clean again
    rc, so, se = run("image", "lock", PT, "-o", out, *MIRRORS)
    check(rc == 0 and json.loads(read(out))["images"][2]["digest"] == INDEX2, "relock after drift")
    rc, so, se = run("image", "check", out, *MIRRORS)
    check(rc == 0, "check after relock: exit %d" % rc)
    state()
    # a tag gone: check cannot answer for it (4), and says which
    state(tags={"nvidia/notinkb": {"1.0": None}})
    rc, so, se = run("image", "check", out, *MIRRORS)
    check(rc == 4 and UNK in se and "404" in se, "check, a tag gone: exit %d %r" % (rc, se))
    state()

    # ---- errors, nothing written -------------------------------------------------------------
    before = read(out)
    rc, so, se = run("image", "lock", PT, "nvcr.io/nvidia/pytorch:99.99-py3", "-o", out, *MIRRORS)
    check(rc == 4 and "99.99-py3" in se and "404" in se and "no tag" in se,
          "404 tag: exit %d %r" % (rc, se))
    check(read(out) == before, "404: nothing written")
    fresh = os.path.join(TMP, "fresh.json")
    rc, so, se = run("image", "lock", "nvcr.io/nvidia/pytorch:99.99-py3", "-o", fresh, *MIRRORS)
    check(rc == 4 and not os.path.exists(fresh), "404: no file made")

    def bad_answer(name, faults, want, ref=PT, auth="none"):
        state(auth=auth, faults=faults)
        rc, so, se = run("image", "lock", ref, "-o", fresh, *MIRRORS)
        check(rc == 4 and all(w in se for w in want) and not os.path.exists(fresh),
              "%s: exit %d %r" % (name, rc, se))

    bad_answer("malformed manifest", {"/v2/nvidia/pytorch/manifests/*": {"malformed": True}},
               ["malformed manifest", "not JSON"])
    bad_answer("wrong Docker-Content-Digest",
               {"/v2/nvidia/pytorch/manifests/*": {"digest_header": "sha256:" + "0" * 64}},
               ["Docker-Content-Digest", "sha256:" + "0" * 64, INDEX])
    bad_answer("a manifest without config",
               {"/v2/nvidia/pytorch/manifests/*": {"body": '{"schemaVersion": 2, "mediaType": "%s",'
                                                           ' "layers": []}' % rs.MT_OCI_MANIFEST,
                                                   "content_type": rs.MT_OCI_MANIFEST}},
               ["without a \"config\" object"])
    bad_answer("schema 1", {}, ["schema 1"], ref="nvcr.io/nvidia/old:1")
    bad_answer("another media type", {}, ["not an image index or an image manifest"],
               ref="nvcr.io/nvidia/artifact:1")
    bad_answer("a 500 after the retries", {"/v2/nvidia/pytorch/manifests/*": {"status": 500}},
               ["500"])
    bad_answer("401 without a challenge", {"/v2/nvidia/pytorch/manifests/*": {"challenge": ""}},
               ["without a WWW-Authenticate"], auth="token")
    bad_answer("a malformed challenge",
               {"/v2/nvidia/pytorch/manifests/*": {"challenge": 'Bearer realm="http://x'}},
               ["malformed challenge", "not closed"], auth="token")
    bad_answer("a malformed token answer", {"/token": {"malformed": True}},
               ["malformed token answer"], auth="token")
    bad_answer("a config that is not its digest",
               {"/v2/nvidia/cuda/blobs/*": {"body": '{"os": "linux", "architecture": "amd64"}'}},
               ["the bytes served are"], ref=CU)

    # ---- the token flow and credentials ------------------------------------------------------
    state(auth="token")
    reset_log()
    rc, so, se = run("image", "lock", PT, "-o", fresh, *MIRRORS)
    log = server_log()
    toks = [e for e in log if e["path"] == "/token"]
    check(rc == 0 and toks and toks[0]["authorization"] is None and
          "scope=repository%3Anvidia%2Fpytorch%3Apull" in toks[0]["query"] and
          "service=fixture-registry" in toks[0]["query"],
          "anonymous token: exit %d %r %r" % (rc, se, toks[:1]))
    check(any((e["authorization"] or "").startswith("Bearer ") for e in log
              if "/manifests/" in e["path"]), "the manifest asked again with the token")
    os.remove(fresh)

    state(auth="token-basic")
    rc, so, se = run("image", "lock", PT, "-o", fresh, *MIRRORS)
    check(rc == 4 and "needs credentials" in se and "docker login nvcr.io" in se and
          not os.path.exists(fresh), "401 without credentials: exit %d %r" % (rc, se))

    docker = os.path.join(HOME, ".docker")
    os.makedirs(docker)
    auth64 = base64.b64encode(("%s:%s" % (USER, PASSWORD)).encode()).decode()
    with open(os.path.join(docker, "config.json"), "w") as f:
        json.dump({"auths": {"nvcr.io": {"auth": auth64}, "https://index.docker.io/v1/": {}}}, f)
    reset_log()
    rc, so, se = run("--json", "image", "lock", PT, "-o", fresh, *MIRRORS)
    toks = [e for e in server_log() if e["path"] == "/token"]
    check(rc == 0 and toks and toks[0]["authorization"] == "Basic " + auth64,
          "config.json credentials sent to the token service: exit %d %r %r" % (rc, se, toks[:1]))
    text = read(fresh) if os.path.exists(fresh) else ""
    for secret in (PASSWORD, auth64, USER):
        check(secret not in text and secret not in so and secret not in se,
              "credentials written nowhere: %r found" % secret)
    check(json.loads(so).get("file") == fresh if so.strip() else False, "lock --json: %r" % so)
    os.remove(fresh)
    # username / password, in $DOCKER_CONFIG
    dc = os.path.join(TMP, "dockercfg")
    os.makedirs(dc)
    with open(os.path.join(dc, "config.json"), "w") as f:
        json.dump({"auths": {"https://nvcr.io": {"username": USER, "password": PASSWORD}}}, f)
    rc, so, se = run("image", "lock", PT, "-o", fresh, *MIRRORS,
                     env={"DOCKER_CONFIG": dc, "HOME": os.path.join(TMP, "nohome")})
    check(rc == 0 and PASSWORD not in read(fresh), "DOCKER_CONFIG's username/password: %d %r" % (rc, se))
    os.remove(fresh)
    # wrong credentials
    with open(os.path.join(dc, "config.json"), "w") as f:
        json.dump({"auths": {"nvcr.io": {"username": USER, "password": "wrong"}}}, f)
    rc, so, se = run("image", "lock", PT, "-o", fresh, *MIRRORS, env={"DOCKER_CONFIG": dc})
    check(rc == 4 and "refused the credentials" in se and "wrong" not in se and
          not os.path.exists(fresh), "refused credentials: exit %d %r" % (rc, se))
    # a credential helper
    with open(os.path.join(dc, "config.json"), "w") as f:
        json.dump({"auths": {"nvcr.io": {}}, "credsStore": "desktop"}, f)
    rc, so, se = run("image", "lock", PT, "-o", fresh, *MIRRORS, env={"DOCKER_CONFIG": dc})
    check(rc == 4 and "docker-credential-desktop" in se and "does not run" in se,
          "credential helper: exit %d %r" % (rc, se))
    # a malformed config.json: its file:line:col, no text of it quoted
    with open(os.path.join(dc, "config.json"), "w") as f:
        f.write('{"auths": {"nvcr.io": {"auth": "%s"}\n' % auth64)
    rc, so, se = run("image", "lock", PT, "-o", fresh, *MIRRORS, env={"DOCKER_CONFIG": dc})
    check(rc == 4 and "config.json:" in se and "malformed docker config" in se and auth64 not in se,
          "malformed config.json: exit %d %r" % (rc, se))
    # Basic asked by the registry itself
    state(auth="basic")
    reset_log()
    rc, so, se = run("image", "lock", PT, "-o", fresh, *MIRRORS)
    man = [e for e in server_log() if "/manifests/" in e["path"]]
    check(rc == 0 and man and man[-1]["authorization"] == "Basic " + auth64,
          "Basic challenge answered with config.json: exit %d %r" % (rc, se))
    os.remove(fresh)
    # the same registry through plain http to a host that is not loopback by
    # its name ([::ffff:127.0.0.1]): the credentials are withheld, and said so
    import socket
    try:
        with socket.create_connection(("::ffff:127.0.0.1", port), timeout=2):
            mapped = True
    except OSError:
        mapped = False
    if mapped:
        rc, so, se = run("image", "lock", PT, "-o", fresh, "--registry",
                         "nvcr.io=http://[::ffff:127.0.0.1]:%d" % port)
        man = [e for e in server_log() if "/manifests/" in e["path"]]
        check(rc == 4 and "only over https or to a loopback host" in se and
              man[-1]["authorization"] is None and not os.path.exists(fresh),
              "credentials withheld over plain http: exit %d %r" % (rc, se))
    else:
        print("skip: no IPv4-mapped IPv6 loopback here")
    shutil.rmtree(docker)
    rc, so, se = run("image", "lock", PT, "-o", fresh, *MIRRORS)
    check(rc == 4 and "needs credentials" in se, "Basic without credentials: %d %r" % (rc, se))
    state()

    # ---- mirrors from pyproject.toml ------------------------------------------------------------
    proj = os.path.join(TMP, "proj")
    os.makedirs(proj)
    with open(os.path.join(proj, "pyproject.toml"), "w") as f:
        f.write('[project]\nname = "p"\nversion = "1"\n\n[tool.gpuenv]\nregistries = { "nvcr.io" = '
                '"%s" }\n' % URL)
    rc, so, se = run("image", "lock", PT, "-o", fresh, "--project", proj)
    check(rc == 0 and json.loads(read(fresh))["images"][0]["ref"] == PT,
          "[tool.gpuenv] registries (--project): exit %d %r" % (rc, se))
    rc, so, se = run("image", "check", fresh, cwd=proj)
    check(rc == 0, "[tool.gpuenv] registries of ./pyproject.toml: exit %d %r" % (rc, se))
    # a ./pyproject.toml that does not read: a warning when not named, an error when named
    broken = os.path.join(TMP, "broken")
    os.makedirs(broken)
    with open(os.path.join(broken, "pyproject.toml"), "w") as f:
        f.write('[tool.gpuenv]\nregistries = { "nvcr.io" = 3 }\n')
    rc, so, se = run("image", "check", fresh, *MIRRORS, cwd=broken)
    check(rc == 0 and "warning" in se and "pyproject.toml" in se,
          "an unnamed broken pyproject.toml: a warning: %d %r" % (rc, se))
    rc, so, se = run("image", "check", fresh, *MIRRORS, "--project", broken)
    check(rc == 4 and "pyproject.toml" in se, "a named broken project: exit %d %r" % (rc, se))
    # --registry wins over the project's
    rc, so, se = run("image", "check", fresh, "--project", proj, "--registry",
                     "nvcr.io=http://127.0.0.1:1")
    check(rc == 4 and "127.0.0.1:1" in se, "--registry over [tool.gpuenv]: exit %d %r" % (rc, se))

    # ---- malformed manifest files ---------------------------------------------------------------
    bad = os.path.join(TMP, "bad.json")
    with open(bad, "w") as f:
        f.write('{"schema": "gpuenv.image-manifest/1",\n "images": [\n  {"ref": }\n]}\n')
    rc, so, se = run("image", "check", bad, *MIRRORS)
    check(rc == 4 and bad + ":3:" in se, "malformed JSON: file:line:col: %d %r" % (rc, se))
    with open(bad, "w") as f:
        f.write(first.replace('"tag": "25.01-py3"', '"tag": "25.02-py3"'))
    rc, so, se = run("image", "check", bad, *MIRRORS)
    check(rc == 4 and "do not match the ref" in se, "a ref that does not match: %d %r" % (rc, se))
    rc, so, se = run("image", "lock", PT, "-o", bad, *MIRRORS)
    check(rc == 4 and read(bad) == first.replace('"tag": "25.01-py3"', '"tag": "25.02-py3"'),
          "lock into a malformed manifest: refused, the file kept: %d %r" % (rc, se))
    rc, so, se = run("image", "check", os.path.join(TMP, "none.json"))
    check(rc == 4 and "none.json" in se, "a missing manifest: exit %d" % rc)

    # ---- usage -----------------------------------------------------------------------------------
    for args, what in ((["image", "lock"], "which images"),
                       (["image", "lock", "Bad:Ref:x"], "not an image reference"),
                       (["image", "lock", PT + "@sha256:" + "1" * 64], "already pinned"),
                       (["image", "lock", PT, "--registry", "nvcr.io"], "HOST=URL"),
                       (["image", "lock", PT, "--registry", "nvcr.io=" + URL, "--registry",
                         "nvcr.io=" + URL], "given twice"),
                       (["image", "lock", PT, "--registry", "nvcr.io=ftp://x"], "not an http"),
                       (["image", "check", "a", "b"], "unexpected argument"),
                       (["image", "frob"], "frob")):
        rc, so, se = run(*args)
        check(rc == 2 and what in se, "%s: exit %d (want 2) %r" % (" ".join(args), rc, se))
finally:
    proc.terminate()
    proc.wait()
    shutil.rmtree(TMP, ignore_errors=True)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
