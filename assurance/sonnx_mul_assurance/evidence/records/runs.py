"""The records of the runs of the tooling and of the tests: the pipeline's steps
(``pipeline.json``), a whole run of the suite (``suite/run.json``) and the
environment it ran in, pytest's JUnit cases, mutation testing (``mutants.json``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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
