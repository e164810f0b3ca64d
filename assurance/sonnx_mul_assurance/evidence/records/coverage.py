"""The records of structural coverage (``coverage.json``, written by
:mod:`sonnx_mul_assurance.structural`) and of its exemption file
(``proofs/coverage-exemptions.json``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from sonnx_mul_assurance.evidence.records.runs import TestEnvironment

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
