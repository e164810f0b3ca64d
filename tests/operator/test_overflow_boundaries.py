"""F-CHECKED: the native kernel's overflow scan (through ``sonnx_mul._native``)
and numpy_loops.first_overflow_index (the dissimilar numpy implementation) at
every boundary, against exact Python-int oracles.

For each of the 8 integer types: products exactly at lo, hi, lo-1, hi+1
(-2**63 and mixed signs included) and every product straddling them that a
factor near an extreme can reach, the extreme factor in either operand, in
the first, a middle and the last block (first and last lane of a block),
through ``first_overflow_index`` itself and through ``mul(...,
overflow="error")`` on C, Fortran, strided, reversed, byte-swapped views
and with ``out=``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from sonnx_mul import _native, mul, numpy_loops
from sonnx_mul.dtypes import ElementType
from sonnx_mul.errors import IntegerOverflowError
from support import INT_TYPES, swapped

ROOT = Path(__file__).resolve().parents[2]
SMALL_CHUNK = 8
N_BLOCKS = 4
POSITIONS = (0, 1, SMALL_CHUNK - 1, SMALL_CHUNK, 2 * SMALL_CHUNK + 3, N_BLOCKS * SMALL_CHUNK - 1)


def _fits(etype: ElementType, value: int) -> bool:
    return etype.lo <= value <= etype.hi


def _in_range(etype: ElementType, value: int) -> bool:
    return etype.lo <= value <= etype.hi


def factor_candidates(etype: ElementType) -> list[int]:
    """Factors near the extremes, small factors, and powers of two (both signs)."""
    lo, hi, n = etype.lo, etype.hi, etype.bits
    xs = {0, 1, 2, 3, 7, lo, lo + 1, lo + 2, hi, hi - 1, hi // 2, hi // 2 + 1, hi // 3}
    xs |= (
        {1 << k for k in range(n)}
        | {(1 << k) + 1 for k in range(n)}
        | {(1 << k) - 1 for k in range(1, n)}
    )
    xs |= {-x for x in xs}
    return sorted(x for x in xs if _in_range(etype, x))


def boundary_pairs(etype: ElementType) -> list[tuple[int, int]]:
    """(x, y) in range whose product is at or next to lo or hi (both orders)."""
    pairs: set[tuple[int, int]] = set()
    bounds = (etype.lo, etype.hi, etype.lo - 1, etype.hi + 1)
    for x in factor_candidates(etype):
        if x == 0:
            pairs.add((0, etype.lo))
            pairs.add((0, etype.hi))
            continue
        for bound in bounds:
            q = bound // x
            for y in (q - 1, q, q + 1):
                if _in_range(etype, y):
                    pairs.add((x, y))
                    pairs.add((y, x))
    return sorted(pairs)


def exact_pairs(etype: ElementType) -> dict[str, tuple[int, int]]:
    """One pair whose product is exactly each of lo, hi, lo-1, hi+1 (when representable)."""
    found: dict[str, tuple[int, int]] = {}
    names = {etype.lo: "lo", etype.hi: "hi", etype.lo - 1: "lo-1", etype.hi + 1: "hi+1"}
    for x, y in boundary_pairs(etype):
        name = names.get(x * y)
        if name and name not in found and x not in (0, 1, -1):  # prefer non-trivial factors
            found[name] = (x, y)
    for x, y in boundary_pairs(etype):
        name = names.get(x * y)
        if name and name not in found:
            found[name] = (x, y)
    return found


def native_first(a: np.ndarray, b: np.ndarray) -> int:
    """The native kernel's first overflowing flat index, or -1 (nothing written either way)."""
    result = _native.multiply(a, b, None, True)
    return result if isinstance(result, int) else -1


def first_bad(a: np.ndarray, b: np.ndarray, etype: ElementType) -> int:
    """The exact oracle: first C-order index whose Python-int product leaves the range."""
    for i, (x, y) in enumerate(zip(a.reshape(-1).tolist(), b.reshape(-1).tolist(), strict=True)):
        if not _fits(etype, int(x) * int(y)):
            return i
    return -1


