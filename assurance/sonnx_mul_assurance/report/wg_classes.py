"""The SONNX working group's test classes, per E_MUL tag, and the tests of each.

The working group's test guidelines (tests-part2) ask, for each requirement
tag, for tests of the equivalence classes built from the domain's
boundaries: for floats NaN, the infinities, the zeros, the smallest and
largest subnormal and normal; 1 as the neutral element, 0 as the absorbing
one, commutativity; inputs chosen so that the expected outputs differ.
:data:`CLASSES` is the one list of those classes, per tag of
``alignment.SONNX_TAGS`` (an integer type has no NaN, infinity or
subnormal: its classes are its range's ends and wrap-around; a shape or
type constraint's classes are the shapes or types it accepts and refuses).

``tests/operator/test_wg_classes.py`` runs one test case per tag, class and
type, named ``<test>[<tag>-<class>-<type>]`` (:func:`case_id`), where the
test's name carries a registry id mapped to the tag (:data:`TESTED_BY`):
the report maps it to that id as it maps every test. :func:`section` is the
report's entry: per tag, per class, the JUnit cases that name it and their
outcome; :func:`problems` what fails the gate when the suite's results are
read: a class with no passing case.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from sonnx_mul_assurance.evidence import files, schema
from sonnx_mul_assurance.report.alignment import SONNX_TAGS


@dataclass(frozen=True)
class WgClass:
    key: str  # a word of [a-z_], unique in its tag
    holds: str  # what a case of the class checks


_VALUES = (
    "the product of each operand of the class with every edge value of the type "
    "(and the swapped pair), bit for bit against the reference oracle (mul_reference)"
)

FLOAT_CLASSES: tuple[WgClass, ...] = (
    WgClass("nan", f"NaN (quiet, both signs): {_VALUES}; every result NaN"),
    WgClass("pos_inf", f"+inf: {_VALUES}"),
    WgClass("neg_inf", f"-inf: {_VALUES}"),
    WgClass("pos_zero", f"+0: {_VALUES}"),
    WgClass("neg_zero", f"-0: {_VALUES}"),
    WgClass("min_subnormal", f"the smallest subnormal, both signs: {_VALUES}"),
    WgClass("max_subnormal", f"the largest subnormal, both signs: {_VALUES}"),
    WgClass("min_normal", f"the smallest normal, both signs: {_VALUES}"),
    WgClass("max_normal", f"the largest finite value, both signs: {_VALUES}"),
    WgClass("one_neutral", "x * 1 and 1 * x have the bits of x for every non-NaN edge value x"),
    WgClass(
        "zero_absorbing",
        "x * 0 and 0 * x are a zero of sign x's XOR 0's for every finite edge value x "
        "(NaN for an infinity or a NaN), both zeros",
    ),
    WgClass("commutative", "a * b has the bits of b * a for every pair of edge values"),
    WgClass(
        "distinct_outputs",
        "operands whose expected products are pairwise different and differ from either "
        "operand (a swapped lane, a returned operand or a constant shows)",
    ),
)
"""E_MUL_FLOAT_FUNC_0010's classes (float16, float, double)."""

_INT_COMMON: tuple[WgClass, ...] = (
    WgClass("zero_absorbing", "x * 0 and 0 * x are 0 for every edge value x"),
    WgClass("one_neutral", "x * 1 and 1 * x are x for every edge value x"),
    WgClass("largest", f"the type's largest value: {_VALUES}"),
    WgClass(
        "wraps",
        "products outside the type's range (largest * largest, smallest * largest, ...) "
        "reduced modulo 2^n, against the oracle",
    ),
    WgClass("commutative", "a * b == b * a for every pair of edge values"),
    WgClass(
        "distinct_outputs",
        "operands whose expected products are pairwise different and differ from either operand",
    ),
)
INT_CLASSES: tuple[WgClass, ...] = (
    *_INT_COMMON,
    WgClass("smallest", f"the type's smallest value: {_VALUES}"),
    WgClass("minus_one", "x * -1 is -x modulo 2^n for every edge value x (the smallest kept)"),
)
"""E_MUL_INT_FUNC_0010's classes (int8 ... int64)."""
UINT_CLASSES: tuple[WgClass, ...] = _INT_COMMON
"""E_MUL_UINT_FUNC_0010's classes (uint8 ... uint64: the smallest value is 0, the
absorbing class)."""

REAL_CLASSES: tuple[WgClass, ...] = (
    WgClass(
        "exact",
        "products that the type represents are exact (checked mode for integers, no "
        "overflow), against the oracle's exact product",
    ),
    WgClass("one_neutral", "x * 1 is x"),
    WgClass("zero_absorbing", "x * 0 is 0"),
    WgClass("commutative", "a * b == b * a"),
    WgClass(
        "distinct_outputs",
        "operands whose exact products are pairwise different and differ from either operand",
    ),
)
"""E_MUL_REAL_FUNC_0010's classes, in every type of the newest text."""

SHAPE_CLASSES: tuple[WgClass, ...] = (
    WgClass("same_shape", "operands of one shape (ranks 0, 1 and 3) are accepted"),
    WgClass(
        "broadcast_refused",
        "shapes compatible only by broadcasting (a vector against a matrix, rank 0 against "
        "rank 2, a dimension 1) are refused by R4: the profile differs from the tag",
    ),
)
"""*_CONSTR_A_0010's classes."""

