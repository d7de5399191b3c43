#!/usr/bin/python3
"""The seed corpus of fuzz_onnx (tests/fuzz/corpus/onnx): the small models of
tests/cli/onnx_models.py (onnx.helper, Debian's python3-onnx) plus a few
hand-written protobuf shapes: deep TypeProto nesting, a group, a bad varint.
Run from the repository root: /usr/bin/python3 tests/fuzz/make_onnx_corpus.py"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "cli"))
import onnx_models as om  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "corpus", "onnx")


def main():
    os.makedirs(OUT, exist_ok=True)
    seeds = {name + ".onnx": m.SerializeToString() for name, m in om.all_models().items()}
    # a sequence of sequences ... of a tensor, 20 deep
    t = om.msg(1, om.field(1, 0, value=1))
    for _ in range(20):
        t = om.msg(4, om.msg(1, t))
    seeds["deep_type.onnx"] = om.msg(7, om.msg(11, om.msg(1, b"x") + om.msg(2, t)))
    seeds["group.onnx"] = om.field(1, 0, value=8) + om.field(20, 3) + om.field(20, 4) + om.msg(7, b"")
    seeds["bad_varint.onnx"] = om.field(1, 0, value=8) + b"\x08" + b"\xff" * 11
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
