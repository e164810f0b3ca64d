"""The rules the Markdown documents keep, and the figures they quote, in one place.

``tests/docs/test_documents.py`` applies the rules; this module also rewrites the
generated blocks::

    python tests/documents.py          # list what is stale, exit 1 if anything is
    python tests/documents.py --write  # rewrite every generated block from the manifests

A generated block is the text between ``<!-- generated: NAME -->`` and
``<!-- end generated -->``; NAME is one of ``BLOCKS``. The figures come from the
proof manifests (``proofs/manifest.json``, ``proofs/wp-manifest.json``) and from
the last ``make bench`` (``benchmarks/results.json``, which ``BENCHMARKS.md`` renders)
and from the coverage exemptions (``proofs/coverage-exemptions.json``).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess
import sys
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# Folders whose text may carry dates and issue numbers: the lab notebook and the
# decision records. Verbatim third-party texts keep theirs; BENCHMARKS.md and the
# conformance runs are measurement records a tool writes (with the date of the run).
DATED = ("docs/lab/", "docs/decisions/")
VERBATIM = ("docs/spec/sources/",)
MEASURED = ("BENCHMARKS.md", "docs/conformance/runs/")
README_MAX_LINES = 250

# ------------------------------------------------------------------ the files


def markdown_files(root: Path = ROOT) -> list[Path]:
    """Every Markdown file git lists (tracked or new, not ignored); see :func:`listed_files`."""
    return [root / name for name in listed_files(root, "*.md")]


def listed_files(root: Path = ROOT, *pathspecs: str) -> list[str]:
    """The files git lists under ``root`` (tracked or new, not ignored; relative,
    POSIX), matching ``pathspecs`` (git's: ``*.md``, a folder; none: every file).

    Outside the top of a git work tree (``make test-debian-python`` runs the
    suite in a copy of the listed files under the ignored ``build/``, where
    git lists nothing), every file of the copy that matches, but for the
    folders ``.gitignore`` ignores (the copy's venv, its build and proof outputs).
    """
    top = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True
    )
    if top.returncode != 0 or Path(top.stdout.strip()).resolve() != root.resolve():
        return _walked(root, pathspecs)
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", *pathspecs],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted({line for line in out.splitlines() if (root / line).is_file()})


def _matches(name: str, pathspecs: tuple[str, ...]) -> bool:
    """git's reading of these pathspecs: a glob without a slash matches the base name
    anywhere (``*.md``), else the path or a folder above it."""
    if not pathspecs:
        return True
    return any(
        fnmatch.fnmatch(Path(name).name, spec)
        if "/" not in spec and any(c in spec for c in "*?[")
        else fnmatch.fnmatch(name, spec) or name.startswith(spec.rstrip("/") + "/")
        for spec in pathspecs
    )


def _walked(root: Path, pathspecs: tuple[str, ...]) -> list[str]:
    """The files under ``root`` matching ``pathspecs``, not descending into a folder
    that a folder pattern of ``root/.gitignore`` (a line ending in ``/``) matches,
    nor listing a file its other patterns match (``src/sonnx_mul/*.so``)."""
    lines = [
        line.strip() for line in (root / ".gitignore").read_text(encoding="utf-8").splitlines()
    ]
    ignored = [line.rstrip("/") for line in lines if line.endswith("/")]
    ignored_files = [
        line for line in lines if line and not line.endswith("/") and line[0] not in "#!"
    ]
    found: list[str] = []
    for here, dirs, names in os.walk(root):
        rel_here = Path(here).relative_to(root).as_posix()
        dirs[:] = [
            d
            for d in dirs
            if d != ".git"
            and not any(
                fnmatch.fnmatch(d, pattern)
                or fnmatch.fnmatch(f"{rel_here}/{d}".removeprefix("./"), pattern)
                for pattern in ignored
            )
        ]
        for name in names:
            if name == ".git":  # a worktree's link to its repository: git's, never listed
                continue
            path = f"{rel_here}/{name}".removeprefix("./")
            hidden = any(
                fnmatch.fnmatch(path, pattern.replace("**/", "*")) for pattern in ignored_files
            )
            if _matches(path, pathspecs) and not hidden:
                found.append(path)
    return sorted(found)


def rel(path: Path, root: Path = ROOT) -> str:
    return path.relative_to(root).as_posix()


def under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p) for p in prefixes)


def without_code(text: str) -> str:
    """The text with fenced code blocks blanked (line numbers kept)."""
    lines, fence = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
            lines.append("")
            continue
        lines.append("" if fence else line)
    return "\n".join(lines)


# ------------------------------------------------------------------ links