TYPE_CLASSES: tuple[WgClass, ...] = (
    WgClass("same_type", "A, B and C of one type: accepted, C has it"),
    WgClass(
        "mixed_types",
        "A and B of two types (each other type of the tag's family and "
        "another family): refused by R3-SAME",
    ),
)
"""*_CONSTR_A_0020's classes."""

RESULT_CLASSES: tuple[WgClass, ...] = (
    WgClass("result_shape", "C has the shape of A and B (ranks 0, 1, 2 and 4), a fresh array"),
)
"""*_CONSTR_C_0010's classes."""

_FAMILIES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "FLOAT": ("float16", "float", "double"),
        "INT": ("int8", "int16", "int32", "int64"),
        "UINT": ("uint8", "uint16", "uint32", "uint64"),
        "REAL": (
            "float16", "float", "double", "int8", "int16", "int32", "int64",
            "uint8", "uint16", "uint32", "uint64",
        ),
    }
)  # fmt: skip
"""The ONNX types of each tag family of the newest text (it has no bfloat16)."""


def _classes_of(tag: str) -> tuple[WgClass, ...]:
    if tag.endswith("_FUNC_0010"):
        family = tag.split("_")[2]
        return {"FLOAT": FLOAT_CLASSES, "INT": INT_CLASSES, "UINT": UINT_CLASSES}.get(
            family, REAL_CLASSES
        )
    if tag.endswith("_CONSTR_A_0010"):
        return SHAPE_CLASSES
    if tag.endswith("_CONSTR_A_0020"):
        return TYPE_CLASSES
    return RESULT_CLASSES


TAGS: tuple[str, ...] = tuple(sorted(t for t in SONNX_TAGS if t.startswith("E_MUL_")))
"""Every E_MUL tag of the newest text, as ``alignment.SONNX_TAGS`` holds them."""

CLASSES: Mapping[str, tuple[WgClass, ...]] = MappingProxyType({t: _classes_of(t) for t in TAGS})
"""Per E_MUL tag, its test classes."""

TYPES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {t: _FAMILIES[t.split("_")[2]] for t in TAGS}
)
"""Per E_MUL tag, the ONNX types its cases run in."""


def _test_of(tag: str) -> str:
    family = tag.split("_")[2]
    if tag.endswith("_FUNC_0010"):
        by_family = {"REAL": "test_F_wg_class", "FLOAT": "test_F_FLOAT_wg_class"}
        return by_family.get(family, "test_F_WRAP_wg_class")
    if tag.endswith("_CONSTR_A_0010"):
        return "test_R4_wg_class"
    if tag.endswith("_CONSTR_A_0020"):
        return "test_R3_SAME_wg_class"
    return "test_C1_wg_class"


TESTED_BY: Mapping[str, str] = MappingProxyType({t: _test_of(t) for t in TAGS})
"""Per E_MUL tag, the test function of its cases (its name carries a registry id
that ``alignment`` maps to the tag)."""


def case_id(tag: str, key: str, onnx_type: str) -> str:
    return f"{tag}-{key}-{onnx_type}"


def cases() -> list[tuple[str, str, str]]:
    """Every (tag, class key, type) the test module runs."""
    return [(t, c.key, ty) for t in TAGS for c in CLASSES[t] for ty in TYPES[t]]


_CASE = re.compile(r"\[(E_MUL_[A-Z0-9_]+?_\d{4})-([a-z_]+)-([a-z0-9]+)\]$")


def section(junit_cases: Iterable[Any]) -> dict[str, Any]:
    """The report's entry: per tag, per class, its statement and its cases
    (``file::test[id]`` and outcome), from JUnit cases (``schema.JUnitCase``)."""
    found: dict[tuple[str, str], list[list[str]]] = {}
    for case in junit_cases:
        hit = _CASE.search(case.name)
        if hit:
            found.setdefault((hit.group(1), hit.group(2)), []).append(
                [f"{case.classname}::{case.name}", case.status]
            )
    return {
        tag: [
            {"class": c.key, "holds": c.holds, "cases": sorted(found.get((tag, c.key), []))}
            for c in CLASSES[tag]
        ]
        for tag in TAGS
    }


def problems(entry: Mapping[str, Any]) -> list[str]:
    """A class with no passing case (absent or failed), per tag."""
    out = []
    for tag, classes in entry.items():
        for c in classes:
            if not any(status == "passed" for _, status in c["cases"]):
                out.append(f"SONNX test class {tag} / {c['class']}: no passing test case")
    return out


def junit_cases(evidence_dir: Path) -> list[Any]:
    """The JUnit cases the report's pytest source reads (``pytest.xml`` and the
    other JUnit files beside it); none when there is no such file."""
    paths = sorted(
        {
            *evidence_dir.glob(files.PYTEST),
            *evidence_dir.glob("*.junit.xml"),
            *evidence_dir.glob("junit*.xml"),
        }
    )
    try:
        return list(schema.read_junit(paths))
    except schema.SchemaError:
        return []  # the pytest source reports a file off its schema


def gate_problems(entry: Mapping[str, Any]) -> list[str]:
    """:func:`problems` when the results hold the classes' cases at all (a run of
    part of the suite without them is not asked for them)."""
    ran = any(c["cases"] for classes in entry.values() for c in classes)
    return problems(entry) if ran else []
