"""Validation of a Mul call against R1–R4 and the argument rules.

Each check is tagged with the registry id it enforces. The cost of
validation depends on the ranks of the arrays, never on their element
count: only metadata (type, dtype, shape, strides, data pointer) is read.
The checks run in a fixed order: arguments, then A and B (R2, R3, R1/R4),
then out; the first failing check raises.
"""

from __future__ import annotations

import numpy as np

from .dtypes import MAX_KNOWN_OPSET, ElementType, allowed_types, element_type, mul_version
from .errors import (
    ArgumentError,
    ElementTypeError,
    NotAnArrayError,
    ShapeError,
    SparseTensorError,
)

OVERFLOW_MODES: tuple[str, ...] = ("wrap", "error")


def check_call(
    a: object, b: object, opset: object, overflow: object
) -> tuple[np.ndarray, np.ndarray, ElementType]:
    """A, B and their element type, once the arguments, R2, R3 and R1/R4 hold.

    The order of the checks (arguments, dense A, dense B, element types,
    shapes) is the one the Why3 model ``api.mlw`` proves.
    """
    check_arguments(opset, overflow)
    dense_a = check_dense(a, "A")
    dense_b = check_dense(b, "B")
    etype = check_element_types(dense_a, dense_b, opset)  # type: ignore[arg-type]  # int now
    check_shapes(dense_a, dense_b)
    return dense_a, dense_b, etype


# @relation(R3-OPSET, F-MODE, scope=function)
def check_arguments(opset: object, overflow: object) -> None:
    """Raise ArgumentError unless opset is a known int opset and overflow a mode."""
    if type(opset) is not int or not 1 <= opset <= MAX_KNOWN_OPSET:
        raise ArgumentError(
            f"opset must be an int from 1 to {MAX_KNOWN_OPSET}, got {opset!r}",
            ("R3-OPSET",),
        )
    if type(overflow) is not str or overflow not in OVERFLOW_MODES:
        raise ArgumentError(
            f"overflow must be one of {OVERFLOW_MODES}, got {overflow!r}", ("F-MODE",)
        )


# @relation(R2, R2-DENSE, scope=function)
def check_dense(x: object, name: str) -> np.ndarray:
    """Return ``x`` if it is a plain numpy.ndarray.

    Raises SparseTensorError (R2) for a sparse tensor, NotAnArrayError
    (R2-DENSE) for anything else: lists, Python and numpy scalars, None,
    ndarray subclasses. Nothing is converted.
    """
    if type(x) is np.ndarray:
        return x
    kind = type(x)
    what = f"{kind.__module__}.{kind.__qualname__}"
    if _looks_sparse(x):
        raise SparseTensorError(
            f"{name} is a sparse tensor ({what}); the SONNX profile supports dense tensors only",
            ("R2",),
        )
    if isinstance(x, np.ndarray):
        got = f"a subclass of numpy.ndarray ({what})"
    else:
        got = f"not a numpy.ndarray (got {what})"
    raise NotAnArrayError(
        f"{name} is {got}; Mul takes plain numpy.ndarray operands and makes no implicit "
        "conversion (use numpy.asarray with an explicit dtype)",
        ("R2-DENSE",),
    )


def _looks_sparse(x: object) -> bool:
    module = type(x).__module__ or ""
    layout = str(getattr(x, "layout", ""))  # torch and similar tensors
    return (
        module.startswith(("scipy.sparse", "sparse")) or hasattr(x, "tocsr") or "sparse" in layout
    )


# @relation(R3, R3-SAME, R3-OPSET, scope=function)
def check_element_types(a: np.ndarray, b: np.ndarray, opset: int) -> ElementType:
    """The common element type of A and B, or ElementTypeError naming R3 ids."""
    type_a = element_type(a.dtype)
    type_b = element_type(b.dtype)
    for name, arr, etype in (("A", a, type_a), ("B", b, type_b)):
        if etype is None:
            raise ElementTypeError(
                f"{name} has element type {describe_dtype(arr.dtype)}, which is not a "
                "numerical type of the SONNX Mul profile",
                ("R3",),
            )
    assert type_a is not None and type_b is not None
    if type_a != type_b:
        raise ElementTypeError(
            f"A is {describe_dtype(a.dtype)} and B is {describe_dtype(b.dtype)}; Mul requires the "
            "same element type and makes no type promotion",
            ("R3", "R3-SAME"),
        )
    if type_a not in allowed_types(opset):
        raise ElementTypeError(
            f"{describe_dtype(a.dtype)} is not allowed by Mul-{mul_version(opset)} (opset {opset})",
            ("R3", "R3-OPSET"),
        )
    return type_a


# @relation(R1, R4, R1-DIMS, scope=function)
def check_shapes(a: np.ndarray, b: np.ndarray) -> None:
    """Raise ShapeError unless A and B have the same shape of positive dims."""
    if a.shape != b.shape:
        violated = ("R1", "R4") if broadcastable(a.shape, b.shape) else ("R1",)
        note = (
            "; numpy would broadcast them, which the SONNX profile forbids"
            if "R4" in violated
            else ""
        )
        raise ShapeError(
            f"A has shape {a.shape} and B has shape {b.shape}; Mul requires the same shape{note}",
            violated,
        )
    if 0 in a.shape:
        raise ShapeError(
            f"shape {a.shape} has a zero-size dimension; every dimension must be >= 1",
            ("R1-DIMS",),
        )


