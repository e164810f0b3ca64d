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
class Alignment:
    """How the working group's newest Mul text (``SONNX_SOURCE["newest_path"]``, tags
    ``E_MUL_...``) relates to a requirement of the profile this project implements.

    ``status``: ``agree`` (same statement), ``differ`` (the newest text says
    otherwise), ``extension`` (this project adds to both texts), ``not covered``
    (the newest text has nothing on it). ``follows``: the text this project
    follows where they differ: always the profile of ``docs/spec/sonnx_mul_profile.md``.
    """

    status: str
    note: str
    follows: str = "profile (docs/spec/sonnx_mul_profile.md)"


_NOT_COVERED = Alignment(
    "not covered", "an API or project requirement: the newest SONNX text has no counterpart"
)


@dataclass(frozen=True)
class Requirement:
    """One requirement: ``parent`` is None for the SONNX top-level ids."""

    id: str
    title: str
    statement: str
    parent: str | None
    source: str
    sonnx: tuple[str, ...] = ()
    """Tags of the SONNX working group's informal Mul texts (keys of ``SONNX_TAGS``):
    ``section:tag`` of the older text, ``E_MUL_...`` of the newest one."""
    alignment: Alignment = _NOT_COVERED
    """Where the newest SONNX text agrees or differs, and which text is followed."""


_SONNX = "SONNX profile of Mul (docs/spec/sonnx_mul_profile.md)"
_SPEC = "sonnx-mul product spec (docs/spec/product.md)"

# The newest text's tags on the operands' shapes: where it allows broadcasting
# (R1 and R4 both restrict them).
_SHAPE_TAGS = (
    "E_MUL_FLOAT_CONSTR_A_0010",
    "E_MUL_INT_CONSTR_A_0010",
    "E_MUL_UINT_CONSTR_A_0010",
    "E_MUL_REAL_CONSTR_A_0010",
    "E_MUL_REAL_FUNC_0010",
    "E_MUL_FLOAT_FUNC_0010",
    "E_MUL_INT_FUNC_0010",
    "E_MUL_UINT_FUNC_0010",
)

