# ruff: noqa: F821  (dim names inside FLOAT[...] annotations are strings to onnxscript)
"""Models written with onnxscript (Python functions converted to ONNX).

No ``from __future__ import annotations`` here: onnxscript evaluates the
type annotations (FLOAT["N", 3]) itself; the dim names are strings.
"""

import onnx
from onnxscript import FLOAT, script
from onnxscript import opset18 as op


@script()
def silu(x: FLOAT["batch", 64, 56, 56]) -> FLOAT["batch", 64, 56, 56]:
    return op.Mul(x, op.Sigmoid(x))


@script()
def gated(x: FLOAT["N", 8], w: FLOAT[8, 8]) -> FLOAT["N", 8]:
    h = op.MatMul(x, w)
    return op.Mul(h, op.Tanh(h))


@script()
def scale_per_channel(x: FLOAT["N", 3], gamma: FLOAT[3]) -> FLOAT["N", 3]:
    return op.Mul(x, gamma)


@script()
def rank_mismatch(x: FLOAT["N", 4], y: FLOAT[4]) -> FLOAT["N", 4]:
    return op.Mul(y, x)


@script()
def square(a: FLOAT) -> FLOAT:  # becomes a model-local function when a model calls it
    return op.Mul(a, a)


@script()
def times(a: FLOAT, b: FLOAT) -> FLOAT:
    return op.Mul(a, b)


@script()
def calls_ok(x: FLOAT["N", 3], y: FLOAT["N", 3]) -> FLOAT["N", 3]:
    return times(square(x), y)


@script()
def calls_bcast(x: FLOAT["N", 3], y: FLOAT[1, 3]) -> FLOAT["N", 3]:
    return times(square(x), y)


def models() -> dict[str, tuple[onnx.ModelProto, str]]:
    """name -> (model, the verdict the checker must give)."""
    return {
        "silu": (silu.to_model_proto(), "conforms"),
        "gated": (gated.to_model_proto(), "conforms"),
        "scale_per_channel": (scale_per_channel.to_model_proto(), "violates"),
        "rank_mismatch": (rank_mismatch.to_model_proto(), "violates"),
        "calls_ok": (calls_ok.to_model_proto(), "conforms"),
        "calls_bcast": (calls_bcast.to_model_proto(), "undecided"),
    }
