"""What python3-onnx reads from a model, in the shape of `gpuenv trt inspect
--json` (docs/trt.md): the oracle of tests/cli/test_trt_inspect.py and of
bench/gpu/trt-inspect-h200.sh (where onnx is importable).  oracle() takes an
onnx.ModelProto read with load_external_data=False; ours() keeps the keys of
gpuenv's JSON that the oracle has; diff() lists what differs."""
import collections

from onnx import TensorProto


def dtype_name(t):
    return TensorProto.DataType.Name(t) if t else None


def inner_dtype(tp):
    k = tp.WhichOneof("value")
    if k in ("tensor_type", "sparse_tensor_type"):
        return getattr(tp, k).elem_type
    if k in ("sequence_type", "optional_type"):
        return inner_dtype(getattr(tp, k).elem_type)
    if k == "map_type":
        return inner_dtype(tp.map_type.value_type)
    return 0


def value(v):
    tp = v.type
    k = tp.WhichOneof("value") if v.HasField("type") else None
    r = {"name": v.name}
    if k in ("tensor_type", "sparse_tensor_type"):
        tt = getattr(tp, k)
        r["dtype"] = dtype_name(tt.elem_type)
        if tt.HasField("shape"):
            r["shape"] = [d.dim_value if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param")
                          else None for d in tt.shape.dim]
        else:
            r["shape"] = None
    else:
        r["dtype"] = dtype_name(inner_dtype(tp)) if k else None
        r["shape"] = None
    if k != "tensor_type":
        r["type"] = {None: None, "sparse_tensor_type": "sparse_tensor", "sequence_type": "sequence",
                     "map_type": "map", "optional_type": "optional", "opaque_type": "opaque"}[k]
    return r


def count_ops(g, ops, depth):
    """nodes of g and of its subgraphs (attributes g and graphs, any depth)"""
    n = sub = 0
    for node in g.node:
        d = node.domain if node.domain not in ("", "ai.onnx") else ""
        ops[(d + "." if d else "") + node.op_type] += 1
        if depth:
            sub += 1
        else:
            n += 1
        for a in node.attribute:
            for sg in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                _, s = count_ops(sg, ops, depth + 1)
                sub += s
    return n, sub


def oracle(m):
    g = m.graph
    inits = {t.name for t in g.initializer} | {s.values.name for s in g.sparse_initializer}
    ops = collections.Counter()
    nodes, sub = count_ops(g, ops, 0)
    producer = " ".join(x for x in (m.producer_name, m.producer_version) if x)
    return {
        "ir_version": m.ir_version,
        "opset": {(o.domain or "ai.onnx"): o.version for o in m.opset_import},
        "producer": producer,
        "inputs": [value(v) for v in g.input if v.name not in inits],
        "outputs": [value(v) for v in g.output],
        "operators": dict(ops),
        "nodes": nodes,
        "subgraph_nodes": sub,
        "initializers": len(g.initializer) + len(g.sparse_initializer),
    }


def ours(j):
    return {k: j[k] if k != "initializers" else j[k]["count"] for k in
            ("ir_version", "opset", "producer", "inputs", "outputs", "operators", "nodes",
             "subgraph_nodes", "initializers")}


def diff(a, b):
    return ["%s: gpuenv %r, onnx %r" % (k, a.get(k), b.get(k)) for k in b if a.get(k) != b.get(k)]
