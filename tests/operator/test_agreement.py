"""``mul`` (the native kernel) equals the pure-Python reference kernel bit for bit."""

import numpy as np
import pytest

from sonnx_mul import IntegerOverflowError, mul
from sonnx_mul.dtypes import ALL_TYPES
from sonnx_mul.oracle.reference import mul_reference
from support import assert_same_bits, float_edge_bits, from_bits, int_edge_values

IDS = [t.onnx_name for t in ALL_TYPES]


def random_tensor(etype, shape, rng):
    if etype.is_float:
        patterns = rng.integers(0, 1 << etype.bits, shape, dtype=np.uint64)
        values = patterns.astype(etype.uint_view).view(etype.dtype)
        normals = rng.standard_normal(shape).astype(etype.dtype)
        return np.where(rng.random(shape) < 0.5, values, normals)
    return rng.integers(etype.lo, etype.hi, shape, dtype=etype.dtype, endpoint=True)


def edge_pairs(etype):
    edges = (
        from_bits(float_edge_bits(etype), etype)
        if etype.is_float
        else np.array(int_edge_values(etype), etype.dtype)
    )
    return np.repeat(edges, edges.size), np.tile(edges, edges.size)


@pytest.mark.parametrize("etype", ALL_TYPES, ids=IDS)
def test_F_fast_path_equals_kernel_on_random_tensors(etype):
    rng = np.random.default_rng(1234)
    for shape in [(), (1,), (7,), (3, 5), (2, 3, 4), (64, 33)]:
        a, b = random_tensor(etype, shape, rng), random_tensor(etype, shape, rng)
        assert_same_bits(mul(a, b), mul_reference(a, b))


@pytest.mark.parametrize("etype", ALL_TYPES, ids=IDS)
def test_F_fast_path_equals_kernel_on_edge_values(etype):
    a, b = edge_pairs(etype)
    assert_same_bits(mul(a, b), mul_reference(a, b))


@pytest.mark.parametrize(
    "etype", [t for t in ALL_TYPES if not t.is_float], ids=lambda t: t.onnx_name
)
def test_F_CHECKED_fast_path_and_kernel_raise_at_the_same_index(etype):
    a, b = edge_pairs(etype)
    with pytest.raises(IntegerOverflowError) as fast:
        mul(a, b, overflow="error")
    with pytest.raises(IntegerOverflowError) as ref:
        mul_reference(a, b, overflow="error")
    assert fast.value.index == ref.value.index


# Negative controls: the comparison used above must catch a faulty multiply.
def truncating_float32_mul(a, b):
    """Rounds toward zero: the exact float64 product with its 29 extra bits cut off."""
    exact = a.astype(np.float64) * b.astype(np.float64)
    cut = (exact.view(np.uint64) >> np.uint64(29)) << np.uint64(29)
    return cut.view(np.float64).astype(np.float32)


def flushing_mul(a, b):
    c = a * b
    return np.where(np.abs(c) < np.finfo(c.dtype).tiny, np.zeros_like(c), c)


@pytest.mark.parametrize("faulty", [truncating_float32_mul, flushing_mul])
def test_negative_control_agreement_catches_truncation_and_flush_to_zero(faulty):
    etype = next(t for t in ALL_TYPES if t.onnx_name == "float")
    a, b = edge_pairs(etype)
    with np.errstate(all="ignore"):
        bad = faulty(a, b)
    with pytest.raises(AssertionError):
        assert_same_bits(bad, mul_reference(a, b))
