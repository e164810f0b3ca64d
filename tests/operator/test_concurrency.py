"""Concurrency: threads calling mul at once give identical results; no mutable module state.

The kernel has no global state and the glue releases the GIL around large
loops, so calls from several threads run side by side on their own data.
"""

import importlib
import pkgutil
import threading

import numpy as np
import pytest

import sonnx_mul
from sonnx_mul import IntegerOverflowError, _native, mul
from support import assert_same_bits

MUTABLE = (list, dict, set, bytearray)


def test_F_many_threads_on_shared_read_only_inputs_agree():
    rng = np.random.default_rng(9)
    n = 2 * _native.GIL_RELEASE_MIN_ELEMENTS  # the GIL is released: threads really overlap
    a = rng.standard_normal((64, n // 64)).astype(np.float32)
    b = rng.standard_normal((64, n // 64)).astype(np.float32)
    ints = rng.integers(-(2**40), 2**40, n, dtype=np.int64)
    strided = np.asfortranarray(a)
    for x in (a, b, ints, strided):
        x.flags.writeable = False
    expected = mul(a, b)
    results: list[np.ndarray] = []
    problems: list[BaseException] = []
    barrier = threading.Barrier(8)

    def worker() -> None:
        try:
            barrier.wait()
            out = np.empty_like(a)
            for _ in range(20):
                results.append(mul(a, b))
                results.append(mul(strided, b).copy())
                mul(a, b, out=out)
                results.append(out.copy())
                with pytest.raises(IntegerOverflowError):
                    mul(ints, ints, overflow="error")
        except BaseException as err:  # re-raised in the test's thread
            problems.append(err)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not problems, problems[:3]
    assert len(results) == 8 * 20 * 3
    for result in results:
        assert_same_bits(result, expected)


def test_F_mul_starts_no_thread():
    before = threading.active_count()
    n = 4 * _native.GIL_RELEASE_MIN_ELEMENTS
    mul(np.ones(n, np.float32), np.ones(n, np.float32))
    assert threading.active_count() == before


def test_no_mutable_module_state():
    modules = [sonnx_mul] + [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(sonnx_mul.__path__, "sonnx_mul.")
        if not info.name.endswith("__main__")
    ]
    assert _native in modules
    found = [
        f"{module.__name__}.{name}"
        for module in modules
        for name, value in vars(module).items()
        if not name.startswith("__") and isinstance(value, MUTABLE)
    ]
    assert found == [], f"module-level mutable containers: {found}"
