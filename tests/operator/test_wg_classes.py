"""The SONNX working group's test classes (tests-part2), per E_MUL tag.

One case per tag, class and type of ``wg_classes.CLASSES``, named
``<test>[<tag>-<class>-<type>]``: the test's name carries the registry id
that ``alignment`` maps to the tag (checked below), the case id names the
tag and the class, and the report lists each tag's classes with their cases.
Floats are compared by bit pattern with the reference oracle
(``mul_reference``: the pure-Python kernel), NaN positions included; each
class's own property (neutral, absorbing, commutative, distinct outputs) is
checked as well.
"""

from __future__ import annotations

import numpy as np
import pytest

from sonnx_mul import ProfileError, mul
from sonnx_mul.dtypes import ALL_TYPES, ElementType, by_onnx_name
from sonnx_mul.oracle.reference import mul_reference
from sonnx_mul.requirements import REGISTRY
from sonnx_mul_assurance.report import wg_classes
from sonnx_mul_assurance.report.alignment import tags
from sonnx_mul_assurance.report.evidence import ids_in_test_name
from support import assert_same_bits, bits_of, float_edge_bits, from_bits, int_edge_values


def _type(name: str) -> ElementType:
    t = by_onnx_name(name)
    assert t is not None, name
    return t


def _params(test: str) -> list[object]:
    return [
        pytest.param(tag, key, name, id=wg_classes.case_id(tag, key, name))
        for tag, key, name in wg_classes.cases()
        if wg_classes.TESTED_BY[tag] == test
    ]


def _pairs(xs: list[int], ys: list[int], t: ElementType) -> tuple[np.ndarray, np.ndarray]:
    """Every x against every y, as arrays of the type (bit patterns for floats)."""
    a = [x for x in xs for _ in ys]
    b = [y for _ in xs for y in ys]
    if t.is_float:
        return from_bits(a, t), from_bits(b, t)
    return np.array(a, t.dtype), np.array(b, t.dtype)


def _against_oracle(a: np.ndarray, b: np.ndarray, **kw: str) -> np.ndarray:
    """mul(a, b) and mul(b, a), each the oracle's bits; returns the oracle's a * b."""
    expected = mul_reference(a, b, **kw)
    assert_same_bits(mul(a, b, **kw), expected)
    assert_same_bits(mul(b, a, **kw), mul_reference(b, a, **kw))
    return expected


def _distinct(expected: np.ndarray, *operands: np.ndarray) -> None:
    """The expected outputs differ from each other and from either operand."""
    got = bits_of(expected).tolist()
    assert len(set(got)) == len(got), got
    for x in operands:
        assert all(g != o for g, o in zip(got, bits_of(x).tolist(), strict=True)), (got, x)


# --------------------------------------------------------------- float classes
def _class_operands(key: str, t: ElementType) -> list[int]:
    p, sign = t.sb - 1, 1 << (t.bits - 1)
    exp_ones = (1 << t.eb) - 1
    inf, qnan = exp_ones << p, (exp_ones << p) | (1 << (p - 1))
    max_normal = ((exp_ones - 1) << p) | ((1 << p) - 1)
    both = {
        "nan": qnan,
        "min_subnormal": 1,
        "max_subnormal": (1 << p) - 1,
        "min_normal": 1 << p,
        "max_normal": max_normal,
    }
    if key in both:
        return [both[key], both[key] | sign]
    return [{"pos_inf": inf, "neg_inf": inf | sign, "pos_zero": 0, "neg_zero": sign}[key]]


