"""F-LAYOUT: results depend on values and logical index only, not memory layout."""

import tracemalloc

import ml_dtypes
import numpy as np
import pytest

from sonnx_mul import mul, numpy_loops
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


def _peak_bytes(call) -> int:
    """Peak bytes allocated during ``call`` (numpy reports its buffers to tracemalloc)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("worst", [False, True], ids=["bounded", "corner bound fails"])
@pytest.mark.parametrize(
    "layout",
    [
        lambda x: x,
        np.asfortranarray,
        lambda x: x.T,
        lambda x: x[::-1, ::2],
        lambda x: x.astype(x.dtype.newbyteorder(">")),
    ],
    ids=["C", "Fortran", "transposed", "strided", "byte-swapped"],
)
def test_F_CHECKED_memory_is_the_output_plus_a_block_for_every_layout(layout, worst):
    """overflow='error' never copies an operand: peak = the result + O(OVERFLOW_CHUNK)."""
    rng = np.random.default_rng(5)
    a = layout(rng.integers(-1000, 1000, (1024, 1024), dtype=np.int64))
    b = layout(rng.integers(-1000, 1000, (1024, 1024), dtype=np.int64))
    if worst:  # max(a) * max(b) overflows (at different indices): blocks get checked
        a[0, 0], b[0, 0], a[-1, -1], b[-1, -1] = 2**62, 1, 1, 2**62
    output = a.size * 8
    block = numpy_loops.OVERFLOW_CHUNK * 8  # the native glue's blocks are smaller
    expected = np.multiply(a, b)
    peak = _peak_bytes(lambda: mul(a, b, overflow="error"))
    assert peak <= output + 16 * block, (peak / output, layout)
    out = np.empty(a.shape, np.int64)
    peak = _peak_bytes(lambda: mul(a, b, out=out, overflow="error"))
    assert peak <= 16 * block, peak / output
    assert np.array_equal(out, expected)
