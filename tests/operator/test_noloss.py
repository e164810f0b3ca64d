"""F-NOLOSS: inputs are never modified; nothing is written when an error is raised."""

import numpy as np
import pytest
import scipy.sparse

from sonnx_mul import IntegerOverflowError, ProfileError, mul
from support import assert_same_bits


def test_F_NOLOSS_inputs_unchanged_by_a_successful_call():
    a = np.array([[1.5, -2.0], [np.inf, 3.0]], np.float32)
    b = np.array([[2.0, 0.0], [0.0, -1.0]], np.float32)
    a0, b0 = a.copy(), b.copy()
    mul(a, b)
    mul(a, b, out=np.empty_like(a))
    assert_same_bits(a, a0)
    assert_same_bits(b, b0)


BAD_CALLS = [
    ("R1", lambda a, b, out: mul(a, b[:1], out=out)),
    ("R2", lambda a, b, out: mul(a, scipy.sparse.csr_matrix(b), out=out)),
    ("R3", lambda a, b, out: mul(a, b.astype(np.int64), out=out)),
    ("R3-OPSET", lambda a, b, out: mul(a, b, out=out, opset=0)),
    ("F-MODE", lambda a, b, out: mul(a, b, out=out, overflow="clip")),
    ("C1-OUT", lambda a, b, out: mul(a, b, out=out[:, :1])),
    ("F-CHECKED", lambda a, b, out: mul(a, b, out=out, overflow="error")),
]


@pytest.mark.parametrize(("req", "call"), BAD_CALLS, ids=[x[0] for x in BAD_CALLS])
def test_F_NOLOSS_nothing_written_on_error(req, call):
    a = np.array([[1, 2, 3], [4, 2**30, 6]], np.int32)
    b = np.array([[1, 1, 1], [1, 4, 1]], np.int32)  # 2**30 * 4 overflows int32
    out = np.full((2, 3), -7, np.int32)
    snapshots = [x.copy() for x in (a, b, out)]
    with pytest.raises(ProfileError) as info:
        call(a, b, out)
    assert req in info.value.requirements
    for x, x0 in zip((a, b, out), snapshots, strict=True):
        assert_same_bits(x, x0)


@pytest.mark.parametrize("target", ["a", "b"])
def test_F_NOLOSS_aliased_out_is_untouched_when_overflow_is_detected(target):
    a = np.array([7, 2**62, 9], np.int64)
    b = np.array([2, 4, 3], np.int64)
    a0, b0 = a.copy(), b.copy()
    with pytest.raises(IntegerOverflowError) as info:
        mul(a, b, out=a if target == "a" else b, overflow="error")
    assert info.value.index == 1
    assert np.array_equal(a, a0) and np.array_equal(b, b0)
