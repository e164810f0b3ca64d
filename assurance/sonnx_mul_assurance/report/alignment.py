"""How each requirement relates to the SONNX working group's informal Mul texts.

Read by the traceability report only (issue 29: the product carries what
runs). The requirement ids are ``sonnx_mul.requirements.REGISTRY``'s, the one
registry; ``BY_REQUIREMENT`` adds to some of them the tags of the SONNX texts
they trace to and where the newest text agrees or differs. A test keeps its
keys within the registry.
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


NOT_COVERED = Alignment(
    "not covered", "an API or project requirement: the newest SONNX text has no counterpart"
)


@dataclass(frozen=True)
class Mapped:
    """The SONNX side of one requirement."""

    tags: tuple[str, ...]
    """Tags of the informal texts (keys of ``SONNX_TAGS``): ``section:tag`` of the
    older text, ``E_MUL_...`` of the newest one."""
    alignment: Alignment
    """Where the newest SONNX text agrees or differs, and which text is followed."""


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

_BY_ID: dict[str, Mapped] = {
    "R1": Mapped(
        (
            "float:R1",
            "int:R1",
            "real:R1",
            "float:C1",
            "int:C1",
            "real:C1",
            *_SHAPE_TAGS,
        ),
        Alignment(
            "differ",
            "the newest text requires only shapes compatible for broadcasting "
            "(E_MUL_*_CONSTR_A_0010) and defines C on the broadcast shape (E_MUL_*_FUNC_0010); "
            "the profile requires the same shape. Both agree when A and B have the same shape.",
        ),
    ),
    "R2": Mapped(
        ("float:R3", "int:R2", "real:R2"),
        Alignment(
            "not covered",
            "mul.md defers to the general restrictions (common/general_restrictions.md, not read "
            "here); no E_MUL tag is about sparse tensors",
        ),
    ),
    "R3": Mapped(
        (
            "contents:types",
            "E_MUL_FLOAT_CONSTR_A_0020",
            "E_MUL_INT_CONSTR_A_0020",
            "E_MUL_UINT_CONSTR_A_0020",
        ),
        Alignment(
            "differ",
            "same numerical types, one type for A, B and C (E_MUL_*_CONSTR_A_0020), but the "
            "newest text lists float16, float, double and the 8 integer types without bfloat16; "
            "the profile's type list (and ONNX Mul-13/14) has bfloat16, which this project "
            "accepts",
        ),
    ),
    "R4": Mapped(
        (
            "float:C1",
            "int:C1",
            "real:C1",
            *_SHAPE_TAGS,
        ),
        Alignment(
            "differ",
            "the newest text allows multidirectional (numpy-style) broadcasting, rank-0 "
            "broadcasting included (E_MUL_*_FUNC_0010, E_MUL_*_CONSTR_A_0010); the profile "
            "forbids broadcasting even between broadcastable shapes, which this project refuses",
        ),
    ),
    "C1": Mapped(
        (
            "float:C1",
            "int:C1",
            "real:C1",
            "E_MUL_FLOAT_CONSTR_C_0010",
            "E_MUL_INT_CONSTR_C_0010",
            "E_MUL_UINT_CONSTR_C_0010",
            "E_MUL_REAL_CONSTR_C_0010",
        ),
        Alignment(
            "differ",
            "the newest text gives C the broadcast shape of A and B (E_MUL_*_CONSTR_C_0010); the "
            "profile gives C the common shape N(C)=N(A)=N(B). They agree for operands of one "
            "shape, the only ones the profile admits",
        ),
    ),
    "F": Mapped(
        (
            "real:formula",
            "float:formula",
            "int:formula",
            "E_MUL_REAL_FUNC_0010",
            "E_MUL_FLOAT_FUNC_0010",
            "E_MUL_INT_FUNC_0010",
            "E_MUL_UINT_FUNC_0010",
        ),
        Alignment(
            "agree",
            "C[i] = A[i] x B[i] element-wise for every index (E_MUL_*_FUNC_0010); the newest text"
            " reads the operands through broadcasting, which is the identity for operands of one "
            "shape",
        ),
    ),
    "R1-DIMS": Mapped(
        (
            "float:R1",
            "int:R1",
            "E_MUL_FLOAT_FUNC_0010",
            "E_MUL_INT_FUNC_0010",
            "E_MUL_UINT_FUNC_0010",
        ),
        Alignment(
            "differ",
            "the newest text allows zero-sized dimensions (an empty C, E_MUL_*_FUNC_0010 'Zero-"
            "sized dimensions'); the profile's Shape invariant (every dimension >= 1), which this"
            " project follows, refuses them. Rank 0 is allowed by both",
        ),
    ),
    "R2-DENSE": Mapped(
        ("float:R3", "int:R2"),
        NOT_COVERED,
    ),
    "R3-SAME": Mapped(
        (
            "float:R2",
            "int:C2",
            "E_MUL_FLOAT_CONSTR_A_0020",
            "E_MUL_INT_CONSTR_A_0020",
            "E_MUL_UINT_CONSTR_A_0020",
        ),
        Alignment(
            "agree",
            "A, B and C have the same type (E_MUL_*_CONSTR_A_0020 and the B/C constraints that "
            "refer to it); no promotion in either text",
        ),
    ),
    "R3-OPSET": Mapped(
        ("contents:types", "contents:onnx14", "E_MUL_FLOAT_FUNC_0010"),
        Alignment(
            "differ",
            "the newest text is based on ONNX opset 14 only and has no bfloat16; this project "
            "follows the profile's type list and ONNX's Mul-1/6/7/13/14 type tables by opset",
        ),
    ),
    "C1-RESULT": Mapped(
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
        Alignment(
            "agree",
            "C has the type of A and B and, for operands of one shape, their shape "
            "(E_MUL_*_CONSTR_C_0010/_0020); a fresh array is an API matter",
        ),
    ),
    "C1-OUT": Mapped(
        ("float:C1", "int:C1"),
        NOT_COVERED,
    ),
    "F-FLOAT": Mapped(
        ("float:formula", "float:errors", "E_MUL_FLOAT_FUNC_0010"),
        Alignment(
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
    "F-WRAP": Mapped(
        ("int:formula", "int:errors", "E_MUL_INT_FUNC_0010", "E_MUL_UINT_FUNC_0010"),
        Alignment(
            "agree",
            "the value of the type congruent to the exact product modulo 2^n "
            "(E_MUL_INT_FUNC_0010, E_MUL_UINT_FUNC_0010); overflow is nominal, not an error",
            follows="both (the same semantics)",
        ),
    ),
    "F-CHECKED": Mapped(
        ("int:errors", "E_MUL_INT_FUNC_0010", "E_MUL_UINT_FUNC_0010"),
        Alignment(
            "extension",
            "the newest text has no integer error condition: overflow wraps (nominal). "
            "overflow='error' is an opt-in extension of this project; the default (wrap) is what "
            "both texts specify",
            follows="both by default; the extension is opt-in",
        ),
    ),
}
BY_REQUIREMENT: Mapping[str, Mapped] = MappingProxyType(_BY_ID)
"""The SONNX side of the requirements that have one, by requirement id."""


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


def tags(req_id: str) -> tuple[str, ...]:
    """The SONNX tags of ``req_id``; () when it has none."""
    found = BY_REQUIREMENT.get(req_id)
    return found.tags if found else ()


def alignment(req_id: str) -> Alignment:
    """Where the newest SONNX text stands on ``req_id``: not covered when this table lacks it."""
    found = BY_REQUIREMENT.get(req_id)
    return found.alignment if found else NOT_COVERED
