#!/usr/bin/python3
"""Check gpuenv's knowledge base (data/kb/*.toml).

Usage: kb_check.py DATA_KB_DIR

Parses every *.toml file with Python's tomllib, checks each row against the
schema of its table (required keys, key types, value formats; unknown keys and
unknown tables are errors), checks that every row has a non-empty `source`,
checks the cross-references between files and the coverage the issue asks for,
and prints the row counts. When GPUENV_BIN is set it also decodes every file
with gpuenv's own TOML parser (`gpuenv debug toml-decode`) and compares the
result with tomllib's, so the files the binary embeds are known to load.

Exit status: 0 all good, 1 a check failed, 2 usage.
"""

import datetime
import json
import os
import re
import subprocess
import sys
import tomllib

# --- value formats ---------------------------------------------------------

FORMATS = {
    # CUDA toolkit version as "MAJOR.MINOR"
    "cuda": re.compile(r"^\d{1,2}\.\d{1,2}$"),
    # a dotted version with 2 to 5 numeric parts ("9.19.0.56", "570.26")
    "version": re.compile(r"^\d+(\.\d+){1,4}$"),
    # an NVIDIA driver version ("570.124.06", "450.80.02", "525", "580")
    "driver": re.compile(r"^\d{3}(\.\d{2,3}){0,2}$"),
    # driver branch
    "branch": re.compile(r"^R\d{3}$"),
    # compute capability
    "cc": re.compile(r"^\d{1,2}\.\d$"),
    # real architecture, optionally arch-specific (a) or family (f)
    "sm": re.compile(r"^sm_\d{2,3}[af]?$"),
    # PCI ids: 0x + 4 lower-case hex digits
    "pciid": re.compile(r"^0x[0-9a-f]{4}$"),
    # a torch minor series ("2.11") and an exact torch release ("2.11.0")
    "torch_series": re.compile(r"^2\.\d{1,2}$"),
    "torch_release": re.compile(r"^2\.\d{1,2}\.\d{1,2}$"),
    # PyTorch CUDA local tag
    "cutag": re.compile(r"^cu\d{3}$"),
    # "YYYY-MM" or "YYYY-MM-DD"
    "month": re.compile(r"^\d{4}-\d{2}(-\d{2})?$"),
    # NGC release "YY.MM"
    "ngc_release": re.compile(r"^\d{2}\.\d{2}$"),
    # an NGC release (YY.MM), or an L4T release (36.4.0) for the l4t-* images
    "ngc_or_l4t_release": re.compile(r"^\d{2}\.\d{2}$|^\d{2}\.\d+\.\d+$"),
    # a Python version "3.10" or "3.12.3"
    "python": re.compile(r"^3\.\d{1,2}(\.\d{1,2})?$"),
    # a PEP 503 style distribution name (lower case, dashes)
    "dist": re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$"),
    # a full CUDA toolkit version as nvidia/cuda tags write it ("12.4.1")
    "cuda_full": re.compile(r"^\d{1,2}\.\d{1,2}\.\d{1,2}$"),
    # the OS part of an nvidia/cuda tag ("ubuntu22.04", "ubi9", "rockylinux8")
    "image_os": re.compile(r"^[a-z]+\d+(\.\d+)?$"),
    # the flavour part of an nvidia/cuda tag
    "cuda_flavour": re.compile(r"^(base|runtime|devel|(cudnn\d*|tensorrt)-(runtime|devel))$"),
    "pytorch_flavour": re.compile(r"^(runtime|devel)$"),
    # a stable identifier
    "ident": re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$"),
}

ENUMS = {
    "confidence": {"secondary"},
    "segment": {"datacenter", "workstation", "consumer", "jetson"},
    "channel": {"stable", "experimental"},
    "designation": {"LTSB", "PB", "NFB"},
    "kernel_module": {"open", "proprietary"},
    "platform": {"linux-x86_64"},
    "image_status": {"supported", "end-of-life", "unsupported", "seen"},
    "trt_precision": {"fp32", "tf32", "fp16", "bf16", "fp8", "int8"},
    "trt_runs_on": {"cc_min", "same_cc"},
}

# key -> (type, format-or-enum-name or None, required)
# types: str, int, bool, strlist, intlist
COMMON = {
    "source": ("str", None, True),
    "note": ("str", None, False),
    "confidence": ("str", "confidence", False),
}


def spec(**keys):
    out = dict(COMMON)
    for k, v in keys.items():
        out[k] = v
    return out


R = True   # required
O = False  # optional