@pytest.mark.parametrize("etype", INT_TYPES, ids=lambda t: t.onnx_name)
def test_F_CHECKED_boundary_products_are_covered(etype: ElementType) -> None:
    exact = exact_pairs(etype)
    expected = {"lo", "hi", "hi+1"} | ({"lo-1"} if etype.signed else set())
    assert set(exact) >= expected, exact
    if etype.signed:
        # the int64 minimum asymmetry: lo * -1 overflows, lo * 1 does not
        assert (etype.lo, -1) in boundary_pairs(etype) and (-1, etype.lo) in boundary_pairs(etype)
        assert any(x * y == etype.lo and x < 0 < y for x, y in boundary_pairs(etype))
        assert any(x * y == etype.lo and y < 0 < x for x, y in boundary_pairs(etype))


@pytest.mark.parametrize("etype", INT_TYPES, ids=lambda t: t.onnx_name)
def test_F_CHECKED_every_boundary_pair_in_every_block(
    etype: ElementType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(numpy_loops, "OVERFLOW_CHUNK", SMALL_CHUNK)
    n = N_BLOCKS * SMALL_CHUNK
    pairs = boundary_pairs(etype)
    assert len(pairs) > 50
    for x, y in pairs:
        for position in POSITIONS:
            a = np.ones(n, etype.dtype)
            b = np.ones(n, etype.dtype)
            a[position], b[position] = x, y
            # a benign extreme elsewhere defeats the corner bound of the block
            other = (position + 3) % n
            a[other] = etype.hi
            expected = position if not _fits(etype, x * y) else -1
            assert first_bad(a, b, etype) == expected
            assert numpy_loops.first_overflow_index(a, b, etype) == expected, (x, y, position)
            assert native_first(a, b) == expected, (x, y, position)


@pytest.mark.parametrize("etype", INT_TYPES, ids=lambda t: t.onnx_name)
def test_F_CHECKED_first_of_two_overflows_across_blocks(
    etype: ElementType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(numpy_loops, "OVERFLOW_CHUNK", SMALL_CHUNK)
    n = N_BLOCKS * SMALL_CHUNK
    bad = [(x, y) for x, y in boundary_pairs(etype) if not _fits(etype, x * y)]
    for (x1, y1), (x2, y2) in zip(bad, bad[1:] + bad[:1], strict=True):
        for first, second in ((2, n - 1), (SMALL_CHUNK - 1, SMALL_CHUNK), (0, 1)):
            a = np.ones(n, etype.dtype)
            b = np.ones(n, etype.dtype)
            a[first], b[first], a[second], b[second] = x1, y1, x2, y2
            assert numpy_loops.first_overflow_index(a, b, etype) == first
            assert native_first(a, b) == first


@pytest.mark.parametrize("etype", INT_TYPES, ids=lambda t: t.onnx_name)
def test_F_CHECKED_real_chunk_size_first_middle_last_block(etype: ElementType) -> None:
    chunk = numpy_loops.OVERFLOW_CHUNK
    n = 3 * chunk + 5
    for x, y in exact_pairs(etype).values():
        for position in (0, chunk - 1, chunk, chunk + 1234, 3 * chunk, n - 1):
            for p, q in ((x, y), (y, x)):
                a = np.ones(n, etype.dtype)
                b = np.ones(n, etype.dtype)
                a[position], b[position] = p, q
                expected = position if not _fits(etype, p * q) else -1
                assert numpy_loops.first_overflow_index(a, b, etype) == expected
                assert native_first(a, b) == expected


def _kernel_block_bytes() -> int:
    """The native checked scan's block, in bytes of each operand (native/int_scans.py)."""
    found = re.search(r"^BLOCK_BYTES = (\d+)$", (ROOT / "native/int_scans.py").read_text(), re.M)
    assert found is not None
    return int(found.group(1))


@pytest.mark.parametrize("etype", INT_TYPES, ids=lambda t: t.onnx_name)
def test_F_CHECKED_native_scan_blocks_first_middle_last(etype: ElementType) -> None:
    """The native scan's blocks (a branch-free pass each, then element by
    element in the first block it flags): products at the bounds in every
    block pass; an overflow at either edge of a block, in the tail block and
    at the last element is found, also with a later one in another block;
    out is left untouched."""
    block = _kernel_block_bytes() // etype.dtype.itemsize
    n = 3 * block + 5
    fitting = [p for p in exact_pairs(etype).values() if _fits(etype, p[0] * p[1])]
    x, y = next(p for p in exact_pairs(etype).values() if not _fits(etype, p[0] * p[1]))
    a = np.ones(n, etype.dtype)
    b = np.ones(n, etype.dtype)
    for k, edge in enumerate((0, block - 1, block, 2 * block - 1, 3 * block, n - 1)):
        a[edge], b[edge] = fitting[k % len(fitting)]
    assert native_first(a, b) == -1
    exact = [int(p) * int(q) for p, q in zip(a.tolist(), b.tolist(), strict=True)]
    assert _native.multiply(a, b, None, True).tolist() == exact
    for position in (0, block - 1, block, 2 * block + 1, 3 * block, n - 1):
        for later in (None, min(position + block, n - 1)):
            bad_a, bad_b = a.copy(), b.copy()
            if later is not None and later != position:
                bad_a[later], bad_b[later] = x, y
            bad_a[position], bad_b[position] = x, y
            out = np.full(n, 3, etype.dtype)
            assert _native.multiply(bad_a, bad_b, out, True) == position
            assert (out == 3).all()  # nothing written


@pytest.mark.parametrize("etype", INT_TYPES, ids=lambda t: t.onnx_name)
def test_F_CHECKED_fresh_result_on_every_variant_at_block_boundaries(etype: ElementType) -> None:
    """The checked call into a fresh result (no out=: the fused kernel call,
    which stores each product's wrapped value as it scans), on every
    variant this CPU runs: with no overflow, the exact products; with the
    first overflow at 0, at either edge of a block, in the tail block or at
    the last element (a later one in another block changes nothing), its
    index.  Both as the Python oracle says and as the out= call gives (which
    writes nothing on an overflow)."""
    block = _kernel_block_bytes() // etype.dtype.itemsize
    n = 3 * block + 5
    fitting = [p for p in exact_pairs(etype).values() if _fits(etype, p[0] * p[1])]
    x, y = next(p for p in exact_pairs(etype).values() if not _fits(etype, p[0] * p[1]))
    a = np.ones(n, etype.dtype)
    b = np.ones(n, etype.dtype)
    for k, edge in enumerate((0, block - 1, block, 2 * block - 1, 3 * block, n - 1)):
        a[edge], b[edge] = fitting[k % len(fitting)]
    exact = [int(p) * int(q) for p, q in zip(a.tolist(), b.tolist(), strict=True)]
    assert first_bad(a, b, etype) == -1
    for isa in _native.isas():
        out = np.full(n, 3, etype.dtype)
        assert _native.multiply(a, b, out, True, isa) is out
        assert _native.multiply(a, b, None, True, isa).tolist() == exact == out.tolist(), isa
    for position in (0, block - 1, block, 2 * block + 1, 3 * block, n - 1):
        for later in (None, min(position + block, n - 1)):
            bad_a, bad_b = a.copy(), b.copy()
            if later is not None and later != position:
                bad_a[later], bad_b[later] = x, y
            bad_a[position], bad_b[position] = x, y
            assert first_bad(bad_a, bad_b, etype) == position
            for isa in _native.isas():
                assert _native.multiply(bad_a, bad_b, None, True, isa) == position, isa
                out = np.full(n, 3, etype.dtype)
                assert _native.multiply(bad_a, bad_b, out, True, isa) == position, isa
                assert (out == 3).all()  # nothing written


@pytest.mark.parametrize("etype", INT_TYPES, ids=lambda t: t.onnx_name)
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_F_CHECKED_fresh_result_error_names_the_first_overflow(
    etype: ElementType, where: str
) -> None:
    """mul(a, b, overflow="error") with no out= (the fused kernel call, which
    has stored wrapped values up to and past the overflow when it finds it):
    an overflow in the first, a middle or the last block raises the error
    with that index and the operands there, also with a second overflow
    next to it and one in the next block; no result is returned and
    the operands are unchanged."""
    block = _kernel_block_bytes() // etype.dtype.itemsize
    n = 3 * block + 5
    position = {"first": 3, "middle": block + block // 2, "last": n - 2}[where]
    pairs = [p for p in exact_pairs(etype).values() if not _fits(etype, p[0] * p[1])]
    # the middle block's overflow is the other bound's (signed types): each
    # of the block's two tests (below the least, above the greatest) alone
    x, y = pairs[-1] if where == "middle" else pairs[0]
    other = pairs[0] if where == "middle" else pairs[-1]
    a = np.full(n, 2, etype.dtype)
    b = np.full(n, 3, etype.dtype)
    a[position], b[position] = x, y
    a[position + 1], b[position + 1] = x, y
    a[min(position + block, n - 1)], b[min(position + block, n - 1)] = other
    a_before, b_before = a.copy(), b.copy()
    result = None
    with pytest.raises(IntegerOverflowError) as info:
        result = mul(a, b, overflow="error")
    assert result is None
    assert info.value.index == position
    assert (info.value.a_value, info.value.b_value) == (x, y)
    assert f"at flat index {position} " in str(info.value)
    assert np.array_equal(a, a_before) and np.array_equal(b, b_before)
    for isa in _native.isas():
        assert _native.multiply(a, b, None, True, isa) == position, isa


NPYITER_BLOCK = 8192
"""numpy's default buffer size: the native glue's blocks for strided operands."""


@pytest.mark.parametrize("etype", INT_TYPES, ids=lambda t: t.onnx_name)
def test_F_CHECKED_native_blocks_of_a_strided_operand(etype: ElementType) -> None:
    """Strided operands reach the kernel in buffered blocks: the first overflow
    is found at and around every block edge, and in C order across blocks."""
    n = 3 * NPYITER_BLOCK + 5
    x, y = next((p, q) for p, q in boundary_pairs(etype) if not _fits(etype, p * q))
    for position in (0, NPYITER_BLOCK - 1, NPYITER_BLOCK, 2 * NPYITER_BLOCK + 1, n - 1):
        a = np.ones(2 * n, etype.dtype)[::2]
        b = np.ones(n, etype.dtype)
        a[position], b[position] = x, y
        assert native_first(a, b) == position
        a[n - 1], b[n - 1] = x, y  # a later one changes nothing
        assert native_first(a, b) == position
        assert native_first(a[::-1], b[::-1]) == 0  # reversed: the element n - 1 comes first


def _c(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x)


def _fortran(x: np.ndarray) -> np.ndarray:
    return np.asfortranarray(x)


def _strided(x: np.ndarray) -> np.ndarray:
    big = np.zeros((x.shape[0] * 2, x.shape[1] * 3), x.dtype)
    big[::2, ::3] = x
    return big[::2, ::3]


def _reversed(x: np.ndarray) -> np.ndarray:
    return x[::-1, ::-1].copy()[::-1, ::-1]


LAYOUTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "C": _c,
    "F": _fortran,
    "strided": _strided,
    "reversed": _reversed,
    "byteswapped": swapped,
}


@pytest.mark.parametrize("etype", INT_TYPES, ids=lambda t: t.onnx_name)
@pytest.mark.parametrize(
    ("layout_a", "layout_b"),
    [(k, k) for k in LAYOUTS] + [("F", "strided"), ("reversed", "byteswapped")],
)
@pytest.mark.parametrize("with_out", [False, True])
def test_F_CHECKED_mul_error_mode_on_every_layout(
    etype: ElementType, layout_a: str, layout_b: str, with_out: bool
) -> None:
    shape = (5, 7)
    for x, y in exact_pairs(etype).values():
        for flat in (0, 17, 34):
            logical_a = np.ones(shape, etype.dtype)
            logical_b = np.ones(shape, etype.dtype)
            logical_a.flat[flat], logical_b.flat[flat] = x, y
            logical_a.flat[(flat + 5) % 35] = etype.hi  # defeats the corner bound
            a, b = LAYOUTS[layout_a](logical_a), LAYOUTS[layout_b](logical_b)
            assert np.array_equal(a, logical_a) and np.array_equal(b, logical_b)
            out = np.full(shape, 3, etype.dtype) if with_out else None
            before = None if out is None else out.copy()
            expected = first_bad(logical_a, logical_b, etype)
            if expected >= 0:
                with pytest.raises(IntegerOverflowError) as info:
                    mul(a, b, overflow="error", out=out)
                assert info.value.index == expected
                assert (info.value.a_value, info.value.b_value) == (x, y)
                if out is not None:
                    assert np.array_equal(out, before)  # nothing written
            else:
                c = mul(a, b, overflow="error", out=out)
                exact = [
                    int(p) * int(q) for p, q in zip(logical_a.flat, logical_b.flat, strict=True)
                ]
                assert c.reshape(-1).tolist() == exact
