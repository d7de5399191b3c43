#!/usr/bin/python3
"""Writes the seed corpus of fuzz_ldcache: small ld.so.cache images in the
layouts glibc's ldconfig writes (new "glibc-ld.so.cache1.1" with the 2.33
extension directory, old "ld.so-1.7.0", both together) plus broken ones, and
this machine's /etc/ld.so.cache when it is small.

usage: gen_ldcache_seeds.py OUTDIR"""
import os
import struct
import sys

X64 = 0x0303


def new_cache(entries, hwcaps=(), generator=None, flags8=2, ext_magic=0xEAA42174,
              ext_align=4, old=False):
    """entries: (key, value, flags, hwcap) tuples."""
    n = len(entries)
    strs = bytearray()
    offs = []
    base_str = 48 + 24 * n

    def add(s):
        off = base_str + len(strs)
        strs.extend(s.encode() + b"\0")
        return off

    for k, v, _, _ in entries:
        offs.append((add(k), add(v)))
    hoffs = [add(h) for h in hwcaps]
    prefix = bytearray()
    if old:
        prefix += b"ld.so-1.7.0\0" + struct.pack("<I", n)
        for k, v, fl, _ in entries:
            prefix += struct.pack("<iII", fl, 0, 0)
        oldstr = len(prefix)
        while len(prefix) % 8:
            prefix += b"\0"
    base = len(prefix)
    body_len = 48 + 24 * n + len(strs)
    ext = 0
    if hwcaps or generator:
        ext = base + body_len
        ext = (ext + ext_align - 1) // ext_align * ext_align if ext_align else ext + 1
    out = bytearray(prefix)
    out += b"glibc-ld.so.cache1.1" + struct.pack("<II", n, len(strs))
    out += struct.pack("<B3xI12x", flags8, ext)
    for (k, v, fl, hw), (ko, vo) in zip(entries, offs):
        out += struct.pack("<iIIIQ", fl, ko, vo, 0, hw)
    out += strs
    if old:
        for i, (ko, vo) in enumerate(offs):
            struct.pack_into("<II", out, 16 + 12 * i + 4, base + ko - oldstr, base + vo - oldstr)
    if ext:
        while len(out) < ext:
            out += b"\0"
        nsec = (1 if hwcaps else 0) + (1 if generator else 0)
        data = ext + 8 + 16 * nsec
        gen = (generator or "").encode()
        hw_off = (data + len(gen) + 3) // 4 * 4
        out += struct.pack("<II", ext_magic, nsec)
        if generator:
            out += struct.pack("<IIII", 0, 0, data, len(gen))
        if hwcaps:
            out += struct.pack("<IIII", 1, 0, hw_off, 4 * len(hwcaps))
        out += gen
        while len(out) < hw_off:
            out += b"\0"
        for h in hoffs:
            out += struct.pack("<I", h)
    return bytes(out)


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    libs = [
        ("libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9", X64, 0),
        ("libcudnn.so", "/usr/lib/x86_64-linux-gnu/libcudnn.so", X64, 0),
        ("libcublas.so.12", "/usr/local/cuda-12.8/targets/x86_64-linux/lib/libcublas.so.12", X64, 0),
        ("libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", X64, 0),
        ("libc.so.6", "/lib32/libc.so.6", 0x0003, 0),
        ("libm.so.6", "/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libm.so.6", X64, (1 << 62) | 1),
        ("libm.so.6", "/lib/x86_64-linux-gnu/libm.so.6", X64, 0),
    ]
    hw = ["x86-64-v2", "x86-64-v3", "x86-64-v4"]
    gen = "ldconfig (GNU libc) stable release version 2.36"
    seeds = {
        "new-empty": new_cache([]),
        "new-one": new_cache(libs[:1]),
        "new-cuda": new_cache(libs[:3]),
        "new-hwcaps": new_cache(libs, hw, gen),
        "new-generator-only": new_cache(libs[:2], (), gen),
        "new-hwcaps-only": new_cache(libs, hw),
        "new-aarch64": new_cache([("libnccl.so.2", "/usr/lib/aarch64-linux-gnu/libnccl.so.2", 0x0a03, 0)]),
        "new-isa-level": new_cache([("libz.so.1", "/usr/lib/libz.so.1", X64, (1 << 62) | (3 << 32) | 0)], hw[:1]),
        "new-legacy-hwcap": new_cache([("libz.so.1", "/usr/lib/tls/libz.so.1", X64, 0x8000000000000 >> 20)]),
        "new-hwcaps-index-oob": new_cache([("libq.so", "/q/libq.so", X64, (1 << 62) | 77)], hw),
        "new-big-endian": new_cache(libs[:2], flags8=3),
        "new-invalid-flag": new_cache(libs[:2], flags8=1),
        "new-bad-ext-magic": new_cache(libs[:2], hw, gen, ext_magic=0x12345678),
        "new-misaligned-ext": new_cache(libs[:2], hw, None, ext_align=0),
        "old-new": new_cache(libs[:4], old=True),
        "magic-only": b"glibc-ld.so.cache1.1",
        "old-magic-only": b"ld.so-1.7.0",
        "empty": b"",
        "garbage": bytes(range(256)),
    }
    # the old layout alone
    old = bytearray(b"ld.so-1.7.0\0" + struct.pack("<I", 2))
    old += struct.pack("<iII", X64, 0, 13) + struct.pack("<iII", 1, 26, 39)
    old += b"libfoo.so.1\0\0/lib/foo.so\0\0libbar.so\0\0\0\0/lib/bar.so\0"
    seeds["old-only"] = bytes(old)
    # damaged copies of a good one
    good = seeds["new-hwcaps"]
    seeds["trunc-header"] = good[:40]
    seeds["trunc-entries"] = good[:48 + 24 * 3]
    seeds["trunc-strings"] = good[:len(good) // 2]
    seeds["trunc-ext"] = good[:-6]
    bad = bytearray(good)
    struct.pack_into("<I", bad, 20, 0x7FFFFFFF)
    seeds["nlibs-huge"] = bytes(bad)
    bad = bytearray(good)
    struct.pack_into("<I", bad, 48 + 4, 0xFFFFFF00)
    seeds["key-offset-oob"] = bytes(bad)
    bad = bytearray(good)
    ext = struct.unpack_from("<I", bad, 32)[0]
    struct.pack_into("<I", bad, ext + 4, 0x10000000)
    seeds["ext-count-huge"] = bytes(bad)
    seeds["no-final-nul"] = bytes(good[:good.rfind(b"\0")])
    for name, data in seeds.items():
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(data)
    real = "/etc/ld.so.cache"
    if os.path.exists(real) and os.path.getsize(real) < 200 * 1024:
        with open(real, "rb") as f, open(os.path.join(outdir, "real-etc-ld.so.cache"), "wb") as g:
            g.write(f.read())
    print(f"{len(os.listdir(outdir))} seeds in {outdir}")


if __name__ == "__main__":
    main()
