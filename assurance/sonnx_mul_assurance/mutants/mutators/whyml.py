"""WhyML mutants, by pattern over the text with its comments blanked
(:func:`..why3.whyml.strip_comments`): ``<=``/``<``, ``>=``/``>``, ``/\\``/``\\/``,
integer literals +1, an ``ensures``/``raises``/``invariant`` made ``true``, a
``requires`` made ``true``, an ``if ... then raise`` made ``if false then raise``;
never inside comments nor in the format of a float type (the tables check's job)."""

from __future__ import annotations

import re

from sonnx_mul_assurance.mutants.mutant import Mutant, line_starts
from sonnx_mul_assurance.why3 import whyml

_RULES: tuple[tuple[str, str | None], ...] = (
    (r"(?<![<\-])<=(?!>)", "<"),
    (r"(?<![<\-])<(?![=\->]|\s*float)", "<="),
    (r">=", ">"),
    (r"(?<![\-<=])>(?!=)", ">="),
    (r"/\\", "\\/"),
    (r"\\/", "/\\"),
    (r"(?<![\w.'])\d+(?![\w.])", None),  # +1
    (r"\bensures\s*\{[^{}]*\}", "ensures { true }"),
    (r"\brequires\s*\{[^{}]*\}", "requires { true }"),
    (r"\binvariant\s*\{[^{}]*\}", "invariant { true }"),
    (r"\braises\s*\{\s*(\w+)[^{}]*?->[^{}]*\}", "raises"),
    (r"\bif\b[^;]*?\bthen raise\b", "if false then raise"),
)


def mlw_mutants(file: str, text: str) -> list[Mutant]:
    # Offsets are kept by strip_comments: a match starts inside a comment
    # where the blanked text differs (no rule's match starts with a blank).
    clean = whyml.strip_comments(text)
    starts = line_starts(text)
    lines = text.splitlines()
    found = []
    for pattern, replacement in _RULES:
        for m in re.finditer(pattern, text):
            if clean[m.start()] != text[m.start()]:
                continue
            if "< float" in lines[text.count("\n", 0, m.start())]:
                continue  # the format of a float type: the cross-check's job (tables)
            if replacement is None:
                new = str(int(m.group()) + 1)
            elif replacement == "raises":
                new = f"raises {{ {m.group(1)} -> true }}"
            else:
                new = replacement
            if new == m.group():
                continue
            line = next(i for i, s in enumerate(starts) if s > m.start())
            col = m.start() - starts[line - 1]
            found.append(
                Mutant(file, line, m.start(), m.end(), m.group(), new, lines[line - 1].strip(), col)
            )
    return found


def module_of(text: str, offset: int) -> str | None:
    """The last module starting at or before ``offset`` (:func:`whyml.parse`): the one
    whose proof a mutant at ``offset`` is checked by."""
    line = text.count("\n", 0, offset) + 1
    before = [m.name for m in whyml.parse(text) if m.start <= line]
    return before[-1] if before else None
