"""One source for the tables of why3/ and Python, and one check order.

``python -m sonnx_mul_assurance.why3.tables check`` is a ``make prove`` step; these
tests are its negative controls: a Why3 constant or a Python constant
changed alone, and a check order swapped on either side, must each fail.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from sonnx_mul import api, dtypes, validation
from sonnx_mul_assurance.why3 import instances, tables, whyml
from sonnx_mul_assurance.why3.check_order import check_order, why3_order
from sonnx_mul_assurance.why3.tables import check_generated, run_checks, stdlib_formats, why3_stdlib

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "why3", tmp_path / "why3")
    shutil.copytree(REPO / "proofs" / "drivers", tmp_path / "proofs" / "drivers")
    shutil.copytree(REPO / "proofs" / "wp", tmp_path / "proofs" / "wp")
    for generated in tables.generated_files():
        (tmp_path / generated).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / generated, tmp_path / generated)
    return tmp_path


def plant(root: Path, file: str, old: str, new: str, after: str = "", count: int = 1) -> None:
    """Replace ``count`` occurrences of ``old`` following ``after`` in ``file``."""
    path = root / file
    text = path.read_text()
    start = text.index(after)
    assert text[start:].count(old) >= count, f"anchor not found in {file}: {old!r}"
    path.write_text(text[:start] + text[start:].replace(old, new, count))


@pytest.mark.needs_prover  # why3 --print-datadir
def test_R3_OPSET_why3_tables_and_order_agree_with_python() -> None:
    assert run_checks(REPO) == []


def test_R3_OPSET_generated_file_is_the_generator_output() -> None:
    assert (REPO / tables.GENERATED).read_text() == tables.generate()
    text = tables.generate()
    assert f"max_known_opset : int = {dtypes.MAX_KNOWN_OPSET}" in text
    assert "| BFloat16 -> 13" in text and "| Int64 -> -9223372036854775808" in text


# --- Why3 side changed alone --------------------------------------------------


@pytest.mark.parametrize(
    ("file", "old", "new", "after", "expect"),
    [
        (
            "why3/profile.mlw",
            "max_known_opset : int = 28",
            "max_known_opset : int = 27",
            "",
            "profile.mlw is not",
        ),
        (
            "why3/profile.mlw",
            "| BFloat16 -> 13",
            "| BFloat16 -> 14",
            "introduced",
            "profile.mlw is not",
        ),
        (
            "why3/profile.mlw",
            "| UInt16 -> 65535",
            "| UInt16 -> 65536",
            "type_hi",
            "profile.mlw is not",
        ),
        (
            "why3/api.mlw",
            "module ApiChecks\n",
            "module ApiChecks\n  let constant max_known_opset : int = 27\n",
            "",
            "ApiChecks redefines max_known_opset",
        ),
        (
            "why3/dtype.mlw",
            "use export profile.Profile",
            "use profile.Profile",
            "",
            "does not `use export",
        ),
        (
            "why3/checked.mlw",
            "lo_int8 : int = -128",
            "lo_int8 : int = -127",
            "",
            "why3/checked.mlw is not",
        ),
        (
            "why3/checked.mlw",
            "hi_uint32 : int = 4294967295",
            "hi_uint32 : int = 4294967296",
            "",
            "why3/checked.mlw is not",
        ),
        (
            "why3/checked.mlw",
            "val hi = hi_int16",
            "val hi = lo_int16",
            "",
            "why3/checked.mlw is not",
        ),
        (
            "why3/checked.mlw",
            "0 <= imul x y <= 65535",
            "0 <= imul x y <= 65536",
            "",
            "why3/checked.mlw is not",
        ),
        (
            "why3/wrap.mlw",
            "use bv.BV16 as B",
            "use bv.BV32 as B",
            "module WrapUInt16",
            "why3/wrap.mlw is not",
        ),
        (
            "why3/wrap.mlw",
            "mod (B.t'int x * B.t'int y) 256",
            "mod (B.t'int x * B.t'int y) 255",
            "",
            "why3/wrap.mlw is not",
        ),
        ("why3/wrap.mlw", "- 32768 <= B.to_int", "- 32767 <= B.to_int", "", "why3/wrap.mlw is not"),
        ("why3/wrap.mlw", "use bv.BV128 as W", "use bv.BV64 as W", "", "why3/wrap.mlw is not"),
        (
            "why3/wrap.mlw",
            "tag : dtype = UInt64",
            "tag : dtype = UInt32",
            "",
            "why3/wrap.mlw is not",
        ),
        (
            "why3/narrowfloat.mlw",
            "< float 5 11 >",
            "< float 5 12 >",
            "",
            "why3/narrowfloat.mlw is not",
        ),
        (
            "why3/narrowfloat.mlw",
            "max_int : int = 65504",
            "max_int : int = 65505",
            "",
            "why3/narrowfloat.mlw is not",
        ),
        (
            "why3/floats.mlw",
            "use ieee_float.Float32 as F",
            "use ieee_float.Float64 as F",
            "",
            "why3/floats.mlw is not",
        ),
        (
            "why3/floats.mlw",
            "use narrowfloat.BFloat16 as F",
            "use narrowfloat.Float16 as F",
            "",
            "why3/floats.mlw is not",
        ),
        (
            "proofs/drivers/narrowfloat.gen",
            'type t "(_ FloatingPoint 5 11)"',
            'type t "(_ FloatingPoint 8 24)"',
            "",
            "proofs/drivers/narrowfloat.gen is not",
        ),
        (
            "src/sonnx_mul/_native_kinds.h",
            '[K_U16] = {"uint16", KC_UNSIGNED, 2, NPY_UINT16}',
            '[K_U16] = {"uint16", KC_SIGNED, 2, NPY_UINT16}',
            "",
            "src/sonnx_mul/_native_kinds.h is not",
        ),
        (
            "src/sonnx_mul/_native_kinds.h",
            "X(f32, float, K_F32)",
            "X(f32, double, K_F32)",
            "",
            "src/sonnx_mul/_native_kinds.h is not",
        ),
    ],
)
def test_R3_OPSET_why3_constant_changed_alone_fails(
    copy: Path, file: str, old: str, new: str, after: str, expect: str
) -> None:
    assert check_generated(copy) == []
    plant(copy, file, old, new, after)
    errors = check_generated(copy)
    assert any(expect in e for e in errors), errors


# --- Python side changed alone ------------------------------------------------


def test_R3_OPSET_python_max_opset_changed_alone_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dtypes, "MAX_KNOWN_OPSET", 27)
    assert any("profile.mlw is not" in e for e in check_generated(REPO))


def test_R3_OPSET_python_opset_table_changed_alone_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    real = dtypes.allowed_types

    def later_bfloat16(opset: int) -> tuple[dtypes.ElementType, ...]:
        return tuple(t for t in real(opset) if opset >= 14 or t is not dtypes.BFLOAT16)

    monkeypatch.setattr(dtypes, "allowed_types", later_bfloat16)
    assert tables.introduced_in()["bfloat16"] == 14
    assert any("profile.mlw is not" in e for e in check_generated(REPO))


@pytest.mark.parametrize(
    ("name", "change", "expect"),
    [
        ("int16", {"bits": 15}, "why3/checked.mlw"),
        ("uint8", {"signed": True}, "why3/wrap.mlw"),
        ("uint8", {"signed": True}, "src/sonnx_mul/_native_kinds.h"),
        ("float", {"bits": 64}, "src/sonnx_mul/_native_kinds.h"),
        ("bfloat16", {"eb": 7, "sb": 9}, "why3/floats.mlw"),
        ("bfloat16", {"eb": 7, "sb": 9}, "proofs/drivers/narrowfloat.gen"),
        ("float", {"sb": 23, "bits": 31}, "why3/floats.mlw"),
    ],
)
def test_R3_OPSET_python_type_changed_alone_fails(
    monkeypatch: pytest.MonkeyPatch, name: str, change: dict[str, object], expect: str
) -> None:
    changed = tuple(
        dataclasses.replace(t, **change) if t.onnx_name == name else t  # type: ignore[arg-type]
        for t in dtypes.ALL_TYPES
    )
    monkeypatch.setattr(dtypes, "ALL_TYPES", changed)
    errors = check_generated(REPO)
    assert any("profile.mlw is not" in e for e in errors)
    assert any(f"{expect} is not" in e for e in errors), errors


def test_R3_OPSET_python_float_width_inconsistent_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    changed = tuple(
        dataclasses.replace(t, bits=15) if t.onnx_name == "float16" else t for t in dtypes.ALL_TYPES
    )
    monkeypatch.setattr(dtypes, "ALL_TYPES", changed)
    assert "dtypes.py float16: bits != eb + sb" in check_generated(REPO)


# --- generated instances ------------------------------------------------------


def test_F_every_instance_is_generated_once_per_type() -> None:
    for path, family, types in (
        ("why3/wrap.mlw", "Wrap", [t for t in dtypes.ALL_TYPES if not t.is_float]),
        ("why3/checked.mlw", "Checked", [t for t in dtypes.ALL_TYPES if not t.is_float]),
        ("why3/floats.mlw", "", [t for t in dtypes.ALL_TYPES if t.is_float]),
    ):
        text = (REPO / path).read_text()
        assert text.startswith(instances.HEADER)
        names = whyml.module_names(text)
        for etype in types:
            module = family + instances.short_name(etype) + ("Mul" if not family else "")
            assert names.count(module) == 1, (path, module)
            body = whyml.modules(text)[module]
            assert f"tag : dtype = {instances.tag(etype)}" in body


@pytest.mark.parametrize(
    ("name", "key", "literal"),
    [
        ("float16", "one_3u", "0x1.00Cp0"),
        ("float16", "max", "0x1.FFCp15"),
        ("bfloat16", "tiny", "0x1.0p-133"),
        ("float", "one_half_4u", "0x1.800008p0"),
        ("double", "max", "0x1.FFFFFFFFFFFFFp1023"),
        ("double", "tiny", "0x1.0p-1074"),
    ],
)
def test_F_FLOAT_known_answer_literals_follow_the_format(name: str, key: str, literal: str) -> None:
    etype = dtypes.by_onnx_name(name)
    assert etype is not None
    assert instances.known_answers(etype)[key] == literal


@pytest.mark.needs_prover  # why3 --print-datadir
def test_F_FLOAT_stdlib_formats_are_read_from_why3() -> None:
    stdlib = why3_stdlib()
    assert stdlib_formats(stdlib) == []
    assert stdlib_formats(None) != []


@pytest.mark.needs_prover  # why3 --print-datadir
def test_F_FLOAT_stdlib_format_assumed_wrong_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(instances, "STDLIB_FORMATS", {(8, 23): "ieee_float.Float32"})
    errors = stdlib_formats(why3_stdlib())
    assert any("ieee_float.Float32 is not < float 8 23 >" in e for e in errors), errors


# --- check order --------------------------------------------------------------


def test_R3_check_order_is_parsed_from_api_mlw() -> None:
    order, errors = why3_order(REPO)
    assert errors == []
    keys = [c.key for c in order]
    assert keys[0] == "OpsetError" and keys[-1] == "IntegerOverflow"
    assert keys.index("SparseError@A") < keys.index("SparseError@B")
    by_key = {c.key: (c.error, c.requirements) for c in order}
    assert by_key["TypeMismatch"] == ("ElementTypeError", ("R3", "R3-SAME"))
    assert check_order(REPO) == []


def _swapped_check_call(
    a: object, b: object, opset: object, overflow: object
) -> tuple[object, object, object]:
    """validation.check_call with the shapes checked before the element types."""
    validation.check_arguments(opset, overflow)
    dense_a = validation.check_dense(a, "A")
    dense_b = validation.check_dense(b, "B")
    validation.check_shapes(dense_a, dense_b)
    etype = validation.check_element_types(dense_a, dense_b, opset)  # type: ignore[arg-type]
    return dense_a, dense_b, etype


def _dense_b_first(a: object, b: object, opset: object, overflow: object) -> tuple[object, ...]:
    validation.check_arguments(opset, overflow)
    dense_b = validation.check_dense(b, "B")
    dense_a = validation.check_dense(a, "A")
    etype = validation.check_element_types(dense_a, dense_b, opset)  # type: ignore[arg-type]
    validation.check_shapes(dense_a, dense_b)
    return dense_a, dense_b, etype


@pytest.mark.parametrize("swapped", [_swapped_check_call, _dense_b_first])
def test_R3_swapped_python_order_fails(monkeypatch: pytest.MonkeyPatch, swapped: object) -> None:
    monkeypatch.setattr(api, "check_call", swapped)
    errors = check_order(REPO)
    assert errors and all("violating" in e for e in errors), errors


def test_R3_python_type_checks_swapped_inside_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    real = validation.check_element_types

    def allowed_first(a: object, b: object, opset: int) -> dtypes.ElementType:
        for x in (a, b):
            etype = dtypes.element_type(x.dtype)  # type: ignore[attr-defined]
            if etype is not None and etype not in dtypes.allowed_types(opset):
                raise validation.ElementTypeError("not allowed", ("R3", "R3-OPSET"))
        return real(a, b, opset)  # type: ignore[arg-type]

    monkeypatch.setattr(validation, "check_element_types", allowed_first)
    errors = check_order(REPO)
    assert any("TypeMismatch" in e and "TypeNotAllowed" in e for e in errors), errors


@pytest.mark.parametrize(
    ("old", "new", "after"),
    [
        # dense B before dense A in every program (and the raises kept provable)
        ("check_dense ka;\n    check_dense kb;", "check_dense kb;\n    check_dense ka;", ""),
        # the element types: allowed before same
        (
            "if not (same_dtype ta tb) then raise TypeMismatch;\n"
            "    if not (allowed ta opset) then raise TypeNotAllowed",
            "if not (allowed ta opset) then raise TypeNotAllowed;\n"
            "    if not (same_dtype ta tb) then raise TypeMismatch",
            "",
        ),
        # shapes before element types
        (
            "check_element_types opset ta tb;\n    check_shapes a b;",
            "check_shapes a b;\n    check_element_types opset ta tb;",
            "",
        ),
    ],
)
def test_R3_swapped_why3_order_fails(copy: Path, old: str, new: str, after: str) -> None:
    text = (copy / "why3/api.mlw").read_text()
    plant(copy, "why3/api.mlw", old, new, after, count=text.count(old))
    errors = check_order(copy)
    assert errors and all("violating" in e for e in errors), errors


def test_R3_why3_order_differing_between_programs_fails(copy: Path) -> None:
    plant(
        copy,
        "why3/api.mlw",
        "check_dense ka;\n    check_dense kb;",
        "check_dense kb;\n    check_dense ka;",
        "let mul_into",
    )
    _, errors = why3_order(copy)
    assert any("not run the checks in the same order" in e for e in errors), errors


def test_R3_why3_error_mapping_changed_fails(copy: Path) -> None:
    plant(copy, "why3/api.mlw", "ElementTypeError [R3, R3-SAME]", "ElementTypeError [R3]")
    errors = check_order(copy)
    assert any(
        e.startswith("violating ['TypeMismatch']") and e.endswith("expected ElementTypeError['R3']")
        for e in errors
    ), errors


def test_R3_why3_check_without_python_counterpart_fails(copy: Path) -> None:
    plant(
        copy,
        "why3/api.mlw",
        "exception OutError ",
        "exception Extra (* raises: ArgumentError [C1-OUT] *)\n  exception OutError ",
    )
    plant(
        copy,
        "why3/api.mlw",
        "raise OutError;",
        "raise OutError;\n    raise Extra;",
        "let mul_checked_into",
    )
    errors = check_order(copy)
    assert any("Extra has no violating input" in e for e in errors), errors
