"""R3, R3-SAME, R3-OPSET: numerical, identical element types allowed by the opset."""

import datetime

import ml_dtypes
import numpy as np
import pytest

from sonnx_mul import ElementTypeError, mul
from sonnx_mul.dtypes import ALL_TYPES, MUL_VERSIONS, allowed_types

REFUSED_DTYPES = [
    np.bool_,
    np.complex64,
    np.complex128,
    np.object_,
    np.dtype("U4"),
    np.dtype("S4"),
    np.dtype("M8[s]"),
    np.dtype("m8[s]"),
    np.float128 if hasattr(np, "float128") else np.longdouble,
    ml_dtypes.float8_e4m3fn,
    ml_dtypes.float8_e5m2,
    ml_dtypes.int4,
    ml_dtypes.uint4,
    np.dtype([("x", np.float32)]),
]


def _array(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "M":
        return np.array([np.datetime64(datetime.datetime(2020, 1, 1))] * 2, dtype)
    return np.zeros(2, dtype)


@pytest.mark.parametrize("dtype", REFUSED_DTYPES, ids=str)
def test_R3_non_numerical_or_unlisted_types_are_refused(dtype):
    a = _array(dtype)
    with pytest.raises(ElementTypeError) as info:
        mul(a, a.copy())
    assert info.value.requirements == ("R3",)
    assert isinstance(info.value, TypeError)


def test_R3_SAME_mixed_types_are_refused_without_promotion():
    with pytest.raises(ElementTypeError) as info:
        mul(np.ones(3, np.float32), np.ones(3, np.float64))
    assert info.value.requirements == ("R3", "R3-SAME")
    with pytest.raises(ElementTypeError):
        mul(np.ones(3, np.int32), np.ones(3, np.uint32))


@pytest.mark.parametrize("opset", [1, 5, 6, 7, 12, 13, 14, 21])
def test_R3_OPSET_types_by_opset(opset):
    allowed = allowed_types(opset)
    for etype in ALL_TYPES:
        a = np.ones(2, etype.dtype)
        if etype in allowed:
            assert mul(a, a, opset=opset).dtype == etype.dtype
        else:
            with pytest.raises(ElementTypeError) as info:
                mul(a, a, opset=opset)
            assert info.value.requirements == ("R3", "R3-OPSET")


def test_R3_OPSET_int8_at_opset_13_and_bfloat16_at_opset_7_are_refused():
    with pytest.raises(ElementTypeError, match="Mul-13"):
        mul(np.ones(2, np.int8), np.ones(2, np.int8), opset=13)
    bf = np.ones(2, ml_dtypes.bfloat16)
    with pytest.raises(ElementTypeError, match="Mul-7"):
        mul(bf, bf, opset=7)


def test_R3_OPSET_every_type_is_reachable_at_the_default_opset():
    assert len(allowed_types(14)) == 12 and MUL_VERSIONS[-1] == 14
