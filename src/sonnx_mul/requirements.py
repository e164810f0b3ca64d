"""The requirement registry: the one source of truth for requirement ids.

Errors, code markers (``@relation(ID, ...)``), tests and the traceability
report all name requirements by the ids defined here and nowhere else.
Top-level ids quote the SONNX profile of Mul (``docs/spec/sonnx_mul_profile.md``);
derived ids refine one parent each and record the project's decisions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class Requirement:
    """One requirement: ``parent`` is None for the SONNX top-level ids."""

    id: str
    title: str
    statement: str
    parent: str | None
    source: str


_SONNX = "SONNX profile of Mul (docs/spec/sonnx_mul_profile.md)"
_SPEC = "sonnx-mul product spec (docs/spec/product.md)"

_ALL: tuple[Requirement, ...] = (
    Requirement(
        "R1",
        "Same shape",
        "The tensors `A` and `B` must have the same shape [R1]",
        None,
        _SONNX,
    ),
    Requirement(
        "R2",
        "No sparse tensors",
        "The operator does not support sparse tensors [R2]",
        None,
        _SONNX,
    ),
    Requirement(
        "R3",
        "Numerical element types",
        "All input elements `A` and `B` shall have numerical types [R3]",
        None,
        _SONNX,
    ),
    Requirement(
        "R4",
        "No broadcasting",
        "No broadcasting allowed for the tensors `A` and `B` even if they are "
        "broadcastable to a common shape, the broadcasting is forbidden because "
        "dynamic computation time according to the shape is not deterministic [R4]",
        None,
        _SONNX,
    ),
    Requirement(
        "C1",
        "Shape consistency",
        "The shape of `C` will match the `A` and `B` shape. N(C)=N(A)=N(B) [R1]",
        None,
        _SONNX,
    ),
    Requirement(
        "F",
        "Element-wise product",
        "C[i] = A[i] * B[i], where i is an index covering all dimensions of the tensors",
        None,
        _SONNX,
    ),
    # Derived requirements: decisions of docs/spec/product.md.
    Requirement(
        "R1-DIMS",
        "Positive dimensions",
        "Every dimension of A and B is positive (>= 1), the SONNX Shape invariant; "
        "rank 0 (a scalar tensor) is allowed, a zero-size dimension is refused.",
        "R1",
        _SPEC,
    ),
    Requirement(
        "R2-DENSE",
        "Dense ndarray inputs only",
        "A and B are dense numpy.ndarray objects (0-d included); sparse matrices, "
        "ndarray subclasses, lists, scalars and other array types are refused, "
        "never converted implicitly.",
        "R2",
        _SPEC,
    ),
    Requirement(
        "R3-SAME",
        "Same element type",
        "A and B have the same element type; there is no type promotion.",
        "R3",
        _SPEC,
    ),
    Requirement(
        "R3-OPSET",
        "Types allowed by the opset",
        "The element type is one that the Mul version of the requested opset "
        "allows (Mul-1: float16, float, double; 6/7: + int32, int64, uint32, "
        "uint64; 13: + bfloat16; 14: + int8, int16, uint8, uint16); the opset "
        "is one of 1, 6, 7, 13, 14 or a later one, which selects the newest "
        "Mul version not above it.",
        "R3",
        _SPEC,
    ),
    Requirement(
        "C1-RESULT",
        "Fresh result array",
        "Without out=, the result is a new C-contiguous, native byte order array "
        "with the shape and element type of A and B (0-d stays 0-d).",
        "C1",
        _SPEC,
    ),
    Requirement(
        "C1-OUT",
        "Output argument",
        "With out=, `out` is a writeable numpy.ndarray of C's shape and native "
        "element type; it may be exactly A or B but may not otherwise share "
        "memory with them; it is filled and returned.",
        "C1",
        _SPEC,
    ),
    Requirement(
        "F-FLOAT",
        "IEEE 754 multiplication",
        "For float16, bfloat16, float32, float64: IEEE 754 binary multiplication "
        "in the operand format, round to nearest ties to even, subnormals kept "
        "(no flush to zero), infinities, NaN and signed zeros as IEEE 754 says.",
        "F",
        _SPEC,
    ),
    Requirement(
        "F-WRAP",
        "Integer wrap-around",
        "For integer types with overflow='wrap' (the default): the exact product "
        "reduced modulo 2^bits into the type's range (two's complement for signed).",
        "F",
        _SPEC,
    ),
    Requirement(
        "F-CHECKED",
        "Checked integer product",
        "For integer types with overflow='error': the exact product when it fits "
        "the type; otherwise IntegerOverflowError naming the first offending flat "
        "(C order) index, raised before anything is written.",
        "F",
        _SPEC,
    ),
    Requirement(
        "F-MODE",
        "Overflow mode argument",
        "overflow is 'wrap' or 'error'; any other value is refused.",
        "F",
        _SPEC,
    ),
    Requirement(
        "F-NOLOSS",
        "Nothing lost",
        "A and B are never modified (unless one of them is out); when an error "
        "is raised nothing has been written anywhere.",
        "F",
        _SPEC,
    ),
    Requirement(
        "F-LAYOUT",
        "Layout independence",
        "The result depends only on the element values and their logical index: "
        "read-only, non-contiguous, Fortran-ordered and non-native byte order "
        "inputs are accepted and give the same result.",
        "F",
        _SPEC,
    ),
    Requirement(
        "F-RTE",
        "No runtime error in the C kernel",
        "The native C kernel that computes every product (native/src/*.c) has no "
        "undefined behaviour and no runtime error for any input its ACSL contract "
        "admits: no signed overflow, no out-of-range conversion or shift, no access "
        "outside the operands' and result's buffers; its C is MISRA C:2012 apart from "
        "the recorded deviations (proofs/misra-deviations.json).",
        "F",
        _SPEC,
    ),
)

REGISTRY: Mapping[str, Requirement] = MappingProxyType({req.id: req for req in _ALL})
"""All requirements by id, top-level first, in a stable order."""

TOP_LEVEL: tuple[str, ...] = tuple(r.id for r in _ALL if r.parent is None)


def get(req_id: str) -> Requirement:
    """The requirement with this id; KeyError names the unknown id."""
    try:
        return REGISTRY[req_id]
    except KeyError:
        raise KeyError(f"unknown requirement id {req_id!r}") from None


def children(req_id: str) -> tuple[str, ...]:
    """Ids whose parent is ``req_id``, in registry order."""
    return tuple(r.id for r in _ALL if r.parent == req_id)
