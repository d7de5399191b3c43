#!/usr/bin/python3
"""Write a deterministic pylock.toml-like file of about SIZE_MB megabytes.

usage: toml_gen.py SIZE_MB OUT.toml

Many [[packages]] tables as PEP 751 lock files have them: strings, markers,
arrays of inline tables (dependencies, wheels with hashes), sub-tables,
integers, floats, booleans and offset date-times, plus a [tool.gpuenv] table
per package.  Same SIZE_MB, same bytes (fixed seed, no clock).
"""
import hashlib
import random
import sys


def main():
    size = float(sys.argv[1]) * 1e6
    out = sys.argv[2]
    rnd = random.Random(751)
    names = [f"pkg-{i:05d}" for i in range(20000)]
    parts = [
        'lock-version = "1.0"\n'
        'created-by = "gpuenv 0.1.0"\n'
        'requires-python = ">=3.10"\n'
        'environments = ["sys_platform == \'linux\' and platform_machine == \'x86_64\'"]\n'
        'extras = []\n'
        'dependency-groups = ["dev"]\n'
        'default-groups = ["dev"]\n'
    ]
    total = len(parts[0])
    i = 0
    while total < size:
        name = names[i % len(names)] + ("" if i < len(names) else f"-{i // len(names)}")
        ver = f"{rnd.randint(0, 30)}.{rnd.randint(0, 40)}.{rnd.randint(0, 9)}"
        h = hashlib.sha256(f"{name}-{ver}".encode()).hexdigest()
        day = f"20{rnd.randint(18, 25)}-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}"
        tm = f"{rnd.randint(0, 23):02d}:{rnd.randint(0, 59):02d}:{rnd.randint(0, 59):02d}"
        deps = ", ".join(
            f'{{ name = "{names[rnd.randrange(len(names))]}", version = "{rnd.randint(0, 9)}.{rnd.randint(0, 9)}" }}'
            for _ in range(rnd.randint(0, 4)))
        s = [
            "\n[[packages]]\n",
            f'name = "{name}"\n',
            f'version = "{ver}"\n',
            f"marker = \"python_version >= '3.{rnd.randint(8, 12)}' and sys_platform == 'linux'\"\n",
            f'requires-python = ">=3.{rnd.randint(7, 10)}"\n',
            'index = "https://pypi.org/simple"\n',
            f"dependencies = [{deps}]\n" if deps else "dependencies = []\n",
            "wheels = [\n",
        ]
        for tag in rnd.sample(["cp310-cp310", "cp311-cp311", "cp312-cp312", "py3-none"], rnd.randint(1, 3)):
            wh = hashlib.sha256(f"{name}-{ver}-{tag}".encode()).hexdigest()
            s.append(
                f'    {{ name = "{name.replace("-", "_")}-{ver}-{tag}-manylinux_2_28_x86_64.whl", '
                f'url = "https://files.pythonhosted.org/packages/{wh[:2]}/{wh[2:4]}/{wh[4:60]}/'
                f'{name.replace("-", "_")}-{ver}-{tag}-manylinux_2_28_x86_64.whl", '
                f"upload-time = {day}T{tm}.{rnd.randint(0, 999999):06d}Z, size = {rnd.randint(10_000, 900_000_000)}, "
                f'hashes = {{ sha256 = "{wh}" }} }},\n')
        s.append("]\n")
        s.append("\n[packages.sdist]\n")
        s.append(f'url = "https://files.pythonhosted.org/packages/source/{name[0]}/{name}/{name}-{ver}.tar.gz"\n')
        s.append(f"upload-time = {day}T{tm}Z\n")
        s.append(f"size = {rnd.randint(1000, 5_000_000)}\n")
        s.append(f'hashes = {{ sha256 = "{h}" }}\n')
        s.append("\n[packages.tool.gpuenv]\n")
        s.append(f'cuda = "12.{rnd.randint(0, 8)}"\n')
        s.append(f'sm = [{", ".join(chr(34) + "sm_" + str(x) + chr(34) for x in sorted(rnd.sample([70, 75, 80, 86, 89, 90, 100, 120], 3)))}]\n')
        s.append(f"gpu = {'true' if rnd.random() < 0.3 else 'false'}\n")
        s.append(f"score = {rnd.random():.6f}\n")
        s.append(f"checked = {day}\n")
        text = "".join(s)
        parts.append(text)
        total += len(text)
        i += 1
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(parts))
    print(f"{out}: {total} bytes, {i} packages")


if __name__ == "__main__":
    main()
