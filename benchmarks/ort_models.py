"""Realistic models with Mul in activations and scalings, on three engines.

Each model (built with onnx.helper, float32, fixed shapes, no broadcasting
Mul: every scale is a full-shape initializer, as the profile requires) is
run on plain onnxruntime (its own Mul), on the onnxruntime engine
(``sonnx_mul.models.ort.InferenceSession``: every Mul on the certified
kernel as a custom op) and on the reference engine (``Backend``: every other
operator on onnx.reference), interleaved in the same repeat loop; medians of
this process's CPU time per run (every engine runs in the calling thread with
one intra-op thread: leaves out the time other jobs of the shared machine hold
the cores) and ratios within each repeat. tests/ort/ runs the same
models for bits.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

OPSET = 21
IR_VERSION = 10  # onnxruntime 1.31 reads up to 13; onnx 1.23 writes 14 by default


def _init(name: str, array: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(np.ascontiguousarray(array), name)


def _rand(rng: np.random.Generator, *shape: int, scale: float = 0.1) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _model(
    name: str,
    nodes: list[onnx.NodeProto],
    inputs: dict[str, tuple[int, ...]],
    outputs: list[str],
    inits: list[onnx.TensorProto],
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, v) for k, v in inputs.items()],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        inits,
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=IR_VERSION
    )


def mlp(batch: int = 32, seed: int = 1) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """x[32,256] -> Gemm-like MatMul+Add -> swish (x*sigmoid x) -> MatMul+Add -> * scale."""
    rng = np.random.default_rng(seed)
    n = helper.make_node
    nodes = [
        n("MatMul", ["x", "w1"], ["h0"]),
        n("Add", ["h0", "b1"], ["h1"]),
        n("Sigmoid", ["h1"], ["s1"]),
        n("Mul", ["h1", "s1"], ["a1"], name="swish"),
        n("MatMul", ["a1", "w2"], ["h2"]),
        n("Add", ["h2", "b2"], ["h3"]),
        n("Mul", ["h3", "scale"], ["y"], name="scale"),
    ]
    inits = [
        _init("w1", _rand(rng, 256, 512)),
        _init("b1", _rand(rng, batch, 512)),
        _init("w2", _rand(rng, 512, 128)),
        _init("b2", _rand(rng, batch, 128)),
        _init("scale", np.full((batch, 128), 0.5, np.float32)),
    ]
    return _model("mlp", nodes, {"x": (batch, 256)}, ["y"], inits), {
        "x": _rand(rng, batch, 256, scale=1.0)
    }


def cnn(seed: int = 2) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """x[1,3,32,32] -> Conv -> swish -> Conv, gated (GLU: a * sigmoid(g)) -> pool -> MatMul."""
    rng = np.random.default_rng(seed)
    n = helper.make_node
    conv = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    nodes = [
        n("Conv", ["x", "k1", "c1"], ["h1"], **conv),
        n("Sigmoid", ["h1"], ["s1"]),
        n("Mul", ["h1", "s1"], ["a1"], name="swish"),
        n("Conv", ["a1", "k2", "c2"], ["h2"], **conv),
        n("Conv", ["a1", "k3", "c3"], ["g2"], **conv),
        n("Sigmoid", ["g2"], ["s2"]),
        n("Mul", ["h2", "s2"], ["a2"], name="gate"),
        n("GlobalAveragePool", ["a2"], ["p"]),
        n("Flatten", ["p"], ["f"]),
        n("MatMul", ["f", "w"], ["y"]),
    ]
    inits = [
        _init("k1", _rand(rng, 16, 3, 3, 3)),
        _init("c1", _rand(rng, 16)),
        _init("k2", _rand(rng, 32, 16, 3, 3)),
        _init("c2", _rand(rng, 32)),
        _init("k3", _rand(rng, 32, 16, 3, 3)),
        _init("c3", _rand(rng, 32)),
        _init("w", _rand(rng, 32, 10)),
    ]
    return _model("cnn", nodes, {"x": (1, 3, 32, 32)}, ["y"], inits), {
        "x": _rand(rng, 1, 3, 32, 32, scale=1.0)
    }


def transformer(
    seq: int = 64, dim: int = 128, seed: int = 3
) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """One pre-norm block: attention scores * 1/sqrt(d), residuals, a GELU MLP
    (h * sigmoid(1.702 h)): four Mul nodes, each on full-shape operands."""
    rng = np.random.default_rng(seed)
    n = helper.make_node
    nodes = [
        n("LayerNormalization", ["x", "g1", "z1"], ["n1"], axis=-1),
        n("MatMul", ["n1", "wq"], ["q"]),
        n("MatMul", ["n1", "wk"], ["k"]),
        n("MatMul", ["n1", "wv"], ["v"]),
        n("Transpose", ["k"], ["kt"], perm=[1, 0]),
        n("MatMul", ["q", "kt"], ["scores"]),
        n("Mul", ["scores", "inv_sqrt_d"], ["scaled"], name="attention_scale"),
        n("Softmax", ["scaled"], ["attn"], axis=-1),
        n("MatMul", ["attn", "v"], ["ctx"]),
        n("MatMul", ["ctx", "wo"], ["o"]),
        n("Add", ["x", "o"], ["r1"]),
        n("LayerNormalization", ["r1", "g2", "z2"], ["n2"], axis=-1),
        n("MatMul", ["n2", "w1"], ["h"]),
        n("Mul", ["h", "c1702"], ["hs"], name="gelu_scale"),
        n("Sigmoid", ["hs"], ["sg"]),
        n("Mul", ["h", "sg"], ["gelu"], name="gelu"),
        n("MatMul", ["gelu", "w2"], ["m"]),
        n("Mul", ["m", "residual_scale"], ["ms"], name="residual_scale"),
        n("Add", ["r1", "ms"], ["y"]),
    ]
    hidden = 4 * dim
    inits = [
        _init("g1", np.ones(dim, np.float32)),
        _init("z1", np.zeros(dim, np.float32)),
        _init("g2", np.ones(dim, np.float32)),
        _init("z2", np.zeros(dim, np.float32)),
        *(_init(w, _rand(rng, dim, dim)) for w in ("wq", "wk", "wv", "wo")),
        _init("inv_sqrt_d", np.full((seq, seq), 1 / np.sqrt(dim), np.float32)),
        _init("w1", _rand(rng, dim, hidden)),
        _init("c1702", np.full((seq, hidden), 1.702, np.float32)),
        _init("w2", _rand(rng, hidden, dim)),
        _init("residual_scale", np.full((seq, dim), 0.5, np.float32)),
    ]
    return _model("transformer", nodes, {"x": (seq, dim)}, ["y"], inits), {
        "x": _rand(rng, seq, dim, scale=1.0)
    }


MODELS: dict[str, Callable[[], tuple[onnx.ModelProto, dict[str, np.ndarray]]]] = {
    "MLP 32x256-512-128 (swish, scale)": mlp,
    "CNN 3x32x32, 3 convs (swish, GLU gate)": cnn,
    "transformer block 64x128 (score scale, GELU, residual scale)": transformer,
}


@dataclass
class Row:
    model: str
    mul_nodes: int
    seconds: dict[str, float]  # engine -> median per run
    ratio_to_plain: dict[str, float]  # engine -> median of per-repeat ratios
    repeats: int


def measure(quick: bool) -> list[Row]:
    """Every model on the three engines, interleaved; one intra-op thread each."""
    from sonnx_mul.models import Backend
    from sonnx_mul.models.ort import InferenceSession

    repeats, calls = (5, 2) if quick else (21, 5)
    rows = []
    for label, build in MODELS.items():
        model, feeds = build()
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        plain = ort.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        certified_options = ort.SessionOptions()
        certified_options.intra_op_num_threads = 1
        certified = InferenceSession(model, certified_options)
        reference = Backend.prepare(model)
        runs: dict[str, Callable[[], object]] = {
            "plain onnxruntime": lambda p=plain, f=feeds: p.run(None, f),
            "onnxruntime engine": lambda c=certified, f=feeds: c.run(None, f),
            "reference engine": lambda r=reference, f=feeds: r.run(f),
        }
        samples: dict[str, list[float]] = {k: [] for k in runs}
        for _ in range(repeats):
            for name, run in runs.items():
                start = time.process_time()
                for _ in range(calls):
                    run()
                samples[name].append((time.process_time() - start) / calls)
        base = samples["plain onnxruntime"]
        rows.append(
            Row(
                label,
                certified.certified_nodes,
                {k: statistics.median(v) for k, v in samples.items()},
                {
                    k: statistics.median(x / y for x, y in zip(v, base, strict=True))
                    for k, v in samples.items()
                    if k != "plain onnxruntime"
                },
                repeats,
            )
        )
        print(label, {k: f"{v * 1e3:.2f} ms" for k, v in rows[-1].seconds.items()})
    return rows


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def render(rows: list[Row]) -> list[str]:
    lines = [
        "| model | Mul nodes | plain onnxruntime | onnxruntime engine | reference engine "
        "| engine / plain | reference / plain |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        s, r = row.seconds, row.ratio_to_plain
        lines.append(
            f"| {row.model} | {row.mul_nodes} | {_ms(s['plain onnxruntime'])} "
            f"| {_ms(s['onnxruntime engine'])} | {_ms(s['reference engine'])} "
            f"| {r['onnxruntime engine']:.2f}× | {r['reference engine']:.2f}× |"
        )
    return lines
