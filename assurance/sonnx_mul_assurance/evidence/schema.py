"""The one typed schema of the evidence files the pipeline writes and the report reads.

======================  ============================  ======================
file (``proofs/out/``)  written by                    class
======================  ============================  ======================
``why3.json``           :mod:`..why3`                 :class:`Why3Evidence`
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

To add an evidence file (the conformance runs' ``conform.json``): declare
its record dataclass (fields with their types, statuses as ``Literal``, an
``ok`` property) and its file dataclass (the records under one list field,
plus what the tool records about the run), add the file name to
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar, Union

from sonnx_mul_assurance.evidence import files


class SchemaError(ValueError):
    """An evidence file that does not match its schema."""


# --- why3.json -----------------------------------------------------------------


@dataclass
class Why3Goal:
    """One goal: Why3's prover answer ``status`` (only ``Valid`` is a proof),
    the prover's step count and the goal's pinned step limit (-1 and 0 for a
    time-only prover)."""

    file: str
    module: str
    goal: str  # "name#k": the k-th goal of that name in the module
    prover: str
    time: float
    status: str
    sha256: str
    steps: int
    steplimit: int

    @property
    def ok(self) -> bool:
        return self.status == "Valid"


@dataclass
class Why3Evidence:
    ok: bool
    errors: list[str]
    versions: dict[str, str]
    files: dict[str, str]  # proof file -> SHA-256
    total_time: float
    goals: list[Why3Goal]
    # every file the verdict depends on -> SHA-256 (evidence.binding; the gate
    # refuses the file when they are not the tree's)
    inputs: dict[str, str] = field(default_factory=dict)


# --- crosshair.json ------------------------------------------------------------


@dataclass
class CrossHairFinding:
    """One CrossHair report and the verdict of re-running it in plain Python."""

    line: int
    message: str
    call: str
    status: Literal["confirmed", "unconfirmed"]
    detail: str


@dataclass
class CrossHairFunction:
    """The check of one contract function."""

    function: str
    conditions: int
    status: Literal["pass", "counterexample", "unconfirmed", "error"]
    time: float
    exit_code: int
    findings: list[CrossHairFinding] = field(default_factory=list)
    output: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "pass"


@dataclass
class CrossHairEvidence:
    tool: Literal["crosshair"]
    crosshair_version: str
    python: str
    analysis_kind: str
    per_condition_timeout: float
    artifacts: dict[str, str]
    functions: list[CrossHairFunction]
    conditions: int
    time: float
    passed: bool
    source: str = ""  # the file of the checked functions, from the root ("": unknown)
    inputs: dict[str, str] = field(default_factory=dict)  # as Why3Evidence's


# --- exhaustive.json -----------------------------------------------------------


@dataclass
class ExhaustiveResult:
    """Every pair of one type (``pairs``), compared bit for bit with an oracle.

    ``requirements``: the ids the run is evidence for, as the producer states
    them (float: F-FLOAT; integers, both modes: F-WRAP and F-CHECKED)."""

    type: str
    requirements: list[str]
    pairs: int
    mismatches: int
    examples: list[Any]
    time: float
    pairs_per_second: int | None
    modes: list[Literal["wrap", "error"]] | None = None
    overflowing_pairs: int | None = None
    workers: int | None = None
    cpu_seconds: float | None = None  # the workers' CPU time (wall time is the machine's load)
    kernel: str | None = None  # the kernel mul ran on (native, or numpy for diagnosis)

    @property
    def ok(self) -> bool:
        return self.mismatches == 0


EXHAUSTIVE_SCOPE: dict[str, tuple[int, tuple[typing.Literal["wrap", "error"], ...]]] = {
    "int8": (1 << 16, ("wrap", "error")),
    "uint8": (1 << 16, ("wrap", "error")),
    "float16": (1 << 32, ()),
    "bfloat16": (1 << 32, ()),
}
"""What a complete exhaustive run covers: per type, every pair and the modes run."""


def exhaustive_gap(result: ExhaustiveResult) -> str | None:
    """What ``result`` leaves out of its type's scope (None: nothing)."""
    if result.type not in EXHAUSTIVE_SCOPE:
        return None
    pairs, modes = EXHAUSTIVE_SCOPE[result.type]
    if result.pairs < pairs:
        return f"{result.type}: {result.pairs} of {pairs} pairs"
    missing = [m for m in modes if m not in (result.modes or [])]
    if missing:
        return f"{result.type}: mode {'/'.join(missing)} not run"
    return None


@dataclass
class ExhaustiveEvidence:
    tool: str
    numpy: str
    complete: bool  # False: fewer first operands than every value (a partial run)
    results: list[ExhaustiveResult]
    passed: bool
    kernel: str | None = None  # the kernel mul ran on

    def gaps(self) -> list[str]:
        """What the results leave out of ``EXHAUSTIVE_SCOPE``, whatever
        ``complete`` says (empty: every pair of every type was run)."""
        by_type = {r.type: r for r in self.results}
        gaps = []
        for etype in EXHAUSTIVE_SCOPE:
            result = by_type.get(etype)
            gap = f"{etype}: not run" if result is None else exhaustive_gap(result)
            if gap is not None:
                gaps.append(gap)
        return gaps


