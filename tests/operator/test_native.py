"""F: ``mul`` runs the proved native kernel (sonnx_mul._native), for every type,
mode and layout, and numpy's multiply is its second, dissimilar implementation.

numpy's multiply is made to raise while ``mul`` runs, so a result can only
come from the kernel; then the two implementations are compared back to
back, bit for bit (NaN as NaN): every int8/uint8 pair in both modes, every
float16/bfloat16 value against a set of edge and random values (all 2^32
pairs run in ``make verify-exhaustive``), edge and random sets for the
other types.
"""

from __future__ import annotations

import contextlib
import os
import platform
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from sonnx_mul import IntegerOverflowError, _native, api, kernel, mul, numpy_loops
from sonnx_mul.dtypes import ALL_TYPES, ElementType
from support import (
    FLOAT_TYPES,
    INT_TYPES,
    assert_same_bits,
    float_edge_bits,
    from_bits,
    int_edge_values,
    swapped,
    unaligned,
)

IDS = [t.onnx_name for t in ALL_TYPES]
NPYITER_BLOCK = 8192
"""numpy's default buffer size: the blocks in which the glue feeds strided operands."""


def numpy_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy's multiply (the dissimilar implementation), IEEE exceptions ignored."""
    with np.errstate(all="ignore"):
        return np.multiply(a, b)


