"""The figures the Markdown documents quote, and the blocks generated from them.

``tests/docs/test_documents.py`` checks them; this module also rewrites the
generated blocks::

    python tests/doc_figures.py          # list what is stale, exit 1 if anything is
    python tests/doc_figures.py --write  # rewrite every generated block from the manifests

A generated block is the text between ``<!-- generated: NAME -->`` and
``<!-- end generated -->``; NAME is one of ``BLOCKS``. The figures come from the
proof manifests (``proofs/manifest.json``, ``proofs/wp-manifest.json``) and from
the last ``make bench`` (``benchmarks/results.json``, which ``BENCHMARKS.md`` renders)
and from the coverage exemptions (``proofs/coverage-exemptions.json``). Goal counts
and ratios in the prose must be figures of those files. The rules of the prose
itself are tests/documents.py's.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from documents import without_code
from tree_files import ROOT, markdown_files, rel


@dataclass(frozen=True)
class Counts:
    why3: dict[str, int]  # file -> goals
    wp: dict[str, int]  # C source -> goals

    @property
    def why3_total(self) -> int:
        return sum(self.why3.values())

    @property
    def wp_total(self) -> int:
        return sum(self.wp.values())

    def by_name(self) -> dict[str, int]:
        """A unit's goal count under its path and under its file name."""
        out: dict[str, int] = {}
        for table in (self.why3, self.wp):
            for path, n in table.items():
                out[path] = n
                out[path.rsplit("/", 1)[-1]] = n
        return out

    def totals(self) -> set[int]:
        return {self.why3_total, self.wp_total}


def manifest_counts(root: Path = ROOT) -> Counts:
    why3 = json.loads((root / "proofs/manifest.json").read_text())
    wp = json.loads((root / "proofs/wp-manifest.json").read_text())
    return Counts(
        why3={f["path"]: len(f["goals"]) for f in why3["files"]},
        wp={u["source"]: len(u["goals"]) for u in wp["units"]},
    )


# "455 goals", "2063 WP goals", "169 goals", "81 pinned goals", "455/455"
GOALS = re.compile(
    r"(?<![\w.,/-])(\d{1,3}(?:,\d{3})+|\d+)\s+(?:(?:Why3|WP|pinned|proved|proof)\s+)?goals?\b"
)


UNIT = re.compile(r"[\w./-]+\.(?:mlw|c|py)\b")


def goal_count_mismatches(path: Path, counts: Counts, root: Path = ROOT) -> list[str]:
    """Goal counts in the prose of ``path`` that the manifests do not give.

    A count follows the rule "N goals" (optionally "N Why3/WP/pinned/proved goals").
    When a unit of a manifest (``widen.mlw``, ``native/src/sonnx_mul_int.c``) is
    named before it in the same clause (no ``;`` or sentence end between), N must
    be that unit's count; otherwise N must be a manifest's total or the count of
    one of its units.
    """
    known = counts.by_name()
    every = counts.totals() | set(known.values())
    out = []
    text = without_generated(without_code(path.read_text(encoding="utf-8")))
    for n, line in enumerate(text.splitlines(), 1):
        for match in GOALS.finditer(line):
            value = int(match.group(1).replace(",", ""))
            clause = re.split(r";|\.\s", line[: match.start()])[-1]
            named = [u for u in UNIT.findall(clause) if u in known]
            if named:
                unit = named[-1]
                if value != known[unit]:
                    out.append(
                        f"{rel(path, root)}:{n}: {match.group(0)!r}, {unit} has {known[unit]}"
                    )
            elif value not in every:
                out.append(f"{rel(path, root)}:{n}: {match.group(0)!r} is no manifest's count")
    return out


# a ratio is a decimal number directly followed by × or x; "0.0 × inf" is a product
RATIO = re.compile(r"(?<![\w.])(\d+\.\d+)\s?(?:×(?!\s?(?:[-\d]|inf|nan))|x(?![\w.]))")


def bench_results(root: Path = ROOT) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / "benchmarks/results.json").read_text())
    return data


def bench_ratios(results: dict[str, Any]) -> set[str]:
    """Every ratio the last ``make bench`` reports, as BENCHMARKS.md prints it
    (two decimals), and every target's limit."""
    out: set[str] = set()
    for goal in results["targets"]:
        for key in ("median", "min", "max"):
            out.add(f"{goal['ratio'][key]:.2f}")
        if goal.get("limit") is not None:
            out.add(f"{goal['limit']:.1f}")
            out.add(f"{goal['limit']:g}")
    return out


def ratio_mismatches(path: Path, allowed: set[str], root: Path = ROOT) -> list[str]:
    """Ratios (``6.28×``, ``6.28x``) in ``path`` that are no ratio of the last ``make bench``."""
    out = []
    text = without_generated(path.read_text(encoding="utf-8"))
    for n, line in enumerate(text.splitlines(), 1):
        for match in RATIO.finditer(line):
            if match.group(1) not in allowed:
                out.append(f"{rel(path, root)}:{n}: {match.group(0)!r}")
    return out


BLOCK = re.compile(
    r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S
)


def without_generated(text: str) -> str:
    """The text with generated blocks blanked (they are checked whole)."""
    return BLOCK.sub(lambda m: m.group(1) + "\n" * m.group("body").count("\n") + m.group(4), text)


