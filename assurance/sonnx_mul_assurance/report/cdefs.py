"""Function definitions of a C file, by line: what a C marker or a WP goal points at.

Only the layout the kernel uses needs to be read (C99, one definition per
``name(...) { ... }`` at file level, no K&R parameters, no macros that open
braces): comments, string and character literals and preprocessor lines are
blanked first (newlines kept, so line numbers stay), then every ``{`` at file
level whose preceding text ends with a parameter list opens a definition.
Ghost functions (defined inside ``/*@ ghost ... */``, proved by WP like the
others) are definitions too, spanning their ACSL block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LEXEMES = re.compile(
    r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|^[ \t]*#(?:[^\n]*\\\n)*[^\n]*",
    re.S | re.M,
)
_HEAD = re.compile(r"\b([A-Za-z_]\w*)\s*\([^;{}]*\)\s*\Z")
_GHOST_BLOCK = re.compile(r"/\*@\s*ghost\b.*?\*/", re.S)
_GHOST_HEAD = re.compile(r"\b([A-Za-z_]\w*)\s*\([^;{}]*\)\s*\{")


@dataclass(frozen=True)
class CDef:
    """``name`` defined from line ``start`` (its signature) to ``end`` (its ``}``)."""

    name: str
    start: int
    end: int


def blank(text: str) -> str:
    """``text`` with comments, literals and preprocessor lines replaced by blanks
    (each newline kept)."""
    return _LEXEMES.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def definitions(text: str) -> list[CDef]:
    """Every function definition of the C source ``text``, in file order."""
    code = blank(text)
    found: list[CDef] = []
    depth = 0
    head_from = 0  # where the text before the next file-level brace starts
    opened: tuple[str, int] | None = None
    for index, char in enumerate(code):
        if char == "{":
            if depth == 0:
                head = code[head_from:index]
                match = _HEAD.search(head)
                if match is not None:
                    first = head_from + len(head) - len(head.lstrip())
                    opened = (match.group(1), code.count("\n", 0, first) + 1)
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                if opened is not None:
                    found.append(CDef(opened[0], opened[1], code.count("\n", 0, index) + 1))
                    opened = None
                head_from = index + 1
        elif char == ";" and depth == 0:
            head_from = index + 1
    return sorted(found + ghost_definitions(text), key=lambda d: d.start)


def ghost_definitions(text: str) -> list[CDef]:
    """The ghost functions of ``text`` (ACSL ``/*@ ghost ... */`` blocks that
    define one, as WP proves them), each from its block's first line to its last."""
    found = []
    for block in _GHOST_BLOCK.finditer(text):
        head = _GHOST_HEAD.search(block.group(0))
        if head is not None:
            start = text.count("\n", 0, block.start()) + 1
            found.append(CDef(head.group(1), start, text.count("\n", 0, block.end()) + 1))
    return found
