"""The plain lane of ``mul`` (a shortcut for plain calls) returns only what the
full checks return, and defers every other call to them; IEEE exceptions are
results, never warnings or errors, whatever ``np.seterr`` says."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from sonnx_mul import ProfileError, _native, api, mul
from sonnx_mul.dtypes import ALL_TYPES
from support import assert_same_bits


@pytest.mark.parametrize("mode", ["raise", "warn", "call"])
def test_F_FLOAT_ieee_exceptions_never_escape_whatever_seterr_says(mode, recwarn):
    x = np.array([1e308, 0.0, 1e-308, -1e308], np.float64)
    y = np.array([1e308, np.inf, 1e-308, 1e308], np.float64)
    calls: list[object] = []
    with np.errstate(all=mode, call=calls.append if mode == "call" else None):
        for out in (None, np.empty(4)):
            for overflow in ("wrap", "error", "".join(["wr", "ap"])):
                c = mul(x, y, out=out, overflow=overflow)
                assert c[0] == np.inf and np.isnan(c[1]) and c[2] == 0.0 and c[3] == -np.inf
    assert not calls and not recwarn.list


def test_F_ieee_state_of_the_caller_is_left_as_it_was():
    before = np.geterr()
    mul(np.array([1e308]), np.array([1e308]))
    assert np.geterr() == before


def test_F_WRAP_integers_raise_nothing_under_errstate_raise():
    x = np.array([2**62, -(2**63), 7], np.int64)
    with np.errstate(all="raise"):
        c = mul(x, np.array([4, -1, 3], np.int64))
    assert c.tolist() == [0, -(2**63), 21]


def test_C1_RESULT_plain_lane_and_full_path_agree_on_layouts():
    a = np.arange(1, 13, dtype=np.int16).reshape(3, 4)
    for x in (a, np.asfortranarray(a), a[:, ::-1], a.T.copy().T):
        c = mul(x, x)
        assert c.flags.c_contiguous
        assert np.array_equal(c, x.astype(np.int64) ** 2)


def test_plain_lane_refuses_what_the_full_path_refuses():
    a = np.ones(3, np.float32)
    for kwargs in ({"opset": True}, {"overflow": np.array(["wrap"])}, {"overflow": "WRAP"}):
        with pytest.raises(ValueError):
            mul(a, a, **kwargs)


class Subclass(np.ndarray):
    """An ndarray subclass: refused under R2-DENSE."""


def _calls() -> list[tuple[str, Callable[[], tuple[Any, Any, Any, Any, Any]]]]:
    """(label, make the arguments a, b, out, opset, overflow): valid and invalid calls."""
    f32 = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    i8 = np.arange(-6, 6, dtype=np.int8).reshape(3, 4)
    big = np.full((3, 4), 100, np.int8)
    base = np.zeros(24, np.float32)
    read_only = np.zeros((3, 4), np.float32)
    read_only.flags.writeable = False
    cases = [
        ("plain float", lambda: (f32, f32, None, 14, "wrap")),
        ("plain int error mode", lambda: (i8, i8, None, 14, "error")),
        ("overflowing int error mode", lambda: (big, big, None, 14, "error")),
        ("overflowing int, out", lambda: (big, big, np.zeros((3, 4), np.int8), 14, "error")),
        ("wrap of an overflow", lambda: (big, big, None, 14, "wrap")),
        ("out C", lambda: (f32, f32, np.zeros((3, 4), np.float32), 14, "wrap")),
        ("out is a", lambda: (f32.copy(), f32, None, 14, "wrap")),
        (
            "out overlaps a",
            lambda: (base[:12].reshape(3, 4), f32, base[1:13].reshape(3, 4), 14, "wrap"),
        ),
        ("out wrong dtype", lambda: (f32, f32, np.zeros((3, 4), np.float64), 14, "wrap")),
        ("out byte-swapped", lambda: (f32, f32, np.zeros((3, 4), ">f4"), 14, "wrap")),
        ("out wrong shape", lambda: (f32, f32, np.zeros((4, 3), np.float32), 14, "wrap")),
        ("out read-only", lambda: (f32, f32, read_only, 14, "wrap")),
        ("out a list", lambda: (f32, f32, [0.0] * 12, 14, "wrap")),
        (
            "out a matrix",
            lambda: (f32, f32, np.zeros((3, 4), np.float32).view(Subclass), 14, "wrap"),
        ),
        ("different dtypes", lambda: (f32, f32.astype(np.float64), None, 14, "wrap")),
        ("same type, one byte-swapped", lambda: (f32, f32.astype(">f4"), None, 14, "wrap")),
        ("broadcastable", lambda: (f32, f32[0], None, 14, "wrap")),
        ("different shapes", lambda: (f32, f32.T, None, 14, "wrap")),
        ("zero dim", lambda: (f32[:0], f32[:0], None, 14, "wrap")),
        ("bool", lambda: (f32 > 2, f32 > 3, None, 14, "wrap")),
        ("complex", lambda: (f32.astype(np.complex64),) * 2 + (None, 14, "wrap")),
        ("long double", lambda: (f32.astype(np.longdouble),) * 2 + (None, 14, "wrap")),
        ("object", lambda: (f32.astype(object),) * 2 + (None, 14, "wrap")),
        ("a list", lambda: ([1.0], [2.0], None, 14, "wrap")),
        ("a scalar", lambda: (np.float32(2), np.float32(3), None, 14, "wrap")),
        ("a subclass", lambda: (f32.view(Subclass), f32.view(Subclass), None, 14, "wrap")),
        ("int8 at opset 13", lambda: (i8, i8, None, 13, "wrap")),
        ("opset 7 float", lambda: (f32, f32, None, 7, "wrap")),
        ("bad mode", lambda: (f32, f32, None, 14, "saturate")),
        ("0-d", lambda: (np.array(2.5, np.float32), np.array(-2, np.float32), None, 14, "wrap")),
    ]
    return cases


@pytest.mark.parametrize(("label", "make"), _calls(), ids=[c[0] for c in _calls()])
def test_F_NOLOSS_mul_and_the_full_checks_give_the_same_outcome(label, make):
    """Same bits, or the same error with the same requirement ids, and out
    untouched on error: the plain lane never accepts what the checks refuse."""

    def outcome(call: Callable[..., np.ndarray]) -> tuple[str, Any, Any]:
        a, b, out, opset, overflow = make()
        if label == "out is a":
            out = a
        before = None if not isinstance(out, np.ndarray) else out.copy()
        try:
            result = call(a, b, out=out, opset=opset, overflow=overflow)
        except (ProfileError, TypeError, ValueError, ArithmeticError) as err:
            if before is not None:
                assert_same_bits(np.asarray(out), before)
            return type(err).__name__, getattr(err, "requirements", None), str(err)
        return "result", result.copy(), result is out

    plain = outcome(mul)
    full = outcome(lambda a, b, **kw: api.checked_mul(a, b, kw["out"], kw["opset"], kw["overflow"]))
    assert plain[0] == full[0], (plain, full)
    if plain[0] == "result":
        assert_same_bits(plain[1], full[1])
        assert plain[2] == full[2]
    else:
        assert plain[1:] == full[1:]
        assert plain[1] is not None  # every refusal is a ProfileError naming ids


@pytest.mark.parametrize("etype", ALL_TYPES, ids=lambda t: t.onnx_name)
def test_F_plain_lane_handles_every_profile_type(etype, monkeypatch):
    # With the full path made to fail, plain calls of every type still succeed.
    def refuse(*args: object) -> None:
        raise AssertionError("the full checks ran")

    monkeypatch.setattr(api, "checked_mul", refuse)
    a = np.arange(1, 7).astype(etype.dtype).reshape(2, 3)
    assert_same_bits(mul(a, a), (a.astype(np.float64) ** 2).astype(etype.dtype))
    out = np.zeros_like(a)
    assert mul(a, a, out=out, overflow="error") is out


class StrMode(str):
    """A str subclass equal to "wrap": not exactly a str."""


def test_C1_RESULT_the_native_plain_lane_takes_only_exact_plain_calls():
    """``_native.plain`` returns None, writing nothing and raising nothing, for
    every argument the lane does not take (the full checks then decide), and
    the glue's product for the others; a mode or opset equal by value is taken."""
    a = np.arange(1, 7, dtype=np.int16).reshape(2, 3)
    want = a.astype(np.int16) * a
    out = np.zeros((2, 3), np.int16)
    taken = [
        (a, a, None, 14, "wrap"),
        (a, a, out, int("14"), "".join(["w", "rap"])),
        (a, a, None, 14, "error"),
    ]
    for args in taken:
        result = _native.plain(*args, 14)
        assert isinstance(result, np.ndarray) and result.tolist() == want.tolist()
    assert _native.plain(a, a, out, 14, "wrap", 14) is out
    big = np.full(3, 300, np.int16)
    assert _native.plain(big, big, None, 14, "error", 14) == 0  # the first overflow
    fortran = np.zeros((2, 3), np.int16, order="F")
    refused = [
        (a.view(Subclass), a, None, 14, "wrap"),
        (a, [1, 2, 3], None, 14, "wrap"),
        (a, a, fortran, 14, "wrap"),
        (a, a, np.zeros((2, 3), np.int16).view(Subclass), 14, "wrap"),
        (a, a, [0] * 6, 14, "wrap"),
        (a, a, None, 13, "wrap"),
        (a, a, None, True, "wrap"),
        (a, a, None, 14.0, "wrap"),
        (a, a, None, np.int64(14), "wrap"),
        (a, a, None, 14, "Wrap"),
        (a, a, None, 14, StrMode("wrap")),
        (a, a, None, 14, b"wrap"),
        (a, a, None, 14, None),
        # the glue's refusals (TypeError/ValueError) become None too
        (a, a.astype(np.int32), None, 14, "wrap"),
        (a, a.T, None, 14, "wrap"),
        (a, a, np.zeros((2, 3), np.int32), 14, "wrap"),
        (a, a, a[:, :0].copy(), 14, "wrap"),
    ]
    for args in refused:
        before = fortran.copy()
        assert _native.plain(*args, 14) is None, args
        assert_same_bits(fortran, before)
    with pytest.raises(TypeError):
        _native.plain(a, a, None, 14, "wrap")  # five arguments
