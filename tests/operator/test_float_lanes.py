"""F-FLOAT: float bits through every lane of ``mul``, bit for bit against an
exact oracle (fractions, tests/support.py) and softfloat.

Lanes: the inline small lane of api.mul, ``quiet_multiply`` (``out=``), the
full validation path (a strided or byte-swapped operand), and the threaded
path (>= PARALLEL_MIN_ELEMENTS, with and without ``out=``). Each test checks
that the lane it means is the lane that ran (spies), so a change of routing
cannot leave a lane untested.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from sonnx_mul import api, fastpath, mul
from sonnx_mul.dtypes import ElementType
from sonnx_mul.oracle import softfloat
from support import FLOAT_TYPES, assert_same_bits, float_edge_bits, from_bits, oracle_mul_bits


def edge_operands(etype: ElementType) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair of edge values, and the exactly rounded products (NaN: a quiet NaN)."""
    edges = float_edge_bits(etype)
    xs = [x for x in edges for _ in edges]
    ys = [y for _ in edges for y in edges]
    expected = []
    for x, y in zip(xs, ys, strict=True):
        exact = oracle_mul_bits(x, y, etype)
        soft = softfloat.mul_bits(x, y, etype.eb, etype.sb)
        if exact is None:
            assert softfloat.is_nan_bits(soft, etype.eb, etype.sb), (x, y)
            exact = softfloat.quiet_nan(etype.eb, etype.sb)
        else:
            assert soft == exact, (hex(x), hex(y), hex(soft), hex(exact))
        expected.append(exact)
    return from_bits(xs, etype), from_bits(ys, etype), from_bits(expected, etype)


class Spy:
    """Counts the calls of a function it replaces."""

    def __init__(self, real: Callable[..., Any]) -> None:
        self.real = real
        self.calls = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.real(*args, **kwargs)


@pytest.fixture
def spies(monkeypatch: pytest.MonkeyPatch) -> dict[str, Spy]:
    found = {
        "api.quiet_multiply": Spy(api.quiet_multiply),
        "api.multiply_into": Spy(api.multiply_into),
        "threaded": Spy(fastpath._threaded_multiply),
    }
    monkeypatch.setattr(api, "quiet_multiply", found["api.quiet_multiply"])
    monkeypatch.setattr(api, "multiply_into", found["api.multiply_into"])
    monkeypatch.setattr(fastpath, "_threaded_multiply", found["threaded"])
    return found


def counts(spies: dict[str, Spy]) -> dict[str, int]:
    return {k: s.calls for k, s in spies.items()}


@pytest.mark.parametrize("etype", FLOAT_TYPES, ids=lambda t: t.onnx_name)
def test_F_FLOAT_inline_small_lane(etype: ElementType, spies: dict[str, Spy]) -> None:
    a, b, expected = edge_operands(etype)
    for mode in ("wrap", "error"):
        assert_same_bits(mul(a, b, overflow=mode), expected)
    big = np.zeros(2 * a.size, a.dtype)
    big[::2] = a
    assert_same_bits(mul(big[::2], b), expected)  # strided A: still the plain lane
    assert_same_bits(mul(a.reshape(30, 30).T, b.reshape(30, 30).T).T.reshape(-1), expected)
    assert counts(spies) == {"api.quiet_multiply": 0, "api.multiply_into": 0, "threaded": 0}


@pytest.mark.parametrize("etype", FLOAT_TYPES, ids=lambda t: t.onnx_name)
def test_F_FLOAT_quiet_multiply_out_lane(etype: ElementType, spies: dict[str, Spy]) -> None:
    a, b, expected = edge_operands(etype)
    out = np.zeros_like(a)
    assert mul(a, b, out=out) is out
    assert_same_bits(out, expected)
    assert_same_bits(fastpath.quiet_multiply(a, b), expected)
    assert counts(spies) == {"api.quiet_multiply": 1, "api.multiply_into": 0, "threaded": 0}


@pytest.mark.parametrize("etype", FLOAT_TYPES, ids=lambda t: t.onnx_name)
def test_F_FLOAT_full_validation_lane(etype: ElementType, spies: dict[str, Spy]) -> None:
    # out= a new view of A's memory (allowed: exactly A) misses the plain
    # lane, which refuses any out sharing memory with A that is not A itself.
    a, b, expected = edge_operands(etype)
    inplace = a.copy()
    mul(inplace, b, out=inplace[...])
    assert_same_bits(inplace, expected)
    assert spies["api.multiply_into"].calls == 1
    if etype.onnx_name != "bfloat16":  # ml_dtypes has no byte-swapped bfloat16
        swapped = b.astype(b.dtype.newbyteorder())
        assert_same_bits(mul(a, swapped), expected)
        out = np.zeros_like(a)
        mul(a, swapped, out=out)
        assert_same_bits(out, expected)
        assert spies["api.multiply_into"].calls == 3
    assert spies["threaded"].calls == 0


@pytest.mark.parametrize("etype", FLOAT_TYPES, ids=lambda t: t.onnx_name)
@pytest.mark.parametrize("threads", [2, 3])
def test_F_FLOAT_threaded_lane(
    etype: ElementType, threads: int, spies: dict[str, Spy], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fastpath, "_THREADS", threads)
    a, b, expected = edge_operands(etype)
    n = fastpath.PARALLEL_MIN_ELEMENTS + 7  # chunks of unequal size
    big_a, big_b, big_expected = (np.resize(x, n) for x in (a, b, expected))
    assert_same_bits(mul(big_a, big_b), big_expected)
    out = np.zeros_like(big_a)
    assert mul(big_a, big_b, out=out) is out
    assert_same_bits(out, big_expected)
    assert spies["threaded"].calls == 2
