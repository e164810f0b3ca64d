"""The one evidence protocol: every proof or check driver the report reads, declared once.

Each :class:`Source` says which file its driver writes (in ``proofs/out/``,
by a name of :mod:`sonnx_mul_assurance.evidence.files`: the producers take
their paths from there, since this module imports them), under which
schema (:mod:`sonnx_mul_assurance.evidence.schema`), how the report reads
it into requirement evidence (``read``), what counts as a pass, whether the
gate requires it, what its absence means, which ids an absent optional file
leaves without its evidence, and the files its claim depends on (hashed in
the report). The report, its gate and its hash list iterate
:data:`SOURCES`; a new prover is one entry here plus its reader.
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from sonnx_mul_assurance.c import misra, wp
from sonnx_mul_assurance.evidence import binding, files, schema
from sonnx_mul_assurance.python import crosshair
from sonnx_mul_assurance.report import coverage
from sonnx_mul_assurance.report.evidence import (
    Item,
    coq_items,
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
from sonnx_mul_assurance.report.prose import load_wp_units, native_exhaustive_absent
from sonnx_mul_assurance.why3 import coq, driver


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
    ``origin``: which run wrote it, when not the pipeline's own step,
    ``refused``: why the gate refuses the file as evidence for this tree
    (stale inputs, goals missing, new or repeated: each line names the file),
    and ``versions``: the tool versions it records (tool -> version line)."""

    mapped: list[Item]
    unmapped: list[Item]
    skipped: dict[str, int] = field(default_factory=dict)
    tools: dict[str, Any] | None = None
    partial: str | None = None
    origin: str | None = None
    refused: list[str] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)


Reader = Callable[[Path, Context], Reading]

PORTABLE_HARNESS_FILES: tuple[str, ...] = ("native/verify/portable.c", "native/verify/portable")
"""The portable harness: the one file every build compiles and the folder of the parts,
by job, it includes (a claim on the harness is bound to every file it is built from)."""


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
    # the versions of the tools that made the file, probed now (the release
    # gate compares them with what the file records; None: not compared)
    probe: Callable[[Path], dict[str, str]] | None = None
    absent_from: Callable[[Path], str] | None = None  # the absence's meaning from the data

    def meaning(self, root: Path) -> str:
        """What the file's absence means, rendered from the checkout's data
        when the text depends on it (``absent_from``), else ``absent``."""
        return self.absent_from(root) if self.absent_from is not None else self.absent


def _shown(path: Path, ctx: Context) -> str:
    return binding.shown(path, ctx.root)


def _inputs(
    path: Path, ctx: Context, recorded: dict[str, str], now: Callable[[], list[Path]]
) -> list[str]:
    """Refusals of a file whose recorded inputs are not the tree's (listed
    again by the producer's own ``inputs``)."""
    try:
        listed = now()
    except (OSError, ValueError, KeyError) as exc:  # a manifest missing or off its layout
        return [f"cannot list the inputs of {_shown(path, ctx)} on this tree: {exc!r}"]
    return binding.stale(_shown(path, ctx), recorded, binding.digest(ctx.root, listed))


def _goal_set(
    path: Path,
    ctx: Context,
    manifest: Path,
    have: list[str],
    want: set[str],
    listed: tuple[str, str] = ("manifest goals", "the manifest"),
) -> list[str]:
    """Refusals of a prover run that is not the complete check of ``manifest``:
    goals recorded twice, manifest goals absent, goals the manifest lacks.
    ``listed``: what the refusals call the expected goals and their list."""
    where = f"{_shown(path, ctx)} against {manifest.as_posix()}"
    goals, source = listed
    refused = []
    repeated = binding.duplicates(have)
    if repeated:
        refused.append(f"{where}: goals recorded more than once: {binding.named(repeated)}")
    missing, extra = want - set(have), set(have) - want
    if missing:
        refused.append(
            f"{where}: a partial run: {len(missing)} of {len(want)} {goals} absent"
            f" ({binding.named(missing)})"
        )
    if extra:
        refused.append(f"{where}: goals not in {source}: {binding.named(extra)}")
    return refused


