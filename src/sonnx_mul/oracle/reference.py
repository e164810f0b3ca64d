"""``mul_reference``: Mul through the pure-Python reference kernel.

Same contract as :func:`sonnx_mul.mul` (it validates with the same checks),
but the values are computed by :mod:`sonnx_mul.oracle.integers` (integers) and
:mod:`sonnx_mul.oracle.softfloat` (floats, on bit patterns) instead of the native
kernel. It is the oracle ``mul`` is compared with, bit for bit; it is slow.
"""

from __future__ import annotations

import numpy as np

from ..dtypes import DEFAULT_OPSET, ElementType
from ..errors import IntegerOverflowError
from ..validation import check_call
from . import integers as kernel
from . import softfloat


def mul_reference(
    a: np.ndarray, b: np.ndarray, *, opset: int = DEFAULT_OPSET, overflow: str = "wrap"
) -> np.ndarray:
    """C = A * B computed element by element in pure Python (no out=)."""
    a, b, etype = check_call(a, b, opset, overflow)
    values = multiply_flat(to_flat(a, etype), to_flat(b, etype), etype, overflow)
    return from_flat(values, a.shape, etype)


def multiply_flat(a: list[int], b: list[int], etype: ElementType, overflow: str) -> list[int]:
    """The kernel on flat values: ints for integer types, bit patterns for floats."""
    if etype.is_float:
        return [softfloat.mul_bits(x, y, etype.eb, etype.sb) for x, y in zip(a, b, strict=True)]
    if overflow == "error":
        index = kernel.first_overflow(a, b, etype.lo, etype.hi)
        if index >= 0:
            raise IntegerOverflowError(index, a[index], b[index], etype.onnx_name)
        return kernel.mul_exact(a, b)
    return kernel.mul_wrap(a, b, etype.bits, etype.signed)


def to_flat(x: np.ndarray, etype: ElementType) -> list[int]:
    """Values of ``x`` in C order: ints, or bit patterns for float types."""
    native = np.ascontiguousarray(x, dtype=etype.dtype)
    if etype.is_float:
        return [int(v) for v in native.view(etype.uint_view).reshape(-1)]
    return [int(v) for v in native.reshape(-1)]


def from_flat(values: list[int], shape: tuple[int, ...], etype: ElementType) -> np.ndarray:
    """The array of ``shape`` holding ``values`` (bit patterns for float types)."""
    if etype.is_float:
        bits = np.array(values, dtype=etype.uint_view).reshape(shape)
        return bits.view(etype.dtype)
    return np.array(values, dtype=etype.dtype).reshape(shape)
