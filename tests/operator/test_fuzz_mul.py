"""Fuzzing mul: any call gives the right result or a documented ProfileError, losing nothing.

The default run is sized for CI; `make fuzz` runs the same properties with
HYPOTHESIS_PROFILE=long.
"""

import ml_dtypes
import numpy as np
from hypothesis import event, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sonnx_mul import ProfileError, mul
from sonnx_mul.dtypes import ALL_TYPES
from sonnx_mul.oracle.reference import mul_reference
from support import assert_same_bits

REFUSED = [
    np.bool_,
    np.complex64,
    np.float128,
    "U2",
    "M8[D]",
    ml_dtypes.float8_e5m2,
    ml_dtypes.int4,
]
DTYPES = [t.dtype for t in ALL_TYPES] * 4 + [np.dtype(d) for d in REFUSED]  # mostly valid
shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
nonzero_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)


@st.composite
def tensors(draw, dtype=None, shape=None):
    dtype = draw(st.sampled_from(DTYPES)) if dtype is None else dtype
    shape = draw(st.one_of(shapes, nonzero_shapes, nonzero_shapes)) if shape is None else shape
    if dtype.kind in "fVc" and dtype.itemsize in (1, 2, 4, 8):
        raw = draw(hnp.arrays(np.dtype(f"u{dtype.itemsize}"), shape))
        base = raw.view(dtype) if dtype.kind != "c" else raw.astype(dtype)
    elif dtype.kind in "iu":
        base = draw(hnp.arrays(dtype, shape))
    else:
        base = np.zeros(shape, dtype)
    how = draw(st.sampled_from(["c", "f", "strided", "swapped", "readonly", "reversed"]))
    if how == "f":
        return np.array(base, order="F")
    if how == "strided" and base.ndim:
        wide = np.zeros((*base.shape[:-1], 2 * base.shape[-1]), base.dtype)
        wide[..., ::2] = base
        return wide[..., ::2]
    if how == "swapped" and base.dtype.kind in "iuf" and base.dtype.itemsize > 1:
        return base.astype(base.dtype.newbyteorder())
    if how == "readonly":
        base.flags.writeable = False
    if how == "reversed" and base.ndim:
        return base.copy()[::-1]
    return base


@st.composite
def calls(draw):
    a = draw(tensors())
    same = draw(st.sampled_from([True, True, True, False]))
    b = draw(tensors(dtype=a.dtype, shape=a.shape)) if same else draw(tensors())
    out_kind = draw(st.sampled_from(["none"] * 3 + ["fresh", "a", "b", "overlap", "wrong"]))
    opset = draw(st.sampled_from([14] * 6 + [1, 6, 7, 13, 28, 0, 29, -1]))
    overflow = draw(st.sampled_from(["wrap"] * 4 + ["error"] * 3 + ["bad"]))
    return a, b, out_kind, opset, overflow


def make_out(kind, a, b):
    if kind == "fresh":
        return np.zeros(a.shape, a.dtype.newbyteorder("="))
    if kind == "a":
        return a
    if kind == "b":
        return b
    if kind == "overlap" and a.size > 1 and a.flags.writeable:
        return a.reshape(-1)[::-1].reshape(a.shape) if a.ndim else a
    if kind == "wrong":
        return np.zeros((*a.shape, 1), np.float32)
    return None


@given(calls())
def test_F_NOLOSS_fuzzed_calls_are_right_or_refused_and_lose_nothing(call):
    a, b, out_kind, opset, overflow = call
    out = make_out(out_kind, a, b)
    snapshots = [(x, x.tobytes()) for x in (a, b) if x is not out] + (
        [(out, out.tobytes())] if out is not None else []
    )
    try:
        expected = mul_reference(a, b, opset=opset, overflow=overflow)
    except ProfileError:
        expected = None
    try:
        result = mul(a, b, out=out, opset=opset, overflow=overflow)
    except ProfileError as err:
        event(f"refused: {err.requirements[0]}")
        assert isinstance(err, (ValueError, TypeError, ArithmeticError))
        assert err.requirements and str(err).startswith("[")
        for x, x0 in snapshots:  # inputs unchanged, out untouched, byte for byte
            assert x.tobytes() == x0
        return
    event("computed")
    assert expected is not None, "mul accepted what the reference kernel refuses"
    assert_same_bits(result, expected)
    if out is not None:
        assert result is out
    for x, x0 in snapshots:
        if x is not out:
            assert x.tobytes() == x0
