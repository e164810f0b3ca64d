"""Structural coverage in the report: the reader of ``coverage.json``, its gate and the A-7 row.

:func:`read` turns every gate problem of :func:`structural.gate.gate_problems`
(an unlisted gap, a stale exemption, a failed run) into a failed item that
maps to no id, which fails the report's gate.  :func:`section` is the
report's ``coverage`` entry (figures per file, function and requirement, the
exemptions by reason, what the run cost) and :func:`objective` the row of
DO-178C Table A-7 for structural coverage, "met" only when nothing is
missing: no gap outside an analysed exemption and MC/DC measured everywhere.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from sonnx_mul_assurance.evidence import files, schema
from sonnx_mul_assurance.report.evidence import Item
from sonnx_mul_assurance.report.objectives import Objective
from sonnx_mul_assurance.structural.gate import gate_problems, load_exemptions
from sonnx_mul_assurance.structural.scope import EXEMPTIONS

STANDARD = "DO-178C 6.4.4.2 / Table A-7 (structural coverage)"

OBJECT_CODE = (
    "Coverage is measured on a clang-19 build instrumented for it (the same sources and "
    "pinned IEEE flags, plus -fprofile-instr-generate -fcoverage-mapping -fcoverage-mcdc); "
    "the product that ships is built by gcc. make check-targets builds the kernel with "
    "x86-64 clang and gcc (among others) and compares every type's outputs bit for bit "
    "(targets.json): the two compilers' object code computes the same bits on the same "
    "tests, which is not a proof that their object code has the same structure."
)


def _exemptions(root: Path) -> list[schema.CoverageExemption]:
    path = root / EXEMPTIONS
    return load_exemptions(path) if path.is_file() else []


def read(path: Path, root: Path) -> tuple[list[Item], list[Item]]:
    """(mapped, unmapped) items: none is mapped; each gate problem is a failed
    unmapped item."""
    evidence = schema.load(schema.CoverageEvidence, path)
    problems = gate_problems(evidence, _exemptions(root))
    rel = EXEMPTIONS.as_posix()
    failed = [
        Item("proof", "coverage", rel, (), "gap", False, name=p, files=(rel,)) for p in problems
    ]
    return [], failed


def _pct(count: schema.CoverageCount | None) -> str:
    if count is None:
        return "not measured"
    if count.total == 0:
        return "none"
    return f"{count.covered}/{count.total} ({100 * count.covered / count.total:.1f} %)"


def _lines_by_file(exemptions: Iterable[schema.CoverageExemption]) -> dict[str, list[int]]:
    out: dict[str, set[int]] = {}
    for e in exemptions:
        out.setdefault(e.file, set()).add(e.line)
    return {f: sorted(lines) for f, lines in sorted(out.items())}


def section(evidence_dir: Path, root: Path) -> dict[str, Any] | None:
    """The report's coverage entry (None: no coverage.json)."""
    path = evidence_dir / files.COVERAGE
    if not path.is_file():
        return None
    try:
        evidence = schema.load(schema.CoverageEvidence, path)
        exemptions = _exemptions(root)
    except (ValueError, OSError):
        return None
    problems = gate_problems(evidence, exemptions)
    return {
        "files": [asdict(f) for f in evidence.files],
        "table": [[f.path, _pct(f.lines), _pct(f.branches), _pct(f.mcdc)] for f in evidence.files],
        "requirements": {
            rid: [r.tests, _pct(r.lines), _pct(r.branches)]
            for rid, r in evidence.requirements.items()
        },
        "gaps": len(evidence.gaps),
        "exempted_by_reason": dict(Counter(e.why for e in exemptions)),
        # the exemptions without an argument yet, per file: their lines
        "not_analysed": _lines_by_file(e for e in exemptions if e.why == "not-analysed"),
        "problems": problems,
        "tests": evidence.tests,
        "isa_variants": evidence.isa_variants,
        "variant_tests": evidence.variant_tests,
        "harnesses": evidence.harnesses,
        "build": evidence.build,
        "tools": evidence.tools,
        "seconds": round(evidence.seconds, 1),
        "cpu_seconds": evidence.cpu_seconds,
        "timings": {k: round(v, 1) for k, v in evidence.timings.items()},
        "object_code": OBJECT_CODE,
        "gcov": [
            [path, _pct(g.lines), _pct(g.branches), g.run] for path, g in evidence.gcov.items()
        ],
        # llvm writes one profile per process, not per test: the C code's
        # figures are the whole run's, the per-requirement ones Python's only
        "per_requirement_c": False,
    }


def objective(entry: dict[str, Any] | None) -> Objective:
    """The A-7 structural coverage row from the report's coverage entry."""
    asked = "statement / decision / MC/DC coverage of the code"
    if entry is None:
        return Objective(
            STANDARD,
            asked,
            "none: proofs/out/coverage.json is absent (make coverage)",
            "partly met",
            "missing: the coverage run; the gate fails without it",
        )
    files = entry["files"]
    # each C file, and the product's Python as one total (its files are in the section)
    figures = "; ".join(
        f"{row[0]}: {row[1]} st., {row[2]} br., MC/DC {row[3]}"
        for row, f in zip(entry["table"], files, strict=True)
        if f["language"] == "c"
    )
    python = [f for f in files if f["language"] == "python"]
    if python:
        lines = sum(f["lines"]["covered"] for f in python), sum(f["lines"]["total"] for f in python)
        arcs = (
            sum(f["branches"]["covered"] for f in python),
            sum(f["branches"]["total"] for f in python),
        )
        figures += (
            f"; the product's Python ({len(python)} modules): {lines[0]}/{lines[1]} st., "
            f"{arcs[0]}/{arcs[1]} br., MC/DC not measured"
        )
    missing: list[str] = []
    if entry["problems"]:
        missing.append(
            f"{len(entry['problems'])} gate problem(s) (unlisted gaps or stale exemptions)"
        )
    unanalysed = entry["exempted_by_reason"].get("not-analysed", 0)
    if unanalysed:
        named = "; ".join(
            f"{path} lines {', '.join(map(str, lines))}"
            for path, lines in entry.get("not_analysed", {}).items()
        )
        missing.append(
            f"{unanalysed} exempted item(s) not yet analysed (reason not-analysed)"
            + (f": {named}" if named else "")
        )
    no_mcdc = [f["path"] for f in files if f["mcdc"] is None]
    if no_mcdc:
        missing.append(
            f"MC/DC of the {len(no_mcdc)} Python modules (coverage.py measures statements and "
            "branches only)"
        )
    if not entry.get("per_requirement_c", False):
        missing.append("per-requirement figures of the C code (llvm profiles are per process)")
    analysed = {k: v for k, v in entry["exempted_by_reason"].items() if k != "not-analysed"}
    exempt = ", ".join(f"{v} {k}" for k, v in sorted(analysed.items())) or "none"
    output = (
        f"coverage.json: {len(files)} files, {entry['gaps']} uncovered items each listed in "
        f"{EXEMPTIONS.as_posix()} (analysed exemptions: {exempt}); {figures}"
    )
    note = (
        entry["object_code"]
        + f" The coverage run took {entry['seconds']} s ({entry.get('cpu_seconds', 0)} CPU-s)."
    )
    if missing:
        return Objective(
            STANDARD, asked, output, "partly met", "missing: " + "; ".join(missing) + ". " + note
        )
    return Objective(STANDARD, asked, output, "met", note)