SCHEMA = {
    "cuda.toml": {
        "toolkit": spec(cuda=("str", "cuda", R), update=("int", None, R),
                        label=("str", None, R), driver_linux=("str", "driver", R),
                        driver_windows=("str", "driver", O)),
        # a release the sources show whose Table 3 row (its minimum driver) no stored source gives
        "toolkit_known": spec(cuda=("str", "cuda", R), update=("int", None, R),
                              label=("str", None, R)),
        "minor_compat": spec(cuda_major=("int", None, R), driver_min=("str", "driver", R),
                             driver_below=("str", "driver", O)),
        "branch": spec(branch=("str", "branch", R), designation=("str", "designation", R),
                       eol=("str", "month", R), max_cuda_major=("int", None, R)),
        "arch_list": spec(cuda_min=("str", "cuda", R), cuda_max=("str", "cuda", R),
                          sm=("strlist", "sm", R)),
        "rule": spec(id=("str", "ident", R), text=("str", None, R)),
        "driver_observed": spec(driver=("str", "driver", R), cuda=("str", "cuda", R),
                                kernel_module=("str", "kernel_module", O)),
    },
    "gpus.toml": {
        "arch": spec(cc=("str", "cc", R), sm=("str", "sm", R), architecture=("str", None, R),
                     last_cuda_major=("int", None, O), last_driver_branch=("str", "branch", O)),
        "gpu": spec(name=("str", None, R), cc=("str", "cc", R), segment=("str", "segment", R)),
        "pci_vendor": spec(vendor_id=("str", "pciid", R), name=("str", None, R)),
        "pci": spec(device_id=("str", "pciid", R), subsys_vendor=("str", "pciid", O),
                    subsys_device=("str", "pciid", O), name=("str", None, R), gpu=("str", None, R)),
    },
    "torch.toml": {
        "release": spec(torch=("str", "torch_series", R), python_min=("str", "python", R),
                        python_max=("str", "python", R), python_note=("str", None, O),
                        cxx=("str", None, R), released=("str", "month", O)),
        "variant": spec(torch=("str", "torch_series", R), tag=("str", "cutag", R),
                        cuda=("str", "cuda", R), channel=("str", "channel", R),
                        cudnn=("str", "version", O), nccl=("str", "version", O),
                        pypi_default=("bool", None, O)),
        "arch_list": spec(torch=("str", "torch_series", R), tag=("str", "cutag", R),
                          platform=("str", "platform", R), sm=("strlist", "sm", R),
                          ptx=("strlist", "sm", R), extra_sm=("strlist", "sm", O)),
        "pin": spec(torch=("str", "torch_release", R), tag=("str", "cutag", R),
                    package=("str", "dist", R), extras=("strlist", "ident", O),
                    spec=("str", None, R), marker=("str", None, R)),
    },
    "libraries.toml": {
        "cudnn": spec(cudnn=("str", "version", R), cuda_major=("int", None, R),
                      cuda=("strlist", "cuda", R), static_link=("bool", None, O),
                      driver_linux=("str", "driver", R), driver_windows=("str", "driver", O),
                      cc=("strlist", "cc", R)),
        "nccl": spec(nccl=("str", "version", R), cuda=("strlist", "cuda", O),
                     cuda_majors=("intlist", None, R)),
        "tensorrt": spec(tensorrt=("str", "version", R), cuda=("strlist", "cuda", O),
                         cuda_majors=("intlist", None, R), cudnn_optional=("str", "version", O),
                         sm_min=("str", "sm", O)),
        "version_encoding": spec(library=("str", "ident", R), formula=("str", None, R),
                                 major_min=("int", None, O), major_max=("int", None, O),
                                 example_int=("int", None, O), example_version=("str", "version", O)),
        "soname": spec(soname=("str", None, R), library=("str", None, R),
                       major=("int", None, O), cuda_major=("int", None, O)),
    },
    "wheels.toml": {
        "local_tag": spec(project=("str", "dist", R), pattern=("str", None, R),
                          meaning=("str", None, R), index=("str", None, O)),
        "package": spec(name=("str", "dist", R), framework=("str", "ident", R),
                        cuda_major=("int", None, O), cuda_min=("str", "cuda", O)),
        "version_rule": spec(project=("str", "dist", R), versions=("str", None, R),
                             cuda_major=("int", None, R), cudnn_major=("int", None, O)),
        "extra": spec(project=("str", "dist", R), extra=("str", "ident", R),
                      requires=("str", None, R), cuda_major=("int", None, R),
                      bundles_cuda=("bool", None, R)),
        "meta_pin": spec(parent=("str", "dist", R), parent_version=("str", "version", R),
                         extra=("str", "ident", R), package=("str", "dist", R),
                         spec=("str", None, R), marker=("str", None, O)),
    },
    "ngc.toml": {
        "container": spec(image=("str", None, R), tag=("str", None, R),
                          release=("str", "ngc_or_l4t_release", R), cuda=("str", "cuda", R),
                          jetpack=("str", "version", O), l4t=("str", "version", O),
                          cuda_full=("str", "version", R), python=("str", "python", O),
                          torch=("str", None, O), tensorrt=("str", "version", O),
                          tensorrt_llm=("str", "version", O), cudnn=("str", "version", O),
                          nccl=("str", "version", O), ubuntu=("str", "version", O),
                          cuda_driver=("str", "driver", O), driver_min_branch=("str", "branch", O),
                          datacenter_drivers=("strlist", "driver", O), cc_min=("str", "cc", O),
                          tensorflow=("str", None, O), jax=("str", None, O),
                          triton=("str", None, O), vllm=("str", None, O)),
    },
    # Docker Hub images understood by their tag grammar (nvidia/cuda, pytorch/pytorch)
    "images.toml": {
        "cuda_image": spec(cuda_full=("str", "cuda_full", R), os=("strlist", "image_os", R),
                           flavours=("strlist", "cuda_flavour", R), cudnn=("str", "version", O),
                           status=("str", "image_status", R)),
        "pytorch_image": spec(torch=("str", "torch_release", R), cuda=("str", "cuda", R),
                              cudnn_major=("int", None, R), flavours=("strlist", "pytorch_flavour", R),
                              python=("str", "python", O)),
    },
    # TensorRT for gpuenv trt and preflight --engine (lib/kb/trt.c, docs/kb.md)
    "tensorrt.toml": {
        "release": spec(tensorrt=("str", "version", R), cuda=("strlist", "cuda", O),
                        cudnn=("str", "version", O), sm_min=("str", "sm", O),
                        opset_min=("int", None, O), opset_max=("int", None, O)),
        "precision": spec(precision=("str", "trt_precision", R), tensorrt_min=("str", "version", R),
                          tensorrt_max=("str", "version", O), cc=("strlist", "cc", R)),
        "flag": spec(flag=("str", None, R), added=("str", "version", O),
                     deprecated=("str", "version", O), removed=("str", "version", O),
                     replacement=("str", None, O)),
        "hardware_compat": spec(level=("str", "ident", R), trtexec=("str", None, R),
                                added=("str", "version", R), cc_min=("str", "cc", R),
                                runs_on=("str", "trt_runs_on", R)),
        "version_compat": spec(tensorrt_min=("str", "version", R), runtime_min=("str", "version", R)),
    },
    "about.toml": {
        "about": spec(date=("str", "month", R)),
    },
    "diagnose.toml": {
        "signature": spec(id=("str", "ident", R), title=("str", None, R),
                          literal=("strlist", None, O), regex=("strlist", None, O),
                          ignore_case=("bool", None, O), after=("strlist", None, O),
                          within=("int", None, O), cause=("str", None, R),
                          fix=("str", None, R), fix_log=("str", None, O),
                          fix_facts=("str", None, O)),
    },
}

