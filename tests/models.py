"""Hand-built ONNX models and OpenVINO IR snippets for the tests."""

from __future__ import annotations

from collections.abc import Sequence

import onnx
from onnx import TensorProto as T
from onnx import helper as h

ShapeSpec = Sequence[int | str | None] | None


def vi(name: str, elem: int = T.FLOAT, shape: ShapeSpec = None) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, shape)


def model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[str] | None = None,
    *,
    opset: int = 14,
    initializers: Sequence[onnx.TensorProto] = (),
    sparse: Sequence[onnx.SparseTensorProto] = (),
    functions: Sequence[onnx.FunctionProto] = (),
    extra_opsets: Sequence[onnx.OperatorSetIdProto] = (),
) -> onnx.ModelProto:
    outs = [h.make_value_info(name, onnx.TypeProto()) for name in (outputs or ["z"])]
    graph = h.make_graph(
        nodes, "g", inputs, outs, initializer=list(initializers), sparse_initializer=list(sparse)
    )
    m = h.make_model(
        graph,
        opset_imports=[h.make_opsetid("", opset), *extra_opsets],
        functions=list(functions),
    )
    m.ir_version = 10  # onnxruntime 1.31 refuses newer IR versions
    return m


def mul_model(
    shape_a: ShapeSpec = (2, 3),
    shape_b: ShapeSpec = (2, 3),
    elem_a: int = T.FLOAT,
    elem_b: int | None = None,
    *,
    opset: int = 14,
    **attrs: int,
) -> onnx.ModelProto:
    """z = Mul(x, y) with the given input types (one named node, 'the_mul')."""
    node = h.make_node("Mul", ["x", "y"], ["z"], name="the_mul", **attrs)
    inputs = [vi("x", elem_a, shape_a), vi("y", elem_a if elem_b is None else elem_b, shape_b)]
    outs = [vi("z", elem_a, None)]
    graph = h.make_graph([node], "g", inputs, outs)
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 10 if opset >= 7 else 3
    return m


def nested_if_in_loop(bad: bool = True) -> onnx.ModelProto:
    """Loop body holding an If whose then-branch multiplies (2,3) by (3,) when bad."""
    then_g = h.make_graph(
        [h.make_node("Mul", ["x", "y" if bad else "x2"], ["t"])], "then", [], [vi("t")]
    )
    else_g = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "else", [], [vi("e")])
    body = h.make_graph(
        [
            h.make_node("If", ["c"], ["o"], name="If_0", then_branch=then_g, else_branch=else_g),
            h.make_node("Identity", ["c"], ["c_out"]),
        ],
        "body",
        [vi("i", T.INT64, []), vi("c", T.BOOL, [])],
        [vi("c_out", T.BOOL, []), vi("o", T.FLOAT, None)],
    )
    loop = h.make_node("Loop", ["n", "cond"], ["z"], name="Loop_0", body=body)
    inputs = [
        vi("x", T.FLOAT, [2, 3]),
        vi("x2", T.FLOAT, [2, 3]),
        vi("y", T.FLOAT, [3]),
        vi("n", T.INT64, []),
        vi("cond", T.BOOL, []),
    ]
    return model([loop], inputs)


def external_initializer(location: str) -> onnx.TensorProto:
    """A (2, 3) float initializer 'w' whose data lives in an external file."""
    t = T()
    t.name = "w"
    t.data_type = T.FLOAT
    t.dims.extend([2, 3])
    t.data_location = T.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", "24")):
        entry = t.external_data.add()
        entry.key, entry.value = key, value
    return t