# @relation(R4, scope=function)
def broadcastable(shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> bool:
    """True when numpy's multidirectional broadcasting accepts the two shapes."""
    for da, db in zip(reversed(shape_a), reversed(shape_b), strict=False):
        if da != db and da != 1 and db != 1:
            return False
    return True


# @relation(C1-OUT, scope=function)
def check_out(out: object, a: np.ndarray, b: np.ndarray, etype: ElementType) -> np.ndarray:
    """Return ``out`` if it may receive C, else raise ArgumentError (C1-OUT).

    ``out`` is a plain writeable ndarray of C's shape and native element
    type, no two of its elements share a byte (``overlaps_itself``, exact),
    and it is either exactly A (resp. B) or shares no memory with it.
    """
    if type(out) is not np.ndarray:
        raise ArgumentError(
            f"out must be a numpy.ndarray, got {type(out).__qualname__}", ("C1-OUT",)
        )
    if out.shape != a.shape:
        raise ArgumentError(f"out has shape {out.shape}, C has shape {a.shape}", ("C1-OUT",))
    if out.dtype != etype.dtype:
        raise ArgumentError(
            f"out is {describe_dtype(out.dtype)}, C is {describe_dtype(etype.dtype)} "
            "in native byte order",
            ("C1-OUT",),
        )
    if not out.flags.writeable:
        raise ArgumentError("out is read-only", ("C1-OUT",))
    overlap = overlaps_itself(out)
    if overlap is not False:
        how = "cannot be shown free of" if overlap is None else "has"
        raise ArgumentError(
            f"out {how} elements that share memory with each other (shape {out.shape}, "
            f"strides {out.strides}); each element of C needs its own bytes",
            ("C1-OUT",),
        )
    for name, x in (("A", a), ("B", b)):
        if out is not x and np.may_share_memory(out, x) and not same_view(out, x):
            raise ArgumentError(
                f"out shares memory with {name} without being exactly {name}; "
                "partial overlap is refused",
                ("C1-OUT",),
            )
    return out


def same_view(x: np.ndarray, y: np.ndarray) -> bool:
    """True when x and y address the same elements in the same order."""
    return (
        x.__array_interface__["data"][0] == y.__array_interface__["data"][0]
        and x.shape == y.shape
        and x.strides == y.strides
        and x.dtype == y.dtype
    )


OVERLAP_WORK = 1 << 14
"""Search nodes ``overlaps_itself`` may visit before it gives up (returns None)."""


# @relation(C1-OUT, scope=function)
def overlaps_itself(x: np.ndarray) -> bool | None:
    """Whether two distinct indices of ``x`` address overlapping bytes.

    Exact: True or False decides the question (numpy's internal-overlap
    problem, a bounded integer equation). With ``d_k = i_k - j_k`` for two
    indices ``i != j``, their elements overlap exactly when
    ``|sum_k strides[k] * d_k| < itemsize``, ``|d_k| <= shape[k] - 1``. Views
    made by slicing, transposing, reshaping or negative steps pass the first
    test (each stride, sorted by magnitude, at least the span of the smaller
    dims); the others get a pruned search, which returns None if it needs
    more than OVERLAP_WORK nodes (only contrived as_strided layouts can).
    Cost: a function of the rank and of OVERLAP_WORK, never of the element
    count.
    """
    dims = sorted((abs(s), n - 1) for n, s in zip(x.shape, x.strides, strict=True) if n > 1)
    if not dims:
        return False
    if dims[0][0] == 0:
        return True  # a zero stride repeats one element
    span = x.itemsize  # bytes covered by the dims seen so far
    for stride, top in dims:
        if stride < span:
            return _overlap_search(dims, x.itemsize)
        span += stride * top
    return False


def _overlap_search(dims: list[tuple[int, int]], itemsize: int) -> bool | None:
    """Is there d != 0, |d_k| <= top_k, with |sum stride_k * d_k| < itemsize?

    Depth first from the largest stride; a partial sum is pruned when the
    smaller dims cannot bring it back within itemsize. By symmetry (d and -d)
    the first nonzero d_k is positive. The smallest dim is solved directly.
    """
    reach = [0]  # reach[k]: the most that dims[:k] can add or remove
    for stride, top in dims:
        reach.append(reach[-1] + stride * top)
    slack = itemsize - 1
    work = 0

    def choices(k: int, partial: int, zero: bool) -> range:
        stride, top = dims[k]
        lo = max(-top, -((slack + reach[k] + partial) // stride))
        hi = min(top, (slack + reach[k] - partial) // stride)
        return range(max(lo, 0) if zero else lo, hi + 1)

    def search(k: int, partial: int, zero: bool) -> bool | None:
        nonlocal work
        work += 1
        if work > OVERLAP_WORK:
            return None
        for d in choices(k, partial, zero):
            if k == 0:
                if not (zero and d == 0):
                    return True
                continue
            found = search(k - 1, partial + dims[k][0] * d, zero and d == 0)
            if found is not False:
                return found
        return False

    return search(len(dims) - 1, 0, True)


def describe_dtype(dtype: np.dtype) -> str:
    """One vocabulary for element types: ``float (float32)``, ``int8``, ``bfloat16``.

    The ONNX name of a profile type, with the numpy name in parentheses when
    it differs, plus the byte order when it is not native; other dtypes are
    named by numpy.
    """
    etype = element_type(dtype)
    if etype is None:
        return f"numpy {dtype!s}"
    numpy_name = etype.dtype.name
    notes = [numpy_name] if numpy_name != etype.onnx_name else []
    if not dtype.isnative:
        notes.append("non-native byte order")
    return etype.onnx_name + (f" ({', '.join(notes)})" if notes else "")
