"""The one evidence protocol: every proof or check driver the report reads, declared once.

Each :class:`Source` says which file its driver writes (in ``proofs/out/``),
under which schema (:mod:`sonnx_mul_assurance.evidence.schema`), how the
report reads it into requirement evidence (``read``), what counts as a
pass, whether the gate requires it, what its absence means, which ids an
absent optional file leaves without its evidence, and the files its claim
depends on (hashed in the report). The report, its gate and its hash list
iterate :data:`SOURCES`; a new prover is one entry here plus its reader.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.report import coverage
from sonnx_mul_assurance.report.evidence import (
    Item,
    crosshair_items,
    exhaustive_items,
    testcase_items,
    why3_items,
)
from sonnx_mul_assurance.report.hashes import CLAIM_PATHS
from sonnx_mul_assurance.report.markers import Marker
from sonnx_mul_assurance.report.native_evidence import (
    misra_items,
    native_exhaustive_items,
    targets_items,
    wp_items,
)


@dataclass(frozen=True)
class Context:
    """What a reader may use: the repository, the evidence directory, the
    markers of the tree and the registry's ids."""

    root: Path
    evidence_dir: Path
    markers: list[Marker]
    ids: frozenset[str]


@dataclass
class Reading:
    """A reader's result: items mapped to ids, items mapped to none (failed
    ones fail the gate), skipped tests per id, tool versions the file
    records, ``partial``: why the file holds less than its scope (None: all),
    and ``origin``: which run wrote it, when not the pipeline's own step."""

    mapped: list[Item]
    unmapped: list[Item]
    skipped: dict[str, int] = field(default_factory=dict)
    tools: dict[str, Any] | None = None
    partial: str | None = None
    origin: str | None = None


Reader = Callable[[Path, Context], Reading]


@dataclass(frozen=True)
class Source:
    """One evidence file and everything the report needs to know about it."""

    key: str
    file: str
    schema: type | None  # None: not JSON (pytest's JUnit XML, read by schema.read_junit)
    read: Reader
    pass_rule: str
    required: bool
    absent: str  # what the file's absence means for the verdict
    claims: tuple[str, ...] = ()  # repository paths the claim depends on (hashed)
    expected_by: tuple[str, ...] = ()  # ids an absent optional file leaves without it
    subject: str | None = None  # proof subject of every item (None: by location)


def _why3(path: Path, ctx: Context) -> Reading:
    data = schema.load(schema.Why3Evidence, path)
    proof_files = [m for m in ctx.markers if m.path.endswith((".mlw", ".py"))]
    mapped, lost = why3_items(path, ctx.root, proof_files)
    return Reading(mapped, lost, tools={"versions": data.versions} if data.versions else None)


def _crosshair(path: Path, ctx: Context) -> Reading:
    return Reading(*crosshair_items(path, ctx.root, ctx.markers, ctx.ids))


def _exhaustive(path: Path, ctx: Context) -> Reading:
    mapped, lost = exhaustive_items(path, ctx.root, ctx.ids)
    run = schema.load(schema.ExhaustiveEvidence, path)
    # the file's own `complete` is not enough: what it holds must cover the scope
    gaps = run.gaps()
    partial = "complete: false" if not run.complete else ("; ".join(gaps) or None)
    return Reading(mapped, lost, partial=partial)


def _native_exhaustive(path: Path, ctx: Context) -> Reading:
    return Reading(*native_exhaustive_items(path, ctx.root, ctx.ids))


def _targets(path: Path, ctx: Context) -> Reading:
    return Reading(*targets_items(path, ctx.root, ctx.ids))


def _pytest(path: Path, ctx: Context) -> Reading:
    edir = ctx.evidence_dir
    junit = sorted({path, *edir.glob("*.junit.xml"), *edir.glob("junit*.xml")})
    cases, skipped = testcase_items(junit, ctx.root, ctx.markers, ctx.ids)
    origin = None
    if (edir / schema.SUITE_ORIGIN).is_file():  # make test's run, taken by make prove
        run = schema.load(schema.SuiteRun, edir / schema.SUITE_ORIGIN)
        origin = (
            f"make test's passing run of the whole suite, finished {run.finished} "
            f"({run.seconds:.0f} s), on the tree, interpreter, packages and tools of "
            f"fingerprint {run.fingerprint[:16]}, which make prove found unchanged"
        )
    mapped = [i for i in cases if i.ids]
    return Reading(mapped, [i for i in cases if not i.ids], skipped, origin=origin)


def _wp(path: Path, ctx: Context) -> Reading:
    return Reading(*wp_items(path, ctx.root, ctx.markers))


MISRA_DEVIATIONS = "proofs/misra-deviations.json"


def _misra(path: Path, ctx: Context) -> Reading:
    return Reading(*misra_items(path, ctx.root, ctx.markers, ctx.root / MISRA_DEVIATIONS))


def _coverage(path: Path, ctx: Context) -> Reading:
    return Reading(*coverage.read(path, ctx.root))


_NATIVE_IDS = ("F-FLOAT", "F-WRAP", "F-CHECKED")