# placeholders a diagnose.toml text may use (lib/check/diagnose.c fills them)
DIAG_FACTS = {"gpu", "gpu_cc", "gpu_sm", "gpu_arch", "gpu_mem", "gpu_count", "driver",
              "driver_cuda", "kernel_module", "cuda_visible_devices", "torch", "torch_cuda",
              "torch_code", "torch_cudnn", "torch_pick", "cudnn", "cudnn_for_gpu", "gpu_fp16"}
DIAG_FILTERS = {"cuda_int", "first_cuda", "first_driver", "min_driver", "torch_for_sm"}
# failures the issue names: each must have a signature
DIAG_REQUIRED = ["cudnn-lib-missing", "no-kernel-image", "cudnn-not-supported", "driver-insufficient",
                 "cuda-oom", "torch-cpu-only", "torch-no-driver", "torch-undefined-symbol",
                 "nccl-error", "launch-timeout", "trt-engine-version", "trt-half2", "no-cuda-device",
                 "invalid-device-context"]


class Checker:
    def __init__(self, kbdir):
        self.kbdir = kbdir
        self.errors = []
        self.data = {}      # file -> parsed dict
        self.lines = {}     # file -> {table: [line numbers of [[table]] headers]}

    def err(self, fname, table, idx, msg):
        where = fname
        if table is not None:
            heads = self.lines.get(fname, {}).get(table, [])
            if idx is not None and idx < len(heads):
                where += f":{heads[idx]}"
            where += f": [[{table}]]"
            if idx is not None:
                where += f" #{idx + 1}"
        self.errors.append(f"{where}: {msg}")

    # -- parsing and schema --

    def load(self):
        names = sorted(n for n in os.listdir(self.kbdir) if n.endswith(".toml"))
        if not names:
            self.errors.append(f"{self.kbdir}: no .toml files")
        for n in names:
            path = os.path.join(self.kbdir, n)
            with open(path, "rb") as f:
                raw = f.read()
            try:
                text = raw.decode("utf-8")
                doc = tomllib.loads(text)
            except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
                self.err(n, None, None, f"does not parse as TOML: {e}")
                continue
            heads = {}
            for i, line in enumerate(text.splitlines(), 1):
                m = re.match(r"^\[\[([A-Za-z0-9_]+)\]\]\s*(#.*)?$", line)
                if m:
                    heads.setdefault(m.group(1), []).append(i)
            self.lines[n] = heads
            self.data[n] = doc
        for n in SCHEMA:
            if n not in self.data and not any(e.startswith(n) for e in self.errors):
                self.err(n, None, None, "missing")

    def check_value(self, fname, table, idx, key, value, typ, fmt):
        def fmt_ok(v):
            if fmt is None:
                return True
            if fmt in ENUMS:
                return v in ENUMS[fmt]
            return bool(FORMATS[fmt].match(v))

        if typ == "str":
            if not isinstance(value, str):
                return self.err(fname, table, idx, f"{key}: expected a string, got {type(value).__name__}")
            if key != "spec" and not value.strip():
                return self.err(fname, table, idx, f"{key}: empty string")
            if not fmt_ok(value):
                return self.err(fname, table, idx, f"{key}: {value!r} is not a valid {fmt}")
        elif typ == "int":
            if not isinstance(value, int) or isinstance(value, bool):
                return self.err(fname, table, idx, f"{key}: expected an integer")
            if value < 0:
                return self.err(fname, table, idx, f"{key}: negative")
        elif typ == "bool":
            if not isinstance(value, bool):
                return self.err(fname, table, idx, f"{key}: expected a boolean")
        elif typ in ("strlist", "intlist"):
            want = str if typ == "strlist" else int
            if not isinstance(value, list):
                return self.err(fname, table, idx, f"{key}: expected an array")
            for v in value:
                if not isinstance(v, want) or isinstance(v, bool):
                    return self.err(fname, table, idx, f"{key}: array element {v!r} has the wrong type")
                if want is str and not fmt_ok(v):
                    return self.err(fname, table, idx, f"{key}: {v!r} is not a valid {fmt}")
            if len(set(map(str, value))) != len(value):
                self.err(fname, table, idx, f"{key}: duplicate elements")

    def check_schema(self):
        for fname, doc in self.data.items():
            tables = SCHEMA.get(fname)
            if tables is None:
                self.err(fname, None, None, "no schema for this file in tests/kb_check.py")
                continue
            for tname, rows in doc.items():
                if tname not in tables:
                    self.err(fname, tname, None, "unknown table (or a top-level key)")
                    continue
                if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                    self.err(fname, tname, None, "must be an array of tables")
                    continue
                keys = tables[tname]
                for i, r in enumerate(rows):
                    src = r.get("source")
                    if not isinstance(src, str) or not src.strip():
                        self.err(fname, tname, i, "row without a source")
                    for k, v in r.items():
                        if k not in keys:
                            self.err(fname, tname, i, f"unknown key {k!r}")
                            continue
                        typ, fmt, _ = keys[k]
                        self.check_value(fname, tname, i, k, v, typ, fmt)
                    for k, (_, _, req) in keys.items():
                        if req and k not in r and k != "source":
                            self.err(fname, tname, i, f"missing required key {k!r}")

    # -- helpers --

    def rows(self, fname, table):
        return self.data.get(fname, {}).get(table, [])

    def unique(self, fname, table, keyfn, what):
        seen = {}
        for i, r in enumerate(self.rows(fname, table)):
            try:
                k = keyfn(r)
            except KeyError:
                continue
            if k in seen:
                self.err(fname, table, i, f"duplicate {what} {k!r} (first at #{seen[k] + 1})")
            else:
                seen[k] = i

    @staticmethod
    def vkey(v):
        return tuple(int(x) for x in v.split("."))

    # -- cross references and consistency --

    def check_cuda(self):
        f = "cuda.toml"
        tk = self.rows(f, "toolkit")
        self.unique(f, "toolkit", lambda r: (r["cuda"], r["update"]), "toolkit release")
        versions = {r.get("cuda") for r in tk}
        for v in sorted(v for v in versions if v):
            if not any(r.get("cuda") == v and r.get("update") == 0 for r in tk):
                self.err(f, "toolkit", None, f"CUDA {v} has updates but no GA (update = 0) row")
        # the minimum driver never goes down as the toolkit goes up
        ordered = sorted(
            (r for r in tk if isinstance(r.get("cuda"), str) and isinstance(r.get("update"), int)
             and isinstance(r.get("driver_linux"), str) and FORMATS["driver"].match(r["driver_linux"])),
            key=lambda r: (self.vkey(r["cuda"]), r["update"]))
        for i, r in enumerate(self.rows(f, "toolkit_known")):
            if any(t.get("cuda") == r.get("cuda") and t.get("update") == r.get("update") for t in tk):
                self.err(f, "toolkit_known", i, f"CUDA {r.get('cuda')} update {r.get('update')} "
                         "has a [[toolkit]] row: drop this one")
        versions |= {r.get("cuda") for r in self.rows(f, "toolkit_known")}
        prev = None
        for r in ordered:
            d = self.vkey(r["driver_linux"])
            if prev is not None and d < prev[0]:
                i = tk.index(r)
                self.err(f, "toolkit", i, f"driver_linux {r['driver_linux']} is lower than {prev[1]} of an earlier toolkit")
            prev = (d, r["driver_linux"])
        for i, r in enumerate(self.rows(f, "arch_list")):
            lo, hi = r.get("cuda_min"), r.get("cuda_max")
            if lo in versions and hi in versions:
                if self.vkey(lo) > self.vkey(hi):
                    self.err(f, "arch_list", i, "cuda_min > cuda_max")
            else:
                self.err(f, "arch_list", i, f"cuda_min/cuda_max {lo}..{hi} not both in [[toolkit]]")
        spans = sorted((self.vkey(r["cuda_min"]), self.vkey(r["cuda_max"]), i)
                       for i, r in enumerate(self.rows(f, "arch_list"))
                       if "cuda_min" in r and "cuda_max" in r)
        for (a0, a1, ia), (b0, b1, ib) in zip(spans, spans[1:]):
            if b0 <= a1:
                self.err(f, "arch_list", ib, f"overlaps row #{ia + 1}")
        majors = {self.vkey(v)[0] for v in versions if v}
        for i, r in enumerate(self.rows(f, "minor_compat")):
            if r.get("cuda_major") not in majors:
                self.err(f, "minor_compat", i, f"cuda_major {r.get('cuda_major')} has no [[toolkit]] row")
        self.unique(f, "minor_compat", lambda r: r["cuda_major"], "cuda_major")
        self.unique(f, "branch", lambda r: r["branch"], "branch")
        self.unique(f, "rule", lambda r: r["id"], "rule id")
        for i, r in enumerate(self.rows(f, "driver_observed")):
            if r.get("cuda") not in versions:
                self.err(f, "driver_observed", i, f"cuda {r.get('cuda')} not in [[toolkit]]")
        return versions

    def check_gpus(self):
        f = "gpus.toml"
        arch = self.rows(f, "arch")
        self.unique(f, "arch", lambda r: r["cc"], "compute capability")
        ccs = {r.get("cc") for r in arch}
        for i, r in enumerate(arch):
            cc, sm = r.get("cc"), r.get("sm")
            if isinstance(cc, str) and isinstance(sm, str) and sm != "sm_" + cc.replace(".", ""):
                self.err(f, "arch", i, f"sm {sm} does not match cc {cc}")
        gpus = self.rows(f, "gpu")
        self.unique(f, "gpu", lambda r: r["name"], "GPU name")
        names = {r.get("name") for r in gpus}
        for i, r in enumerate(gpus):
            if r.get("cc") not in ccs:
                self.err(f, "gpu", i, f"cc {r.get('cc')} of {r.get('name')} has no [[arch]] row")
        pci = self.rows(f, "pci")
        self.unique(f, "pci", lambda r: (r["device_id"], r.get("subsys_vendor"), r.get("subsys_device"), r["source"]),
                    "PCI id")
        for i, r in enumerate(pci):
            if r.get("gpu") not in names:
                self.err(f, "pci", i, f"gpu {r.get('gpu')!r} is not a [[gpu]] name")
            if ("subsys_vendor" in r) != ("subsys_device" in r):
                self.err(f, "pci", i, "subsys_vendor and subsys_device go together")
        # the same (device, subsystem) must not point to two products
        owner = {}
        for i, r in enumerate(pci):
            k = (r.get("device_id"), r.get("subsys_vendor"), r.get("subsys_device"))
            if k in owner and owner[k] != r.get("gpu"):
                self.err(f, "pci", i, f"{k} already maps to {owner[k]!r}")
            owner.setdefault(k, r.get("gpu"))
        return ccs, names

    def check_torch(self, cuda_versions, known_sm):
        f = "torch.toml"
        rel = self.rows(f, "release")
        self.unique(f, "release", lambda r: r["torch"], "torch series")
        series = {r.get("torch") for r in rel}
        var = self.rows(f, "variant")
        self.unique(f, "variant", lambda r: (r["torch"], r["tag"]), "variant")
        variants = {(r.get("torch"), r.get("tag")) for r in var}
        for i, r in enumerate(var):
            if r.get("torch") not in series:
                self.err(f, "variant", i, f"torch {r.get('torch')} has no [[release]] row")
            if r.get("cuda") not in cuda_versions:
                self.err(f, "variant", i, f"cuda {r.get('cuda')} not in cuda.toml [[toolkit]]")
            cuda, tag = r.get("cuda"), r.get("tag")
            if isinstance(cuda, str) and isinstance(tag, str) and tag != "cu" + cuda.replace(".", ""):
                self.err(f, "variant", i, f"tag {tag} does not spell cuda {cuda}")
        for s in sorted(series):
            d = [r for r in var if r.get("torch") == s and r.get("pypi_default")]
            if len(d) > 1:
                self.err(f, "variant", None, f"torch {s}: more than one pypi_default variant")
        al = self.rows(f, "arch_list")
        self.unique(f, "arch_list", lambda r: (r["torch"], r["tag"], r["platform"]), "arch list")
        for i, r in enumerate(al):
            if (r.get("torch"), r.get("tag")) not in variants:
                self.err(f, "arch_list", i, f"({r.get('torch')}, {r.get('tag')}) is not a [[variant]]")
            sm = r.get("sm") or []
            for p in r.get("ptx") or []:
                if p not in sm:
                    self.err(f, "arch_list", i, f"ptx {p} is not also in sm")
            for s in list(sm) + list(r.get("extra_sm") or []):
                base = s.rstrip("af") if isinstance(s, str) else s
                if base not in known_sm:
                    self.err(f, "arch_list", i, f"{s} has no gpus.toml [[arch]] row")
        for i, r in enumerate(self.rows(f, "pin")):
            t = r.get("torch")
            ser = ".".join(t.split(".")[:2]) if isinstance(t, str) else None
            if (ser, r.get("tag")) not in variants:
                self.err(f, "pin", i, f"({t}, {r.get('tag')}) has no [[variant]] ({ser}, {r.get('tag')})")
        self.unique(f, "pin", lambda r: (r["torch"], r["tag"], r["package"]), "pin")
        return series

    def check_libraries(self, cuda_versions):
        f = "libraries.toml"
        majors = {self.vkey(v)[0] for v in cuda_versions if v}
        for i, r in enumerate(self.rows(f, "cudnn")):
            for c in r.get("cuda") or []:
                if c not in cuda_versions:
                    self.err(f, "cudnn", i, f"cuda {c} not in cuda.toml [[toolkit]]")
                elif self.vkey(c)[0] != r.get("cuda_major"):
                    self.err(f, "cudnn", i, f"cuda {c} is not CUDA {r.get('cuda_major')}.x")
        for t in ("nccl", "tensorrt"):
            for i, r in enumerate(self.rows(f, t)):
                cm = r.get("cuda_majors") or []
                for m in cm:
                    if m not in majors:
                        self.err(f, t, i, f"CUDA major {m} has no cuda.toml [[toolkit]] row")
                for c in r.get("cuda") or []:
                    if self.vkey(c)[0] not in cm:
                        self.err(f, t, i, f"cuda {c} is outside cuda_majors {cm}")
        self.unique(f, "soname", lambda r: r["soname"], "SONAME")

    def check_tensorrt(self):
        f = "tensorrt.toml"
        self.unique(f, "release", lambda r: r["tensorrt"], "release")
        self.unique(f, "flag", lambda r: r["flag"], "flag")
        self.unique(f, "hardware_compat", lambda r: r["level"], "level")
        self.unique(f, "precision", lambda r: (r["precision"], r["tensorrt_min"]), "precision row")
        for i, r in enumerate(self.rows(f, "flag")):
            if not str(r.get("flag", "")).startswith("--"):
                self.err(f, "flag", i, "flag: a trtexec option starts with '--'")
            seq = [r[k] for k in ("added", "deprecated", "removed") if isinstance(r.get(k), str)]
            try:
                if [self.vkey(v) for v in seq] != sorted(self.vkey(v) for v in seq):
                    self.err(f, "flag", i, "added <= deprecated <= removed, in release order")
            except ValueError:
                pass
            if "removed" in r and "replacement" not in r:
                self.err(f, "flag", i, "a removed flag names its replacement")
        for i, r in enumerate(self.rows(f, "release")):
            lo, hi = r.get("opset_min"), r.get("opset_max")
            if isinstance(lo, int) and isinstance(hi, int) and lo > hi:
                self.err(f, "release", i, "opset_min > opset_max")
        if not self.rows(f, "release") or not self.rows(f, "flag"):
            self.err(f, None, None, "needs [[release]] and [[flag]] rows")

    def check_wheels(self):
        f = "wheels.toml"
        self.unique(f, "package", lambda r: r["name"], "distribution name")
        for i, r in enumerate(self.rows(f, "package")):
            n, m = r.get("name", ""), r.get("cuda_major")
            mm = re.search(r"-cu(?:da)?(\d{2})(x|\d)?(-|$)", n)
            if mm and m is not None and int(mm.group(1)) != m:
                self.err(f, "package", i, f"name {n} says CUDA {mm.group(1)}, cuda_major says {m}")
            c = r.get("cuda_min")
            if c and m is not None and self.vkey(c)[0] != m:
                self.err(f, "package", i, f"cuda_min {c} is not CUDA {m}.x")
        self.unique(f, "extra", lambda r: (r["project"], r["extra"]), "extra")
        self.unique(f, "meta_pin", lambda r: (r["parent"], r["parent_version"], r["extra"], r["package"]), "meta pin")

    def check_ngc(self, cuda_versions):
        f = "ngc.toml"
        self.unique(f, "container", lambda r: (r["image"], r["tag"]), "image tag")
        for i, r in enumerate(self.rows(f, "container")):
            c, full = r.get("cuda"), r.get("cuda_full")
            if c not in cuda_versions:
                self.err(f, "container", i, f"cuda {c} not in cuda.toml [[toolkit]]")
            if isinstance(c, str) and isinstance(full, str) and not (full + ".").startswith(c + "."):
                self.err(f, "container", i, f"cuda_full {full} is not a CUDA {c} version")
            tag, rel = r.get("tag", ""), r.get("release", "")
            l4t = "/l4t-" in str(r.get("image", ""))
            if l4t:
                # l4t-jetpack:r36.4.0, l4t-pytorch:r35.2.1-pth2.0-py3: "r" and the L4T release
                if not isinstance(tag, str) or not (tag == "r" + str(rel) or tag.startswith("r" + str(rel) + "-")):
                    self.err(f, "container", i, f"tag {tag} does not start with r{rel}")
                if r.get("l4t") != rel or not r.get("jetpack"):
                    self.err(f, "container", i, "an L4T image names its l4t (= release) and jetpack")
                if not re.match(r"^\d{2}\.\d+\.\d+$", str(rel)):
                    self.err(f, "container", i, f"release {rel} is not an L4T release (36.4.0)")
            elif isinstance(tag, str) and not tag.startswith(str(rel) + "-"):
                self.err(f, "container", i, f"tag {tag} does not start with release {rel}")
            elif not re.match(r"^\d{2}\.\d{2}$", str(rel)):
                self.err(f, "container", i, f"release {rel} is not an NGC release (YY.MM)")

    def check_images(self, cuda_versions, torch_series):
        f = "images.toml"
        seen = {}
        for i, r in enumerate(self.rows(f, "cuda_image")):
            full = r.get("cuda_full")
            if isinstance(full, str) and ".".join(full.split(".")[:2]) not in cuda_versions:
                self.err(f, "cuda_image", i, f"cuda_full {full}: no CUDA {full} in cuda.toml [[toolkit]]")
            flav = r.get("flavours") or []
            if "cudnn" in r and not any(str(x).startswith("cudnn") for x in flav):
                self.err(f, "cuda_image", i, "cudnn given but no cudnn flavour")
            for o in r.get("os") or []:
                k = (full, o)
                if k in seen:
                    self.err(f, "cuda_image", i, f"{full} on {o} already in row #{seen[k] + 1}")
                seen.setdefault(k, i)
        self.unique(f, "pytorch_image", lambda r: (r["torch"], r["cuda"]), "pytorch image")
        for i, r in enumerate(self.rows(f, "pytorch_image")):
            c, t = r.get("cuda"), r.get("torch")
            if c not in cuda_versions:
                self.err(f, "pytorch_image", i, f"cuda {c} not in cuda.toml [[toolkit]]")
            if isinstance(t, str) and ".".join(t.split(".")[:2]) not in torch_series:
                self.err(f, "pytorch_image", i, f"torch {t}: no release {t} in torch.toml")

    def check_diagnose(self):
        f = "diagnose.toml"
        rows = self.rows(f, "signature")
        self.unique(f, "signature", lambda r: r["id"], "signature id")
        for i, r in enumerate(rows):
            if not r.get("literal") and not r.get("regex"):
                self.err(f, "signature", i, "neither literal nor regex patterns")
            for p in (r.get("literal") or []) + (r.get("regex") or []):
                if not isinstance(p, str) or not p or len(p) > 1024 or "\0" in p:
                    self.err(f, "signature", i, f"pattern {p!r}: 1 to 1024 bytes, no NUL")
            for p in r.get("after") or []:
                if not isinstance(p, str) or not p or len(p) > 1024 or "\0" in p:
                    self.err(f, "signature", i, f"after {p!r}: 1 to 1024 bytes, no NUL")
            if "within" in r and (not r.get("after") or not 0 <= r["within"] <= 16):
                self.err(f, "signature", i, "within: 0 to 16 lines, and only with after")
            ngroups = 0
            for p in r.get("regex") or []:
                # POSIX ERE and Python's re agree on what these patterns use
                try:
                    ngroups = max(ngroups, re.compile(p).groups)
                except re.error as e:
                    self.err(f, "signature", i, f"regex {p!r} does not compile: {e}")
            for key in ("cause", "fix", "fix_log", "fix_facts"):
                text = r.get(key)
                if not isinstance(text, str):
                    continue
                for name in re.findall(r"\{([^{}]*)\}", text):
                    base, _, flt = name.partition("|")
                    if base.isdigit():
                        if not 1 <= int(base) <= 9 or int(base) > ngroups:
                            self.err(f, "signature", i, f"{key}: {{{name}}} names no regex group")
                    elif base not in DIAG_FACTS:
                        self.err(f, "signature", i, f"{key}: unknown placeholder {{{name}}}")
                    elif key in ("fix", "fix_log", "cause"):
                        self.err(f, "signature", i, f"{key}: facts like {{{name}}} belong in fix_facts")
                    if flt and flt not in DIAG_FILTERS:
                        self.err(f, "signature", i, f"{key}: unknown filter in {{{name}}}")
                    if flt and key == "fix":
                        self.err(f, "signature", i, f"fix: filters like {{{name}}} belong in fix_log")
        ids = {r.get("id") for r in rows}
        for want in DIAG_REQUIRED:
            if want not in ids:
                self.err(f, "signature", None, f"no signature {want!r}")
        if len(rows) < 30:
            self.err(f, "signature", None, f"only {len(rows)} signatures, want >= 30")

    def check_coverage(self, series):
        """What issue 'Compatibility knowledge base' asks the data to cover."""
        for minor in range(0, 12):
            s = f"2.{minor}"
            if s not in series:
                self.err("torch.toml", "release", None, f"torch {s} missing")
            elif not any(r.get("torch") == s for r in self.rows("torch.toml", "variant")):
                self.err("torch.toml", "variant", None, f"torch {s} has no CUDA variant")
        tags = self.rows("ngc.toml", "container")
        if len(tags) < 12:
            self.err("ngc.toml", "container", None, f"only {len(tags)} image tags, want >= 12")
        for img in ("pytorch", "tensorrt", "tritonserver"):
            if not any(r.get("image", "").endswith("/" + img) for r in tags):
                self.err("ngc.toml", "container", None, f"no {img} image")
        years = {r.get("release", "")[:2] for r in tags}
        for y in ("23", "24", "25"):
            if y not in years:
                self.err("ngc.toml", "container", None, f"no 20{y} release")
        gpus = self.rows("gpus.toml", "gpu")
        names = {r.get("name") for r in gpus}
        pci_gpus = {r.get("gpu") for r in self.rows("gpus.toml", "pci")}
        if not any(r.get("segment") == "jetson" for r in gpus):
            self.err("gpus.toml", "gpu", None, "no Jetson")
        for want in ("NVIDIA B200", "NVIDIA H200"):
            if want not in names:
                self.err("gpus.toml", "gpu", None, f"{want} missing")
            if want not in pci_gpus:
                self.err("gpus.toml", "pci", None, f"no PCI id for {want}")
        if not any(re.match(r"GeForce RTX 50\d0", n or "") for n in names & pci_gpus):
            self.err("gpus.toml", "pci", None, "no RTX 50xx with a PCI id")
        for lib in ("cudnn", "nccl", "tensorrt"):
            if not self.rows("libraries.toml", lib):
                self.err("libraries.toml", lib, None, "empty")
        for proj in ("torch", "cupy", "jax", "onnxruntime"):
            if not any(proj in json.dumps(r) for t in self.data.get("wheels.toml", {}).values() for r in t):
                self.err("wheels.toml", None, None, f"nothing about {proj}")

    # -- gpuenv's own parser --

    @staticmethod
    def tagged(v):
        """tomllib value -> toml-test's tagged JSON."""
        if isinstance(v, dict):
            return {k: Checker.tagged(x) for k, x in v.items()}
        if isinstance(v, list):
            return [Checker.tagged(x) for x in v]
        if isinstance(v, bool):
            return {"type": "bool", "value": "true" if v else "false"}
        if isinstance(v, int):
            return {"type": "integer", "value": str(v)}
        if isinstance(v, float):
            return {"type": "float", "value": repr(v)}
        if isinstance(v, str):
            return {"type": "string", "value": v}
        if isinstance(v, datetime.datetime):
            return {"type": "datetime" if v.tzinfo else "datetime-local", "value": v.isoformat()}
        if isinstance(v, datetime.date):
            return {"type": "date-local", "value": v.isoformat()}
        if isinstance(v, datetime.time):
            return {"type": "time-local", "value": v.isoformat()}
        raise TypeError(type(v))

    @staticmethod
    def decoder_works(binary):
        """True when `gpuenv debug toml-decode` decodes a trivial document
        (other branches may not have the TOML module yet)."""
        try:
            p = subprocess.run([binary, "debug", "toml-decode"], input=b'k = "v"\n',
                               capture_output=True, timeout=60)
            return p.returncode == 0 and json.loads(p.stdout) == {"k": {"type": "string", "value": "v"}}
        except (OSError, ValueError, subprocess.SubprocessError):
            return False

    def check_gpuenv_parser(self, binary):
        for fname, doc in sorted(self.data.items()):
            path = os.path.join(self.kbdir, fname)
            with open(path, "rb") as f:
                p = subprocess.run([binary, "debug", "toml-decode"], stdin=f,
                                   capture_output=True, timeout=60)
            if p.returncode != 0:
                self.err(fname, None, None, f"gpuenv debug toml-decode failed ({p.returncode}): "
                         + p.stderr.decode("utf-8", "replace").strip()[:300])
                continue
            try:
                got = json.loads(p.stdout)
            except ValueError as e:
                self.err(fname, None, None, f"gpuenv debug toml-decode wrote invalid JSON: {e}")
                continue
            if got != self.tagged(doc):
                self.err(fname, None, None, "gpuenv's TOML parser and tomllib disagree on this file")


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    kbdir = argv[1]
    if not os.path.isdir(kbdir):
        print(f"kb_check: {kbdir}: not a directory", file=sys.stderr)
        return 2
    c = Checker(kbdir)
    c.load()
    c.check_schema()
    cuda_versions = c.check_cuda()
    ccs, _ = c.check_gpus()
    known_sm = {"sm_" + cc.replace(".", "") for cc in ccs if isinstance(cc, str)}
    series = c.check_torch(cuda_versions, known_sm)
    c.check_libraries(cuda_versions)
    c.check_wheels()
    c.check_tensorrt()
    c.check_ngc(cuda_versions)
    c.check_images(cuda_versions, series)
    c.check_diagnose()
    c.check_coverage(series)
    binary = os.environ.get("GPUENV_BIN")
    parser_note = "skipped (GPUENV_BIN not set)"
    if binary and not c.decoder_works(binary):
        parser_note = f"skipped ({binary} debug toml-decode does not decode a trivial document)"
    elif binary:
        c.check_gpuenv_parser(binary)
        parser_note = f"checked with {binary}"

    total = 0
    for fname in sorted(c.data):
        parts = []
        for tname, rows in c.data[fname].items():
            n = len(rows) if isinstance(rows, list) else 0
            sec = sum(1 for r in rows if isinstance(r, dict) and r.get("confidence") == "secondary") \
                if isinstance(rows, list) else 0
            total += n
            parts.append(f"{tname} {n}" + (f" ({sec} secondary)" if sec else ""))
        print(f"{fname}: " + ", ".join(parts))
    print(f"total rows: {total}; gpuenv TOML parser: {parser_note}")
    have = {(r.get("torch"), r.get("tag")) for r in c.rows("torch.toml", "arch_list")}
    gaps = [f"{r.get('torch')} {r.get('tag')}" for r in c.rows("torch.toml", "variant")
            if (r.get("torch"), r.get("tag")) not in have]
    if gaps:
        print(f"torch variants without an arch list ({len(gaps)}): " + ", ".join(gaps))
    for e in c.errors:
        print(f"kb_check: {e}", file=sys.stderr)
    if c.errors:
        print(f"kb_check: {len(c.errors)} problem(s)", file=sys.stderr)
        return 1
    print("kb_check: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
