"""The records of the analyses of the code: Why3's proofs (``why3.json``), the Coq
proofs of Why3 goals (``coq.json``), CrossHair's contract checks (``crosshair.json``),
Frama-C WP's proofs (``wp.json``) and cppcheck's MISRA C findings (``misra.json``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

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


# --- coq.json (the Coq proofs of Why3 goals, checked by coqc) --------------------


@dataclass
class CoqGoal:
    """One Why3 goal of theory ``file`` (module ``module``) and the verdict on
    its committed Coq proof ``proof`` (Why3's ``<file>_<module>_<goal>.v`` in
    ``proofs/coq/``): proved iff coqc compiled it within the check's rules
    (``errors`` says what was refused)."""

    file: str  # the theory, from the root: why3/f64_round.mlw
    module: str  # "" when the goal's module is not found in the theory
    goal: str  # the theorem's name, as Why3 prints it (bitlen'vc)
    proof: str  # the committed proof's file name
    proved: bool
    errors: list[str]

    @property
    def ok(self) -> bool:
        return self.proved and not self.errors


@dataclass
class CoqEvidence:
    tool_versions: dict[str, str]  # why3, coqc, flocq, realizations: version lines
    inputs: dict[str, str]  # as Why3Evidence's
    goals: list[CoqGoal]
    proved: int
    total: int
    seconds: float


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
