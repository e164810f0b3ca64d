"""A realistic corpus for the checker (issue 21), built with onnx.helper, symbolic batch N.

Each model is a block as exporters write it; ``table`` gives, per model, the
Mul nodes checked, conforming, violating and undecided. Scalar and
per-channel Muls (attention scale, LayerNorm gamma, squeeze-excitation)
broadcast, which the profile forbids: those violate R4 by design.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from sonnx_mul.models import check_report

C, E = 8, 16


def _w(name: str, *shape: int) -> onnx.TensorProto:
    return nh.from_array(np.full(shape, 0.1, np.float32), name)


def _scalar(name: str, value: float) -> onnx.TensorProto:
    return nh.from_array(np.array(value, np.float32), name)


def _model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    out: str,
    inits: list[onnx.TensorProto],
    **kw: object,
) -> onnx.ModelProto:
    graph = h.make_graph(nodes, "g", inputs, [h.make_value_info(out, onnx.TypeProto())], inits)
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 18), *kw.get("opsets", [])])  # type: ignore[list-item]
    m.functions.extend(kw.get("functions", []))  # type: ignore[arg-type]
    m.ir_version = 10
    return m


def _image(name: str = "x") -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, T.FLOAT, ["N", C, 32, 32])


def _conv_bn(
    x: str, y: str, tag: str, stride: int = 1, group: int = 1
) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
    nodes = [
        h.make_node("Conv", [x, f"{tag}_w"], [f"{tag}_c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                    strides=[stride, stride], group=group),
        h.make_node("BatchNormalization", [f"{tag}_{k}" for k in "csbmv"], [y]),
    ]  # fmt: skip
    inits = [_w(f"{tag}_w", C, C // group, 3, 3)] + [_w(f"{tag}_{k}", C) for k in "sbmv"]
    return nodes, inits


def _silu(x: str, y: str, name: str) -> list[onnx.NodeProto]:
    return [
        h.make_node("Sigmoid", [x], [f"{y}_sig"]),
        h.make_node("Mul", [x, f"{y}_sig"], [y], name=name),
    ]


def resnet_block() -> onnx.ModelProto:
    n1, i1 = _conv_bn("x", "b1", "c1")
    n2, i2 = _conv_bn("r1", "b2", "c2")
    nodes = [*n1, h.make_node("Relu", ["b1"], ["r1"]), *n2,
             h.make_node("Mul", ["b2", "gamma"], ["ls"], name="layer_scale"),
             h.make_node("Add", ["ls", "x"], ["s"]), h.make_node("Relu", ["s"], ["y"])]  # fmt: skip
    return _model(nodes, [_image()], "y", [*i1, *i2, _scalar("gamma", 0.5)])


def mobilenetv3_hswish() -> onnx.ModelProto:
    n1, i1 = _conv_bn("x", "b1", "c1")
    nodes = [*n1, h.make_node("HardSigmoid", ["b1"], ["hs"], alpha=1 / 6),
             h.make_node("Mul", ["b1", "hs"], ["a1"], name="hswish_hardsigmoid"),
             h.make_node("Add", ["a1", "three"], ["t"]),
             h.make_node("Clip", ["t", "zero", "six"], ["cl"]),
             h.make_node("Div", ["cl", "six"], ["g"]),
             h.make_node("Mul", ["a1", "g"], ["y"], name="hswish_relu6")]  # fmt: skip
    inits = [*i1, _scalar("three", 3), _scalar("zero", 0), _scalar("six", 6)]
    return _model(nodes, [_image()], "y", inits)


def mobilenetv3_se() -> onnx.ModelProto:
    nodes = [h.make_node("GlobalAveragePool", ["x"], ["p"]),
             h.make_node("Conv", ["p", "w1"], ["q"], kernel_shape=[1, 1]),
             h.make_node("Relu", ["q"], ["r"]),
             h.make_node("Conv", ["r", "w2"], ["s"], kernel_shape=[1, 1]),
             h.make_node("HardSigmoid", ["s"], ["e"]),
             h.make_node("Mul", ["x", "e"], ["y"], name="squeeze_excite")]  # fmt: skip
    return _model(nodes, [_image()], "y", [_w("w1", C, C, 1, 1), _w("w2", C, C, 1, 1)])


def efficientnet_block_silu() -> onnx.ModelProto:
    n1, i1 = _conv_bn("x", "b1", "c1")
    n2, i2 = _conv_bn("a1", "b2", "dw", group=C)
    nodes = [*n1, *_silu("b1", "a1", "silu1"), *n2, *_silu("b2", "y", "silu2")]
    return _model(nodes, [_image()], "y", [*i1, *i2])


def yolo_block_silu() -> onnx.ModelProto:
    n1, i1 = _conv_bn("x", "b1", "c1", stride=2)
    n2, i2 = _conv_bn("a1", "b2", "c2")
    nodes = [*n1, *_silu("b1", "a1", "silu1"), *n2, *_silu("b2", "a2", "silu2"),
             h.make_node("Add", ["a1", "a2"], ["y"])]  # fmt: skip
    return _model(nodes, [_image()], "y", [*i1, *i2])


def swish_beta() -> onnx.ModelProto:
    nodes = [h.make_node("Mul", ["x", "beta"], ["bx"], name="beta_scale"),
             h.make_node("Sigmoid", ["bx"], ["s"]),
             h.make_node("Mul", ["x", "s"], ["y"], name="gate")]  # fmt: skip
    return _model(nodes, [_image()], "y", [_scalar("beta", 1.5)])


def _tokens(name: str = "x") -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, T.FLOAT, ["N", "T", E])


def attention_scalar_scale() -> onnx.ModelProto:
    nodes = [h.make_node("MatMul", ["x", "wq"], ["q"]), h.make_node("MatMul", ["x", "wk"], ["k"]),
             h.make_node("MatMul", ["x", "wv"], ["v"]),
             h.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
             h.make_node("MatMul", ["q", "kt"], ["qk"]),
             h.make_node("Mul", ["qk", "scale"], ["sc"], name="scale"),
             h.make_node("Softmax", ["sc"], ["p"], axis=-1),
             h.make_node("MatMul", ["p", "v"], ["y"])]  # fmt: skip
    inits = [_w("wq", E, E), _w("wk", E, E), _w("wv", E, E), _scalar("scale", E**-0.5)]
    return _model(nodes, [_tokens()], "y", inits)


def glu_split() -> onnx.ModelProto:
    split = nh.from_array(np.array([E, E], np.int64), "split")
    nodes = [h.make_node("MatMul", ["x", "w"], ["xw"]),
             h.make_node("Split", ["xw", "split"], ["a", "b"], axis=-1),
             h.make_node("Sigmoid", ["b"], ["g"]),
             h.make_node("Mul", ["a", "g"], ["y"], name="glu")]  # fmt: skip
    return _model(nodes, [_tokens()], "y", [_w("w", E, 2 * E), split])


def layernorm() -> onnx.ModelProto:
    nodes = [h.make_node("ReduceMean", ["x", "ax"], ["mu"]), h.make_node("Sub", ["x", "mu"], ["d"]),
             h.make_node("Mul", ["d", "d"], ["d2"], name="square"),
             h.make_node("ReduceMean", ["d2", "ax"], ["var"]),
             h.make_node("Add", ["var", "eps"], ["ve"]), h.make_node("Sqrt", ["ve"], ["sd"]),
             h.make_node("Div", ["d", "sd"], ["nrm"]),
             h.make_node("Mul", ["nrm", "gamma"], ["y"], name="gamma")]  # fmt: skip
    inits = [nh.from_array(np.array([-1], np.int64), "ax"), _scalar("eps", 1e-5), _w("gamma", E)]
    return _model(nodes, [_tokens()], "y", inits)


def gelu_tanh() -> onnx.ModelProto:
    nodes = [h.make_node("Mul", ["x", "x"], ["x2"], name="x_sq"),
             h.make_node("Mul", ["x2", "x"], ["x3"], name="x_cube"),
             h.make_node("Mul", ["x3", "c"], ["cx3"], name="c_scale"),
             h.make_node("Add", ["x", "cx3"], ["inner"]),
             h.make_node("Tanh", ["inner"], ["t"]), h.make_node("Add", ["t", "one"], ["t1"]),
             h.make_node("Mul", ["x", "t1"], ["y"], name="gate")]  # fmt: skip
    return _model(nodes, [_tokens()], "y", [_scalar("c", 0.044715), _scalar("one", 1.0)])


def if_silu() -> onnx.ModelProto:
    then = h.make_graph(
        _silu("x", "ty", "then_silu"), "then", [], [h.make_value_info("ty", onnx.TypeProto())]
    )
    other = h.make_graph(
        [h.make_node("Relu", ["x"], ["ey"])],
        "else",
        [],
        [h.make_value_info("ey", onnx.TypeProto())],
    )
    nodes = [h.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other)]
    inputs = [_image(), h.make_tensor_value_info("cond", T.BOOL, [])]
    return _model(nodes, inputs, "y", [])


def loop_silu() -> onnx.ModelProto:
    body = h.make_graph(
        [*_silu("v", "v2", "loop_silu"), h.make_node("Identity", ["c"], ["c2"])], "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c", T.BOOL, []),
         h.make_value_info("v", onnx.TypeProto())],
        [h.make_value_info("c2", onnx.TypeProto()), h.make_value_info("v2", onnx.TypeProto())],
    )  # fmt: skip
    nodes = [h.make_node("Loop", ["n", "", "x"], ["y"], body=body)]
    return _model(nodes, [_image(), h.make_tensor_value_info("n", T.INT64, [])], "y", [])


def scan_silu() -> onnx.ModelProto:
    body = h.make_graph(
        _silu("s", "o", "scan_silu"),
        "body",
        [h.make_value_info("s", onnx.TypeProto())],
        [h.make_value_info("o", onnx.TypeProto())],
    )
    nodes = [h.make_node("Scan", ["x"], ["y"], body=body, num_scan_inputs=1)]
    return _model(nodes, [_tokens()], "y", [])


def function_silu() -> onnx.ModelProto:
    f = h.make_function("local", "SiLU", ["a"], ["b"], _silu("a", "b", "fn_silu"),
                        [h.make_opsetid("", 18)])  # fmt: skip
    n1, i1 = _conv_bn("x", "b1", "c1")
    nodes = [*n1, h.make_node("SiLU", ["b1"], ["y"], domain="local", name="call")]
    return _model(nodes, [_image()], "y", i1, functions=[f], opsets=[h.make_opsetid("local", 1)])


def build_corpus() -> dict[str, onnx.ModelProto]:
    """name -> model (every one runs in onnxruntime with any batch size)."""
    return {
        "resnet_block_layer_scale": resnet_block(),
        "mobilenetv3_hswish": mobilenetv3_hswish(),
        "mobilenetv3_squeeze_excite": mobilenetv3_se(),
        "efficientnet_block_silu": efficientnet_block_silu(),
        "yolo_block_silu": yolo_block_silu(),
        "swish_beta": swish_beta(),
        "attention_scalar_scale": attention_scalar_scale(),
        "glu_split": glu_split(),
        "layernorm_decomposed": layernorm(),
        "gelu_tanh": gelu_tanh(),
        "if_silu": if_silu(),
        "loop_silu": loop_silu(),
        "scan_silu": scan_silu(),
        "function_silu": function_silu(),
    }


def table() -> list[tuple[str, int, int, int, int]]:
    """(model, Mul nodes checked, conforming, violating, undecided) per model."""
    rows = []
    for name, m in build_corpus().items():
        report = check_report(m)
        bad, unsure = len(report.nodes(True)), len(report.nodes(False))
        rows.append((name, report.mul_nodes, report.mul_nodes - bad - unsure, bad, unsure))
    return rows