# --- wp.json (Frama-C WP on native/src/*.c) -------------------------------------


@dataclass
class WpGoal:
    """One WP goal of C function ``function``: proved iff ``status`` is ``Valid``;
    ``steps`` is the prover's step count (-1 for Qed), held to the manifest's
    pinned limit by the check."""

    function: str
    prover: str
    status: str
    seconds: float
    steps: int

    @property
    def ok(self) -> bool:
        return self.status == "Valid"


@dataclass
class WpUnit:
    """One C file proved in one Frama-C run; ``goals`` by Frama-C's goal name."""

    source: str
    source_sha256: str
    header_sha256: str
    seconds: float
    goals: dict[str, WpGoal]
    errors: list[str]


@dataclass
class WpEvidence:
    tools: dict[str, str]
    units: list[WpUnit]
    goals: int
    verdict: Literal["pass", "fail"]
    errors: list[str]
    inputs: dict[str, str] = field(default_factory=dict)  # as Why3Evidence's


# --- native-exhaustive.json (the compiled kernel, every input) --------------------


@dataclass
class NativeCheck:
    """One exhaustive check of the compiled kernel against an independent oracle."""

    inputs: int
    mismatches: int
    seconds: float
    cpu_seconds: float

    @property
    def ok(self) -> bool:
        return self.mismatches == 0 and self.inputs > 0


@dataclass
class NativeSelftest:
    """One planted fault of the harness's negative control: ``caught`` mismatches."""

    caught: int
    seconds: float


@dataclass
class NativeExhaustiveEvidence:
    flags: list[str]  # the pinned compile flags the kernel was built with
    checks: dict[str, NativeCheck]
    selftest: dict[str, NativeSelftest]
    skipped: dict[str, str]  # check -> why this machine cannot run it
    cpu: str
    seconds: float
    verdict: Literal["pass", "fail"]
    errors: list[str]


# --- targets.json (the C kernel on every target, make check-targets) ---------------


@dataclass
class TargetType:
    """One element type's outputs on one target: the portable harness's line."""

    type: str
    pairs: int
    mismatches: int
    hash: str  # FNV-1a of the outputs: equal on every target, NaNs included
    first_mismatch: dict[str, Any] | None
    seconds: float


@dataclass
class TargetRun:
    """``make c-kernel`` for one target: its compiler, flags, verdicts and time."""

    cc: str
    flags: list[str]
    exit: int
    known_answers: bool
    types: dict[str, TargetType]
    seconds: float
    log: str


@dataclass
class TargetsEvidence:
    reference: str  # the target every other's hashes must equal (x86-64 gcc)
    runs: dict[str, dict[str, TargetRun]]  # "sample" / "--full f16" -> target -> run
    verdict: Literal["pass", "fail"]
    errors: list[str]


# --- misra.json (cppcheck's MISRA C:2012 addon on native/src/*.c) ----------------


@dataclass
class MisraFinding:
    file: str
    rule: str  # "19.2", or cppcheck's id when it could not analyse the file


@dataclass
class MisraDeviation:
    """A recorded deviation: ``count`` findings of ``rule`` in ``file``, and why."""

    rule: str
    category: str
    file: str
    count: int
    reason: str


@dataclass
class MisraEvidence:
    tool: str
    files: list[str]
    findings: list[MisraFinding]
    deviations: list[MisraDeviation]
    verdict: Literal["pass", "fail"]
    errors: list[str]
    inputs: dict[str, str] = field(default_factory=dict)  # as Why3Evidence's


# --- pipeline.json -------------------------------------------------------------


@dataclass
class PipelineStep:
    name: str
    exit_code: int
    seconds: float
    cpu_seconds: float = 0.0  # user + system of the step and its children

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


@dataclass
class PipelineRecord:
    steps: list[PipelineStep]
    total_seconds: float


# --- suite/run.json (make test) ------------------------------------------------


@dataclass
class SuiteRun:
    """A whole, passing run of the test suite by ``make test``, and the tree it ran on."""

    fingerprint: str  # suite.fingerprint() of the tree before and after the run
    argv: list[str]
    finished: str  # UTC, ISO 8601
    seconds: float
    junit_sha256: str  # of the JUnit XML the run wrote beside this record
    # the platform, compiler and floating-point mode the run recorded (its JUnit properties)
    environment: TestEnvironment | None = None


SUITE_ORIGIN = "pytest.origin.json"
"""Beside make prove's ``pytest.xml`` when that is make test's (a copy of its :class:`SuiteRun`)."""


# --- mutants.json (make mutants) ------------------------------------------------


MutantStatus = Literal["killed", "survived", "timeout", "invalid", "equivalent"]


@dataclass
class MutantOutcome:
    key: str
    file: str
    line: int
    original: str
    replacement: str
    context: str
    status: MutantStatus
    seconds: float
    detail: str = ""

    @property
    def ok(self) -> bool:
        """Killed (a timeout counts as killed) or listed as equivalent."""
        return self.status in ("killed", "timeout", "equivalent")


