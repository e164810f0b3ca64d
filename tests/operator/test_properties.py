"""Property-based tests (hypothesis): shapes, dtypes, layouts, aliasing."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sonnx_mul import ProfileError, ShapeError, mul
from sonnx_mul.dtypes import ALL_TYPES
from sonnx_mul.oracle.reference import mul_reference
from support import assert_same_bits

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=5)


@st.composite
def operand_pairs(draw):
    etype = draw(st.sampled_from(ALL_TYPES))
    shape = draw(shapes)
    elements = hnp.from_dtype(etype.uint_view) if etype.is_float else hnp.from_dtype(etype.dtype)
    a = draw(
        hnp.arrays(etype.uint_view if etype.is_float else etype.dtype, shape, elements=elements)
    )
    b = draw(hnp.arrays(a.dtype, shape, elements=elements))
    if etype.is_float:
        a, b = a.view(etype.dtype), b.view(etype.dtype)
    return etype, a, b


def relayout(x, how):
    if how == "fortran":
        return np.array(x, order="F")  # asfortranarray turns 0-d into 1-d
    if how == "strided" and x.ndim:
        padded = np.zeros((*x.shape[:-1], x.shape[-1] * 2), x.dtype)
        padded[..., ::2] = x
        return padded[..., ::2]
    if how == "readonly":
        y = x.copy()
        y.flags.writeable = False
        return y
    return x


@given(operand_pairs(), st.sampled_from(["c", "fortran", "strided", "readonly"]))
def test_F_result_equals_the_reference_kernel_for_any_layout(pair, how):
    etype, a, b = pair
    a0, b0 = a.copy(), b.copy()
    c = mul(relayout(a, how), b)
    assert c.shape == a.shape and c.dtype == etype.dtype and c.flags.c_contiguous
    assert_same_bits(c, mul_reference(a, b))
    assert_same_bits(a, a0)
    assert_same_bits(b, b0)


@given(operand_pairs(), st.sampled_from(["a", "b", "fresh"]))
def test_C1_OUT_aliasing_gives_the_same_bits(pair, target):
    etype, a, b = pair
    expected = mul_reference(a, b)
    out = {"a": a, "b": b, "fresh": np.empty(a.shape, etype.dtype)}[target]
    assert mul(a, b, out=out) is out
    assert_same_bits(out, expected)


@given(shapes, shapes)
def test_R1_R4_any_two_different_shapes_are_refused(shape_a, shape_b):
    a, b = np.ones(shape_a, np.float32), np.ones(shape_b, np.float32)
    if shape_a == shape_b:
        assert_same_bits(mul(a, b), a)
        return
    try:
        mul(a, b)
    except ShapeError as err:
        try:
            np.broadcast_shapes(shape_a, shape_b)
            assert err.requirements == ("R1", "R4")
        except ValueError:
            assert err.requirements == ("R1",)
    else:
        raise AssertionError("different shapes were accepted")


@given(operand_pairs(), st.integers(-3, 30), st.sampled_from(["wrap", "error", "other"]))
def test_any_opset_and_mode_gives_a_result_or_a_profile_error(pair, opset, overflow):
    _etype, a, b = pair
    try:
        c = mul(a, b, opset=opset, overflow=overflow)
    except ProfileError as err:
        assert err.requirements and str(err).startswith("[")
    else:
        assert_same_bits(c, mul_reference(a, b, opset=opset, overflow=overflow))
