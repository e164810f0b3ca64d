"""R3-OPSET, F-MODE: the opset and overflow arguments."""

import numpy as np
import pytest

from sonnx_mul import ArgumentError, ProfileError, mul

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


F32 = np.ones(3, np.float32)
VOCABULARY = {
    "mixed types": (
        lambda: mul(F32, F32.astype(np.float64)),
        "A is float (float32) and B is double (float64)",
    ),
    "not a profile type": (
        lambda: mul(F32.astype(bool), F32.astype(bool)),
        "A has element type numpy bool, which is not",
    ),
    "not in the opset": (
        lambda: mul(F32.astype(np.int8), F32.astype(np.int8), opset=13),
        "int8 is not allowed by Mul-13",
    ),
    "out element type": (
        lambda: mul(F32, F32, out=np.ones(3, np.float64)),
        "out is double (float64), C is float (float32) in native byte order",
    ),
    "byte order": (
        lambda: mul(F32, F32, out=np.ones(3, ">f4")),
        "out is float (float32, non-native byte order), C is float (float32)",
    ),
}


@pytest.mark.parametrize(("call", "said"), VOCABULARY.values(), ids=VOCABULARY)
def test_messages_name_types_as_onnx_with_the_numpy_name(call, said):
    with pytest.raises(ProfileError) as info:
        call()
    assert said in str(info.value)


def test_a_profile_error_names_requirements_that_exist() -> None:
    """Every refusal names registry ids: an error naming none, or an id the
    registry lacks, is refused where it is made; the registry answers by id."""
    from sonnx_mul import requirements

    with pytest.raises(ValueError, match="at least one requirement"):
        ProfileError("no id", ())
    with pytest.raises(KeyError, match="unknown requirement id 'NOPE'"):
        requirements.get("NOPE")
    assert requirements.get("F-FLOAT").parent == "F"
    assert "F-FLOAT" in requirements.children("F") and requirements.children("F-FLOAT") == ()