def _why3(path: Path, ctx: Context) -> Reading:
    data = schema.load(schema.Why3Evidence, path)
    proof_files = [m for m in ctx.markers if m.path.endswith((".mlw", ".py"))]
    mapped, lost = why3_items(path, ctx.root, proof_files)
    refused = _inputs(path, ctx, data.inputs, lambda: driver.inputs(ctx.root))
    try:
        want = {"/".join(k) for k in driver.goal_keys(driver.PROOFS.load_manifest(ctx.root))}
    except (OSError, ValueError, KeyError) as exc:
        refused.append(f"cannot read {driver.MANIFEST.as_posix()}: {exc!r}")
    else:
        have = ["/".join((g.file, g.module, g.goal)) for g in data.goals]
        refused += _goal_set(path, ctx, driver.MANIFEST, have, want)
    return Reading(
        mapped,
        lost,
        tools={"versions": data.versions} if data.versions else None,
        refused=refused,
        versions=dict(data.versions),
    )


def _why3_versions(root: Path) -> dict[str, str]:
    return driver.tool_versions(root)


def _coq(path: Path, ctx: Context) -> Reading:
    """The Coq goals of ``coq.json``, refused unless the record is the complete
    check of this tree: the inputs' hashes the tree's, one goal per committed
    proof (:func:`coq.expected_proofs`), the counts those of the goals."""
    data = schema.load(schema.CoqEvidence, path)
    theories = [m for m in ctx.markers if m.path.endswith(".mlw")]
    mapped, lost = coq_items(path, ctx.root, theories)
    refused = _inputs(path, ctx, data.inputs, lambda: coq.inputs(ctx.root))
    have = [g.proof for g in data.goals]
    want = coq.expected_proofs(ctx.root)
    refused += _goal_set(
        path, ctx, coq.PROOF_DIR, have, want, ("committed proofs", "the committed proofs")
    )
    proved = sum(g.ok for g in data.goals)
    if (data.total, data.proved) != (len(data.goals), proved):
        refused.append(
            f"{_shown(path, ctx)}: says {data.proved}/{data.total} goals proved,"
            f" records {proved}/{len(data.goals)}"
        )
    return Reading(
        mapped,
        lost,
        tools={"versions": dict(data.tool_versions)},
        refused=refused,
        versions=dict(data.tool_versions),
    )


def _coq_versions(root: Path) -> dict[str, str]:
    return coq.tool_versions(root)


def _crosshair(path: Path, ctx: Context) -> Reading:
    data = schema.load(schema.CrossHairEvidence, path)
    refused = _inputs(path, ctx, data.inputs, crosshair.inputs)
    versions = {"crosshair-tool": data.crosshair_version, "python": data.python}
    return Reading(
        *crosshair_items(path, ctx.root, ctx.markers, ctx.ids), refused=refused, versions=versions
    )


def _crosshair_versions(root: Path) -> dict[str, str]:
    return {"crosshair-tool": crosshair.crosshair_version(), "python": platform.python_version()}


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
    data = schema.load(schema.WpEvidence, path)
    refused = _inputs(path, ctx, data.inputs, lambda: wp.inputs(ctx.root))
    try:
        want = wp.goal_names(wp.PROOFS.load_manifest(ctx.root))
    except (OSError, ValueError, KeyError) as exc:
        refused.append(f"cannot read {wp.MANIFEST.as_posix()}: {exc!r}")
    else:
        sources = [u.source for u in data.units]
        for unit in binding.duplicates(sources):
            refused.append(f"{_shown(path, ctx)}: unit {unit} recorded more than once")
        for unit in sorted(set(want) - set(sources)):
            refused.append(
                f"{_shown(path, ctx)}: a partial run: unit {unit} of"
                f" {wp.MANIFEST.as_posix()} absent"
            )
        for unit in sorted(set(sources) - set(want)):
            refused.append(f"{_shown(path, ctx)}: unit {unit} is not in {wp.MANIFEST.as_posix()}")
        have = [f"{u.source}:{g}" for u in data.units if u.source in want for g in u.goals]
        whole = {f"{s}:{g}" for s, goals in want.items() if s in sources for g in goals}
        refused += _goal_set(path, ctx, wp.MANIFEST, have, whole)
        recorded = sum(len(u.goals) for u in data.units)
        if data.goals != recorded:
            refused.append(f"{_shown(path, ctx)}: says {data.goals} goals, records {recorded}")
    return Reading(
        *wp_items(path, ctx.root, ctx.markers), refused=refused, versions=dict(data.tools)
    )


def _wp_versions(root: Path) -> dict[str, str]:
    return wp.tool_versions()


MISRA_DEVIATIONS = "proofs/misra-deviations.json"