LINK = re.compile(r"(?<!\!)\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMAGE = re.compile(r"\!\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s|$)", re.M)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)
ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"`|\*\*|__", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.strip().lower()
    kept = []
    for ch in text:
        if ch in " -_" or ch.isalnum():
            kept.append("-" if ch == " " else ch)
        elif unicodedata.category(ch).startswith(("L", "N")):
            kept.append(ch)
    return "".join(kept)


def anchors(path: Path) -> set[str]:
    text = without_code(path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out = set(ANCHOR.findall(text))
    for match in HEADING.finditer(text):
        base = slug(match.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def link_targets(text: str) -> Iterator[tuple[int, str]]:
    body = without_code(text)
    for regex in (LINK, IMAGE, REFDEF):
        for match in regex.finditer(body):
            yield body.count("\n", 0, match.start()) + 1, match.group(1)


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """Every relative link of ``path`` that does not resolve inside ``root``."""
    problems = []
    for line, target in link_targets(path.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
            continue  # http:, https:, mailto:
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path.resolve()
        where = f"{rel(path, root)}:{line}: {target}"
        if not dest.is_relative_to(root.resolve()):
            problems.append(f"{where} leaves the repository")
        elif not dest.exists():
            problems.append(f"{where} does not exist")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{where} has no heading #{anchor}")
    return problems


# ------------------------------------------------------------------ section names

# a section named in quotes: below, "Targets"; see "What WP proves"; the
# "Trusted base" section; section "X"
SECTION_HERE = re.compile(r"\b(?:below|above|see),?\s+[\"“']([^\"”'\n]{3,80})[\"”']")
SECTION_ANY = re.compile(
    r"[\"“']([^\"”'\n]{3,80})[\"”']\s+section\b|\bsection\s+[\"“']([^\"”'\n]{3,80})[\"”']"
)


def _headings(path: Path) -> list[str]:
    text = without_code(path.read_text(encoding="utf-8"))
    return [re.sub(r"`|\*\*", "", m.group(2)) for m in HEADING.finditer(text)]


def missing_sections(path: Path, every: list[Path], root: Path = ROOT) -> list[str]:
    """Quoted section names in ``path`` that no heading starts with: after
    below/above/see, a heading of ``path`` itself; before or after the word
    section, a heading of any of ``every``."""
    text = without_code(path.read_text(encoding="utf-8"))
    here = _headings(path)
    out = []
    for regex, headings in ((SECTION_HERE, lambda: here), (SECTION_ANY, None)):
        for match in regex.finditer(text):
            name = next(g for g in match.groups() if g)
            pool = headings() if headings else [h for f in every for h in _headings(f)]
            if not any(h.startswith(name) for h in pool):
                line = text.count("\n", 0, match.start()) + 1
                out.append(f"{rel(path, root)}:{line}: {name!r}")
    return out


# ------------------------------------------------------------------ named tests

TEST_FILE = re.compile(r"\btests/[\w/]+\.py(?:::(\w+))?")
TEST_NAME = re.compile(r"(?<![\w/.*:])(test_\w+)\b(?![.*\w])")


def _functions(path: Path) -> set[str]:
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def missing_tests(path: Path, root: Path = ROOT) -> list[str]:
    """Test functions a line of ``path`` names beside the path of a test file (or
    after it, ``::name``) that no test file named on that line defines."""
    out = []
    for n, line in enumerate(without_code(path.read_text(encoding="utf-8")).splitlines(), 1):
        files = [
            m for m in TEST_FILE.finditer(line) if (root / m.group(0).split("::")[0]).is_file()
        ]
        if not files:
            continue
        defined = set().union(*(_functions(root / m.group(0).split("::")[0]) for m in files))
        named = {m.group(1) for m in files if m.group(1)}
        named |= {m.group(1) for m in TEST_NAME.finditer(TEST_FILE.sub(" ", line))}
        for name in sorted(named - defined):
            out.append(f"{rel(path, root)}:{n}: {name}")
    return out


# ------------------------------------------------------------------ dates, issues

MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
DATE = re.compile(
    r"\b(?:19|20)\d\d-[01]\d(?:-[0-3]\d)?\b"
    rf"|\b{MONTH}\.?\s+(?:\d{{1,2}},?\s+)?(?:19|20)\d\d\b"
    rf"|\b\d{{1,2}}\s+{MONTH}\.?\s+(?:19|20)\d\d\b"
)
ISSUE = re.compile(
    r"\b[Ii]ssues?\s+#?\d+"  # issue 28, issues 20 and 28
    r"|(?<![\w/.-])#\d+\b"  # a bare #28 (owner/repo#28 and goal#3 are names)
    r"|\b[Tt]he seed'?s\b|\bseeds?/"  # the texts the project was started from
    r"|\b[Tt]he issue\b(?!s)"  # an issue the reader does not have
    r"|\.\./shared\b"
)


def dated_mentions(path: Path, root: Path = ROOT, *, dates: bool = True) -> list[str]:
    """Dates (unless ``dates`` is false) and issue numbers in ``path``, code blocks
    included: a transcript is text too."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for regex in (DATE, ISSUE) if dates else (ISSUE,):
            for match in regex.finditer(line):
                out.append(f"{rel(path, root)}:{n}: {match.group(0)!r}")
    return out


# Text files whose comments keep the same rule as the documents.
COMMENTED = ("Makefile",)


def comment_mentions(path: Path, root: Path = ROOT) -> list[str]:
    """Dates and issue numbers in the ``#`` comments of ``path`` (a Makefile)."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.lstrip().startswith("#"):
            continue
        for regex in (DATE, ISSUE):
            for match in regex.finditer(line):
                out.append(f"{rel(path, root)}:{n}: {match.group(0)!r}")
    return out


def date_rule_applies(name: str) -> bool:
    """No date here: everything but the lab, the decisions, verbatim sources and
    the measurement records a tool writes (those keep the date of their run)."""
    return not under(name, DATED + VERBATIM + MEASURED)


def issue_rule_applies(name: str) -> bool:
    """No issue number here: everything but the lab, the decisions and verbatim sources."""
    return not under(name, DATED + VERBATIM)


# ------------------------------------------------------------------ goal counts


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


# ------------------------------------------------------------------ ratios

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


# ------------------------------------------------------------------ assumptions

TRUSTED_BASE = "docs/assurance/trusted-base.md"
WHY3_AXIOM = re.compile(r"^\s*axiom\s+(\w+)\s*:", re.M)  # `axiom .` in a clone is no declaration
ACSL_AXIOM = re.compile(r"\baxiom\s+(\w+)\s*:")
ADMIT = re.compile(r"\badmit\s+(?:loop\s+)?\w+\s+(\w+)\s*:")
FUNCTION = re.compile(r"\b(\w+)\s*\([^()]*\)\s*\{")


def _admitting_function(text: str, at: int) -> str | None:
    """The function an ``admit`` clause at ``at`` belongs to: the first one
    defined after the end of its contract (``*/``, or ``@/`` in a ghost)."""
    ends = [i for i in (text.find("*/", at), text.find("@/", at)) if i >= 0]
    found = FUNCTION.search(text, min(ends)) if ends else None
    return found.group(1) if found else None


def assumptions(root: Path = ROOT) -> list[tuple[str, str]]:
    """Every assumption the proofs take unproved, as (where, name): each
    ``axiom`` of ``why3/*.mlw`` and of the ACSL of ``native/`` and
    ``proofs/wp/``, and each function with an ``admit`` clause (named by the
    function; the clause label when no function follows)."""
    out: list[tuple[str, str]] = []
    for path in sorted((root / "why3").glob("*.mlw")):
        text = path.read_text(encoding="utf-8")
        for match in WHY3_AXIOM.finditer(text):
            line = text.count("\n", 0, match.start(1)) + 1
            out.append((f"{rel(path, root)}:{line}", match.group(1)))
    sources = sorted((root / "native").rglob("*.[ch]")) + sorted((root / "proofs/wp").glob("*.c"))
    for path in sources:
        text = path.read_text(encoding="utf-8")
        for match in ACSL_AXIOM.finditer(text):
            line = text.count("\n", 0, match.start(1)) + 1
            out.append((f"{rel(path, root)}:{line}", match.group(1)))
        for match in ADMIT.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            name = _admitting_function(text, match.end()) or match.group(1)
            out.append((f"{rel(path, root)}:{line}", name))
    return out


def unnamed_assumptions(root: Path = ROOT) -> list[str]:
    """The assumptions the trusted base does not name (as `` `name` ``)."""
    text = (root / TRUSTED_BASE).read_text(encoding="utf-8")
    return [f"{where}: {name}" for where, name in assumptions(root) if f"`{name}`" not in text]


def misra_unnamed(root: Path = ROOT, checked: tuple[str, ...] = ("native/src",)) -> list[str]:
    """The C files of the kernel (``native/src``, ``native/hw``) outside
    ``checked`` (the folders the MISRA check analyses) that the trusted base
    does not name as unchecked."""
    text = (root / TRUSTED_BASE).read_text(encoding="utf-8")
    files = sorted((root / "native/src").glob("*.c")) + sorted((root / "native/hw").glob("*.c"))
    return [
        rel(f, root)
        for f in files
        if rel(f, root).rsplit("/", 1)[0] not in checked and f"`{rel(f, root)}`" not in text
    ]


# ------------------------------------------------------------------ generated blocks

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
