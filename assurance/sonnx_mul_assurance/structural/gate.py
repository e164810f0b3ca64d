"""The coverage gate and its exemption file: every gap listed with its reason,
every exemption still naming a gap (:func:`gate_problems`, applied by the report
and by ``check``); ``add-unlisted`` lists the new gaps as not analysed."""

from __future__ import annotations

from pathlib import Path

from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.structural.scope import EXEMPTIONS, OUT


def gap_key(
    gap: schema.CoverageGap | schema.CoverageExemption,
) -> tuple[str, str, str, int, str]:
    """The item a gap or an exemption names.  The function is part of it: after
    an edit, another function's item at the same line is another item, and an
    exemption must not pass for it."""
    return (gap.file, gap.function, gap.kind, gap.line, gap.what)


def load_exemptions(path: Path) -> list[schema.CoverageExemption]:
    return schema.load(schema.CoverageExemptions, path).exemptions


def gate_problems(
    evidence: schema.CoverageEvidence, exemptions: list[schema.CoverageExemption]
) -> list[str]:
    """What fails the coverage gate: a run that did not pass, a gap no exemption
    lists, an exemption that lists no gap (stale: the item is now covered or
    gone), an exemption listed twice (two reasons for one item), an exemption
    without a reason."""
    problems = [f"coverage run: {e}" for e in evidence.errors]
    if not evidence.files:
        problems.append("coverage run measured no file")
    listed: dict[tuple[str, str, str, int, str], schema.CoverageExemption] = {}
    for ex in exemptions:
        if gap_key(ex) in listed:
            problems.append(
                f"coverage exemption listed twice: {ex.file}:{ex.line} {ex.kind} {ex.what}"
            )
        listed[gap_key(ex)] = ex
    gaps = {gap_key(g): g for g in evidence.gaps}
    for key, gap in gaps.items():
        if key not in listed:
            where = f"{gap.file}:{gap.line}" + (f" ({gap.function})" if gap.function else "")
            problems.append(
                f"coverage gap not exempted: {where} {gap.kind}"
                + (f" {gap.what}" if gap.what else "")
            )
    for key, ex in listed.items():
        # the run is deterministic (the same items covered on every run of a
        # tree: Hypothesis derandomized, each test its own context), so an
        # exemption of a covered item is stale whatever its class
        if key not in gaps:
            problems.append(
                f"stale coverage exemption: {ex.file}:{ex.line} {ex.kind} {ex.what} "
                "is covered now or no longer exists"
            )
        if not ex.reason.strip():
            problems.append(f"coverage exemption without a reason: {ex.file}:{ex.line} {ex.kind}")
    return problems


def summary(evidence: schema.CoverageEvidence) -> str:
    def pct(c: schema.CoverageCount | None) -> str:
        if c is None:
            return "n/a"
        return f"{c.covered}/{c.total}" + (
            f" ({100 * c.covered / c.total:.1f} %)" if c.total else ""
        )

    lines = ["== coverage (statements | branches | MC/DC conditions)"]
    for f in evidence.files:
        lines.append(f"  {f.path:<45} {pct(f.lines):>20} {pct(f.branches):>20} {pct(f.mcdc):>16}")
    lines.append(
        f"  gaps: {len(evidence.gaps)}; {evidence.seconds:.0f} s (CPU {evidence.cpu_seconds:.0f} s)"
    )
    lines += [f"  ERROR {e}" for e in evidence.errors]
    return "\n".join(lines)


def check(root: Path, out: Path = OUT) -> int:
    """The gate alone on an existing coverage.json (what the report applies)."""
    evidence = schema.load(schema.CoverageEvidence, root / out)
    problems = gate_problems(evidence, load_exemptions(root / EXEMPTIONS))
    for p in problems:
        print(p)
    print(summary(evidence))
    return 1 if problems else 0


def add_unlisted(root: Path, out: Path = OUT) -> int:
    """Add every gap no exemption lists to the exemption file, as ``not-analysed``
    (never removes one: a stale exemption is for a person to delete).  The
    report's A-7 row counts these as missing until someone states the reason."""
    evidence = schema.load(schema.CoverageEvidence, root / out)
    path = root / EXEMPTIONS
    current = load_exemptions(path) if path.is_file() else []
    listed = {gap_key(e) for e in current}
    added = [
        schema.CoverageExemption(
            g.file,
            g.function,
            g.kind,
            g.line,
            g.what,
            "not-analysed",
            "uncovered when listed; not yet analysed (a test to write, or a reason to state)",
        )
        for g in evidence.gaps
        if gap_key(g) not in listed
    ]
    merged = sorted([*current, *added], key=lambda e: (e.file, e.line, e.kind, e.what))
    schema.dump(schema.CoverageExemptions(1, merged), path)
    print(f"{len(added)} exemption(s) added as not-analysed; {len(merged)} in {EXEMPTIONS}")
    return 0
