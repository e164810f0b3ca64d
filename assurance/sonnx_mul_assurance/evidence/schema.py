"""The one typed schema of the evidence files the pipeline writes and the report reads.

======================  ============================  ======================
file (``proofs/out/``)  written by                    class
======================  ============================  ======================
``why3.json``           :mod:`..why3`                 :class:`Why3Evidence`
``coq.json``            :mod:`..why3.coq`             :class:`CoqEvidence`
``crosshair.json``      :mod:`..crosshair`            :class:`CrossHairEvidence`
``exhaustive.json``     :mod:`..exhaustive`           :class:`ExhaustiveEvidence`
``wp.json``             :mod:`..wp`                   :class:`WpEvidence`
``misra.json``          :mod:`..misra`                :class:`MisraEvidence`
``pipeline.json``       :mod:`..pipeline`             :class:`PipelineRecord`
``suite/run.json``      :mod:`..suite` (make test)    :class:`SuiteRun`
``pytest.origin.json``  :mod:`..suite` (make prove)   :class:`SuiteRun` (the run taken)
``mutants.json``        :mod:`..mutants`              :class:`MutantsRecord`
``coverage.json``       :mod:`..structural`           :class:`CoverageEvidence`
``pytest.xml``          pytest ``--junitxml``         :func:`read_junit` -> :class:`JUnitCase`
======================  ============================  ======================

Writers build these dataclasses and :func:`dump` them; readers :func:`load`
them.  ``load`` is strict: a missing key, an unknown key, a value of the
wrong type or a status outside the declared ``Literal`` raises
:class:`SchemaError` (the report turns it into a gate problem).  Every
record says itself whether it is a pass (``ok``), so no reader guesses
among keys or status words.

The records are declared by kind of evidence in
:mod:`sonnx_mul_assurance.evidence.records` (analyses, every_input, runs,
coverage) and re-exported here, so that every reader and writer names them
``schema.X``; this module holds the strict reading and writing of them.

To add an evidence file (the conformance runs' ``conform.json``): declare
its record dataclass (fields with their types, statuses as ``Literal``, an
``ok`` property) and its file dataclass (the records under one list field,
plus what the tool records about the run) in the module of its kind under
``records/``, re-export them here, add the file name to
:data:`EVIDENCE`, make the tool ``dump`` it, and declare it (reader,
required or optional, meaning of its absence, claim files) in
:mod:`sonnx_mul_assurance.report.protocol`, the one list the report, its
gate and its hashes iterate.  ``load`` and
``dump`` need no change: they follow the type hints (``str``, ``int``,
``float``, ``bool``, ``None``, ``list[X]``, ``dict[str, X]``, ``X | None``,
``Literal[...]``, nested dataclasses; a field with a default may be absent).
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, TypeVar, Union

from sonnx_mul_assurance.evidence import files
from sonnx_mul_assurance.evidence.records.analyses import (
    CoqEvidence,
    CoqGoal,
    CrossHairEvidence,
    CrossHairFinding,
    CrossHairFunction,
    MisraDeviation,
    MisraEvidence,
    MisraFinding,
    Why3Evidence,
    Why3Goal,
    WpEvidence,
    WpGoal,
    WpUnit,
)
from sonnx_mul_assurance.evidence.records.coverage import (
    CoverageCount,
    CoverageEvidence,
    CoverageExemption,
    CoverageExemptions,
    CoverageFile,
    CoverageFunction,
    CoverageGap,
    CoverageGcov,
    CoverageRequirement,
)
from sonnx_mul_assurance.evidence.records.every_input import (
    EXHAUSTIVE_SCOPE,
    ExhaustiveEvidence,
    ExhaustiveResult,
    NativeCheck,
    NativeExhaustiveEvidence,
    NativeSelftest,
    TargetRun,
    TargetsEvidence,
    TargetType,
    exhaustive_gap,
)
from sonnx_mul_assurance.evidence.records.runs import (
    ENVIRONMENT_PREFIX,
    SUITE_ORIGIN,
    JUnitCase,
    JUnitStatus,
    MutantOutcome,
    MutantsRecord,
    MutantStatus,
    PipelineRecord,
    PipelineStep,
    SuiteRun,
    TestEnvironment,
)

__all__ = [
    "ENVIRONMENT_PREFIX",
    "EVIDENCE",
    "EXHAUSTIVE_SCOPE",
    "SUITE_ORIGIN",
    "CoqEvidence",
    "CoqGoal",
    "CoverageCount",
    "CoverageEvidence",
    "CoverageExemption",
    "CoverageExemptions",
    "CoverageFile",
    "CoverageFunction",
    "CoverageGap",
    "CoverageGcov",
    "CoverageRequirement",
    "CrossHairEvidence",
    "CrossHairFinding",
    "CrossHairFunction",
    "ExhaustiveEvidence",
    "ExhaustiveResult",
    "JUnitCase",
    "JUnitStatus",
    "MisraDeviation",
    "MisraEvidence",
    "MisraFinding",
    "MutantOutcome",
    "MutantStatus",
    "MutantsRecord",
    "NativeCheck",
    "NativeExhaustiveEvidence",
    "NativeSelftest",
    "PipelineRecord",
    "PipelineStep",
    "SchemaError",
    "SuiteRun",
    "TargetRun",
    "TargetType",
    "TargetsEvidence",
    "TestEnvironment",
    "Why3Evidence",
    "Why3Goal",
    "WpEvidence",
    "WpGoal",
    "WpUnit",
    "dump",
    "exhaustive_gap",
    "from_json",
    "junit_environment",
    "load",
    "read_junit",
    "to_json",
]


class SchemaError(ValueError):
    """An evidence file that does not match its schema."""


EVIDENCE: dict[str, type] = {
    files.WHY3: Why3Evidence,
    files.COQ: CoqEvidence,
    files.CROSSHAIR: CrossHairEvidence,
    files.EXHAUSTIVE: ExhaustiveEvidence,
    files.WP: WpEvidence,
    files.MISRA: MisraEvidence,
    files.PIPELINE: PipelineRecord,
    files.SUITE_RUN: SuiteRun,
    files.MUTANTS: MutantsRecord,
    files.COVERAGE: CoverageEvidence,
}
"""File name in ``proofs/out/`` -> its schema."""


# --- loading and dumping -------------------------------------------------------

T = TypeVar("T")


def load(cls: type[T], path: Path) -> T:
    """The file at ``path`` as ``cls``; SchemaError when it does not match,
    or when an object repeats a key (JSON parsers keep one of the two
    silently: a goal recorded twice must not pass as one)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_unique_keys)
    except SchemaError as exc:
        raise SchemaError(f"{path.name}: {exc}") from exc
    except ValueError as exc:
        raise SchemaError(f"{path.name}: not JSON ({exc})") from exc
    return from_json(cls, data, path.name)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for key, _ in pairs:
        counts[key] = counts.get(key, 0) + 1
    repeated = sorted(k for k, n in counts.items() if n > 1)
    if repeated:
        raise SchemaError(f"duplicated key(s) {', '.join(repeated)}")
    return dict(pairs)


