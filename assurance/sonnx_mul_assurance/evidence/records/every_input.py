"""The records of the runs over every input: the exhaustive comparison with an oracle
(``exhaustive.json``) and its scope, the compiled kernel's exhaustive checks
(``native-exhaustive.json``), the kernel's outputs on every target (``targets.json``)."""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Any, Literal

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
