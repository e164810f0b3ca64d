"""The C timing harness of `make bench` (benchmarks/kernel_cycles.c) calls the
kernel it names: each type's result through the harness equals ``mul``'s, bit
for bit, in both overflow modes.  No time is asserted (timing is the
benchmark's business)."""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import numpy as np
import pytest

from sonnx_mul import mul
from sonnx_mul.dtypes import ALL_TYPES, ElementType

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import kernel_cycles

CASES = [(t, False) for t in ALL_TYPES] + [(t, True) for t in ALL_TYPES if not t.is_float]


@pytest.fixture(scope="module")
def dll() -> ctypes.CDLL:
    return kernel_cycles.build()


@pytest.mark.parametrize(("etype", "checked"), CASES, ids=lambda x: getattr(x, "onnx_name", x))
def test_the_harness_runs_the_named_kernel(
    dll: ctypes.CDLL, etype: ElementType, checked: bool
) -> None:
    rng = np.random.default_rng(7)
    bits = rng.integers(0, np.iinfo(etype.uint_view).max, (2, 257), etype.uint_view, endpoint=True)
    a, b = bits[0].view(etype.dtype), bits[1].view(etype.dtype)
    if checked:  # no overflow: a times one
        b = np.ones_like(a)
    out = np.zeros_like(a)
    ticks, ns = kernel_cycles.time_class(dll, etype.dtype.name, a, b, checked, 3, out)
    want = mul(a, b, overflow="error" if checked else "wrap")
    assert np.array_equal(out.view(etype.uint_view), want.view(etype.uint_view))
    assert ticks >= 0 and ns > 0


def test_negative_control_another_kind_gives_other_bits(dll: ctypes.CDLL) -> None:
    # the comparison above can fail: int8 operands through the uint8 kernel
    # agree (same bits), but through the int16 one they do not
    a = np.arange(-128, 128, dtype=np.int8)
    out = np.zeros(a.size // 2, np.int16)
    kernel_cycles.time_class(dll, "int16", a.view(np.int16), a.view(np.int16), False, 1, out)
    assert not np.array_equal(out.view(np.int8), mul(a, a))


@pytest.mark.parametrize("etype", ALL_TYPES, ids=lambda t: t.onnx_name)
def test_the_call_cost_layers_compute_the_same_product(etype: ElementType) -> None:
    """Each layer call_cost.py times (mul, the plain lane, the glue; with and
    without out=) returns mul's bits: the table times calls that do the work."""
    import call_cost

    a, b = call_cost._operands(etype.dtype.name)
    want = mul(a, b).view(etype.uint_view)
    for out in (None, np.zeros_like(a)):
        cases = call_cost._cases(a, b, out)
        for name in ("mul", "_native.plain", "_native.multiply"):
            got = cases[name]()
            assert isinstance(got, np.ndarray) and np.array_equal(got.view(etype.uint_view), want)


def test_the_batch_timer_runs_the_kernel_with_and_without_the_bracket(dll: ctypes.CDLL) -> None:
    """sonnx_bench_batch_ns (call_cost.py's C side) writes the named kernel's products
    and, bracketed or not, leaves the caller's MXCSR as it was."""
    dll.sonnx_bench_batch_ns.restype = ctypes.c_uint64
    dll.sonnx_bench_batch_ns.argtypes = [
        ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
        ctypes.c_size_t, ctypes.c_int,
    ]  # fmt: skip
    a = np.arange(1, 17, dtype=np.int32)
    before = dll.sonnx_bench_get_mxcsr()
    for bracket in (0, 1):
        c = np.zeros_like(a)
        args = (a.ctypes.data, a.ctypes.data, c.ctypes.data)
        dll.sonnx_bench_batch_ns(kernel_cycles.KINDS["int32"], bracket, *args, a.size, 3)
        assert c.tolist() == (a * a).tolist()
        assert dll.sonnx_bench_get_mxcsr() == before
    assert dll.sonnx_bench_batch_ns(99, 0, *args, a.size, 3) == 0  # an unknown kind
