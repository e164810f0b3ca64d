"""Element types of Mul by opset, and their numeric formats.

The table comes from the ONNX Mul versions 1, 6, 7, 13 and 14
(docs/spec/sources/, docs/spec/product.md section 2);
``tests/operator/test_dtypes.py`` checks it against ``onnx.defs``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import ml_dtypes
import numpy as np

# @relation(R3-OPSET, scope=range_start)
MUL_VERSIONS: tuple[int, ...] = (1, 6, 7, 13, 14)
"""Opsets that introduced a version of Mul."""

MAX_KNOWN_OPSET = 28
"""Newest ONNX opset checked to still use Mul-14 (onnx 1.23)."""

DEFAULT_OPSET = 14


@dataclass(frozen=True)
class ElementType:
    """An element type of the profile.

    ``bits`` is the storage width. Integers have ``signed`` and their range
    ``[lo, hi]``; floats have Why3's format parameters ``eb`` (exponent
    bits) and ``sb`` (significand bits, hidden bit included).
    """

    onnx_name: str
    dtype: np.dtype
    bits: int
    is_float: bool
    signed: bool
    eb: int = 0
    sb: int = 0

    @property
    def lo(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def hi(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    @property
    def uint_view(self) -> np.dtype:
        """Unsigned integer dtype of the same width, to read bit patterns."""
        return np.dtype(f"u{self.bits // 8}")

    @property
    def kernel_suffix(self) -> str:
        """The C kernel's name of the type, as in ``sonnx_mul_wrap_i8`` or
        ``sonnx_mul_bf16``: ``i``/``u`` and the width for integers, ``f`` and
        the width for floats, ``bf16`` for the 16-bit float with 8 exponent bits."""
        if self.is_float:
            return f"{'bf' if self.bits == 16 and self.eb == 8 else 'f'}{self.bits}"
        return f"{'i' if self.signed else 'u'}{self.bits}"

    @property
    def kernel_ctype(self) -> str:
        """The C type of one element in the kernel's API: the exact-width
        integer, ``float``/``double``, or for the 16-bit floats ``uint16_t``
        (the kernel handles them as their bit patterns)."""
        if self.is_float:
            return {32: "float", 64: "double"}.get(self.bits, f"uint{self.bits}_t")
        return f"{'' if self.signed else 'u'}int{self.bits}_t"


def _float(name: str, dtype: object, eb: int, sb: int) -> ElementType:
    return ElementType(name, np.dtype(dtype), eb + sb, True, True, eb, sb)  # type: ignore[call-overload]


def _int(name: str, dtype: object, bits: int, signed: bool) -> ElementType:
    return ElementType(name, np.dtype(dtype), bits, False, signed)  # type: ignore[call-overload]


FLOAT16 = _float("float16", np.float16, 5, 11)
BFLOAT16 = _float("bfloat16", ml_dtypes.bfloat16, 8, 8)
FLOAT32 = _float("float", np.float32, 8, 24)
FLOAT64 = _float("double", np.float64, 11, 53)
INT8 = _int("int8", np.int8, 8, True)
INT16 = _int("int16", np.int16, 16, True)
INT32 = _int("int32", np.int32, 32, True)
INT64 = _int("int64", np.int64, 64, True)
UINT8 = _int("uint8", np.uint8, 8, False)
UINT16 = _int("uint16", np.uint16, 16, False)
UINT32 = _int("uint32", np.uint32, 32, False)
UINT64 = _int("uint64", np.uint64, 64, False)

ALL_TYPES: tuple[ElementType, ...] = (
    FLOAT16, BFLOAT16, FLOAT32, FLOAT64,
    INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64,
)  # fmt: skip


def kernel_order() -> tuple[ElementType, ...]:
    """The types in the C kernel's order (its integer source and header, the
    glue's kinds): integers by width, signed first, then the floats."""
    ints = sorted((t for t in ALL_TYPES if not t.is_float), key=lambda t: (t.bits, not t.signed))
    return (*ints, *(t for t in ALL_TYPES if t.is_float))


# Types each Mul version adds to the previous one.
_ADDED_BY_VERSION: Mapping[int, tuple[ElementType, ...]] = MappingProxyType(
    {
        1: (FLOAT16, FLOAT32, FLOAT64),
        6: (INT32, INT64, UINT32, UINT64),
        7: (),
        13: (BFLOAT16,),
        14: (INT8, INT16, UINT8, UINT16),
    }
)


def mul_version(opset: int) -> int:
    """The Mul version an opset selects: the newest one not above it."""
    return max(v for v in MUL_VERSIONS if v <= opset)


def allowed_types(opset: int) -> tuple[ElementType, ...]:
    """Element types of Mul at ``opset`` (ValueError below 1)."""
    if 1 <= opset <= MAX_KNOWN_OPSET:
        return _ALLOWED_BY_OPSET[opset]
    return _allowed(opset)


def _allowed(opset: int) -> tuple[ElementType, ...]:
    version = mul_version(opset)
    return tuple(t for v in MUL_VERSIONS if v <= version for t in _ADDED_BY_VERSION[v])


# Computed once: validation looks it up on every call.
_ALLOWED_BY_OPSET: tuple[tuple[ElementType, ...], ...] = (
    (),  # opset 0 does not exist
    *(_allowed(opset) for opset in range(1, MAX_KNOWN_OPSET + 1)),
)


# @relation(R3-OPSET, scope=range_end)

_BY_DTYPE: Mapping[np.dtype, ElementType] = MappingProxyType({t.dtype: t for t in ALL_TYPES})
_BY_ONNX_NAME: Mapping[str, ElementType] = MappingProxyType({t.onnx_name: t for t in ALL_TYPES})


def element_type(dtype: np.dtype) -> ElementType | None:
    """The profile's element type of a numpy dtype, or None (any byte order)."""
    if not dtype.isnative:
        dtype = dtype.newbyteorder("=")
    return _BY_DTYPE.get(dtype)


def by_onnx_name(name: str) -> ElementType | None:
    """The element type named as in ONNX (``"float"``, ``"bfloat16"``, ...), or None."""
    return _BY_ONNX_NAME.get(name)
