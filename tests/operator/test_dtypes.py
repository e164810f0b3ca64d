"""R3-OPSET: the element-type table by opset matches the ONNX schemas."""

import ml_dtypes
import numpy as np
import onnx
import onnx.defs
import pytest

from sonnx_mul.dtypes import ALL_TYPES, MAX_KNOWN_OPSET, allowed_types, by_onnx_name, element_type


@pytest.mark.parametrize("opset", range(1, MAX_KNOWN_OPSET + 1))
def test_R3_OPSET_table_equals_the_onnx_schema(opset):
    schema = onnx.defs.get_schema("Mul", opset)
    (constraint,) = schema.type_constraints
    expected = {s.removeprefix("tensor(").removesuffix(")") for s in constraint.allowed_type_strs}
    assert {t.onnx_name for t in allowed_types(opset)} == expected


def test_R3_OPSET_newest_onnx_opset_is_known():
    assert onnx.defs.onnx_opset_version() <= MAX_KNOWN_OPSET or pytest.fail(
        "onnx knows a newer opset: check whether Mul changed, then raise MAX_KNOWN_OPSET"
    )


def test_R3_OPSET_an_opset_past_the_table_takes_the_newest_mul_and_below_1_is_refused():
    """Computed, not looked up: an opset newer than the table's (a model from a newer
    ONNX) gets the newest Mul version's types; opset 0 has no Mul at all."""
    newest = allowed_types(MAX_KNOWN_OPSET)
    assert allowed_types(MAX_KNOWN_OPSET + 1) == allowed_types(MAX_KNOWN_OPSET + 50) == newest
    for opset in (0, -1):
        with pytest.raises(ValueError):
            allowed_types(opset)


def test_bfloat16_is_the_ml_dtypes_type():
    assert by_onnx_name("bfloat16").dtype == np.dtype(ml_dtypes.bfloat16)


def test_element_type_accepts_any_byte_order_and_only_profile_types():
    for etype in ALL_TYPES:
        assert element_type(etype.dtype) is etype
        if etype.dtype.itemsize > 1 and etype.onnx_name != "bfloat16":
            assert element_type(etype.dtype.newbyteorder()) is etype
    for other in (np.bool_, np.complex64, np.object_, "U3", "M8[s]", ml_dtypes.float8_e4m3fn):
        assert element_type(np.dtype(other)) is None


@pytest.mark.parametrize("etype", ALL_TYPES, ids=lambda t: t.onnx_name)
def test_formats_match_numpy(etype):
    if etype.is_float:
        info = ml_dtypes.finfo(etype.dtype)
        assert info.nmant == etype.sb - 1 and info.bits == etype.bits
    else:
        info = np.iinfo(etype.dtype)
        assert (info.min, info.max) == (etype.lo, etype.hi)