SOURCES: tuple[Source, ...] = (
    Source(
        "why3",
        "why3.json",
        schema.Why3Evidence,
        _why3,
        "a goal whose prover answer is Valid",
        required=True,
        absent="no Why3 goal was checked: no proof evidence from the model or the kernel; "
        "the gate fails",
        claims=("why3", "proofs/drivers", "proofs/why3.conf.in", "proofs/manifest.json"),
    ),
    Source(
        "crosshair",
        "crosshair.json",
        schema.CrossHairEvidence,
        _crosshair,
        "a contract function whose status is pass",
        required=True,
        absent="no CrossHair contract was checked; the gate fails",
        claims=("assurance/sonnx_mul_assurance/python/contracts.py",),
        subject="python-contracts-bounded",
    ),
    Source(
        "wp",
        "wp.json",
        schema.WpEvidence,
        _wp,
        "a C function all of whose WP goals (contract, loop annotations, -wp-rte "
        "assertions) are Valid",
        required=True,
        absent="no Frama-C WP proof of the native C kernel that computes every product: "
        "F-FLOAT, F-WRAP, F-CHECKED and F-RTE lose their proofs of the running code; "
        "the gate fails",
        claims=(
            "native/src",
            "native/include",
            "proofs/wp-manifest.json",
            "proofs/wp-why3.conf.in",
            "proofs/drivers",
        ),
        subject="native-proved",
    ),
    Source(
        "misra",
        "misra.json",
        schema.MisraEvidence,
        _misra,
        "an analysed C file whose every finding is a recorded deviation (same rule, same count)",
        required=True,
        absent="the MISRA C:2012 check of the native kernel did not run: F-RTE loses it; "
        "the gate fails",
        claims=("native/src", "native/include", MISRA_DEVIATIONS),
        subject="native-misra",
    ),
    Source(
        "exhaustive",
        "exhaustive.json",
        schema.ExhaustiveEvidence,
        _exhaustive,
        "a type run with 0 mismatches",
        required=False,
        absent="the exhaustive agreement runs (every int8/uint8 pair in both modes, "
        "every float16/bfloat16 pair, against exact oracles) did not run: for F-FLOAT, "
        "F-WRAP and F-CHECKED the compiled native kernel that sonnx_mul.mul runs is "
        "tested on sampled and edge inputs and by the self-test only. A development "
        "gate passes without it; a release gate (`--require exhaustive`) fails. Produce "
        "it with `make verify-exhaustive`.",
        expected_by=_NATIVE_IDS,
        subject="native-tested",
    ),
    Source(
        "native-exhaustive",
        "native-exhaustive.json",
        schema.NativeExhaustiveEvidence,
        _native_exhaustive,
        "a check of the compiled kernel with 0 mismatches over its inputs",
        required=False,
        absent="the compiled kernel's own exhaustive checks (every binary32 input of both "
        "narrowings, every float16/bfloat16 pair of the portable and hardware loops, every "
        "int8/uint8 pair of the streaming loop) did not run: the loops WP does not prove "
        "(float16 conversions, the F16C and streaming loops) have no evidence of their own. "
        "A development gate passes without it; a release gate "
        "(`--require native-exhaustive`) fails. Produce it with `make verify-exhaustive`.",
        claims=("native/verify", "native/hw", "native/flags.mk"),
        expected_by=("F-FLOAT", "F-WRAP"),
        subject="native-tested",
    ),
    Source(
        "targets",
        "targets.json",
        schema.TargetsEvidence,
        _targets,
        "every type on every target agrees with the oracle and has x86-64 gcc's hash",
        required=False,
        absent="the C kernel was not built and checked on the other targets (x86-64 clang, "
        "i686, aarch64, armhf, riscv64): the evidence is about the x86-64 gcc build only. "
        "A development gate passes without it; a release gate (`--require targets`) fails. "
        "Produce it with `make check-targets`.",
        claims=("native/verify/portable.c", "native/flags.py"),
        expected_by=_NATIVE_IDS,
        subject="native-tested",
    ),
    Source(
        "coverage",
        "coverage.json",
        schema.CoverageEvidence,
        _coverage,
        "every statement, branch outcome and MC/DC condition of the running C files and "
        "the product's modules covered by the requirement-based tests, or listed in "
        "proofs/coverage-exemptions.json with its reason; no exemption without its gap",
        required=True,
        absent="no structural coverage was measured (make coverage): Table A-7's "
        "structural coverage objective has no evidence; the gate fails",
        claims=(
            "proofs/coverage-exemptions.json",
            "tests",
            "native/verify/portable.c",
            "native/example/example.c",
        ),
    ),
    Source(
        "pytest",
        "pytest.xml",
        None,
        _pytest,
        "a passed test case (skipped and xfailed are neither pass nor failure)",
        required=True,
        absent="no test result: no test evidence for any id; the gate fails",
    ),
)
"""Every evidence file the report reads, in the order it lists them."""

BY_KEY: Mapping[str, Source] = MappingProxyType({s.key: s for s in SOURCES})
PASS_RULES: Mapping[str, str] = MappingProxyType({s.key: s.pass_rule for s in SOURCES})
"""What counts as a pass, per source (the schema records' ``ok``)."""
OPTIONAL: frozenset[str] = frozenset(s.key for s in SOURCES if not s.required)
"""Evidence the gate passes without (development builds); ``--require`` makes it required."""


def claim_paths(sources: tuple[Source, ...] = SOURCES) -> tuple[str, ...]:
    """The paths the claim depends on: the common ones (``hashes.CLAIM_PATHS``)
    and each source's own, without repeats."""
    return tuple(dict.fromkeys([*CLAIM_PATHS, *(p for s in sources for p in s.claims)]))
