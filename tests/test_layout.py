"""F-LAYOUT: results depend on values and logical index only, not memory layout."""

import ml_dtypes
import numpy as np
import pytest

from sonnx_mul import mul
from sonnx_mul.dtypes import ALL_TYPES
from support import assert_same_bits


def layouts(x: np.ndarray):
    yield "C", x
    yield "Fortran", np.asfortranarray(x)
    big = np.zeros((x.shape[0] * 2, x.shape[1] * 3), x.dtype)
    big[::2, ::3] = x
    yield "strided", big[::2, ::3]
    yield "reversed", np.ascontiguousarray(x[::-1, ::-1])[::-1, ::-1]
    ro = x.copy()
    ro.flags.writeable = False
    yield "read-only", ro
    if x.dtype.itemsize > 1 and x.dtype != np.dtype(ml_dtypes.bfloat16):
        yield "byte-swapped", x.astype(x.dtype.newbyteorder())


@pytest.mark.parametrize("etype", ALL_TYPES, ids=lambda t: t.onnx_name)
def test_F_LAYOUT_every_layout_gives_the_same_bits(etype):
    rng = np.random.default_rng(3)
    a = (
        rng.integers(-50, 50, (4, 5)).astype(etype.dtype)
        if etype.signed
        else rng.integers(0, 100, (4, 5)).astype(etype.dtype)
    )
    b = (a[::-1] // 3 + 1) if not etype.is_float else (a[::-1] / 3 + 1).astype(etype.dtype)
    expected = mul(a, b)
    for name_a, la in layouts(a):
        for name_b, lb in layouts(b):
            c = mul(la, lb)
            assert c.flags.c_contiguous and c.dtype == etype.dtype, (name_a, name_b)
            assert_same_bits(c, expected)