def _float_class(key: str, t: ElementType) -> None:
    edges = float_edge_bits(t)
    finite = [x for x in edges if (x >> (t.sb - 1)) & ((1 << t.eb) - 1) != (1 << t.eb) - 1]
    one = ((1 << (t.eb - 1)) - 1) << (t.sb - 1)
    sign = 1 << (t.bits - 1)
    if key == "one_neutral":
        xs = [x for x in edges if x in finite or x & ~sign == (((1 << t.eb) - 1) << (t.sb - 1))]
        a, b = _pairs(xs, [one], t)
        _against_oracle(a, b)
        assert bits_of(mul(a, b)).tolist() == xs and bits_of(mul(b, a)).tolist() == xs
    elif key == "zero_absorbing":
        a, b = _pairs(edges, [0, sign], t)
        _against_oracle(a, b)
        c = bits_of(mul(a, b)).tolist()
        for x, z, r in zip(bits_of(a).tolist(), bits_of(b).tolist(), c, strict=True):
            if x in finite:
                assert r == (x ^ z) & sign, (hex(x), hex(z), hex(r))
            else:
                assert np.isnan(float(from_bits([r], t)[0].astype(np.float64)))
    elif key == "commutative":
        a, b = _pairs(edges, edges, t)
        _against_oracle(a, b)
        assert_same_bits(mul(a, b), mul(b, a))
    elif key == "distinct_outputs":
        a = np.array([1.5, -2.5, 3.0, 0.75, -1.25, 5.0], t.dtype)
        b = np.array([2.5, 3.0, -0.5, 6.0, 7.0, -2.25], t.dtype)
        _distinct(_against_oracle(a, b), a, b)
    else:
        a, b = _pairs(_class_operands(key, t), edges, t)
        expected = _against_oracle(a, b)
        with np.errstate(invalid="ignore"):
            nan = np.isnan(expected.astype(np.float64))
        if key == "nan":
            assert nan.all()
        else:  # the class's products are not all one value
            assert len(set(bits_of(expected[~nan]).tolist())) > 1


# ------------------------------------------------------------- integer classes
def _int_class(key: str, t: ElementType) -> None:
    edges = int_edge_values(t)
    if key in ("one_neutral", "zero_absorbing", "minus_one"):
        k = {"one_neutral": 1, "zero_absorbing": 0, "minus_one": -1}[key]
        a, b = _pairs(edges, [k], t)
        _against_oracle(a, b)
        span = 1 << t.bits
        want = [((x * k - t.lo) % span) + t.lo for x in edges]
        assert mul(a, b).tolist() == want and mul(b, a).tolist() == want
    elif key in ("largest", "smallest"):
        a, b = _pairs([t.hi if key == "largest" else t.lo], edges, t)
        expected = _against_oracle(a, b)
        assert len(set(expected.tolist())) > 1
    elif key == "wraps":
        pairs = [(x, y) for x in edges for y in edges if not t.lo <= x * y <= t.hi]
        assert len(pairs) >= 4, pairs
        a = np.array([x for x, _ in pairs], t.dtype)
        b = np.array([y for _, y in pairs], t.dtype)
        expected = _against_oracle(a, b)
        span = 1 << t.bits
        for (x, y), c in zip(pairs, expected.tolist(), strict=True):
            assert (c - x * y) % span == 0 and t.lo <= c <= t.hi
    elif key == "commutative":
        a, b = _pairs(edges, edges, t)
        _against_oracle(a, b)
        assert mul(a, b).tolist() == mul(b, a).tolist()
    else:
        assert key == "distinct_outputs", key
        signs = [1, -1, -1, 1, -1] if t.signed else [1] * 5
        a = np.array([2 * signs[0], 3 * signs[1], 5, 7, 11 * signs[4]], t.dtype)
        b = np.array([13, 4, 6 * signs[2], 9, 10], t.dtype)
        _distinct(_against_oracle(a, b), a, b)


@pytest.mark.parametrize(("tag", "key", "name"), _params("test_F_FLOAT_wg_class"))
def test_F_FLOAT_wg_class(tag: str, key: str, name: str) -> None:
    _float_class(key, _type(name))


@pytest.mark.parametrize(("tag", "key", "name"), _params("test_F_WRAP_wg_class"))
def test_F_WRAP_wg_class(tag: str, key: str, name: str) -> None:
    _int_class(key, _type(name))


# --------------------------------------------------------- the exact product
@pytest.mark.parametrize(("tag", "key", "name"), _params("test_F_wg_class"))
def test_F_wg_class(tag: str, key: str, name: str) -> None:
    """E_MUL_REAL_FUNC_0010: the product in R, where the type represents it."""
    t = _type(name)
    mode = {} if t.is_float else {"overflow": "error"}  # checked: an inexact product raises
    if t.is_float:
        a = np.array([1.5, -2.5, 0.75, 3.0, -0.125], t.dtype)
        b = np.array([2.0, 1.25, -4.0, 0.5, 6.0], t.dtype)
    else:
        s = -1 if t.signed else 1
        a = np.array([2, 3 * s, 5, 7, 11], t.dtype)
        b = np.array([13, 4, 6, 9 * s, 10], t.dtype)
    exact = [x * y for x, y in zip(a.tolist(), b.tolist(), strict=True)]  # exact in doubles
    if key == "exact":
        assert _against_oracle(a, b, **mode).tolist() == exact
    elif key == "distinct_outputs":
        _distinct(_against_oracle(a, b, **mode), a, b)
    elif key == "commutative":
        assert mul(a, b, **mode).tolist() == mul(b, a, **mode).tolist() == exact
    else:
        k = 1 if key == "one_neutral" else 0
        assert key in ("one_neutral", "zero_absorbing"), key
        c = _against_oracle(a, np.full(a.shape, k, t.dtype), **mode)
        assert c.tolist() == [x * k for x in a.tolist()]


