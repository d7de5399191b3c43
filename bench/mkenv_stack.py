#!/usr/bin/python3
"""Builds a synthetic "full torch environment" for timing the stack probe
(gpuenv debug pyenv / gpuenv probe) without torch itself:

  DIR/venv                 a venv (pyvenv.cfg, bin/python3 -> /usr/bin/python3)
    .../site-packages      the 197 dist-info folders of
                           $GPUENV_SHARED/corpus/h200-env (torch 2.11.0+cu130,
                           jax 0.11 + CUDA 13 plugins, cupy-cuda13x, nvidia-*)
      torch/version.py     __version__ = '2.11.0+cu130', cuda = '13.0'
      torch/lib/*.so       small ELF files with libtorch_cuda.so's real
                           DT_NEEDED list and RPATH ($ORIGIN/../../nvidia/...)
      nvidia/*/lib/*.so.N  symlinks to the real CUDA 13 libraries of
                           /usr/local/cuda/lib64 (when present), else small ELFs
      jax_plugins, jax_cuda13_plugin, cupy_backends: small ELF modules

usage: mkenv_stack.py DIR      (then: gpuenv debug pyenv --env DIR/venv)"""
import os
import shutil
import struct
import sys


def elf(path, needed=(), soname=None, rpath=None, runpath=None):
    strs = bytearray(b"\0")

    def add(s):
        off = len(strs)
        strs.extend(s.encode() + b"\0")
        return off
    dyn = []
    for n in needed:
        dyn.append((1, add(n)))
    if soname:
        dyn.append((14, add(soname)))
    if rpath:
        dyn.append((15, add(rpath)))
    if runpath:
        dyn.append((29, add(runpath)))
    stroff = 64 + 2 * 56
    dynoff = (stroff + len(strs) + 7) // 8 * 8
    dyn += [(5, stroff), (10, len(strs)), (0, 0)]
    total = dynoff + 16 * len(dyn)
    out = bytearray(b"\x7fELF\x02\x01\x01" + b"\0" * 9)
    out += struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 64, 0, 0, 64, 56, 2, 64, 0, 0)
    out += struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, total, total, 4096)
    out += struct.pack("<IIQQQQQQ", 2, 6, dynoff, dynoff, dynoff, 16 * len(dyn), 16 * len(dyn), 8)
    out += strs
    out += b"\0" * (dynoff - len(out))
    for t, v in dyn:
        out += struct.pack("<QQ", t, v)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(out)


