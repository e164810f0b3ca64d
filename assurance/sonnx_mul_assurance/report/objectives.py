"""The objectives an assessor looks for (DO-178C, DO-333, DO-330 and others) and how
honestly the project's outputs meet each: DATA for the report's "Objectives"
section, beside the trusted base and proof subjects of
:mod:`sonnx_mul_assurance.report.trusted`, which puts them in the JSON with it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sonnx_mul_assurance.report.prose import WpUnit, wp_summary


@dataclass(frozen=True)
class Objective:
    """An objective an assessor looks for, and how the project's outputs meet it."""

    standard: str
    objective: str
    output: str
    status: str  # met | partly met | out of scope
    note: str


STATUSES: tuple[str, ...] = ("met", "partly met", "out of scope")

OBJECTIVES: tuple[Objective, ...] = (
    Objective(
        "DO-178C 6.4.2 / Table A-7 (requirements-based testing)",
        "tests developed from the requirements, normal range and robustness",
        "pytest suite named and marked by requirement id; per-id test evidence in this "
        "report; error contract tests (ProfileError subclasses)",
        "met",
        "for the requirements in the registry; no separate test-procedure review record",
    ),
    Objective(
        "DO-178C 5.5 and 6.5 (development and verification traceability)",
        "bidirectional trace: requirements <-> code <-> tests <-> verification results",
        "this report: registry ids, requirement markers in code, tests and proofs, marker lint, "
        "the gate failing on any gap",
        "met",
        "trace is to file:line ranges and test ids of the hashed tree",
    ),
    Objective(
        "DO-178C 6.4.4.2 / Table A-7 (structural coverage)",
        "statement / decision / MC/DC coverage of the code",
        "none measured in the report",
        "out of scope",
        "coverage analysis is not produced; the native kernel and its glue are outside "
        "any Python coverage",
    ),
    Objective(
        "DO-178C 6.4.5 / Table A-7 (verification of verification process results)",
        "the verification procedures and results are correct and complete",
        "negative controls for every verification step (planted faults must fail), the "
        "gate's own planted-gap tests, zero-goal and manifest-drift checks",
        "partly met",
        "no independent review record; the checks are automated, not reviewed",
    ),
    Objective(
        "DO-333 formal methods supplement (soundness of the formal analysis)",
        "the formal method is sound and its assumptions are justified",
        "Trusted base section: Why3 theories, drivers, provers with known issues; "
        "the Coq proofs of float64's rounding (coq.json: coqc and Flocq versions); "
        "proof subjects (model vs kernel vs tested native binary)",
        "partly met",
        "soundness rests on Why3/SMT; no SMT proof certificate is checked independently "
        "(only float64's rounding goals are proof terms, checked by coqc's kernel)",
    ),
    Objective(
        "DO-330 tool qualification (TQL-5 verification tools)",
        "tool operational requirements, verification of the tool in its environment",
        "tool versions, resolved binary paths and SHA-256 in this report; manifest replay; "
        "negative controls act as tool verification cases",
        "partly met",
        "no Tool Qualification Plan / TOR / TAS documents; data only",
    ),
    Objective(
        "ISO 26262-8 clause 11 (confidence in the use of software tools)",
        "tool impact / error detection classification, TCL, qualification method",
        "Trusted base section: what each tool is trusted for and how errors are detected "
        "(tests, self-test, exhaustive runs, replay)",
        "partly met",
        "TI/TD/TCL classification is not stated formally; evidence for 'increased "
        "confidence from use' and 'validation of the tool' is partial",
    ),
    Objective(
        "ISO 26262-6 clause 9 / 10 (unit verification and requirements-based tests)",
        "unit verification by requirements-based tests, interface tests, fault injection",
        "pytest suite, hostile models, fuzzing, known-answer self-test",
        "met",
        "for the Mul unit; no hardware-in-the-loop",
    ),
    Objective(
        "DO-178C 7 / ISO 26262-8 clause 7 (configuration management)",
        "identification of the configuration the evidence applies to",
        "git commit and dirty flag, SHA-256 of every file the claim depends on, "
        "`sonnx-mul verify-install` for the installed package",
        "met",
        "the report identifies the configuration; archiving and baselines are the user's",
    ),
    Objective(
        "DO-178C 11.x (plans, standards, SAS)",
        "PSAC, SDP, SVP, SCMP, SQAP, standards and the accomplishment summary",
        "none",
        "out of scope",
        "process documents belong to the user's certification project",
    ),
)
"""Objectives and how honestly the project's outputs meet them."""


def objectives(units: Sequence[WpUnit]) -> tuple[Objective, ...]:
    """The objectives, the formal-methods one naming what WP proves (from ``units``)."""
    return tuple(
        replace(o, output=f"{o.output}; {wp_summary(units)}")
        if o.standard.startswith("DO-333")
        else o
        for o in OBJECTIVES
    )
