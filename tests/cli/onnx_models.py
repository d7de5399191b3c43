"""Small ONNX models made with onnx.helper (Debian's python3-onnx), and a few
bytes of protobuf by hand: the fuzz corpus (tests/fuzz/make_onnx_corpus.py)
and tests/cli/test_trt_inspect.py build on them.  Each model shows one thing
the reader must get right."""
import os

try:  # the hand-written protobuf below needs neither
    import numpy as np
    import onnx
    from onnx import TensorProto, helper as h
except ImportError:
    onnx = None


def _opset(v=18, extra=()):
    return [h.make_opsetid("", v)] + [h.make_opsetid(d, n) for d, n in extra]


def conv_dynbatch():
    """A conv net with a symbolic batch dim, raw_data weights, opset 18."""
    w = h.make_tensor("w", TensorProto.FLOAT, [4, 3, 3, 3], np.ones(108, np.float32).tobytes(), raw=True)
    b = h.make_tensor("b", TensorProto.FLOAT, [4], [0.5] * 4)
    nodes = [h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c"], ["r"]),
             h.make_node("GlobalAveragePool", ["r"], ["y"])]
    g = h.make_graph(nodes, "conv", [h.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
                     [h.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, 1, 1])], [w, b])
    return h.make_model(g, opset_imports=_opset(), producer_name="pytorch", producer_version="2.11.0")


def subgraphs():
    """If with two branches and a Loop inside one: operators of subgraphs
    are counted, each domain-qualified op too."""
    one = h.make_tensor("one", TensorProto.FLOAT, [1], [1.0])
    then_g = h.make_graph([h.make_node("Constant", [], ["t"], value=one),
                           h.make_node("Relu", ["t"], ["to"])], "then", [],
                          [h.make_tensor_value_info("to", TensorProto.FLOAT, [1])])
    body = h.make_graph([h.make_node("Identity", ["c_in"], ["c_out"]),
                         h.make_node("Identity", ["v_in"], ["v_out"])], "body",
                        [h.make_tensor_value_info("i", TensorProto.INT64, []),
                         h.make_tensor_value_info("c_in", TensorProto.BOOL, []),
                         h.make_tensor_value_info("v_in", TensorProto.FLOAT, [1])],
                        [h.make_tensor_value_info("c_out", TensorProto.BOOL, []),
                         h.make_tensor_value_info("v_out", TensorProto.FLOAT, [1])])
    else_g = h.make_graph([h.make_node("Loop", ["", "", "x"], ["eo"], body=body)], "else", [],
                          [h.make_tensor_value_info("eo", TensorProto.FLOAT, [1])])
    nodes = [h.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
             h.make_node("FusedThing", ["y"], ["z"], domain="com.example")]
    g = h.make_graph(nodes, "branches",
                     [h.make_tensor_value_info("cond", TensorProto.BOOL, []),
                      h.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                     [h.make_tensor_value_info("z", TensorProto.FLOAT, None)])
    return h.make_model(g, opset_imports=_opset(17, [("com.example", 1)]), producer_name="gpuenv-tests")


def odd_types():
    """Sequence, map, optional and sparse inputs, a tensor with no shape, an
    unknown dim, a scalar, FLOAT16 and BFLOAT16; and a value with no type."""
    seq = h.make_tensor_sequence_value_info("seq", TensorProto.INT64, ["n"])
    mp = onnx.ValueInfoProto(name="map")  # onnx 1.12's helper has no make_map_type_proto
    mp.type.map_type.key_type = TensorProto.STRING
    mp.type.map_type.value_type.CopyFrom(h.make_tensor_type_proto(TensorProto.DOUBLE, [2]))
    opt = h.make_value_info("opt", h.make_optional_type_proto(h.make_tensor_type_proto(TensorProto.BFLOAT16, [3])))
    sp = h.make_sparse_tensor_value_info("sp", TensorProto.FLOAT, [10, 10])
    noshape = onnx.ValueInfoProto(name="noshape")
    noshape.type.tensor_type.elem_type = TensorProto.FLOAT16
    unknown = h.make_tensor_value_info("unknown", TensorProto.UINT8, [None, 5])
    scalar = h.make_tensor_value_info("scalar", TensorProto.BOOL, [])
    notype = onnx.ValueInfoProto(name="notype")
    g = h.make_graph([h.make_node("Identity", ["scalar"], ["out"])], "types",
                     [seq, mp, opt, sp, noshape, unknown, scalar, notype],
                     [h.make_tensor_value_info("out", TensorProto.BOOL, [])])
    return h.make_model(g, opset_imports=_opset(15))


def old_ir():
    """IR 3 lists initializers among the graph inputs: they are left out;
    a sparse initializer too."""
    w = h.make_tensor("w", TensorProto.FLOAT, [2], [1.0, 2.0])
    sp = h.make_sparse_tensor(h.make_tensor("s", TensorProto.FLOAT, [1], [3.0]),
                              h.make_tensor("s_idx", TensorProto.INT64, [1], [0]), [2])
    g = h.make_graph([h.make_node("Add", ["x", "w"], ["y"])], "old",
                     [h.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
                      h.make_tensor_value_info("w", TensorProto.FLOAT, [2]),
                      h.make_tensor_value_info("s", TensorProto.FLOAT, [2])],
                     [h.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [w], sparse_initializer=[sp])
    m = h.make_model(g, opset_imports=_opset(9, [("ai.onnx.ml", 2)]))
    m.ir_version = 3
    return m


def external(location, length=None, offset=None, name="w"):
    """One initializer whose data is in the external file location."""
    t = onnx.TensorProto(name=name, data_type=TensorProto.FLOAT, dims=[4])
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    g = h.make_graph([h.make_node("Add", ["x", name], ["y"])], "ext",
                     [h.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
                     [h.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])], [t])
    m = h.make_model(g, opset_imports=_opset())
    m.ir_version = 10
    return m


def all_models():
    return {"conv_dynbatch": conv_dynbatch(), "subgraphs": subgraphs(), "odd_types": odd_types(),
            "old_ir": old_ir(), "external": external("external.onnx.data", 16)}


# ---- protobuf by hand: what onnx.helper cannot write -------------------------

def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, wire, payload=b"", value=None):
    """One field: wire 0 (value), 2 (payload), 5 or 1 (payload as given)."""
    tag = varint(num << 3 | wire)
    if wire == 0:
        return tag + varint(value)
    if wire == 2:
        return tag + varint(len(payload)) + payload
    return tag + payload


