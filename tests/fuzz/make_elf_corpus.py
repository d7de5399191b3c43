#!/usr/bin/python3
"""Regenerate the seed corpus of fuzz_elf (tests/fuzz/corpus/elf/).

Seeds: tiny ELF files from gcc (object, shared libraries with SONAME,
DT_RPATH / DT_RUNPATH and symbol versions, an executable), CUDA objects and
bare fatbins from nvcc (cubins for plain, 'a' and 'f' archs, PTX, LTO-IR,
compressed, debug, relocatable device code), real fatbin containers cut
from CUDA libraries, and damaged copies of some of them (truncated, header
bytes changed).  Every seed stays under 100 KB.

Needs gcc and objcopy; nvcc and /usr/local/cuda/lib64 for the CUDA seeds
(skipped with a note when absent).  Run from anywhere:
    python3 tests/fuzz/make_elf_corpus.py
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "elf")
NVCC = "/usr/local/cuda/bin/nvcc"
CUDA_LIB = "/usr/local/cuda/lib64"
MAX_SEED = 100 * 1024

KERNEL = "__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\n"
C_LIB = "int f(void) { return 1; }\nint g(int x) { return x + 1; }\n"
C_MAIN = "int main(void) { return 0; }\n"
VERSION_SCRIPT = "FOO_1.0 { global: f; local: *; };\nFOO_2.0 { global: g; } FOO_1.0;\n"


def run(*cmd, cwd):
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def sections(data):
    """name -> (offset, size) for an ELF64 LE file"""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shnum, shstrndx = struct.unpack_from("<HH", data, 0x3C)
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + 64 * i) for i in range(shnum)]
    stro = hdrs[shstrndx][4]
    out = {}
    for h in hdrs:
        end = data.index(b"\0", stro + h[0])
        out[data[stro + h[0]:end].decode()] = (h[4], h[5])
    return out


def first_container(section):
    size, = struct.unpack_from("<Q", section, 8)
    return section[:16 + size]


def save(name, data):
    if len(data) > MAX_SEED:
        print(f"skip {name}: {len(data)} bytes", file=sys.stderr)
        return
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def damaged(name, data):
    """a few damaged copies of a seed"""
    save(name + "-cut-half", data[: len(data) // 2])
    save(name + "-cut-last", data[:-1])
    if data[:4] == b"\x7fELF":
        b = bytearray(data)
        struct.pack_into("<Q", b, 0x28, len(data) + 64)  # e_shoff beyond EOF
        save(name + "-shoff-eof", bytes(b))
        b = bytearray(data)
        b[0x3C] ^= 0x40  # e_shnum off
        save(name + "-shnum", bytes(b))
    elif data[:4] == b"\x50\xed\x55\xba":
        b = bytearray(data)
        struct.pack_into("<I", b, 16 + 4, 0xFFFFFFF0)  # entry header size
        save(name + "-ehsize", bytes(b))
        b = bytearray(data)
        struct.pack_into("<Q", b, 16 + 8, 1 << 40)  # payload size
        save(name + "-payload", bytes(b))


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.unlink(os.path.join(OUT, f))
    tmp = tempfile.mkdtemp(prefix="gpuenv-elf-corpus-")
    try:
        with open(os.path.join(tmp, "t.c"), "w") as f:
            f.write(C_LIB)
        with open(os.path.join(tmp, "m.c"), "w") as f:
            f.write(C_MAIN)
        with open(os.path.join(tmp, "v.map"), "w") as f:
            f.write(VERSION_SCRIPT)
        small = ["-s", "-Wl,-z,noseparate-code"]
        run("gcc", "-O2", "-c", "t.c", "-o", "t.o", cwd=tmp)
        run("gcc", "-shared", "-fPIC", "-O2", *small, "-Wl,-soname,libt.so.1",
            "-Wl,--disable-new-dtags", "-Wl,-rpath,$ORIGIN/../lib",
            "-Wl,--version-script=v.map", "t.c", "-o", "libt.so.1", cwd=tmp)
        run("gcc", "-shared", "-fPIC", "-O2", *small, "-Wl,--enable-new-dtags",
            "-Wl,-rpath,/opt/x:/opt/y", "t.c", "-o", "librun.so", cwd=tmp)
        run("gcc", "-O2", *small, "m.c", "-o", "exe", cwd=tmp)
        for src, name in (("t.o", "gcc-object"), ("libt.so.1", "gcc-lib-soname-rpath-verdef"),
                          ("librun.so", "gcc-lib-runpath"), ("exe", "gcc-exe")):
            with open(os.path.join(tmp, src), "rb") as f:
                save(name, f.read())
        with open(os.path.join(tmp, "libt.so.1"), "rb") as f:
            damaged("gcc-lib", f.read())

        if os.path.isdir(CUDA_LIB):
            with open(os.path.join(CUDA_LIB, "libcufftw.so.12"), "rb") as f:
                data = f.read()
            off, size = sections(data)[".nv_fatbin"]
            cufftw = data[off:off + size]
            save("cufftw-nv_fatbin", cufftw)
            damaged("cufftw-nv_fatbin", cufftw)
            with open(os.path.join(CUDA_LIB, "libcurand.so.10"), "rb") as f:
                data = f.read()
            off, size = sections(data)[".nv_fatbin"]
            curand = first_container(data[off:off + 65536])
            save("curand-container0", curand)
            # a gcc object carrying a real fatbin section, and one with two
            with open(os.path.join(tmp, "c.bin"), "wb") as f:
                f.write(curand)
            with open(os.path.join(tmp, "c2.bin"), "wb") as f:
                f.write(cufftw + b"\0" * 8 + cufftw)
            run("objcopy", "--add-section", ".nv_fatbin=c.bin", "t.o", "tf.o", cwd=tmp)
            run("objcopy", "--add-section", ".nv_fatbin=c2.bin", "--add-section",
                "__nv_relfatbin=c.bin", "t.o", "tf2.o", cwd=tmp)
            for src, name in (("tf.o", "object-curand-fatbin"), ("tf2.o", "object-two-sections")):
                with open(os.path.join(tmp, src), "rb") as f:
                    save(name, f.read())
            with open(os.path.join(tmp, "tf.o"), "rb") as f:
                damaged("object-curand-fatbin", f.read())
        else:
            print(f"{CUDA_LIB} absent: no seeds from CUDA libraries", file=sys.stderr)

        if os.access(NVCC, os.X_OK):
            with open(os.path.join(tmp, "k.cu"), "w") as f:
                f.write(KERNEL)
            builds = [
                ("nvcc-obj-sm80-sm90-ptx90", ["-c", "-gencode", "arch=compute_80,code=sm_80",
                                              "-gencode", "arch=compute_90,code=[sm_90,compute_90]"]),
                ("nvcc-obj-sm90a", ["-c", "-gencode", "arch=compute_90a,code=sm_90a"]),
                ("nvcc-obj-sm100f-ptx120f", ["-c", "-gencode", "arch=compute_100f,code=sm_100f",
                                             "-gencode", "arch=compute_120f,code=[sm_120f,compute_120f]"]),
                ("nvcc-obj-rdc", ["-c", "-rdc=true", "-arch=sm_80"]),
                ("nvcc-fatbin-sm75-ptx75", ["-fatbin", "-gencode", "arch=compute_75,code=[sm_75,compute_75]"]),
                ("nvcc-fatbin-sm100a", ["-fatbin", "-gencode", "arch=compute_100a,code=sm_100a"]),
                ("nvcc-fatbin-compressed", ["-fatbin", "-Xfatbin=-compress-all", "-gencode",
                                            "arch=compute_80,code=[sm_80,compute_80]"]),
                ("nvcc-fatbin-lto90", ["-fatbin", "-gencode", "arch=compute_90,code=lto_90"]),
                ("nvcc-fatbin-debug", ["-fatbin", "-G", "-gencode", "arch=compute_80,code=sm_80"]),
                ("nvcc-fatbin-ptx-only", ["-fatbin", "-gencode", "arch=compute_120,code=compute_120"]),
            ]
            for name, args in builds:
                out = os.path.join(tmp, name + (".o" if "-c" in args else ".fatbin"))
                run(NVCC, *args, "k.cu", "-o", out, cwd=tmp)
                if "-c" in args:
                    run("strip", "--strip-debug", out, cwd=tmp)
                with open(out, "rb") as f:
                    save(name, f.read())
            run(NVCC, "-dlink", "-arch=sm_80", os.path.join(tmp, "nvcc-obj-rdc.o"), "-o",
                "dlink.o", cwd=tmp)
            with open(os.path.join(tmp, "dlink.o"), "rb") as f:
                save("nvcc-dlink-obj", f.read())
            with open(os.path.join(OUT, "nvcc-obj-sm80-sm90-ptx90"), "rb") as f:
                damaged("nvcc-obj", f.read())
            with open(os.path.join(OUT, "nvcc-fatbin-compressed"), "rb") as f:
                damaged("nvcc-fatbin", f.read())
        else:
            print(f"{NVCC} absent: no nvcc seeds", file=sys.stderr)

        # hand-made odds and ends
        save("empty", b"")
        save("not-elf", b"#!/bin/sh\necho hello\n")
        save("elf-magic-only", b"\x7fELF")
        save("elf32", b"\x7fELF\x01\x01\x01" + b"\0" * 57)
        save("elf-big-endian", b"\x7fELF\x02\x02\x01" + b"\0" * 57)
        save("fatbin-magic-only", b"\x50\xed\x55\xba")
        save("fatbin-empty-container", struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 0))
    finally:
        shutil.rmtree(tmp)
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"{len(os.listdir(OUT))} seeds, {total} bytes in {OUT}")


if __name__ == "__main__":
    main()
