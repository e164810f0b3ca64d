"""``rekey``: the exemptions an edit made stale carried to the gaps they name at their
new place, so that an edit which shifts lines keeps every reason a person wrote.

An exemption is keyed by (file, kind, line, what): lines added above an exempted
item make it stale and its item an unlisted gap. A stale exemption is carried to
an unlisted gap only when the gap is the same item moved: the same file, function
and kind, the same ``what`` apart from its column, and the same source text at its
line now as the exemption's line had in the revision the exemptions were written
against (``--from``, HEAD by default).  Among several such gaps, the one whose
``what`` is the exemption's own (the same column) is the item; still several, or a
gap that two stale exemptions would take, and nothing is carried.  Every match is
one to one; everything else is printed and left for a person: no reason is
written, no exemption removed.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.structural.gate import gap_key
from sonnx_mul_assurance.structural.scope import EXEMPTIONS, OUT

COLUMN = re.compile(r"^col \d+: ")
"""The column that starts a branch's or an MC/DC condition's ``what`` (C gaps)."""

LineText = Callable[[str, int], str | None]
"""(file, line) -> the line's source text, None when there is no such line."""


def without_column(what: str) -> str:
    """``what`` with its leading column left out (``col 9: true never taken`` ->
    ``true never taken``); a ``what`` without a column is itself."""
    return COLUMN.sub("", what, count=1)


@dataclass(frozen=True)
class Carried:
    """A stale exemption and the gap it is carried to (the same item, moved)."""

    exemption: schema.CoverageExemption
    gap: schema.CoverageGap


@dataclass(frozen=True)
class Left:
    """A stale exemption not carried, and why (for a person to settle)."""

    exemption: schema.CoverageExemption
    why: str


@dataclass(frozen=True)
class Rekeying:
    """What :func:`rekeying` decided: ``exemptions`` is the new list (the carried
    ones at their gaps' places, every other as it was, in the file's order)."""

    carried: list[Carried]
    left: list[Left]
    unlisted: list[schema.CoverageGap]
    exemptions: list[schema.CoverageExemption]


def rekeying(
    gaps: Sequence[schema.CoverageGap],
    exemptions: Sequence[schema.CoverageExemption],
    old_text: LineText,
    new_text: LineText,
) -> Rekeying:
    """Carry each stale exemption (it lists no gap of ``gaps``) to the one unlisted gap
    that is its item moved (the module's docstring says when); ``old_text`` reads a
    line as it was when the exemptions were written, ``new_text`` as it is now."""
    measured = {gap_key(g) for g in gaps}
    listed = {gap_key(e) for e in exemptions}
    stale = [e for e in exemptions if gap_key(e) not in measured]
    unlisted = [g for g in gaps if gap_key(g) not in listed]
    candidates: dict[int, list[schema.CoverageGap]] = {}
    left: list[Left] = []
    for index, ex in enumerate(stale):
        before = old_text(ex.file, ex.line)
        if before is None:
            left.append(Left(ex, f"no line {ex.line} in {ex.file} at the old revision"))
            continue
        found = [
            g
            for g in unlisted
            if (g.file, g.function, g.kind) == (ex.file, ex.function, ex.kind)
            and without_column(g.what) == without_column(ex.what)
            and new_text(g.file, g.line) == before
        ]
        same_column = [g for g in found if g.what == ex.what]
        candidates[index] = same_column if len(found) > 1 and same_column else found
    claims = Counter(gap_key(g) for found in candidates.values() for g in found)
    carried: list[Carried] = []
    moved: dict[int, schema.CoverageGap] = {}
    for index, found in candidates.items():
        ex = stale[index]
        if not found:
            left.append(Left(ex, "no unlisted gap is this item moved (function, kind, text)"))
        elif len(found) > 1:
            lines = ", ".join(str(g.line) for g in found)
            left.append(Left(ex, f"ambiguous: {len(found)} moved gaps match (lines {lines})"))
        elif claims[gap_key(found[0])] > 1:
            left.append(Left(ex, f"ambiguous: line {found[0].line} matches another exemption"))
        else:
            carried.append(Carried(ex, found[0]))
            moved[id(ex)] = found[0]
    new = [
        dataclasses.replace(ex, line=moved[id(ex)].line, what=moved[id(ex)].what)
        if id(ex) in moved
        else ex
        for ex in exemptions
    ]
    taken = {gap_key(c.gap) for c in carried}
    still = [g for g in unlisted if gap_key(g) not in taken]
    left.sort(key=lambda lf: (lf.exemption.file, lf.exemption.line, lf.exemption.what))
    return Rekeying(carried, left, still, new)


def _lines(text: str) -> list[str]:
    return [line.removesuffix("\r") for line in text.split("\n")]


def _line(lines: list[str] | None, number: int) -> str | None:
    return lines[number - 1] if lines is not None and 1 <= number <= len(lines) else None


def text_now(root: Path) -> LineText:
    """A line of a file of the tree ``root`` as it is now (read once per file)."""
    read: dict[str, list[str] | None] = {}

    def text(file: str, number: int) -> str | None:
        if file not in read:
            path = root / file
            read[file] = (
                _lines(path.read_text(encoding="utf-8", errors="replace"))
                if path.is_file()
                else None
            )
        return _line(read[file], number)

    return text


def text_at(root: Path, rev: str) -> LineText:
    """A line of a file as git holds it at revision ``rev`` of the repository of
    ``root`` (``git show REV:./file`` from ``root``; read once per file)."""
    read: dict[str, list[str] | None] = {}

    def text(file: str, number: int) -> str | None:
        if file not in read:
            done = subprocess.run(
                ["git", "show", f"{rev}:./{file}"],
                cwd=root,
                capture_output=True,
                check=False,
            )
            read[file] = (
                _lines(done.stdout.decode("utf-8", errors="replace"))
                if done.returncode == 0
                else None
            )
        return _line(read[file], number)

    return text


def _item(item: schema.CoverageGap | schema.CoverageExemption) -> str:
    where = f"{item.file}:{item.line}" + (f" ({item.function})" if item.function else "")
    return f"{where} {item.kind}" + (f" {item.what}" if item.what else "")


def rekey(root: Path, rev: str = "HEAD", out: Path = OUT) -> int:
    """Carry the stale exemptions of the exemption file to the gaps of ``out`` that are
    their items moved since ``rev`` and print what was carried and what is left; the
    file is rewritten only when something was carried.  0 when nothing is left (no
    stale exemption, no unlisted gap), 1 when a person has some to settle."""
    evidence = schema.load(schema.CoverageEvidence, root / out)
    path = root / EXEMPTIONS
    current = schema.load(schema.CoverageExemptions, path)
    result = rekeying(evidence.gaps, current.exemptions, text_at(root, rev), text_now(root))
    for c in result.carried:
        print(f"carried: {_item(c.exemption)} -> line {c.gap.line}" + (
            f" ({c.gap.what})" if c.gap.what != c.exemption.what else ""
        ))  # fmt: skip
    for lf in result.left:
        print(f"left stale: {_item(lf.exemption)}: {lf.why}")
    for g in result.unlisted:
        print(f"left unlisted: {_item(g)}")
    if result.carried:
        schema.dump(schema.CoverageExemptions(current.version, result.exemptions), path)
    print(
        f"{len(result.carried)} exemption(s) carried to their moved gaps"
        + (f" in {EXEMPTIONS}" if result.carried else "")
        + f"; left for a person: {len(result.left)} stale exemption(s), "
        f"{len(result.unlisted)} unlisted gap(s)"
    )
    return 1 if result.left or result.unlisted else 0