def _goal_table(heading: str, goals: dict[str, int], total: int) -> str:
    """A Markdown table of goal counts by file, with its total."""
    rows = [f"| {heading} | goals |", "|---|---:|"]
    rows += [f"| `{path}` | {n} |" for path, n in goals.items()]
    rows.append(f"| **total** | **{total}** |")
    return "\n".join(rows) + "\n"


def _why3_table(root: Path) -> str:
    counts = manifest_counts(root)
    return _goal_table("file", counts.why3, counts.why3_total)


def _wp_table(root: Path) -> str:
    counts = manifest_counts(root)
    return _goal_table("unit", counts.wp, counts.wp_total)


def _totals(root: Path) -> str:
    counts = manifest_counts(root)
    return (
        f"Why3: {counts.why3_total} goals in {len(counts.why3)} files; "
        f"Frama-C WP: {counts.wp_total} goals in {len(counts.wp)} units.\n"
    )


def _bench_targets(root: Path) -> str:
    results = bench_results(root)
    rows = [
        "| target (last `make bench`) | against | ratio (median) | limit |",
        "|---|---|---:|---:|",
    ]
    for goal in results["targets"]:
        limit = "–" if goal.get("limit") is None else f"{goal['limit']:.1f}×"
        rows.append(
            f"| {goal['name']} | {goal['base']} | {goal['ratio']['median']:.2f}× | {limit} |"
        )
    machine = results["machine"]["cpu"]
    return "\n".join(rows) + f"\n\nMachine of that run: {machine} (`benchmarks/results.json`).\n"


def _prover_goals(root: Path) -> str:
    """The goals each manifest pins to each prover (the names the manifests use)."""
    rows = ["| manifest | pinned prover | goals |", "|---|---|---:|"]
    why3 = json.loads((root / "proofs/manifest.json").read_text())
    wp = json.loads((root / "proofs/wp-manifest.json").read_text())
    for name, goals in (
        ("proofs/manifest.json", [g for f in why3["files"] for g in f["goals"]]),
        ("proofs/wp-manifest.json", [g for u in wp["units"] for g in u["goals"].values()]),
    ):
        counts: dict[str, int] = {}
        for goal in goals:
            counts[goal["prover"]] = counts.get(goal["prover"], 0) + 1
        rows += [f"| `{name}` | {prover} | {n} |" for prover, n in sorted(counts.items())]
    return "\n".join(rows) + "\n"


def _proof_subjects(root: Path) -> str:
    """The report's proof subjects, as its data module states them."""
    from sonnx_mul_assurance.report.trusted import PROOF_SUBJECTS

    rows = ["| `about` | label | meaning |", "|---|---|---|"]
    rows += [f"| `{s.key}` | {s.label} | {s.meaning} |" for s in PROOF_SUBJECTS.values()]
    return "\n".join(rows) + "\n"


def _trusted_components(root: Path) -> str:
    """The report's trusted components, by name, as its data module lists them."""
    from sonnx_mul_assurance.report.prose import load_wp_units
    from sonnx_mul_assurance.report.trusted import trusted_base

    return "".join(f"- {c.name}\n" for c in trusted_base(load_wp_units(root)))


C_SUFFIXES = (".c", ".h")
"""The measured files that are C (the sources and the headers whose code runs)."""


def _coverage_exemptions(root: Path) -> str:
    """The exempted coverage gaps by class of reason, C and Python, from the exemption
    file (every class the schema has, in its order; a class with none shows 0)."""
    from typing import get_args, get_type_hints

    from sonnx_mul_assurance.evidence.schema import CoverageExemption

    classes = get_args(get_type_hints(CoverageExemption)["why"])
    listed = json.loads((root / "proofs/coverage-exemptions.json").read_text())["exemptions"]
    rows = ["| class | C | Python |", "|---|---:|---:|"]
    for why in classes:
        mine = [e for e in listed if e["why"] == why]
        c = sum(e["file"].endswith(C_SUFFIXES) for e in mine)
        rows.append(f"| `{why}` | {c} | {len(mine) - c} |")
    c_total = sum(e["file"].endswith(C_SUFFIXES) for e in listed)
    rows.append(f"| **total** | **{c_total}** | **{len(listed) - c_total}** |")
    return "\n".join(rows) + "\n"


BLOCKS: dict[str, Callable[[Path], str]] = {
    "proof-subjects": _proof_subjects,
    "prover-goals": _prover_goals,
    "trusted-components": _trusted_components,
    "why3-goals": _why3_table,
    "wp-goals": _wp_table,
    "goal-totals": _totals,
    "bench-targets": _bench_targets,
    "coverage-exemptions": _coverage_exemptions,
}


def stale_blocks(path: Path, root: Path = ROOT) -> list[str]:
    out = []
    for match in BLOCK.finditer(path.read_text(encoding="utf-8")):
        name = match.group("name")
        if name not in BLOCKS:
            out.append(f"{rel(path, root)}: unknown generated block {name!r}")
        elif match.group("body") != BLOCKS[name](root):
            out.append(f"{rel(path, root)}: generated block {name!r} is stale")
    return out


def rewrite_blocks(path: Path, root: Path = ROOT) -> bool:
    text = path.read_text(encoding="utf-8")
    new = BLOCK.sub(lambda m: m.group(1) + BLOCKS[m.group("name")](root) + m.group(4), text)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str]) -> int:
    write = "--write" in argv
    stale = []
    for path in markdown_files():
        if write:
            if rewrite_blocks(path):
                print(f"rewrote {rel(path)}")
        else:
            stale += stale_blocks(path)
    print("\n".join(stale) or "every generated block is current")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
