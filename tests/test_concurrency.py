"""Concurrency: many threads calling mul at once give identical results; no mutable module state."""

import importlib
import pkgutil
import threading

import numpy as np
import pytest

import sonnx_mul
from sonnx_mul import IntegerOverflowError, fastpath, mul
from support import assert_same_bits

MUTABLE = (list, dict, set, bytearray)


def test_F_many_threads_on_shared_read_only_inputs_agree(monkeypatch):
    monkeypatch.setattr(fastpath, "PARALLEL_MIN_ELEMENTS", 4096)  # nest the threaded path too
    rng = np.random.default_rng(9)
    a = rng.standard_normal((64, 100)).astype(np.float32)
    b = rng.standard_normal((64, 100)).astype(np.float32)
    ints = rng.integers(-(2**40), 2**40, 6400, dtype=np.int64)
    for x in (a, b, ints):
        x.flags.writeable = False
    expected = mul(a, b)
    results: list[np.ndarray] = []
    problems: list[BaseException] = []
    barrier = threading.Barrier(16)

    def worker() -> None:
        try:
            barrier.wait()
            for _ in range(50):
                results.append(mul(a, b))
                with pytest.raises(IntegerOverflowError):
                    mul(ints, ints, overflow="error")
        except BaseException as err:
            problems.append(err)

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not problems, problems[:3]
    assert len(results) == 16 * 50
    for result in results:
        assert_same_bits(result, expected)


def test_F_ieee_quiet_state_does_not_leak_into_the_caller():
    before = np.geterr()
    mul(np.array([1e308]), np.array([1e308]))
    assert np.geterr() == before


def test_no_mutable_module_state():
    modules = [sonnx_mul] + [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(sonnx_mul.__path__, "sonnx_mul.")
        if not info.name.endswith("__main__")
    ]
    found = [
        f"{module.__name__}.{name}"
        for module in modules
        for name, value in vars(module).items()
        if not name.startswith("__") and isinstance(value, MUTABLE)
    ]
    assert not found, f"module-level mutable containers: {found}"