@dataclass
class MutantsRecord:
    mutants: int
    killed: int
    equivalent: int
    survived: int
    kill_rate: float
    seconds: float
    by_file: dict[str, dict[str, int]]
    outcomes: list[MutantOutcome]
    invalid: int = 0  # mutants that did not compile (C): not in kill_rate


# --- coverage.json (make coverage: statements, branches, MC/DC) ------------------


@dataclass
class CoverageCount:
    """Items covered out of the items there are (statements, branch outcomes or
    MC/DC conditions)."""

    covered: int
    total: int

    @property
    def complete(self) -> bool:
        return self.covered == self.total


@dataclass
class CoverageFunction:
    """One function (its builds for every ISA variant merged): ``mcdc`` is None
    where the tool measures none (coverage.py)."""

    name: str
    line: int
    lines: CoverageCount
    branches: CoverageCount
    mcdc: CoverageCount | None


@dataclass
class CoverageFile:
    path: str  # from the repository root
    language: Literal["c", "python"]
    lines: CoverageCount
    branches: CoverageCount
    mcdc: CoverageCount | None
    functions: list[CoverageFunction]


@dataclass
class CoverageGap:
    """One uncovered item: a statement (``line``), a branch outcome or an MC/DC
    condition; ``what`` tells which one on the line."""

    file: str
    function: str
    kind: Literal["line", "branch", "mcdc"]
    line: int
    what: str


@dataclass
class CoverageRequirement:
    """The product's Python covered by the tests carrying one id."""

    tests: int
    lines: CoverageCount
    branches: CoverageCount


@dataclass
class CoverageGcov:
    """gcov's figures for one file: ``lines`` executed, ``branches`` taken at least once."""

    lines: CoverageCount
    branches: CoverageCount
    run: str  # what ran


@dataclass
class CoverageEvidence:
    tools: dict[str, str]
    build: str
    tests: str  # the pytest selection run against the instrumented build
    isa_variants: list[str]  # the variants this CPU ran, the default first
    variant_tests: str
    harnesses: list[str]
    files: list[CoverageFile]
    gaps: list[CoverageGap]
    requirements: dict[str, CoverageRequirement]
    seconds: float
    timings: dict[str, float]  # wall seconds per part of the run
    errors: list[str]
    cpu_seconds: float = 0.0  # user + system of every child (wall time is the machine's load)
    # gcc's own gcov figures (statements, branches) of the kernel as gcc builds it
    # for the product, under the portable harness: a second measure
    gcov: dict[str, CoverageGcov] = field(default_factory=dict)
    # the platform, compiler and floating-point mode of the instrumented run
    environment: TestEnvironment | None = None


@dataclass
class CoverageExemption:
    """A gap accepted with its reason (proofs/coverage-exemptions.json): ``why``
    is the class of reason, ``reason`` the argument for this item."""

    file: str
    function: str
    kind: Literal["line", "branch", "mcdc"]
    line: int
    what: str
    why: Literal["deactivated", "defensive", "other-cpu", "harness", "slow-test", "not-analysed"]
    reason: str


@dataclass
class CoverageExemptions:
    version: int
    exemptions: list[CoverageExemption]


EVIDENCE: dict[str, type] = {
    files.WHY3: Why3Evidence,
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


# --- the environment of a test run (JUnit properties, run.json, coverage.json) -----


@dataclass
class TestEnvironment:
    """Where and how a test run ran (the working group's tests-part1): the
    platform, the compiler of the native kernel that ran, and the
    floating-point mode, the denormal policy included.  Written by
    :func:`sonnx_mul_assurance.evidence.environment.probe` into the suite's
    JUnit XML (testsuite properties ``sonnx_mul.<field>``), ``run.json`` and
    ``coverage.json``."""

    __test__ = False  # not a pytest test class

    platform: str  # platform.platform()
    machine: str
    python: str
    numpy: str
    isa: str  # the kernel variant in use (SONNX_MUL_ISA or the CPU's best)
    isas: str  # every variant this CPU runs
    compiler: str  # of the native extension (sonnx_mul._native.COMPILER)
    build_flags: str  # its pinned flags (sonnx_mul._native.BUILD_FLAGS)
    flt_eval_method: int  # C's FLT_EVAL_METHOD of the build (0: each type in itself)
    kernel_fp_mode: str  # what the glue establishes around every call
    rounding: str  # the process's rounding mode, probed with binary64 sums
    denormals: str  # the process's and the kernel's denormal policy, probed


ENVIRONMENT_PREFIX = "sonnx_mul."
"""The JUnit property names of a :class:`TestEnvironment`'s fields."""


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


# --- JUnit XML (pytest's format) ------------------------------------------------

JUnitStatus = Literal["passed", "failed", "error", "skipped", "xfailed"]


@dataclass(frozen=True)
class JUnitCase:
    """A test case: ``ok`` is True (passed), None (skipped, xfailed: no
    evidence either way) or False (failed, error)."""

    classname: str
    name: str
    status: JUnitStatus
    time: float
    message: str
    report: str

    @property
    def ok(self) -> bool | None:
        return {"passed": True, "skipped": None, "xfailed": None}.get(self.status, False)


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
