"""The registry's map to the SONNX working group's newest Mul text (ericjenn/sonnx
ops/mul.md, "Revision 2026-10-03", tags E_MUL_...), and this project's semantics
checked against each tag's own statement, quoted in each test.

Where the two texts differ (broadcasting, rank-0 broadcasting, zero-sized dims,
bfloat16), the tests show that this project follows the profile of docs/spec/sonnx_mul_profile.md.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import sonnx_mul
from sonnx_mul.dtypes import ALL_TYPES, ElementType, by_onnx_name
from sonnx_mul.requirements import REGISTRY
from sonnx_mul_assurance.conform import cases
from sonnx_mul_assurance.report.alignment import (
    BY_REQUIREMENT,
    SONNX_SOURCE,
    SONNX_TAGS,
    alignment,
    tags,
)
from sonnx_mul_assurance.report.report import build_report, write_report
from support import decode

REPO = Path(__file__).resolve().parents[2]
NEWEST_TAGS = {t for t in SONNX_TAGS if t.startswith("E_MUL_")}
STATUSES = {"agree", "differ", "extension", "not covered"}


def _t(name: str) -> ElementType:
    t = by_onnx_name(name)
    assert t is not None
    return t


# ------------------------------------------------------------------ the map (data)
def test_every_newest_tag_is_mapped_and_every_mapping_names_a_known_tag() -> None:
    mapped = {t for rid in REGISTRY for t in tags(rid) if t.startswith("E_MUL_")}
    assert mapped == NEWEST_TAGS
    for kind in ("REAL", "FLOAT", "INT", "UINT"):
        assert f"E_MUL_{kind}_FUNC_0010" in NEWEST_TAGS
        assert f"E_MUL_{kind}_CONSTR_A_0010" in NEWEST_TAGS
        assert f"E_MUL_{kind}_CONSTR_C_0010" in NEWEST_TAGS
    for kind in ("FLOAT", "INT", "UINT"):
        assert f"E_MUL_{kind}_CONSTR_A_0020" in NEWEST_TAGS
    assert SONNX_SOURCE["newest_repository"] == "ericjenn/sonnx"
    assert SONNX_SOURCE["newest_path"] == "ops/mul.md"
    assert "2026-10-03" in SONNX_SOURCE["newest_revision"]


def test_alignment_says_where_the_texts_differ_and_the_profile_is_followed() -> None:
    assert set(BY_REQUIREMENT) <= set(REGISTRY), "the map names only registry ids"
    for rid in REGISTRY:
        assert alignment(rid).status in STATUSES, rid
        if alignment(rid).status == "differ":
            assert alignment(rid).follows.startswith("profile"), rid
    differ = {rid for rid in REGISTRY if alignment(rid).status == "differ"}
    assert {"R1", "R4", "C1", "R1-DIMS", "R3", "R3-OPSET"} <= differ
    assert alignment("F-FLOAT").status == "agree"
    assert alignment("F-WRAP").status == "agree"
    assert alignment("F-CHECKED").status == "extension"
    assert "broadcast" in alignment("R4").note
    assert "zero-sized" in alignment("R1-DIMS").note
    assert "bfloat16" in alignment("R3").note


def test_report_shows_the_tag_map_and_the_differences(tmp_path: Path) -> None:
    report = build_report(REPO, tmp_path / "no-evidence", probe_tools=False)
    write_report(report, tmp_path, REPO)
    md = (tmp_path / "traceability.md").read_text()
    html = (tmp_path / "traceability.html").read_text()
    for rid in REGISTRY:
        got = report["requirements"][rid]["sonnx_alignment"]
        want = alignment(rid)
        assert got == {"status": want.status, "note": want.note, "follows": want.follows}
    assert "The profile and the newest SONNX text" in md and "ericjenn/sonnx" in md
    # The document model renders a registry id as code (a link in the HTML).
    row_r4 = next(line for line in md.splitlines() if line.startswith("| `R4` | E_MUL_"))
    assert "differ" in row_r4 and "profile" in row_r4
    for tag in NEWEST_TAGS:
        assert tag in md and tag in html
    assert "Newest SONNX text: <strong>differ</strong>" in html


# ------------------------------------------------------------------ E_MUL_FLOAT_FUNC_0010
FLOAT_FUNC_0010 = (
    "NaN if Ã[i] or B̃[i] is NaN, or if one of them is a zero and the other an infinity; "
    "Ã[i]·B̃[i] if the exact product is representable in the type of A and B; "
    "round(Ã[i]·B̃[i]) otherwise, where round(x) is the value of x rounded to the nearest "
    "value of the type of A and B using the roundTiesToEven attribute of IEEE 754, the "
    "exponent range of the type being unbounded: a magnitude whose nearest value exceeds "
    "the largest finite value of the type of A and B gives an infinity of the sign of x. "
    "[...] every quiet NaN of the type of A and B is a conforming result. [...] The rounding "
    "may make the result subnormal, or, when the exact product is smaller in magnitude than "
    "half the smallest subnormal value of the type, zero. The result takes the sign of the "
    "exact product in every case, zero and infinity included."
)


def tag_round(x: Fraction, negative: bool, t: ElementType) -> int:
    """round(x) of E_MUL_FLOAT_FUNC_0010, literally: nearest, ties to even, on the grid of
    the type with an unbounded exponent range above (subnormal spacing below), then an
    infinity when the rounded magnitude exceeds the largest finite value."""
    m, bias = t.sb - 1, (1 << (t.eb - 1)) - 1
    sign = 1 << (t.bits - 1) if negative else 0
    mag = abs(x)
    if mag == 0:
        return sign
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    while Fraction(2) ** e > mag:
        e -= 1
    while Fraction(2) ** (e + 1) <= mag:
        e += 1
    quantum = Fraction(2) ** (max(e, 1 - bias) - m)  # no upper bound on e: unbounded range
    q, r = divmod(mag, quantum)
    q = int(q) + (1 if r > quantum / 2 or (r == quantum / 2 and int(q) % 2 == 1) else 0)
    rounded = q * quantum
    largest = (2 - Fraction(1, 1 << m)) * Fraction(2) ** bias
    if rounded > largest:
        return sign | (((1 << t.eb) - 1) << m)  # "gives an infinity of the sign of x"
    if rounded < Fraction(2) ** (1 - bias):  # subnormal or zero: kept, never flushed
        return sign | int(rounded / Fraction(2) ** (1 - bias - m))
    e = rounded.numerator.bit_length() - rounded.denominator.bit_length()
    while Fraction(2) ** e > rounded:
        e -= 1
    return sign | ((e + bias) << m) | int((rounded / Fraction(2) ** e - 1) * (1 << m))


def tag_float_mul(xa: int, xb: int, t: ElementType) -> int | None:
    """The result bits E_MUL_FLOAT_FUNC_0010 specifies; None for its NaN case."""
    va, vb = decode(xa, t), decode(xb, t)
    negative = bool((xa ^ xb) >> (t.bits - 1))  # "the sign of the exact product"
    if "nan" in (va, vb):
        return None
    if isinstance(va, str) or isinstance(vb, str):
        if va == 0 or vb == 0:
            return None  # a zero and an infinity
        inf = ((1 << t.eb) - 1) << (t.sb - 1)
        return (1 << (t.bits - 1)) | inf if negative else inf
    return tag_round(va * vb, negative, t)


def _pairs(t: ElementType, n: int) -> tuple[np.ndarray, np.ndarray]:
    edges = cases.edge_pairs(t)
    rnd = cases.random_pairs(t, n, 2026)
    return np.concatenate([edges.a, rnd.a]), np.concatenate([edges.b, rnd.b])


def _tag_mismatches(t: ElementType, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> list[str]:
    """The pairs where ``c`` is not what E_MUL_FLOAT_FUNC_0010 specifies."""
    u = t.uint_view
    quiet = 1 << (t.sb - 2)
    exp_mask = ((1 << t.eb) - 1) << (t.sb - 1)
    bad = []
    for xa, xb, xc in zip(*(x.view(u).astype(np.uint64).tolist() for x in (a, b, c)), strict=True):
        want = tag_float_mul(xa, xb, t)
        # None: "every quiet NaN of the type ... is a conforming result"
        nan_ok = xc & exp_mask == exp_mask and bool(xc & quiet)
        ok = nan_ok if want is None else xc == want
        if not ok:
            bad.append(f"{xa:#x} * {xb:#x} = {xc:#x}, tag: {want if want is None else hex(want)}")
    return bad


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float", "double"])
def test_F_FLOAT_is_E_MUL_FLOAT_FUNC_0010(name: str) -> None:
    """Quoted: E_MUL_FLOAT_FUNC_0010 (see FLOAT_FUNC_0010), on the type's edge set (ties in
    every binade, overflow and underflow thresholds, specials) and random pairs. bfloat16
    is not in the newest text; this project gives it the same statement (SONNX_DECISIONS)."""
    assert "roundTiesToEven" in FLOAT_FUNC_0010
    t = _t(name)
    a, b = _pairs(t, 1000 if t.bits == 64 else 6000)
    assert _tag_mismatches(t, a, b, sonnx_mul.mul(a, b)) == []


def test_tag_oracle_negative_control_flushing_and_truncating_results_fail() -> None:
    """The literal oracle rejects a flushed subnormal, a truncated tie, a finite overflow."""
    t = _t("float16")
    a, b = _pairs(t, 0)
    c = sonnx_mul.mul(a, b)
    bits = c.view(np.uint16)
    subnormal = ((bits & 0x7C00) == 0) & ((bits & 0x03FF) != 0)
    flushed = np.where(subnormal, bits & 0x8000, bits).astype(np.uint16).view(np.float16)
    assert _tag_mismatches(t, a, b, flushed)
    with np.errstate(invalid="ignore"):
        exact = a.astype(np.float64) * b.astype(np.float64)
        up = np.abs(c.astype(np.float64)) > np.abs(exact)
    truncated = np.where(up, bits - 1, bits).astype(np.uint16).view(np.float16)
    bad = _tag_mismatches(t, a, b, truncated)
    assert any(x.endswith("0x7c00") or x.endswith("0xfc00") for x in bad)  # overflow kept finite
    assert len(bad) > 10


def test_E_MUL_FLOAT_FUNC_0010_examples_3_and_4() -> None:
    """Quoted examples of the tag: 0.1 x 0.2 ~ 0.020000000000000004; 1e308 x 1e308 = +inf;
    2.2250738585072014e-308 x 0.25 = 5.562684646268003e-309 (subnormal, not flushed)."""
    a = np.array([0.1, 1.0, 1e308, 2.2250738585072014e-308, -2.2250738585072014e-308, 0.0, -0.0])
    b = np.array([0.2, 3.0, 1e308, 0.25, 0.25, -1.0, -0.0])
    c = sonnx_mul.mul(a, b)
    assert c.tolist()[:5] == [0.020000000000000004, 3.0, float("inf"), 5.562684646268003e-309,
                              -5.562684646268003e-309]  # fmt: skip
    assert np.signbit(c[5]) and c[5] == 0 and not np.signbit(c[6]) and c[6] == 0


def test_E_MUL_FLOAT_FUNC_0010_example_2_signs_and_nan() -> None:
    """Quoted: A = [1.0, +inf, -inf, +0, -0, -0], B = [1.0, +0, -2.0, -3.0, +5.0, -0],
    C = [1.0, NaN, +inf, -0, -0, +0]."""
    for dtype in (np.float16, np.float32, np.float64):
        a = np.array([1.0, np.inf, -np.inf, 0.0, -0.0, -0.0], dtype)
        b = np.array([1.0, 0.0, -2.0, -3.0, 5.0, -0.0], dtype)
        c = sonnx_mul.mul(a, b)
        assert c[0] == 1.0 and np.isnan(c[1]) and c[2] == np.inf
        assert [bool(np.signbit(x)) for x in c[3:]] == [True, True, False]


# ------------------------------------------------------------------ E_MUL_(U)INT_FUNC_0010
INT_FUNC_0010 = (
    "C[i] ≡ Ã[i]·B̃[i] (mod 2^n), C[i] a value of the type of A and B, where Ã[i]·B̃[i] is "
    "the exact product of the two elements, the product in Z of the two integers [...] "
    "exactly one value of the type satisfies the congruence, and that value is C[i]."
)


@pytest.mark.parametrize("t", [t for t in ALL_TYPES if not t.is_float], ids=lambda t: t.onnx_name)
def test_F_WRAP_is_E_MUL_INT_FUNC_0010_and_E_MUL_UINT_FUNC_0010(t: ElementType) -> None:
    """Quoted: E_MUL_INT_FUNC_0010 / E_MUL_UINT_FUNC_0010 (see INT_FUNC_0010): signed
    types are the INT tag, unsigned the UINT tag, with the same statement."""
    assert "(mod 2^n)" in INT_FUNC_0010
    if t.bits == 8:  # every pair
        every = np.arange(t.lo, t.hi + 1).astype(t.dtype)
        a, b = np.repeat(every, every.size), np.tile(every, every.size)
    else:
        a, b = _pairs(t, 20000)
    c = sonnx_mul.mul(a, b)
    n = t.bits
    for x, y, z in zip(a.tolist(), b.tolist(), c.tolist(), strict=True):
        assert (z - x * y) % (1 << n) == 0 and t.lo <= z <= t.hi, (t.onnx_name, x, y, z)


def test_E_MUL_INT_and_UINT_FUNC_0010_examples() -> None:
    """Quoted: int8 [-6, 11, 100, 16] x [-3, 13, 100, 16] = [18, -113, 16, 0];
    uint8 [6, 200, 20, 16] x [3, 200, 13, 16] = [18, 64, 4, 0]."""
    i8 = sonnx_mul.mul(np.array([-6, 11, 100, 16], np.int8), np.array([-3, 13, 100, 16], np.int8))
    u8 = sonnx_mul.mul(np.array([6, 200, 20, 16], np.uint8), np.array([3, 200, 13, 16], np.uint8))
    assert i8.tolist() == [18, -113, 16, 0] and u8.tolist() == [18, 64, 4, 0]


# ------------------------------------------------------------------ where the texts differ
@pytest.mark.parametrize(
    ("shape_a", "shape_b", "ids"),
    [
        ((2, 3), (3,), ("R1", "R4")),  # E_MUL_*_CONSTR_A_0010: "compatible for broadcasting"
        ((2, 3), (1, 3), ("R1", "R4")),
        ((2, 3), (), ("R1", "R4")),  # "Tensors with no dimension ... broadcast"
    ],
)
def test_R4_differs_from_E_MUL_CONSTR_A_0010_the_profile_is_followed(
    shape_a: tuple[int, ...], shape_b: tuple[int, ...], ids: tuple[str, ...]
) -> None:
    """E_MUL_FLOAT_CONSTR_A_0010: 'The shapes of A and B are compatible for broadcasting.'
    The profile: 'No broadcasting allowed ... even if they are broadcastable [R4]'."""
    with pytest.raises(sonnx_mul.ProfileError) as info:
        sonnx_mul.mul(np.ones(shape_a, np.float32), np.ones(shape_b, np.float32))
    assert tuple(info.value.requirements) == ids


def test_R1_DIMS_differs_on_zero_sized_dims_the_profile_is_followed() -> None:
    """E_MUL_FLOAT_FUNC_0010: 'An operand may have a zero-sized dimension.' The profile's
    Shape invariant: every dimension >= 1. Rank 0 with rank 0 is allowed by both."""
    with pytest.raises(sonnx_mul.ProfileError) as info:
        sonnx_mul.mul(np.ones((0, 3), np.float32), np.ones((0, 3), np.float32))
    assert "R1-DIMS" in info.value.requirements
    assert sonnx_mul.mul(np.array(2.0, np.float32), np.array(3.0, np.float32)) == 6.0


def test_R3_SAME_is_E_MUL_CONSTR_A_0020() -> None:
    """E_MUL_FLOAT_CONSTR_A_0020: 'Tensors A, B, and C have the same type.'"""
    with pytest.raises(sonnx_mul.ProfileError) as info:
        sonnx_mul.mul(np.ones(3, np.float32), np.ones(3, np.float64))
    assert "R3-SAME" in info.value.requirements
    c = sonnx_mul.mul(np.ones(3, np.float16), np.ones(3, np.float16))
    assert c.dtype == np.float16