def _misra(path: Path, ctx: Context) -> Reading:
    data = schema.load(schema.MisraEvidence, path)
    refused = _inputs(path, ctx, data.inputs, lambda: misra.inputs(ctx.root))
    return Reading(
        *misra_items(path, ctx.root, ctx.markers, ctx.root / MISRA_DEVIATIONS),
        refused=refused,
        versions={"cppcheck": data.tool},
    )


def _misra_versions(root: Path) -> dict[str, str]:
    return {"cppcheck": misra.tool_version()}


def _coverage(path: Path, ctx: Context) -> Reading:
    return Reading(*coverage.read(path, ctx.root))


_NATIVE_IDS = ("F-FLOAT", "F-WRAP", "F-CHECKED")

SOURCES: tuple[Source, ...] = (
    Source(
        "why3",
        files.WHY3,
        schema.Why3Evidence,
        _why3,
        "a goal whose prover answer is Valid",
        required=True,
        absent="no Why3 goal was checked: no proof evidence from the model or the kernel; "
        "the gate fails",
        claims=("why3", "proofs/drivers", "proofs/why3.conf.in", "proofs/manifest.json"),
        probe=_why3_versions,
    ),
    Source(
        "coq",
        files.COQ,
        schema.CoqEvidence,
        _coq,
        "a Why3 goal whose committed Coq proof coqc compiled, with no hole and no axiom "
        "beyond Coq's classical reals and the theory's definitions",
        required=True,
        absent="the Coq check did not run: the float64 rounding of F-FLOAT "
        "(why3/f64_round.mlw: the integer rounding and the whole binary64 product against "
        "Flocq's round) loses its proof; the gate fails",
        claims=(
            coq.PROOF_DIR.as_posix(),
            *(t.as_posix() for t in coq.THEORIES),
            coq.BUILD_SCRIPT.as_posix(),
        ),
        subject="whyml-model",
        probe=_coq_versions,
    ),
    Source(
        "crosshair",
        files.CROSSHAIR,
        schema.CrossHairEvidence,
        _crosshair,
        "a contract function whose status is pass",
        required=True,
        absent="no CrossHair contract was checked; the gate fails",
        claims=("assurance/sonnx_mul_assurance/python/contracts.py",),
        subject="python-contracts-bounded",
        probe=_crosshair_versions,
    ),
    Source(
        "wp",
        files.WP,
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
        probe=_wp_versions,
    ),
    Source(
        "misra",
        files.MISRA,
        schema.MisraEvidence,
        _misra,
        "an analysed C file whose every finding is a recorded deviation (same rule, same count)",
        required=True,
        absent="the MISRA C:2012 check of the native kernel did not run: F-RTE loses it; "
        "the gate fails",
        claims=("native/src", "native/hw", "native/include", MISRA_DEVIATIONS),
        subject="native-misra",
        probe=_misra_versions,
    ),
    Source(
        "exhaustive",
        files.EXHAUSTIVE,
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
        files.NATIVE_EXHAUSTIVE,
        schema.NativeExhaustiveEvidence,
        _native_exhaustive,
        "a check of the compiled kernel with 0 mismatches over its inputs",
        required=False,
        absent="the compiled kernel's own exhaustive checks did not run "
        "(make verify-exhaustive); what that leaves is rendered from the WP manifest",
        claims=("native/verify", "native/hw", "native/flags.mk"),
        expected_by=("F-FLOAT", "F-WRAP"),
        subject="native-tested",
        absent_from=lambda root: native_exhaustive_absent(load_wp_units(root)),
    ),
    Source(
        "targets",
        files.TARGETS,
        schema.TargetsEvidence,
        _targets,
        "every type on every target agrees with the oracle and has x86-64 gcc's hash",
        required=False,
        absent="the C kernel was not built and checked on the other targets (x86-64 clang, "
        "i686, aarch64, armhf, riscv64): the evidence is about the x86-64 gcc build only. "
        "A development gate passes without it; a release gate (`--require targets`) fails. "
        "Produce it with `make check-targets`.",
        claims=(*PORTABLE_HARNESS_FILES, "native/flags.py"),
        expected_by=_NATIVE_IDS,
        subject="native-tested",
    ),
    Source(
        "coverage",
        files.COVERAGE,
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
            *PORTABLE_HARNESS_FILES,
            "native/example/example.c",
        ),
    ),
    Source(
        "pytest",
        files.PYTEST,
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
