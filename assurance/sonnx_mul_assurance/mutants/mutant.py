"""A mutant (a planted fault: a span of a file's text replaced) and the even spread
of a file's mutants that a run takes."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass

from sonnx_mul_assurance.evidence import schema

Outcome = schema.MutantOutcome
"""What running one mutant gave (``proofs/out/mutants.json``'s ``outcomes``)."""


@dataclass(frozen=True)
class Mutant:
    file: str
    line: int
    start: int  # offset in the file's text
    end: int
    original: str
    replacement: str
    context: str  # the source line, stripped
    col: int  # column in the line
    occurrence: int = 0  # among mutants with the same line text, column and operator
    function: str = ""  # the C function it is in (not part of the key)

    @property
    def key(self) -> str:
        """Stable across edits elsewhere in the file: the line text, the operator.
        The keys of ``proofs/mutants-equivalent.json`` are these: never change it."""
        raw = (
            f"{self.file}|{self.context}|{self.col}|{self.original}|{self.replacement}"
            f"|{self.occurrence}"
        )
        return hashlib.sha256(raw.encode()).hexdigest()[:12]

    def apply(self, text: str) -> str:
        assert text[self.start : self.end] == self.original
        return text[: self.start] + self.replacement + text[self.end :]


def line_starts(text: str) -> list[int]:
    """The offset of each line's first character (and one past the text's end)."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def spread(mutants: list[Mutant], limit: int) -> list[Mutant]:
    """At most ``limit`` mutants, evenly spaced over the file (deterministic). Numbers
    the occurrences of the same change on the same line text (part of the key)."""
    ordered = sorted(mutants, key=lambda m: (m.start, m.replacement))
    seen: dict[tuple[str, int, str, str], int] = {}
    for i, m in enumerate(ordered):
        same = (m.context, m.col, m.original, m.replacement)
        ordered[i] = dataclasses.replace(m, occurrence=seen.get(same, 0))
        seen[same] = seen.get(same, 0) + 1
    if len(ordered) <= limit:
        return ordered
    return [ordered[i * len(ordered) // limit] for i in range(limit)]
