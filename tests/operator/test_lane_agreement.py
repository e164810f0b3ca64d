"""Issue 29, item 5: one answer per call, whichever lane of ``mul`` takes it.

``mul`` has a plain lane (a shortcut for plain calls: the native glue
re-checks the kernel's preconditions) and the checked path
(``api.checked_mul``: every check of validation.py). For random layouts
(C, Fortran, reversed, strided, transposed), byte orders, dtype spellings
(``q``/``l``), views of A or B as ``out`` (also A byte-swapped and ``out``
the same memory in native order), opsets and modes given as objects equal
but not identical to the literals (``int("14")``, ``"".join(["w", "rap"])``)
or of another type (``True``, ``14.0``, ``numpy.int64(14)``, ``str``/``int``
subclasses), both give the same answer: the same bits, or the same error
class with the same requirement ids, with the same bytes left in A, B and
``out``. Before issue 29 the plain lane accepted ``out=a.view(native)`` for
a byte-swapped A at the default opset, which the checked path refuses
(C1-OUT), and took its decision on object identity (``opset is 14``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sonnx_mul import ProfileError, api, mul
from sonnx_mul.dtypes import ALL_TYPES


class IntSub(int):
    """An int subclass: equal to 14, not an int."""


class StrSub(str):
    """A str subclass: equal to "wrap", not a str."""


OPSETS: list[Any] = [14, int("14"), 13, 7, 1, 15, 18, 0, 99, True, 14.0, np.int64(14), IntSub(14)]
MODES: list[Any] = ["wrap", "".join(["w", "rap"]), "error", "".join(["er", "ror"]), "Wrap",
                    b"wrap", None, StrSub("wrap")]  # fmt: skip
LAYOUTS = ["C", "F", "reversed", "strided", "transposed"]
OUTS = ["none", "fresh", "fresh_F", "a", "b", "a_native_view", "b_native_view", "overlap_a",
        "read_only", "wrong_dtype", "wrong_shape", "self_overlap"]  # fmt: skip


def dtype_of(name: str, order: str, alias: bool) -> np.dtype:
    etype = next(t for t in ALL_TYPES if t.onnx_name == name)
    dtype = etype.dtype
    if alias and dtype == np.dtype("int64"):
        dtype = np.dtype("q") if dtype.char == "l" else np.dtype("l")  # same type, other char
    return dtype.newbyteorder(">" if order == "swapped" and dtype.itemsize > 1 else "=")


def laid_out(values: np.ndarray, layout: str) -> np.ndarray:
    """``values`` (same elements, same shape) in the given memory layout."""
    if layout == "F":
        return np.asfortranarray(values)
    if layout == "reversed" and values.ndim:
        return np.ascontiguousarray(values[..., ::-1])[..., ::-1]
    if layout == "strided" and values.ndim:
        wide = np.zeros((*values.shape[:-1], values.shape[-1] * 2), values.dtype)
        wide[..., ::2] = values
        return wide[..., ::2]
    if layout == "transposed" and values.ndim > 1:
        return np.ascontiguousarray(values.T).T
    return values.copy()


def build(p: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, Any]:
    """Fresh arrays for one call (a call may write into them)."""
    rng = np.random.default_rng(p["seed"])
    da, db = p["dtype_a"], p["dtype_b"]
    hi = 200 if p["big"] else 5
    va = rng.integers(1, hi, p["shape"]).astype(da)
    vb = rng.integers(1, hi, p["shape_b"]).astype(db)
    a, b = laid_out(va, p["layout_a"]), laid_out(vb, p["layout_b"])
    native = np.dtype(da).newbyteorder("=")
    kind = p["out"]
    if kind == "none":
        out: Any = None
    elif kind == "fresh":
        out = np.zeros(p["shape"], native)
    elif kind == "fresh_F":
        out = np.asfortranarray(np.zeros(p["shape"], native))
    elif kind in ("a", "b"):
        out = a if kind == "a" else b
    elif kind in ("a_native_view", "b_native_view"):
        x = a if kind == "a_native_view" else b
        out = x.view(np.dtype(x.dtype).newbyteorder("="))
    elif kind == "overlap_a":
        base = np.zeros(a.size + 1, native)
        a = base[1:].reshape(a.shape) if a.ndim else base[1:].reshape(())
        a[...] = va
        out = base[:-1].reshape(a.shape)
    elif kind == "read_only":
        out = np.zeros(p["shape"], native)
        out.flags.writeable = False
    elif kind == "wrong_dtype":
        out = np.zeros(p["shape"], np.float64 if native != np.float64 else np.float32)
    elif kind == "wrong_shape":
        out = np.zeros((*p["shape"], 2), native)
    else:  # self_overlap: every element of out on the same bytes
        out = np.lib.stride_tricks.as_strided(
            np.zeros(1, native), p["shape"], (0,) * len(p["shape"])
        )
    return a, b, out


def snapshot(*arrays: Any) -> list[bytes | None]:
    return [None if not isinstance(x, np.ndarray) else np.array(x).tobytes() for x in arrays]


def outcome(lane: str, p: dict[str, Any]) -> tuple[Any, ...]:
    a, b, out = build(p)
    try:
        if lane == "mul":
            r = mul(a, b, out=out, opset=p["opset"], overflow=p["overflow"])
        else:
            r = api.checked_mul(a, b, out, p["opset"], p["overflow"])
    except ProfileError as exc:
        return ("refused", type(exc).__name__, exc.requirements, *snapshot(a, b, out))
    return ("ok", r.dtype.str, r.shape, r.tobytes(), r is out, *snapshot(a, b, out))


@st.composite
def calls(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from([t.onnx_name for t in ALL_TYPES]))
    order_a, order_b = (
        draw(st.sampled_from(["native", "swapped"])),
        draw(st.sampled_from(["native", "swapped"])),
    )
    alias = draw(st.booleans())
    other = draw(st.sampled_from([t.onnx_name for t in ALL_TYPES])) if draw(
        st.integers(0, 9)
    ) == 0 else name  # fmt: skip
    shape = tuple(draw(st.lists(st.integers(1, 3), max_size=3)))
    shape_b = shape
    if draw(st.integers(0, 9)) == 0:
        shape_b = tuple(draw(st.lists(st.integers(0, 3), max_size=3)))
    return {
        "seed": draw(st.integers(0, 2**16)),
        "dtype_a": dtype_of(name, order_a, alias),
        "dtype_b": dtype_of(other, order_b, alias and draw(st.booleans())),
        "shape": shape,
        "shape_b": shape_b,
        "layout_a": draw(st.sampled_from(LAYOUTS)),
        "layout_b": draw(st.sampled_from(LAYOUTS)),
        "out": draw(st.sampled_from(OUTS)),
        "opset": draw(st.sampled_from(OPSETS)),
        "overflow": draw(st.sampled_from(MODES)),
        "big": draw(st.booleans()),
    }


def agree(p: dict[str, Any]) -> None:
    if p["shape"] != p["shape_b"] and p["out"] in ("b", "b_native_view"):
        p = {**p, "out": "none"}
    first, second = outcome("mul", p), outcome("checked", p)
    assert first == second, (p, first[:3], second[:3])


@settings(max_examples=600, deadline=None, derandomize=True)
@given(calls())
def test_C1_OUT_R3_plain_lane_and_checked_path_give_one_answer(p: dict[str, Any]) -> None:
    agree(p)


@pytest.mark.parametrize("opset", [14, int("14"), 13])
@pytest.mark.parametrize("overflow", ["wrap", "".join(["w", "rap"])])
def test_C1_OUT_byte_swapped_a_and_its_native_view_as_out(opset: int, overflow: str) -> None:
    """The case of the issue: refused (C1-OUT) whatever spelling of opset and mode."""
    a = np.arange(1, 7, dtype=">f4").reshape(2, 3)
    with pytest.raises(ProfileError) as info:
        mul(a, a.copy(), out=a.view("<f4"), opset=opset, overflow=overflow)
    assert info.value.requirements == ("C1-OUT",)
    assert a.tolist() == [[1, 2, 3], [4, 5, 6]]  # nothing written


def test_equal_arguments_take_the_plain_lane(monkeypatch: pytest.MonkeyPatch) -> None:
    """``int("14")`` and a mode built at run time take the plain lane, like the literals:
    the lane is chosen by value, not by object identity."""
    monkeypatch.setattr(api, "checked_mul", lambda *args: pytest.fail("took the checked path"))
    a = np.ones(3, np.int32)
    mul(a, a, opset=int("14"), overflow="".join(["w", "rap"]))
    mul(a, a, opset=14, overflow="".join(["er", "ror"]))


def test_negative_control_a_lane_that_ignores_the_byte_order_disagrees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A plain lane that writes whenever the glue accepts (the glue before issue 29 took
    a byte-swapped A's native view as A itself): the property above sees it."""
    p = {"seed": 1, "dtype_a": np.dtype(">i4"), "dtype_b": np.dtype(">i4"), "shape": (2,),
         "shape_b": (2,), "layout_a": "C", "layout_b": "C", "out": "a_native_view",
         "opset": 14, "overflow": "wrap", "big": False}  # fmt: skip

    def lenient(a: Any, b: Any, out: Any, opset: Any, overflow: Any) -> np.ndarray:
        target = np.empty(a.shape, a.dtype.newbyteorder("="))
        np.multiply(a, b, out=target)
        out[...] = target
        return out  # type: ignore[no-any-return]

    monkeypatch.setattr(
        api, "_PLAIN", lambda a, b, out, opset, overflow, default: lenient(a, b, out, opset, "")
    )
    with pytest.raises(AssertionError):
        agree(p)
