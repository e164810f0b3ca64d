"""R3-OPSET, F-MODE: the opset and overflow arguments."""

import numpy as np
import pytest

from sonnx_mul import ArgumentError, mul

A = np.arange(1, 5, dtype=np.int32)


@pytest.mark.parametrize("opset", [0, -1, 29, 10**6, 14.0, "14", True, None])
def test_R3_OPSET_bad_opset_is_a_value_error(opset):
    with pytest.raises(ArgumentError) as info:
        mul(A, A, opset=opset)
    assert info.value.requirements == ("R3-OPSET",)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("overflow", ["saturate", "WRAP", "", None, 1, b"wrap"])
def test_F_MODE_bad_overflow_is_a_value_error(overflow):
    with pytest.raises(ArgumentError) as info:
        mul(A, A, overflow=overflow)
    assert info.value.requirements == ("F-MODE",)
    assert isinstance(info.value, ValueError)


def test_F_MODE_overflow_mode_does_not_change_float_semantics():
    x = np.array([3.0e38, 2.0], np.float32)
    assert np.array_equal(mul(x, x, overflow="error"), mul(x, x, overflow="wrap"))


def test_arguments_are_keyword_only():
    with pytest.raises(TypeError):
        mul(A, A, None)  # type: ignore[misc]
