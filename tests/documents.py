"""The rules the Markdown documents keep in their prose, in one place.

``tests/docs/test_documents.py`` applies them to every Markdown file git lists
(tests/tree_files.py): relative links resolve, quoted section names are headings,
tests named beside their file are in it, no date or issue number outside the lab
and the decisions (nor in the Makefile's comments), and the trusted base names
every assumption the proofs take unproved. The figures the documents quote and
their generated blocks are tests/doc_figures.py's.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from tree_files import ROOT, rel

# Folders whose text may carry dates and issue numbers: the lab notebook and the
# decision records. Verbatim third-party texts keep theirs; BENCHMARKS.md and the
# conformance runs are measurement records a tool writes (with the date of the run).
DATED = ("docs/lab/", "docs/decisions/")


VERBATIM = ("docs/spec/sources/",)


MEASURED = ("BENCHMARKS.md", "docs/conformance/runs/")


README_MAX_LINES = 250


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