def ir_xml(
    dims_a: Sequence[int | str],
    dims_b: Sequence[int | str],
    *,
    broadcast: str | None = None,
    precision_a: str = "FP32",
    precision_b: str | None = None,
    prolog: str = "",
) -> bytes:
    """A small OpenVINO IR v11: two Parameters (ids 0, 1) feed one Multiply layer 'mul'.

    The Parameters' shapes are the facts (issue 21: other port dims are claims)."""

    def port(pid: int, prec: str, dims: Sequence[int | str]) -> str:
        body = "".join(f"<dim>{d}</dim>" for d in dims)
        return f'<port id="{pid}" precision="{prec}">{body}</port>'

    def parameter(lid: int, prec: str, dims: Sequence[int | str]) -> str:
        shape = ",".join(str(d) for d in dims)
        return (
            f'<layer id="{lid}" name="p{lid}" type="Parameter" version="opset1">'
            f'<data shape="{shape}"/><output>{port(0, prec, dims)}</output></layer>'
        )

    data = f'<data auto_broadcast="{broadcast}"/>' if broadcast is not None else ""
    pb = precision_b or precision_a
    head = prolog or '<?xml version="1.0"?>\n'
    return (
        head.encode()
        + (
            '<net name="ir" version="11"><layers>'
            f"{parameter(0, precision_a, dims_a)}{parameter(1, pb, dims_b)}"
            '<layer id="2" name="mul" type="Multiply" version="opset1">'
            f"{data}<input>{port(0, precision_a, dims_a)}{port(1, pb, dims_b)}</input>"
            f"<output>{port(2, precision_a, dims_a)}</output></layer>"
            '</layers><edges><edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>'
            '<edge from-layer="1" from-port="0" to-layer="2" to-port="1"/></edges></net>'
        ).encode()
    )


def ir_net(layers: str, edges: Sequence[tuple[int, int, int, int]], name: str = "ir") -> bytes:
    """An IR from raw <layer> elements and (from-layer, from-port, to-layer, to-port) edges."""
    body = "".join(
        f'<edge from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}"/>'
        for a, b, c, d in edges
    )
    net = f'<net name="{name}" version="11"><layers>{layers}</layers>'
    return f"{net}<edges>{body}</edges></net>".encode()


def ir_port(pid: int, dims: Sequence[int | str], precision: str = "FP32") -> str:
    return (
        f'<port id="{pid}" precision="{precision}">'
        + "".join(f"<dim>{d}</dim>" for d in dims)
        + "</port>"
    )


def ir_parameter(
    lid: int, shape: Sequence[int | str], port_dims: Sequence[int | str] | None = None
) -> str:
    text = ",".join(str(d) for d in shape)
    dims = shape if port_dims is None else port_dims
    return (
        f'<layer id="{lid}" name="p{lid}" type="Parameter" version="opset1">'
        f'<data shape="{text}" element_type="f32"/><output>{ir_port(0, dims)}</output></layer>'
    )


def ir_unary(lid: int, op: str, dims: Sequence[int | str]) -> str:
    return (
        f'<layer id="{lid}" name="{op.lower()}{lid}" type="{op}" version="opset1">'
        f"<input>{ir_port(0, dims)}</input><output>{ir_port(1, dims)}</output></layer>"
    )


def ir_multiply(
    lid: int, dims_a: Sequence[int | str], dims_b: Sequence[int | str], mode: str = "numpy"
) -> str:
    return (
        f'<layer id="{lid}" name="mul" type="Multiply" version="opset1">'
        f'<data auto_broadcast="{mode}"/><input>{ir_port(0, dims_a)}{ir_port(1, dims_b)}</input>'
        f"<output>{ir_port(2, dims_a)}</output></layer>"
    )


def many_ifs(n: int, bad_every: int = 0, inner: bool = False) -> onnx.ModelProto:
    """``n`` If nodes, each then-branch multiplying x (2, 3) by y (2, 3) — or by
    y3 (3,) for every ``bad_every``-th one; ``inner``: x * Sigmoid(x) in the branch."""
    nodes, outs = [], []
    for i in range(n):
        y = "y3" if bad_every and i % bad_every == 0 else "y"
        body = [h.make_node("Mul", ["x", y], [f"t{i}"], name=f"m{i}")]
        if inner:
            body = [
                h.make_node("Sigmoid", ["x"], [f"s{i}"]),
                h.make_node("Mul", ["x", f"s{i}"], [f"t{i}"], name=f"m{i}"),
            ]
        then_g = h.make_graph(body, f"then{i}", [], [vi(f"t{i}")])
        else_g = h.make_graph(
            [h.make_node("Identity", ["x"], [f"e{i}"])], f"else{i}", [], [vi(f"e{i}")]
        )
        nodes.append(
            h.make_node(
                "If", ["c"], [f"o{i}"], name=f"if{i}", then_branch=then_g, else_branch=else_g
            )
        )
        outs.append(f"o{i}")
    inputs = [
        vi("x", T.FLOAT, ["N", 3]),
        vi("y", T.FLOAT, ["N", 3]),
        vi("y3", T.FLOAT, [3]),
        vi("c", T.BOOL, []),
    ]
    return model(nodes, inputs, outs)
