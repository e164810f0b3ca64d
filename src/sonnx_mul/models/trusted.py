"""The operators whose shapes the checker trusts, and why (the allow-lists).

Two lists, both default-domain (``""`` / ``"ai.onnx"``) only:

``PRESERVING`` — *provenance*: the output has exactly the shape of the listed
input, whatever that shape is, by the operator's definition (elementwise
unary maps, normalisations, Identity, Cast). onnxruntime enforces it: its
kernels allocate the output with the input's shape. No shape inference is
involved, so ``x * f(x)`` is decided even when ``x``'s shape is unknown.
Broadcasting elementwise ops (``BROADCAST``) preserve the shape of their
operands when every operand has the same provenance, or is a scalar (rank 0)
fact, or an all-ones fact of rank <= the operand's known rank.

``INFERRED`` — *trusted inference*: the ONNX shape-inference function of the
operator gives onnxruntime's output shape, under the stated attribute
condition, provided every input's shape is itself trusted and every input
listed in ``value_inputs`` (shape, axes, split, pads, repeats...) is a value
the checker owns (a non-overridable initializer or a Constant node, small).
Each entry is cross-checked against onnxruntime in
tests/checker/test_trusted_inference.py (random attributes and shapes;
the inferred static dims must equal the runtime's). Everything else —
pooling with ceil_mode or dilations, ConvTranspose, LpPool, sequence
operators, If/Loop/Scan outputs, custom domains, ... — has an unknown
output shape.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import onnx

from .sanitize import DEFAULT_DOMAINS

Condition = Callable[[onnx.NodeProto], bool]


def _ints(node: onnx.NodeProto, name: str) -> list[int] | None:
    for attr in node.attribute:
        if attr.name == name:
            return [int(i) for i in attr.ints]
    return None


def _int(node: onnx.NodeProto, name: str, default: int) -> int:
    for attr in node.attribute:
        if attr.name == name:
            return int(attr.i)
    return default


def _str(node: onnx.NodeProto, name: str, default: str) -> str:
    for attr in node.attribute:
        if attr.name == name:
            value = attr.s
            return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return default


def _always(node: onnx.NodeProto) -> bool:
    del node
    return True


def _no_dilation(node: onnx.NodeProto) -> bool:
    return all(d == 1 for d in _ints(node, "dilations") or [])


def _conv(node: onnx.NodeProto) -> bool:
    """Explicit pads or VALID; SAME_* only without dilation (dilated SAME_*: issue 21)."""
    pad = _str(node, "auto_pad", "NOTSET")
    same = pad in ("SAME_UPPER", "SAME_LOWER") and _no_dilation(node)
    return pad in ("NOTSET", "VALID") or same


def _pool(node: onnx.NodeProto) -> bool:
    """Issue 21 class 3: ceil_mode=1 and dilated pooling are NOT trusted."""
    pad = _str(node, "auto_pad", "NOTSET")
    return _int(node, "ceil_mode", 0) == 0 and _no_dilation(node) and pad in ("NOTSET", "VALID")


def _no_legacy_broadcast(node: onnx.NodeProto) -> bool:
    """Opset < 7 ``broadcast=1``/``axis``: not cross-checked (onnxruntime lacks those opsets)."""
    return _int(node, "broadcast", 0) == 0


def _squeeze(node: onnx.NodeProto) -> bool:
    """Without axes, ONNX squeezes only dims it KNOWS are 1; the runtime squeezes every 1."""
    return len(node.input) > 1 or _ints(node, "axes") is not None


@dataclass(frozen=True)
class Rule:
    """An allow-listed operator: which inputs must be owned values, and when it applies."""

    value_inputs: tuple[int, ...] = ()
    condition: Condition = _always


_UNARY = (
    "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "BitwiseNot", "Cast", "CastLike",
    "Ceil", "Celu", "Clip", "Cos", "Cosh", "Dropout", "Elu", "Erf", "Exp", "Floor", "Gelu",
    "HardSigmoid", "HardSwish", "Hardmax", "Identity", "InstanceNormalization", "IsInf", "IsNaN",
    "LRN", "LeakyRelu", "Log", "LogSoftmax", "Mish", "Neg", "Not", "Reciprocal", "Relu",
    "Round", "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Softmax", "Softplus",
    "Softsign", "Sqrt", "Tan", "Tanh", "ThresholdedRelu",
)  # fmt: skip
"""Output 0 has the shape of input 0 (the other inputs are scalars or per-channel)."""

_NORMALISING = ("BatchNormalization", "LayerNormalization", "GroupNormalization")
"""Output 0 has the shape of input 0 (X); scale/bias are per-channel parameters."""

PRESERVING: frozenset[str] = frozenset((*_UNARY, *_NORMALISING))

BROADCAST: frozenset[str] = frozenset({
    "Add", "And", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Div", "Equal",
    "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Max", "Mean", "Min", "Mod", "Mul",
    "Or", "PRelu", "Pow", "Sub", "Sum", "Where", "Xor",
})  # fmt: skip
"""Multidirectional (numpy) broadcasting of every input."""

INFERRED: Mapping[str, Rule] = MappingProxyType({
    **{op: Rule() for op in PRESERVING},
    **{op: Rule(condition=_no_legacy_broadcast) for op in BROADCAST},
    "Constant": Rule(),
    "Shape": Rule(),
    "Transpose": Rule(),
    "Flatten": Rule(),
    "MatMul": Rule(),
    "Gemm": Rule(),
    "Concat": Rule(),
    "GlobalAveragePool": Rule(),
    "GlobalMaxPool": Rule(),
    "Conv": Rule(condition=_conv),
    "MaxPool": Rule(condition=lambda n: _pool(n) and len(n.output) == 1),
    "AveragePool": Rule(condition=_pool),
    "Reshape": Rule(value_inputs=(1,)),
    "Expand": Rule(value_inputs=(1,)),
    "Tile": Rule(value_inputs=(1,)),
    "ConstantOfShape": Rule(value_inputs=(0,)),
    "Squeeze": Rule(value_inputs=(1,), condition=_squeeze),
    "Unsqueeze": Rule(value_inputs=(1,)),
    "Split": Rule(value_inputs=(1,)),
    "ReduceMean": Rule(value_inputs=(1,)),
    "ReduceSum": Rule(value_inputs=(1,)),
    "ReduceMax": Rule(value_inputs=(1,)),
    "Slice": Rule(value_inputs=(1, 2, 3, 4)),
    "Gather": Rule(),
    "Pad": Rule(value_inputs=(1, 3)),
    "CumSum": Rule(value_inputs=(1,)),
})  # fmt: skip
"""Operators whose ONNX shape inference is trusted (module doc); the rest: unknown."""


def rule(node: onnx.NodeProto) -> Rule | None:
    """The trusted-inference rule that applies to ``node``, or None (output shape unknown)."""
    if node.domain not in DEFAULT_DOMAINS:
        return None
    found = INFERRED.get(node.op_type)
    return found if found is not None and found.condition(node) else None
