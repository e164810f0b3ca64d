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