_ALL: tuple[Requirement, ...] = (
    Requirement(
        "R1",
        "Same shape",
        "The tensors `A` and `B` must have the same shape [R1]",
        None,
        _SONNX,
        (
            "float:R1",
            "int:R1",
            "real:R1",
            "float:C1",
            "int:C1",
            "real:C1",
            *_SHAPE_TAGS,
        ),
        alignment=Alignment(
            "differ",
            "the newest text requires only shapes compatible for broadcasting "
            "(E_MUL_*_CONSTR_A_0010) and defines C on the broadcast shape (E_MUL_*_FUNC_0010); "
            "the profile requires the same shape. Both agree when A and B have the same shape.",
        ),
    ),
    Requirement(
        "R2",
        "No sparse tensors",
        "The operator does not support sparse tensors [R2]",
        None,
        _SONNX,
        ("float:R3", "int:R2", "real:R2"),
        alignment=Alignment(
            "not covered",
            "mul.md defers to the general restrictions (common/general_restrictions.md, not read "
            "here); no E_MUL tag is about sparse tensors",
        ),
    ),
    Requirement(
        "R3",
        "Numerical element types",
        "All input elements `A` and `B` shall have numerical types [R3]",
        None,
        _SONNX,
        (
            "contents:types",
            "E_MUL_FLOAT_CONSTR_A_0020",
            "E_MUL_INT_CONSTR_A_0020",
            "E_MUL_UINT_CONSTR_A_0020",
        ),
        alignment=Alignment(
            "differ",
            "same numerical types, one type for A, B and C (E_MUL_*_CONSTR_A_0020), but the "
            "newest text lists float16, float, double and the 8 integer types without bfloat16; "
            "the profile's type list (and ONNX Mul-13/14) has bfloat16, which this project "
            "accepts",
        ),
    ),
    Requirement(
        "R4",
        "No broadcasting",
        "No broadcasting allowed for the tensors `A` and `B` even if they are "
        "broadcastable to a common shape, the broadcasting is forbidden because "
        "dynamic computation time according to the shape is not deterministic [R4]",
        None,
        _SONNX,
        (
            "float:C1",
            "int:C1",
            "real:C1",
            *_SHAPE_TAGS,
        ),
        alignment=Alignment(
            "differ",
            "the newest text allows multidirectional (numpy-style) broadcasting, rank-0 "
            "broadcasting included (E_MUL_*_FUNC_0010, E_MUL_*_CONSTR_A_0010); the profile "
            "forbids broadcasting even between broadcastable shapes, which this project refuses",
        ),
    ),
    Requirement(
        "C1",
        "Shape consistency",
        "The shape of `C` will match the `A` and `B` shape. N(C)=N(A)=N(B) [R1]",
        None,
        _SONNX,
        (
            "float:C1",
            "int:C1",
            "real:C1",
            "E_MUL_FLOAT_CONSTR_C_0010",
            "E_MUL_INT_CONSTR_C_0010",
            "E_MUL_UINT_CONSTR_C_0010",
            "E_MUL_REAL_CONSTR_C_0010",
        ),
        alignment=Alignment(
            "differ",
            "the newest text gives C the broadcast shape of A and B (E_MUL_*_CONSTR_C_0010); the "
            "profile gives C the common shape N(C)=N(A)=N(B). They agree for operands of one "
            "shape, the only ones the profile admits",
        ),
    ),
    Requirement(
        "F",
        "Element-wise product",
        "C[i] = A[i] * B[i], where i is an index covering all dimensions of the tensors",
        None,
        _SONNX,
        (
            "real:formula",
            "float:formula",
            "int:formula",
            "E_MUL_REAL_FUNC_0010",
            "E_MUL_FLOAT_FUNC_0010",
            "E_MUL_INT_FUNC_0010",
            "E_MUL_UINT_FUNC_0010",
        ),
        alignment=Alignment(
            "agree",
            "C[i] = A[i] x B[i] element-wise for every index (E_MUL_*_FUNC_0010); the newest text"
            " reads the operands through broadcasting, which is the identity for operands of one "
            "shape",
        ),
    ),
    # Derived requirements: decisions of docs/spec/product.md.
    Requirement(
        "R1-DIMS",
        "Positive dimensions",
        "Every dimension of A and B is positive (>= 1), the SONNX Shape invariant; "
        "rank 0 (a scalar tensor) is allowed, a zero-size dimension is refused.",
        "R1",
        _SPEC,
        (
            "float:R1",
            "int:R1",
            "E_MUL_FLOAT_FUNC_0010",
            "E_MUL_INT_FUNC_0010",
            "E_MUL_UINT_FUNC_0010",
        ),
        alignment=Alignment(
            "differ",
            "the newest text allows zero-sized dimensions (an empty C, E_MUL_*_FUNC_0010 'Zero-"
            "sized dimensions'); the profile's Shape invariant (every dimension >= 1), which this"
            " project follows, refuses them. Rank 0 is allowed by both",
        ),
    ),
    Requirement(
        "R2-DENSE",
        "Dense ndarray inputs only",
        "A and B are dense numpy.ndarray objects (0-d included); sparse matrices, "
        "ndarray subclasses, lists, scalars and other array types are refused, "
        "never converted implicitly.",
        "R2",
        _SPEC,
        ("float:R3", "int:R2"),
    ),
    Requirement(
        "R3-SAME",
        "Same element type",
        "A and B have the same element type; there is no type promotion.",
        "R3",
        _SPEC,
        (
            "float:R2",
            "int:C2",
            "E_MUL_FLOAT_CONSTR_A_0020",
            "E_MUL_INT_CONSTR_A_0020",
            "E_MUL_UINT_CONSTR_A_0020",
        ),
        alignment=Alignment(
            "agree",
            "A, B and C have the same type (E_MUL_*_CONSTR_A_0020 and the B/C constraints that "
            "refer to it); no promotion in either text",
        ),
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
        ("contents:types", "contents:onnx14", "E_MUL_FLOAT_FUNC_0010"),
        alignment=Alignment(
            "differ",
            "the newest text is based on ONNX opset 14 only and has no bfloat16; this project "
            "follows the profile's type list and ONNX's Mul-1/6/7/13/14 type tables by opset",
        ),
    ),
    Requirement(
        "C1-RESULT",
        "Fresh result array",
        "Without out=, the result is a new C-contiguous, native byte order array "
        "with the shape and element type of A and B (0-d stays 0-d).",
        "C1",
        _SPEC,
        (
            "float:C1",
            "int:C1",
            "E_MUL_FLOAT_CONSTR_C_0010",
            "E_MUL_INT_CONSTR_C_0010",
            "E_MUL_UINT_CONSTR_C_0010",
            "E_MUL_REAL_CONSTR_C_0010",
            "E_MUL_FLOAT_CONSTR_A_0020",
            "E_MUL_INT_CONSTR_A_0020",
            "E_MUL_UINT_CONSTR_A_0020",
        ),
        alignment=Alignment(
            "agree",
            "C has the type of A and B and, for operands of one shape, their shape "
            "(E_MUL_*_CONSTR_C_0010/_0020); a fresh array is an API matter",
        ),
    ),
    Requirement(
        "C1-OUT",
        "Output argument",
        "With out=, `out` is a writeable numpy.ndarray of C's shape and native "
        "element type; it may be exactly A or B but may not otherwise share "
        "memory with them; it is filled and returned.",
        "C1",
        _SPEC,
        ("float:C1", "int:C1"),
    ),
    Requirement(
        "F-FLOAT",
        "IEEE 754 multiplication",
        "For float16, bfloat16, float32, float64: IEEE 754 binary multiplication "
        "in the operand format, round to nearest ties to even, subnormals kept "
        "(no flush to zero), infinities, NaN and signed zeros as IEEE 754 says.",
        "F",
        _SPEC,
        ("float:formula", "float:errors", "E_MUL_FLOAT_FUNC_0010"),
        alignment=Alignment(
            "agree",
            "IEEE 754 product: round to nearest, ties to even, with an unbounded exponent range "
            "then overflow to an infinity of the product's sign; NaN for a NaN operand or 0 x "
            "inf, every quiet NaN conforming; subnormal results kept; the sign is the exclusive "
            "or of the operands' signs. The profile says only 'C[i] = A[i] * B[i]': this "
            "project's SPEC decisions (SONNX_DECISIONS) and the newest text say the same. "
            "bfloat16 is covered by this project, not by the newest text",
            follows="both (the same semantics); bfloat16: this project",
        ),
    ),
    Requirement(
        "F-WRAP",
        "Integer wrap-around",
        "For integer types with overflow='wrap' (the default): the exact product "
        "reduced modulo 2^bits into the type's range (two's complement for signed).",
        "F",
        _SPEC,
        ("int:formula", "int:errors", "E_MUL_INT_FUNC_0010", "E_MUL_UINT_FUNC_0010"),
        alignment=Alignment(
            "agree",
            "the value of the type congruent to the exact product modulo 2^n "
            "(E_MUL_INT_FUNC_0010, E_MUL_UINT_FUNC_0010); overflow is nominal, not an error",
            follows="both (the same semantics)",
        ),
    ),
    Requirement(
        "F-CHECKED",
        "Checked integer product",
        "For integer types with overflow='error': the exact product when it fits "
        "the type; otherwise IntegerOverflowError naming the first offending flat "
        "(C order) index, raised before anything is written.",
        "F",
        _SPEC,
        ("int:errors", "E_MUL_INT_FUNC_0010", "E_MUL_UINT_FUNC_0010"),
        alignment=Alignment(
            "extension",
            "the newest text has no integer error condition: overflow wraps (nominal). "
            "overflow='error' is an opt-in extension of this project; the default (wrap) is what "
            "both texts specify",
            follows="both by default; the extension is opt-in",
        ),
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

# --- Alignment with the SONNX working group's informal Mul specification ----
SONNX_SOURCE: Mapping[str, str] = MappingProxyType(
    {
        "repository": "onnx/working-groups",
        "path": "safety-related-profile/sonnx/ops/spec/informal/mul/mul.md",
        "commit": "2e353359e604ccfa9c9660ab479bfed8a8673b4c",
        "tag_scheme": "section:tag; sections real, float, int as in the file's own anchors",
        "note": "Two texts of the working group are mapped. The older one (this repository, "
        "path and commit above) has no E_MUL_ tags: its keys are section:tag ([R.] "
        "restrictions, [C.] constraints and named parts). The newest one (newest_* below) "
        "tags its requirements E_MUL_<TYPE>_FUNC_0010 and E_MUL_<TYPE>_CONSTR_<A|B|C>_00x0 "
        "for REAL, FLOAT (float16, float, double), INT and UINT; the B and C constraints "
        "that only refer to the A ones are not listed. Per requirement, Requirement."
        "alignment says where the newest text agrees or differs and which text this "
        "project follows: the profile of docs/spec/sonnx_mul_profile.md.",
        "newest_repository": "ericjenn/sonnx",
        "newest_path": "ops/mul.md",
        "newest_commit": "7b7d2f455ae0357d11f27c4cf920360bd0c2ada8",
        "newest_revision": "Revision 2026-10-03: first issue of this specification, based on "
        "ONNX opset 14",
    }
)
"""Where the SONNX tags below were read (what was tried is in ``note``)."""

SONNX_TAGS: Mapping[str, str] = MappingProxyType(
    {
        "contents:types": "Contents: Mul for real; float16, float, double; "
        "int8 ... int64, uint8 ... uint64",
        "contents:onnx14": "Based on ONNX documentation version 14",
        "real:R1": "[R1] The shape of tensors shall be explicit",
        "real:R2": "[R2] Sparse tensors are not supported",
        "real:C1": "[C1] Shape consistency: tensors A, B and Y must have the same shape",
        "real:formula": "Y[i] = A[i] x B[i] for any tensor index i",
        "float:R1": "[R1] The shape of tensors shall be explicit",
        "float:R2": "[R2] All tensors shall have the same datatype",
        "float:R3": "[R3] Sparse tensors are not supported",
        "float:C1": "[C1] Shape consistency: tensors A, B and Y must have the same shape",
        "float:formula": "Y[i] = A[i] x B[i], element-wise according to IEEE 754 "
        "floating-point semantics",
        "float:errors": "Error conditions: no error condition",
        "int:R1": "[R1] The shape of tensors shall be explicit",
        "int:R2": "[R2] Sparse tensors are not supported",
        "int:C1": "[C1] Shape consistency: tensors A, B and Y must have the same shape",
        "int:C2": "[C2] Type consistency: A, B and the result share the same integer type",
        "int:formula": "Y[i] = A[i] x B[i] reduced by multiples of 2^n into the type's range "
        "(uintn: [0, 2^n); intn: [-2^(n-1), 2^(n-1)))",
        "int:errors": "Error conditions: the result differs from the product in N or Z "
        "when under- or overflow occurs",
        # The newest text (SONNX_SOURCE newest_*): quotations, shortened with "...".
        "E_MUL_REAL_FUNC_0010": "C[i] = A~[i] . B~[i], A~ and B~ being A and B broadcast to the "
        "shape of C; the multiplication is exact (in R); rank-0 tensors are broadcast; an "
        "operand may have a zero-sized dimension (C is then empty)",
        "E_MUL_REAL_CONSTR_A_0010": "Shape compatibility: the shapes of A and B are compatible "
        "for broadcasting",
        "E_MUL_REAL_CONSTR_C_0010": "Shape definition: tensor C has the shape of A and B "
        "broadcast to a common shape",
        "E_MUL_FLOAT_FUNC_0010": "NaN if A~[i] or B~[i] is NaN, or if one of them is a zero and "
        "the other an infinity; the exact product if representable; otherwise round(x): "
        "roundTiesToEven, the exponent range of the type being unbounded: a magnitude whose "
        "nearest value exceeds the largest finite value gives an infinity of the sign of x. "
        "... every quiet NaN of the type is a conforming result. ... The rounding may make the "
        "result subnormal. ... The result takes the sign of the exact product. (float16, float, "
        "double; broadcasting, rank-0 and zero-sized dims as in E_MUL_REAL_FUNC_0010)",
        "E_MUL_FLOAT_CONSTR_A_0010": "Shape compatibility: the shapes of A and B are compatible "
        "for broadcasting",
        "E_MUL_FLOAT_CONSTR_A_0020": "Type consistency: tensors A, B, and C have the same type",
        "E_MUL_FLOAT_CONSTR_C_0010": "Shape definition: tensor C has the shape of A and B "
        "broadcast to a common shape",
        "E_MUL_INT_FUNC_0010": "C[i] = A~[i] . B~[i] (mod 2^n), C[i] a value of the type of A "
        "and B (int8, int16, int32, int64); overflow is nominal: no error condition",
        "E_MUL_INT_CONSTR_A_0010": "Shape compatibility: the shapes of A and B are compatible "
        "for broadcasting",
        "E_MUL_INT_CONSTR_A_0020": "Type consistency: tensors A, B, and C have the same type",
        "E_MUL_INT_CONSTR_C_0010": "Shape definition: tensor C has the shape of A and B "
        "broadcast to a common shape",
        "E_MUL_UINT_FUNC_0010": "C[i] = A~[i] . B~[i] (mod 2^n), C[i] a value of the type of A "
        "and B (uint8, uint16, uint32, uint64); overflow is nominal: no error condition",
        "E_MUL_UINT_CONSTR_A_0010": "Shape compatibility: the shapes of A and B are compatible "
        "for broadcasting",
        "E_MUL_UINT_CONSTR_A_0020": "Type consistency: tensors A, B, and C have the same type",
        "E_MUL_UINT_CONSTR_C_0010": "Shape definition: tensor C has the shape of A and B "
        "broadcast to a common shape",
    }
)
"""The SONNX informal texts' tags by key: the older text's as short paraphrases, the
newest text's (``E_MUL_...``) as shortened quotations."""


@dataclass(frozen=True)
class Decision:
    """Where the SONNX text is silent or ambiguous: what this project decided and why."""

    topic: str
    profile_says: str
    decision: str
    why: str
    ids: tuple[str, ...]


SONNX_DECISIONS: tuple[Decision, ...] = (
    Decision(
        "float rounding",
        "'IEEE 754 floating-point semantics', no rounding mode named",
        "round to nearest, ties to even, in the operand format",
        "IEEE 754's default rounding attribute, and what numpy, ONNX Runtime and every "
        "CPU do; a fixed mode makes the result bit-exact and testable",
        ("F-FLOAT",),
    ),
    Decision(
        "NaN",
        "nothing beyond 'IEEE 754'",
        "a NaN operand or 0 x inf gives a NaN; the NaN payload is unspecified",
        "IEEE 754 fixes NaN-ness but leaves payload propagation open; hardware differs, "
        "so results are compared by bits except that any NaN matches any NaN",
        ("F-FLOAT",),
    ),
    Decision(
        "subnormals",
        "not mentioned",
        "kept (no flush to zero); the self-test fails when the FPU flushes (FTZ/DAZ)",
        "flush-to-zero is not IEEE 754; a library that sets FTZ/DAZ in the process would "
        "change results silently, so it is detected at start-up",
        ("F-FLOAT",),
    ),
    Decision(
        "signed zero and infinities",
        "not mentioned",
        "as IEEE 754: sign of zero is the XOR of the signs, overflow rounds to infinity",
        "the only reading of 'IEEE 754 semantics' for multiplication",
        ("F-FLOAT",),
    ),
    Decision(
        "bfloat16",
        "not in the SONNX type list (float16, float, double)",
        "accepted from Mul-13 on, as ONNX allows, with the same IEEE 754-style semantics "
        "(8-bit exponent, 8-bit significand)",
        "ONNX models use it; refusing it would be stricter than the profile needs, and its "
        "semantics is the same rule in a narrower format",
        ("R3-OPSET", "F-FLOAT"),
    ),
    Decision(
        "int4 / uint4",
        "listed by an earlier version of the text, not by the current one; not in ONNX Mul-14",
        "refused under R3",
        "ONNX Mul does not allow them",
        ("R3-OPSET",),
    ),
    Decision(
        "signed wrap formula",
        "the bounds of k1, k2 are written 'xxx' (incomplete)",
        "two's complement wrap: the exact product reduced modulo 2^n into [-2^(n-1), 2^(n-1))",
        "the intended reading of the formula and its int8 examples (e.g. -9 x 100 = -124)",
        ("F-WRAP",),
    ),
    Decision(
        "overflow as an error",
        "overflow is the only integer error condition; the result is the wrapped value",
        "overflow='wrap' (default) gives the SONNX result; overflow='error' is an extension "
        "that raises instead, naming the first flat index",
        "some users must not continue on a wrapped value; the default stays the profile's",
        ("F-WRAP", "F-CHECKED", "F-MODE"),
    ),
    Decision(
        "real section [C2]",
        "for real B: 'all elements must be non null' (apparently copied from Div)",
        "no constraint on values: zero operands are allowed",
        "a product is defined for zero; the float and int sections have no such constraint",
        ("F",),
    ),
    Decision(
        "explicit shape",
        "[R1] the shape of tensors shall be explicit",
        "every dimension is a positive integer known at call time; rank 0 allowed, "
        "zero-size dimensions refused",
        "the SONNX Shape invariant of the formal text requires positive dimensions",
        ("R1-DIMS",),
    ),
)
"""The project's decisions where the SONNX text leaves a choice."""

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
