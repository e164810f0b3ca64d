"""R1, R4, R1-DIMS: same shape, no broadcasting, positive dimensions."""

import numpy as np
import pytest

from sonnx_mul import ShapeError, mul
from sonnx_mul.dtypes import ALL_TYPES
from sonnx_mul.validation import broadcastable


@pytest.mark.parametrize(
    ("shape_a", "shape_b"),
    [((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 3), ()), ((4, 1), (1, 5)), ((1,), (7,)), ((), (1,))],
)
def test_R1_R4_broadcastable_shapes_are_refused(shape_a, shape_b):
    a, b = np.ones(shape_a, np.float32), np.ones(shape_b, np.float32)
    with pytest.raises(ShapeError) as info:
        mul(a, b)
    assert info.value.requirements == ("R1", "R4")
    assert "R4" in str(info.value) and "broadcast" in str(info.value)
    with pytest.raises(ShapeError):
        mul(b, a)


@pytest.mark.parametrize(("shape_a", "shape_b"), [((2, 3), (3, 2)), ((2,), (3,)), ((2, 3), (4,))])
def test_R1_non_broadcastable_shapes_violate_R1_only(shape_a, shape_b):
    with pytest.raises(ShapeError) as info:
        mul(np.ones(shape_a, np.int32), np.ones(shape_b, np.int32))
    assert info.value.requirements == ("R1",)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 0, 2)])
def test_R1_DIMS_zero_size_dimension_is_refused(shape):
    with pytest.raises(ShapeError) as info:
        mul(np.ones(shape, np.float64), np.ones(shape, np.float64))
    assert info.value.requirements == ("R1-DIMS",)


def test_R1_DIMS_rank_zero_is_allowed_and_keeps_its_shape():
    c = mul(np.array(3.0, np.float32), np.array(-2.0, np.float32))
    assert type(c) is np.ndarray, "a 0-d result must be an array, not a numpy scalar"
    assert c.shape == () and c.dtype == np.float32 and c[()] == -6.0
    for etype in ALL_TYPES:
        x = np.ones((), etype.dtype)
        for kwargs in ({}, {"overflow": "error"}, {"out": np.zeros((), etype.dtype)}):
            assert type(mul(x, x, **kwargs)) is np.ndarray, (etype.onnx_name, kwargs)


def test_R4_broadcastable_agrees_with_numpy():
    shapes = [(), (1,), (3,), (2, 3), (1, 3), (2, 1), (4, 2, 3), (4, 1, 1), (5,)]
    for sa in shapes:
        for sb in shapes:
            try:
                np.broadcast_shapes(sa, sb)
                expected = True
            except ValueError:
                expected = False
            assert broadcastable(sa, sb) is expected, (sa, sb)


def test_C1_result_shape_equals_input_shape():
    for shape in [(), (1,), (5,), (2, 3), (2, 1, 4), (1, 1, 1, 1, 1)]:
        a = np.full(shape, 2, np.int16)
        assert mul(a, a).shape == shape
