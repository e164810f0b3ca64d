"""Build the example models the README uses: python examples/make_models.py [DIR]."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper


def mul_model(shape_a: list[int | str], shape_b: list[int | str]) -> onnx.ModelProto:
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, shape_a),
        helper.make_tensor_value_info("y", TensorProto.FLOAT, shape_b),
    ]
    output = helper.make_tensor_value_info("z", TensorProto.FLOAT, None)
    node = helper.make_node("Mul", ["x", "y"], ["z"], name="the_mul")
    graph = helper.make_graph([node], "example", inputs, [output])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 10
    return model


def silu_model() -> onnx.ModelProto:
    """z = x * sigmoid(x) with a dynamic batch: the SiLU (Swish) activation."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64, 56, 56])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, None)
    nodes = [
        helper.make_node("Sigmoid", ["x"], ["s"], name="sigmoid"),
        helper.make_node("Mul", ["x", "s"], ["z"], name="silu_mul"),
    ]
    graph = helper.make_graph(nodes, "silu", [x], [z])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 10
    return model


def main(out_dir: str = "examples") -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    onnx.save(mul_model([2, 3], [2, 3]), out / "scale.onnx")
    onnx.save(mul_model([2, 3], [3]), out / "bcast.onnx")
    onnx.save(mul_model(["batch", 3], ["batch", 3]), out / "dynamic.onnx")
    onnx.save(mul_model(["batch", 3], [1, 3]), out / "rowscale.onnx")
    onnx.save(silu_model(), out / "silu.onnx")
    np.save(out / "x.npy", np.array([[1.5, -0.0, 3.0], [3e-45, np.inf, 7.0]], np.float32))
    np.save(out / "y.npy", np.array([[2.0, 5.0, -1.0], [0.5, 2.0, -1.0]], np.float32))
    np.save(out / "y3.npy", np.array([2.0, 5.0, -1.0], np.float32))


if __name__ == "__main__":
    main(*sys.argv[1:])