def msg(num, payload):
    return field(num, 2, payload)


def write_sparse_model(path, nbytes):
    """A model whose one initializer has nbytes of raw_data written as a
    hole (a sparse file: little disk), then a MatMul node, input x
    ["batch", nbytes // 4] and output y, opset 18.  The graph's
    structure sits before and after the hole, as exporters write it."""
    F, M = field, msg
    tensor_head = (F(1, 0, value=nbytes // 4) + F(2, 0, value=1) + F(8, 2, b"weight")
                   + varint(9 << 3 | 2) + varint(nbytes))
    init_head = varint(5 << 3 | 2) + varint(len(tensor_head) + nbytes)
    rest = (M(1, F(1, 2, b"x") + F(1, 2, b"weight") + F(2, 2, b"y") + F(4, 2, b"MatMul"))
            + M(11, M(1, b"x") + M(2, M(1, F(1, 0, value=1) + M(2, M(1, F(2, 2, b"batch"))
                                                               + M(1, F(1, 0, value=nbytes // 4))))))
            + M(12, M(1, b"y") + M(2, M(1, F(1, 0, value=1)))))
    graph_len = len(init_head) + len(tensor_head) + nbytes + len(rest)
    with open(path, "wb") as f:
        f.write(F(1, 0, value=8) + F(2, 2, b"gpuenv-tests") + varint(7 << 3 | 2) + varint(graph_len))
        f.write(init_head + tensor_head)
        f.seek(nbytes, os.SEEK_CUR)
        f.write(rest + M(8, F(2, 0, value=18)))
