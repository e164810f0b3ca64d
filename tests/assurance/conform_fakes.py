"""Fake runtimes for the conformance tests: callables ``fn(a, b) -> array``.

One conforms (the certified ``mul``); each other one plants one fault that
``sonnx-mul conform`` must detect under the right requirement id. All but
``broadcasting`` refuse operands of different shapes, as the profile asks.
"""

from __future__ import annotations

import numpy as np

import sonnx_mul
from sonnx_mul.dtypes import element_type


def _same_shape(a: np.ndarray, b: np.ndarray) -> None:
    if a.shape != b.shape or 0 in a.shape:
        raise ValueError(f"refused: shapes {a.shape} and {b.shape}")


def conforming(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The certified implementation: refuses what the profile forbids."""
    return sonnx_mul.mul(a, b)


def saturating(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integers clamp the exact product to the type's range (OpenVINO's int8/uint8)."""
    _same_shape(a, b)
    t = element_type(a.dtype)
    assert t is not None
    if t.is_float:
        return sonnx_mul.mul(a, b)
    exact = a.astype(object) * b.astype(object)
    return np.clip(exact, t.lo, t.hi).astype(a.dtype)


def _subnormal(x: np.ndarray) -> np.ndarray:
    t = element_type(x.dtype)
    assert t is not None
    bits = x.view(t.uint_view).astype(np.uint64)
    exponent = (bits >> np.uint64(t.sb - 1)) & np.uint64((1 << t.eb) - 1)
    fraction = bits & np.uint64((1 << (t.sb - 1)) - 1)
    return (exponent == 0) & (fraction != 0)


def flushing(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Floats flush subnormal operands and results to zero of their sign (FTZ + DAZ)."""
    _same_shape(a, b)
    if a.dtype.kind in "iu":
        return sonnx_mul.mul(a, b)
    a = np.where(_subnormal(a), a * 0, a)
    b = np.where(_subnormal(b), b * 0, b)
    c = sonnx_mul.mul(np.ascontiguousarray(a), np.ascontiguousarray(b))
    return np.where(_subnormal(c), c * 0, c)


def toward_zero(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """float16/float: round toward zero (the exact product is a float64)."""
    _same_shape(a, b)
    if a.dtype.kind in "iu":
        return sonnx_mul.mul(a, b)
    c = sonnx_mul.mul(a, b)
    exact = a.astype(np.float64) * b.astype(np.float64)
    t = element_type(a.dtype)
    assert t is not None
    with np.errstate(invalid="ignore"):
        too_big = np.abs(c.astype(np.float64)) > np.abs(exact)
    bits = c.view(t.uint_view).copy()
    bits[too_big] -= 1  # one step toward zero in magnitude (inf becomes the largest finite)
    return bits.view(a.dtype)


def broadcasting(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy's multiply: the right bits, but it broadcasts (R4) and takes zero-sized dims."""
    return np.multiply(a, b)