# ------------------------------------------------------ shapes and the type
@pytest.mark.parametrize(("tag", "key", "name"), _params("test_R4_wg_class"))
def test_R4_wg_class(tag: str, key: str, name: str) -> None:
    """*_CONSTR_A_0010 allows broadcasting; the profile (R4) does not."""
    t = _type(name)
    if key == "same_shape":
        for shape in ((), (3,), (2, 1, 3)):
            c = mul(np.ones(shape, t.dtype), np.ones(shape, t.dtype))
            assert c.shape == shape and c.dtype == t.dtype
    else:
        assert key == "broadcast_refused", key
        for sa, sb in (((2, 3), (3,)), ((2, 3), ()), ((2, 3), (1, 3))):
            with pytest.raises(ProfileError) as info:
                mul(np.ones(sa, t.dtype), np.ones(sb, t.dtype))
            assert "R4" in info.value.requirements


@pytest.mark.parametrize(("tag", "key", "name"), _params("test_R3_SAME_wg_class"))
def test_R3_SAME_wg_class(tag: str, key: str, name: str) -> None:
    t = _type(name)
    if key == "same_type":
        assert mul(np.ones(4, t.dtype), np.ones(4, t.dtype)).dtype == t.dtype
    else:
        assert key == "mixed_types", key
        others = [u for u in ALL_TYPES if u.onnx_name != t.onnx_name]
        assert any(u.is_float != t.is_float for u in others)
        for u in others:
            with pytest.raises(ProfileError) as info:
                mul(np.ones(4, t.dtype), np.ones(4, u.dtype))
            assert "R3-SAME" in info.value.requirements, (t.onnx_name, u.onnx_name)


@pytest.mark.parametrize(("tag", "key", "name"), _params("test_C1_wg_class"))
def test_C1_wg_class(tag: str, key: str, name: str) -> None:
    t = _type(name)
    assert key == "result_shape", key
    for shape in ((), (5,), (2, 3), (1, 2, 1, 3)):
        a, b = np.full(shape, 2, t.dtype), np.full(shape, 3, t.dtype)
        c = mul(a, b)
        assert c.shape == shape and c.dtype == t.dtype and c is not a and c is not b
        assert np.all(c == 6)


# ------------------------------------------------------------ traceability
def test_wg_cases_cover_every_class_of_every_tag_and_name_a_mapped_id() -> None:
    """Every E_MUL tag has classes, every class a case per type; each test's name
    carries a registry id that alignment maps to the tag (what the report uses)."""
    assert set(wg_classes.TAGS) == {t for rid in REGISTRY for t in tags(rid) if "E_MUL" in t}
    seen = {(tag, key) for tag, key, _ in wg_classes.cases()}
    for tag in wg_classes.TAGS:
        assert wg_classes.CLASSES[tag] and wg_classes.TYPES[tag], tag
        assert {c.key for c in wg_classes.CLASSES[tag]} == {k for t, k in seen if t == tag}
        test = wg_classes.TESTED_BY[tag]
        assert test in globals(), test
        ids = ids_in_test_name(test, list(REGISTRY))
        assert ids and all(tag in tags(rid) for rid in ids), (tag, test, ids)


def test_wg_float_class_negative_control_a_flushed_subnormal_fails() -> None:
    """The bit comparison with the oracle sees a kernel that flushes subnormals."""
    t = _type("float")
    a, b = _pairs(_class_operands("min_subnormal", t), float_edge_bits(t), t)
    expected = mul_reference(a, b)
    flushed = bits_of(expected) & np.uint32(0x80000000)
    sub = (bits_of(expected) & np.uint32(0x7F800000)) == 0
    bad = np.where(sub, flushed, bits_of(expected)).astype(np.uint32).view(np.float32)
    assert (bad.view(np.uint32) != bits_of(expected)).any()
    with pytest.raises(AssertionError):
        assert_same_bits(bad, expected)
    with pytest.raises(AssertionError):  # distinct outputs: a returned operand shows
        _distinct(np.array([2.0, 3.0], np.float32), np.array([2.0, 1.0], np.float32))