def dump(obj: object, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_json(obj), indent=1) + "\n", encoding="utf-8")


def to_json(obj: object) -> dict[str, Any]:
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        raise TypeError(f"not a schema object: {obj!r}")
    return dataclasses.asdict(obj)


def from_json(cls: type[T], data: object, where: str = "") -> T:
    """``data`` (parsed JSON) as ``cls``, checked field by field."""
    where = where or cls.__name__
    if not isinstance(data, dict):
        raise SchemaError(f"{where}: expected an object, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise SchemaError(f"{where}: unknown key(s) {', '.join(unknown)}")
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for name, f in fields.items():
        if name in data:
            values[name] = _value(hints[name], data[name], f"{where}.{name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise SchemaError(f"{where}: missing key {name}")
    return cls(**values)


def _value(tp: Any, value: object, where: str) -> Any:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return from_json(tp, value, where)
    if tp is Any:
        return value
    if origin is Literal:
        if value not in args:
            raise SchemaError(f"{where}: {value!r} is not one of {', '.join(map(repr, args))}")
        return value
    if origin in (Union, types.UnionType):
        errors = []
        for option in args:
            try:
                return _value(option, value, where)
            except SchemaError as exc:
                errors.append(str(exc))
        raise SchemaError(" / ".join(errors))
    if origin is list:
        if not isinstance(value, list):
            raise SchemaError(f"{where}: expected a list")
        return [_value(args[0], v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise SchemaError(f"{where}: expected an object")
        return {k: _value(args[1], v, f"{where}.{k}") for k, v in value.items()}
    return _scalar(tp, value, where)


def _scalar(tp: Any, value: object, where: str) -> Any:
    # bool is an int in Python: never accept one for the other.
    if tp is type(None) and value is None:
        return None
    if tp is bool and isinstance(value, bool):
        return value
    if tp is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if tp is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if tp is str and isinstance(value, str):
        return value
    name = getattr(tp, "__name__", str(tp))
    raise SchemaError(f"{where}: expected {name}, got {type(value).__name__}")


def junit_environment(path: Path) -> TestEnvironment | None:
    """The test environment a JUnit file records (None: none recorded, or off
    the schema: a field missing or not of its type)."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError):
        return None
    props = {
        p.get("name", "")[len(ENVIRONMENT_PREFIX) :]: p.get("value", "")
        for p in root.iter("property")
        if p.get("name", "").startswith(ENVIRONMENT_PREFIX)
    }
    if not props:
        return None
    raw: dict[str, Any] = dict(props)
    if raw.get("flt_eval_method", "").lstrip("-").isdigit():
        raw["flt_eval_method"] = int(raw["flt_eval_method"])
    try:
        return from_json(TestEnvironment, raw, path.name)
    except SchemaError:
        return None


def read_junit(paths: Iterable[Path]) -> list[JUnitCase]:
    """The test cases of JUnit XML files; SchemaError for a file that is not
    JUnit (root ``testsuites``/``testsuite``, cases with a name and class)."""
    cases: list[JUnitCase] = []
    for path in paths:
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as exc:
            raise SchemaError(f"{path.name}: not XML ({exc})") from exc
        if root.tag not in ("testsuites", "testsuite"):
            raise SchemaError(f"{path.name}: root <{root.tag}> is not a JUnit test suite")
        for tc in root.iter("testcase"):
            if not tc.get("name") or tc.get("classname") is None:
                raise SchemaError(f"{path.name}: a <testcase> without name or classname")
            status: JUnitStatus = "passed"
            message = ""
            for child in tc:
                if child.tag in ("failure", "error"):
                    status = "failed" if child.tag == "failure" else "error"
                    message = child.get("message", "")
                    break
                if child.tag == "skipped":
                    xfail = "xfail" in (child.get("type", "") + child.get("message", ""))
                    status = "xfailed" if xfail else "skipped"
                    message = child.get("message", "")
            try:
                seconds = float(tc.get("time", "0") or 0)
            except ValueError as exc:
                raise SchemaError(f"{path.name}: testcase time {tc.get('time')!r}") from exc
            cases.append(
                JUnitCase(
                    tc.get("classname", ""),
                    tc.get("name", ""),
                    status,
                    seconds,
                    message[:300],
                    str(path),
                )
            )
    return cases