def random_values(etype: ElementType, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if etype.is_float:
        patterns = rng.integers(0, 1 << etype.bits, n, dtype=np.uint64, endpoint=False)
        return patterns.astype(etype.uint_view).view(etype.dtype)
    return rng.integers(etype.lo, etype.hi, n, dtype=etype.dtype, endpoint=True)


def edge_values(etype: ElementType) -> np.ndarray:
    if etype.is_float:
        return from_bits(float_edge_bits(etype), etype)
    return np.array(int_edge_values(etype), etype.dtype)


def operands(etype: ElementType, n: int = 600, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of edge values, then random values, n elements at least."""
    edges = edge_values(etype)
    a = np.concatenate([np.repeat(edges, edges.size), random_values(etype, n, seed)])
    b = np.concatenate([np.tile(edges, edges.size), random_values(etype, n, seed + 1)])
    return a, b


# ---------------------------------------------------------------- the kernel runs
class NativeCalls:
    """Counts calls of sonnx_mul._native.multiply and of mul's plain lane
    sonnx_mul._native.plain (C functions: seen by a profile hook)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event == "c_call" and (arg is _native.multiply or arg is _native.plain):
            self.count += 1


@contextlib.contextmanager
def numpy_multiply_refused() -> Iterator[NativeCalls]:
    """numpy's multiply (the ufunc the old fast path called, and numpy_loops) raises,
    and the calls of the native function are counted."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("numpy's multiply was called")

    calls = NativeCalls()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(np, "multiply", refuse)
        patch.setattr(numpy_loops, "multiply", refuse)
        sys.setprofile(calls)
        try:
            yield calls
        finally:
            sys.setprofile(None)


def test_F_the_kernel_in_use_is_the_native_one() -> None:
    assert kernel.NAME == "native"
    assert api._MULTIPLY is _native.multiply is kernel.multiply
    assert api._PLAIN is _native.plain is kernel.plain
    assert _native.FLT_EVAL_METHOD == 0


@pytest.mark.parametrize("etype", ALL_TYPES, ids=IDS)
@pytest.mark.parametrize("mode", ["wrap", "error"])
def test_F_mul_runs_the_native_kernel_for_every_type_and_mode(
    etype: ElementType, mode: str
) -> None:
    rng = np.random.default_rng(7)
    a = rng.integers(0, 12, (6, 5)).astype(etype.dtype)
    b = rng.integers(0, 10, (6, 5)).astype(etype.dtype)
    expected = (a.astype(np.float64) * b.astype(np.float64)).astype(etype.dtype)
    layouts: list[Callable[[np.ndarray], np.ndarray]] = [
        lambda x: x,
        lambda x: x.T,
        lambda x: x[::-1, ::2],
        lambda x: x[2:3, 1:2].reshape(()),
    ]
    full_checks = "".join(["wr", "ap"]) if mode == "wrap" else "".join(["err", "or"])
    # 4 calls per layout: the plain lane, a mode string that is not the
    # interned one, out= C-ordered and Fortran-ordered; every layout but the
    # first goes through the glue's block iterator. Each call is one or two
    # native calls: the plain lane, then, when the lane does not take the
    # call (a Fortran-ordered out), the full checks' multiply.
    got: list[tuple[np.ndarray, np.ndarray]] = []
    with numpy_multiply_refused() as calls:
        for layout in layouts:
            x, y, want = layout(a), layout(b), np.ascontiguousarray(layout(expected))
            got.append((mul(x, y, overflow=mode), want))
            got.append((mul(x, y, overflow=full_checks), want))
            out = np.zeros(x.shape, etype.dtype)
            got.append((mul(x, y, out=out, overflow=mode), want))
            assert got[-1][0] is out
            out_f = np.zeros(x.shape, etype.dtype, order="F")
            got.append((mul(x, y, out=out_f, overflow=mode), want))
    assert 4 * len(layouts) <= calls.count <= 8 * len(layouts)
    for result, want in got:
        assert_same_bits(np.ascontiguousarray(result), want)


def test_negative_control_the_profile_hook_sees_a_call_of_numpy_loops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The counting hook is what shows the native function ran: with the
    # kernel swapped for numpy's loops, it counts nothing.
    monkeypatch.setattr(api, "_PLAIN", None)  # as when numpy's loops are selected
    monkeypatch.setattr(api, "_MULTIPLY", numpy_loops.multiply)
    calls = NativeCalls()
    sys.setprofile(calls)
    try:
        mul(np.ones(3, np.float32), np.ones(3, np.float32))
    finally:
        sys.setprofile(None)
    assert calls.count == 0


# ---------------------------------------------------------------- back to back with numpy
@pytest.mark.parametrize("etype", [t for t in INT_TYPES if t.bits == 8], ids=lambda t: t.onnx_name)
def test_F_WRAP_every_8_bit_pair_equals_numpy(etype: ElementType) -> None:
    values = np.arange(etype.lo, etype.hi + 1).astype(etype.dtype)
    a, b = np.repeat(values, values.size), np.tile(values, values.size)
    assert a.size == 65536
    assert_same_bits(mul(a, b), numpy_product(a, b))
    exact = a.astype(np.int64) * b.astype(np.int64)
    assert np.array_equal(mul(a, b).astype(np.int64) % 256, exact % 256)


@pytest.mark.parametrize("etype", [t for t in INT_TYPES if t.bits == 8], ids=lambda t: t.onnx_name)
def test_F_CHECKED_every_8_bit_pair_overflows_exactly_where_the_product_leaves_the_range(
    etype: ElementType,
) -> None:
    """Walks every pair through the checked kernel: each call returns the next
    overflowing index (or the products of the rest), which must be exactly the
    next pair whose exact product leaves [lo, hi]."""
    values = np.arange(etype.lo, etype.hi + 1).astype(etype.dtype)
    a, b = np.repeat(values, values.size), np.tile(values, values.size)
    exact = a.astype(np.int64) * b.astype(np.int64)
    outside = np.flatnonzero((exact < etype.lo) | (exact > etype.hi))
    found, start = [], 0
    while start < a.size:
        result = _native.multiply(a[start:], b[start:], None, True)
        if isinstance(result, int):
            found.append(start + result)
            start += result + 1
        else:
            assert np.array_equal(result.astype(np.int64), exact[start:])
            break
    assert np.array_equal(found, outside)
    assert np.array_equal(numpy_loops.first_overflow_index(a, b, etype), outside[0])


@pytest.mark.parametrize(
    "etype", [t for t in FLOAT_TYPES if t.bits == 16], ids=lambda t: t.onnx_name
)
def test_F_FLOAT_every_16_bit_value_times_edges_and_randoms_equals_numpy(
    etype: ElementType,
) -> None:
    values = np.arange(1 << 16, dtype=np.uint16).view(etype.dtype)
    partners = np.concatenate([edge_values(etype), random_values(etype, 34, 16)])
    a = np.tile(values, partners.size)
    b = np.repeat(partners, values.size)
    assert a.size == 64 * 65536
    assert_same_bits(mul(a, b), numpy_product(a, b))
    assert_same_bits(mul(b, a), numpy_product(a, b))  # commutes


@pytest.mark.parametrize("etype", ALL_TYPES, ids=IDS)
def test_F_edge_and_random_sets_equal_numpy(etype: ElementType) -> None:
    a, b = operands(etype, n=200_000, seed=etype.bits)
    assert_same_bits(mul(a, b), numpy_product(a, b))


@pytest.mark.parametrize("etype", INT_TYPES, ids=lambda t: t.onnx_name)
def test_F_CHECKED_agrees_with_the_numpy_scan_on_edge_and_random_sets(etype: ElementType) -> None:
    a, b = operands(etype, n=5000, seed=etype.bits + 1)
    for start in range(0, a.size, 97):
        x, y = a[start:], b[start:]
        expected = numpy_loops.first_overflow_index(x, y, etype)
        if expected < 0:
            assert_same_bits(mul(x, y, overflow="error"), numpy_product(x, y))
            continue
        with pytest.raises(IntegerOverflowError) as info:
            mul(x, y, overflow="error")
        assert info.value.index == expected


# ---------------------------------------------------------------- layouts
# Each layout makes a copy: tests write into them.
def _c(x: np.ndarray) -> np.ndarray:
    return np.array(x, order="C", copy=True)


def _fortran(x: np.ndarray) -> np.ndarray:
    return np.array(x, order="F", copy=True)


def _strided(x: np.ndarray) -> np.ndarray:
    big = np.zeros((x.shape[0] * 2, x.shape[1] * 3), x.dtype)
    big[::2, ::3] = x
    return big[::2, ::3]


def _negative(x: np.ndarray) -> np.ndarray:
    return x[::-1, ::-1].copy()[::-1, ::-1]


def _transposed(x: np.ndarray) -> np.ndarray:
    return x.T.copy().T


def _read_only(x: np.ndarray) -> np.ndarray:
    y = x.copy()
    y.flags.writeable = False
    return y


LAYOUTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "C": _c,
    "F": _fortran,
    "strided": _strided,
    "negative": _negative,
    "transposed": _transposed,
    "byteswapped": swapped,
    "readonly": _read_only,
    "unaligned": unaligned,
}
OUT_LAYOUTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "C": _c,
    "F": _fortran,
    "strided": _strided,
    "negative": _negative,
    "unaligned": unaligned,
}
LAYOUT_PAIRS = [(k, k) for k in LAYOUTS] + [
    ("C", "F"),
    ("negative", "byteswapped"),
    ("F", "strided"),
]


def swappable(etype: ElementType, *layouts: str) -> bool:
    # ml_dtypes has no byte-swapped bfloat16.
    return not (etype.onnx_name == "bfloat16" and "byteswapped" in layouts)


@pytest.mark.parametrize(
    ("etype", "layout_a", "layout_b"),
    [
        pytest.param(etype, x, y, id=f"{etype.onnx_name}-{x}-{y}")
        for etype in ALL_TYPES
        for x, y in LAYOUT_PAIRS
        if swappable(etype, x, y)
    ],
)
@pytest.mark.parametrize("shape", [(7, 9), (97, 300)], ids=["small", "blocks"])
def test_F_LAYOUT_every_layout_equals_numpy_with_and_without_out(
    etype: ElementType, layout_a: str, layout_b: str, shape: tuple[int, int]
) -> None:
    """(97, 300) has more elements than numpy's buffer (several blocks) and
    than GIL_RELEASE_MIN_ELEMENTS (the GIL is released)."""
    n = shape[0] * shape[1]
    assert n < NPYITER_BLOCK or n > max(2 * NPYITER_BLOCK, _native.GIL_RELEASE_MIN_ELEMENTS)
    flat_a, flat_b = operands(etype, n=n, seed=n)
    logical_a, logical_b = flat_a[:n].reshape(shape), flat_b[-n:].reshape(shape)
    expected = numpy_product(logical_a, logical_b)
    a, b = LAYOUTS[layout_a](logical_a), LAYOUTS[layout_b](logical_b)
    a_before, b_before = a.copy(), b.copy()
    c = mul(a, b)
    assert c.flags.c_contiguous and c.flags.owndata and c.dtype.isnative
    assert_same_bits(c, expected)
    for name, make in OUT_LAYOUTS.items():
        out = make(np.zeros(shape, etype.dtype))
        assert mul(a, b, out=out) is out, name
        assert_same_bits(out, expected)
    assert_same_bits(a, a_before)  # inputs never modified
    assert_same_bits(b, b_before)


@pytest.mark.parametrize("etype", ALL_TYPES, ids=IDS)
def test_F_LAYOUT_zero_d_and_one_element(etype: ElementType) -> None:
    a, b = operands(etype, n=0)
    for x, y in zip(a[:50], b[:50], strict=True):
        x0, y0 = np.asarray(x), np.asarray(y)
        c = mul(x0, y0)
        assert c.shape == () and type(c) is np.ndarray
        assert_same_bits(c, numpy_product(x0, y0).reshape(()))
        out = np.zeros((), etype.dtype)
        assert mul(x0, y0, out=out) is out
        assert_same_bits(out, c)
        assert_same_bits(mul(x0.reshape(1, 1, 1), y0.reshape(1, 1, 1)), c.reshape(1, 1, 1))


# ---------------------------------------------------------------- out aliasing
@pytest.mark.parametrize("etype", ALL_TYPES, ids=IDS)
@pytest.mark.parametrize("layout", list(OUT_LAYOUTS))
def test_C1_OUT_out_may_be_exactly_a_or_b(etype: ElementType, layout: str) -> None:
    flat_a, flat_b = operands(etype, n=NPYITER_BLOCK * 3)
    n = (flat_a.size // 64) * 64
    logical_a, logical_b = flat_a[:n].reshape(64, -1), flat_b[:n].reshape(64, -1)
    expected = numpy_product(logical_a, logical_b)
    a, b = OUT_LAYOUTS[layout](logical_a), OUT_LAYOUTS[layout](logical_b)
    assert mul(a, b, out=a) is a
    assert_same_bits(a, expected)
    a = OUT_LAYOUTS[layout](logical_a)
    assert mul(a, b, out=b) is b
    assert_same_bits(b, expected)
    b = OUT_LAYOUTS[layout](logical_b)
    view = a[...]  # another view of exactly A's elements
    assert mul(a, b, out=view) is view
    assert_same_bits(a, expected)
    square = OUT_LAYOUTS[layout](logical_a)
    mul(square, square, out=square)  # a is b is out
    assert_same_bits(square, numpy_product(logical_a, logical_a))


# ---------------------------------------------------------------- errors write nothing
@pytest.mark.parametrize("etype", INT_TYPES, ids=lambda t: t.onnx_name)
@pytest.mark.parametrize("layout", list(OUT_LAYOUTS))
def test_F_CHECKED_an_overflow_writes_nothing_in_any_layout(
    etype: ElementType, layout: str
) -> None:
    shape = (64, 3 * NPYITER_BLOCK // 64 + 1)
    logical_a = np.ones(shape, etype.dtype)
    logical_b = np.full(shape, 2 if etype.hi > 2 else 1, etype.dtype)
    logical_a[-1, -1] = etype.hi  # the last element in C order overflows
    logical_b[-1, -1] = 2
    a, b = OUT_LAYOUTS[layout](logical_a), OUT_LAYOUTS[layout](logical_b)
    for out in (OUT_LAYOUTS[layout](np.full(shape, 5, etype.dtype)), a, b):
        before, a_before, b_before = out.copy(), a.copy(), b.copy()
        with pytest.raises(IntegerOverflowError) as info:
            mul(a, b, out=out, overflow="error")
        assert info.value.index == logical_a.size - 1
        assert_same_bits(out, before)
        assert_same_bits(a, a_before)
        assert_same_bits(b, b_before)


def test_C1_OUT_the_glue_refuses_what_its_memory_safety_needs_and_writes_nothing() -> None:
    a = np.arange(1, 21, dtype=np.int32)
    b = a[::-1].copy()
    base = np.zeros(40, np.int32)
    cases: list[tuple[tuple[object, ...], type[Exception]]] = [
        ((a, b, base[1:21], False), type(None)),  # disjoint from a and b: fine
        ((a, b, a[::-1], False), ValueError),  # overlaps A without being A
        ((a[:10], a[10:], a[5:15], False), ValueError),
        ((a, b, np.zeros(20, np.int64), False), TypeError),
        ((a, b, np.zeros(20, ">i4"), False), TypeError),
        ((a, b, np.zeros(21, np.int32), False), ValueError),
        ((a, b.astype(np.int64), None, False), TypeError),
        ((a, b[:10], None, False), ValueError),
        ((a[:0], b[:0], None, False), ValueError),
        ((a.astype(bool), b.astype(bool), None, False), TypeError),
        ((a.astype(np.complex64), b.astype(np.complex64), None, False), TypeError),
        ((a.astype(np.longdouble), b.astype(np.longdouble), None, False), TypeError),
        (([1], b, None, False), TypeError),
        ((a, b, [0] * 20, False), TypeError),
        ((a, b), TypeError),
    ]
    for args, error in cases:
        snapshot = a.copy(), b.copy(), base.copy()
        if error is type(None):
            _native.multiply(*args)
            continue
        with pytest.raises(error):
            _native.multiply(*args)
        assert np.array_equal(a, snapshot[0]) and np.array_equal(b, snapshot[1])
    frozen = np.zeros(20, np.int32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        _native.multiply(a, b, frozen, False)


def test_F_the_glue_names_the_kernel_kinds() -> None:
    import ml_dtypes

    names = {t.onnx_name: _native.kind(t.dtype) for t in ALL_TYPES}
    assert names["float"] == "float32" and names["double"] == "float64"
    assert names["bfloat16"] == "bfloat16" and names["float16"] == "float16"
    assert all(names[t.onnx_name] == t.onnx_name for t in INT_TYPES)
    assert _native.kind(np.dtype(np.longlong)) == "int64"
    assert _native.kind(np.dtype(np.ulonglong)) == "uint64"  # numpy's other 8-byte unsigned
    assert _native.kind(np.dtype(">u2")) == "uint16"
    for other in (bool, np.complex64, np.longdouble, "M8[s]", ml_dtypes.float8_e4m3fn, object):
        assert _native.kind(np.dtype(other)) is None
    with pytest.raises(TypeError, match=r"numpy\.dtype"):
        _native.kind(np.float32)  # a scalar type, not a dtype


def test_F_the_glue_refuses_an_isa_that_is_no_variant_name() -> None:
    """multiply's optional isa: a str naming a variant; anything else raises, and
    a str that is not UTF-8 keeps Python's own error."""
    a = np.arange(1, 5, dtype=np.int16)
    assert _native.multiply(a, a, None, False, _native.isa()).tolist() == [1, 4, 9, 16]
    for isa, error in ((3, TypeError), ("sse9", ValueError), ("\ud800", UnicodeEncodeError)):
        with pytest.raises(error):
            _native.multiply(a, a, None, False, isa)


# ---------------------------------------------------------------- build and selection
def test_F_FLOAT_the_build_flags_pin_ieee_semantics() -> None:
    flags = _native.BUILD_FLAGS
    kernel_part, glue_part = flags.split("; glue: ")
    for part in (kernel_part, glue_part):
        assert "-ffp-contract=off" in part and "-fno-fast-math" in part
        assert "-fexcess-precision=standard" in part
        assert "-ffast-math" not in part.split()
    if platform.machine() == "x86_64":
        assert "-msse2" in kernel_part and "-mfpmath=sse" in kernel_part
    assert _native.COMPILER.startswith("gcc ")
    assert f"{_native.COMPILER}: {flags}" == kernel.BUILD


def _import_in_subprocess(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != kernel.ENV} | env
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=environment
    )


BLOCK_NATIVE = "import sys; sys.modules['sonnx_mul._native'] = None; "


def test_F_without_the_extension_import_fails_with_a_clear_message() -> None:
    result = _import_in_subprocess(BLOCK_NATIVE + "import sonnx_mul")
    assert result.returncode != 0
    assert "ImportError" in result.stderr
    assert "native kernel" in result.stderr and "make install" in result.stderr
    assert "SONNX_MUL_KERNEL=numpy" in result.stderr  # the documented opt-in, named


def test_F_numpy_loops_only_when_asked_for_and_the_selftest_says_so() -> None:
    code = (
        BLOCK_NATIVE + "import numpy as np, sonnx_mul; from sonnx_mul import kernel, api; "
        "print(kernel.NAME, api._PLAIN_LANE, sonnx_mul.selftest().ok); "
        "print(sonnx_mul.mul(np.array([3], np.int8), np.array([5], np.int8)))"
    )
    result = _import_in_subprocess(code, SONNX_MUL_KERNEL="numpy")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["numpy", "False", "True", "[15]"]
    wrong = _import_in_subprocess("import sonnx_mul", SONNX_MUL_KERNEL="fast")
    assert wrong.returncode != 0 and "expected 'native'" in wrong.stderr