def lib(site, rel, real_name):
    """nvidia/<x>/lib/<name>: a symlink to the real library when there is one."""
    path = os.path.join(site, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    real = os.path.join("/usr/local/cuda/lib64", real_name)
    if os.path.exists(real):
        os.symlink(real, path)
    else:
        elf(path, soname=os.path.basename(rel))


def main():
    top = os.path.abspath(sys.argv[1])
    shared = os.environ.get("GPUENV_SHARED", os.path.join(os.path.dirname(__file__), "..", "..", "shared"))
    corpus = os.path.join(shared, "corpus", "h200-env")
    venv = os.path.join(top, "venv")
    site = os.path.join(venv, "lib", "python3.12", "site-packages")
    if os.path.exists(venv):
        shutil.rmtree(venv)
    os.makedirs(os.path.join(venv, "bin"))
    os.symlink("/usr/bin/python3", os.path.join(venv, "bin", "python3"))
    with open(os.path.join(venv, "pyvenv.cfg"), "w") as f:
        f.write("home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n")
    os.makedirs(site)
    for d in sorted(os.listdir(corpus)):
        shutil.copytree(os.path.join(corpus, d), os.path.join(site, d))
    os.makedirs(os.path.join(site, "torch", "lib"))
    with open(os.path.join(site, "torch", "version.py"), "w") as f:
        f.write("from typing import Optional\n\n__version__ = '2.11.0+cu130'\ndebug = False\n"
                "cuda: Optional[str] = '13.0'\ngit_version = '0'\nhip: Optional[str] = None\n")
    rp = ":".join("$ORIGIN/../../nvidia/%s/lib" % x for x in
                  ("cu13", "cudnn", "nccl", "cusparselt", "nvshmem")) + ":$ORIGIN"
    tl = os.path.join(site, "torch", "lib")
    elf(os.path.join(tl, "libtorch_cuda.so"), rpath=rp, needed=[
        "libc10_cuda.so", "libcudart.so.13", "libcusparse.so.12", "libcufft.so.12", "libcurand.so.10",
        "libcublas.so.13", "libcublasLt.so.13", "libnccl.so.2", "libtorch_cpu.so", "libc10.so",
        "libcudnn.so.9", "libgcc_s.so.1", "libstdc++.so.6", "libm.so.6", "libc.so.6", "ld-linux-x86-64.so.2"])
    elf(os.path.join(tl, "libc10_cuda.so"), soname="libc10_cuda.so", rpath=rp,
        needed=["libcudart.so.13", "libc10.so", "libstdc++.so.6", "libc.so.6"])
    elf(os.path.join(tl, "libtorch_cpu.so"), soname="libtorch_cpu.so", rpath=rp,
        needed=["libc10.so", "libgomp.so.1", "libstdc++.so.6", "libm.so.6", "libc.so.6"])
    elf(os.path.join(tl, "libc10.so"), soname="libc10.so", needed=["libstdc++.so.6", "libc.so.6"])
    elf(os.path.join(tl, "libgomp.so.1"), soname="libgomp.so.1", needed=["libc.so.6"])
    for name in ("libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libcusparse.so.12",
                 "libcufft.so.12", "libcurand.so.10", "libnvrtc.so.13", "libnvJitLink.so.13",
                 "libnvrtc-builtins.so.13.0"):
        lib(site, "nvidia/cu13/lib/" + name, name)
    for name in ("libcudnn.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn_adv.so.9",
                 "libcudnn_graph.so.9", "libcudnn_heuristic.so.9", "libcudnn_engines_precompiled.so.9",
                 "libcudnn_engines_runtime_compiled.so.9"):
        lib(site, "nvidia/cudnn/lib/" + name, name)
    lib(site, "nvidia/nccl/lib/libnccl.so.2", "libnccl.so.2")
    elf(os.path.join(site, "nvidia/cusparselt/lib/libcusparseLt.so.0"), soname="libcusparseLt.so.0")
    elf(os.path.join(site, "nvidia/nvshmem/lib/libnvshmem_host.so.3"), soname="libnvshmem_host.so.3")
    for d in ("cu13", "cudnn", "nccl"):
        if os.path.isdir("/usr/local/cuda/include"):
            os.symlink("/usr/local/cuda/include", os.path.join(site, "nvidia", d, "include"))
    elf(os.path.join(site, "jax_plugins/xla_cuda13/xla_cuda_plugin.so"),
        rpath="$ORIGIN/../../nvidia/cu13/lib:$ORIGIN/../../nvidia/cudnn/lib",
        needed=["libcudart.so.13", "libcudnn.so.9", "libcublas.so.13", "libstdc++.so.6", "libc.so.6"])
    for m in ("_cuda_linalg", "_hybrid", "_prng", "_solver", "_sparse", "_triton", "_versions",
              "cuda_plugin_extension"):
        elf(os.path.join(site, "jax_cuda13_plugin", m + ".so"),
            rpath="$ORIGIN/../nvidia/cu13/lib", needed=["libcudart.so.13", "libc.so.6"])
    for m in ("driver", "runtime", "nvrtc", "stream", "graph", "memory_hook"):
        elf(os.path.join(site, "cupy_backends/cuda/api", m + ".cpython-312-x86_64-linux-gnu.so"),
            needed=["libc.so.6"])
    for m in ("cublas", "cusolver", "cusparse", "curand", "nccl", "cudnn"):
        elf(os.path.join(site, "cupy_backends/cuda/libs", m + ".cpython-312-x86_64-linux-gnu.so"),
            needed=["libc.so.6"])
    print(venv)


if __name__ == "__main__":
    main()
