"""R2, R2-DENSE: dense ndarrays only, no implicit conversion, no sparse tensors."""

import numpy as np
import pytest
import scipy.sparse

from sonnx_mul import NotAnArrayError, ProfileError, SparseTensorError, mul

A = np.ones((2, 2), np.float32)


@pytest.mark.parametrize(
    "sparse",
    [
        scipy.sparse.csr_matrix(np.eye(2, dtype=np.float32)),
        scipy.sparse.coo_array(np.eye(2, dtype=np.float32)),
        scipy.sparse.csc_matrix(np.eye(2, dtype=np.float32)),
    ],
    ids=lambda s: type(s).__name__,
)
def test_R2_scipy_sparse_inputs_are_refused(sparse):
    for a, b in ((sparse, A), (A, sparse)):
        with pytest.raises(SparseTensorError) as info:
            mul(a, b)
        assert info.value.requirements == ("R2",)
        assert isinstance(info.value, TypeError)
        assert "sparse" in str(info.value)


@pytest.mark.parametrize(
    "not_an_array",
    [
        [[1.0, 1.0], [1.0, 1.0]],
        ((1.0, 1.0), (1.0, 1.0)),
        2.0,
        2,
        np.float32(2.0),
        np.int64(3),
        memoryview(b"1234"),
        None,
        np.ma.masked_array(A, mask=[[0, 1], [0, 0]]),
        np.matrix([[1.0, 1.0], [1.0, 1.0]], np.float32),
    ],
    ids=lambda x: type(x).__name__,
)
def test_R2_DENSE_lists_scalars_and_array_subclasses_are_not_converted(not_an_array):
    for a, b in ((not_an_array, A), (A, not_an_array)):
        with pytest.raises(NotAnArrayError) as info:
            mul(a, b)
        assert info.value.requirements == ("R2-DENSE",)
        assert isinstance(info.value, ProfileError) and isinstance(info.value, TypeError)
        message = str(info.value)
        assert "no implicit conversion" in message and "sparse" not in message
        if not isinstance(not_an_array, np.ndarray):
            assert "is not a numpy.ndarray" in message
        assert not isinstance(info.value, SparseTensorError)
