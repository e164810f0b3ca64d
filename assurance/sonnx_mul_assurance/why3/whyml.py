"""The one reader of WhyML text in the tooling (no other module parses ``.mlw``).

Contracts:

* :func:`strip_comments` blanks every comment as Why3's lexer sees it:
  comments nest, ``(*)`` is the operator ``( * )`` and opens nothing,
  ``"..."`` string literals (with ``\\"`` escapes) are not scanned for
  comments.  Newlines are kept and every other comment character becomes a
  space, so offsets and line numbers are those of the original text.
* :func:`parse` gives the modules (``module`` or ``theory``) with their line
  spans (header line to the last ``end`` before the next module) and their
  top-level declarations: ``goal``, ``lemma``, ``axiom``, ``let``, ``val``,
  ``predicate``, ``function``, ``constant``, ``type``, ``exception``.
  A declaration's keyword is the first token of its line once comments are
  blanked (``(** doc *) lemma l`` counts); top level means the line's own
  indentation is the smallest such a line has in that module (nested
  ``let ... in`` are indented deeper, as the project writes WhyML).  A
  declaration spans to the line before the next one, or the module's ``end``.
  Operator names (``( * )``) are names.

Lines are 1-based and spans inclusive.  It is a reader of the project's own
style, not a WhyML parser: Why3 itself remains the judge of syntax.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

KEYWORDS: tuple[str, ...] = (
    "goal", "lemma", "axiom", "let", "val", "predicate", "function", "constant", "type",
    "exception",
)  # fmt: skip

_MODIFIERS = r"(?:\s+(?:rec|ghost|function|predicate|lemma|constant|partial))*"
_DECL = re.compile(
    r"^(?P<indent>[ \t]*)(?P<kind>" + "|".join(KEYWORDS) + r")\b"
    r"(?P<mods>" + _MODIFIERS + r")\s+(?P<name>[A-Za-z_][A-Za-z0-9_']*|\([^()\n]*\))",
    re.M,
)
_MODULE = re.compile(r"^[ \t]*(?:module|theory)\s+([A-Za-z_][A-Za-z0-9_']*)", re.M)
_END = re.compile(r"\bend\b")


@dataclass(frozen=True)
class Declaration:
    """``kind`` is the keyword with its modifiers (``let function``, ``lemma``)."""

    kind: str
    name: str
    start: int
    end: int


@dataclass(frozen=True)
class Module:
    """A module or theory: its name, line span and comment-free body text."""

    name: str
    start: int
    end: int
    body: str
    declarations: tuple[Declaration, ...]

    def declaration(self, name: str) -> Declaration | None:
        return next((d for d in self.declarations if d.name == name), None)


_TOKEN = re.compile(r'\(\*\)|\(\*|\*\)|"')
_STRING = re.compile(r'"(?:\\.|[^"\\])*"?', re.S)
_NOT_NEWLINE = re.compile(r"[^\n]")


def strip_comments(text: str) -> str:
    """``text`` with every comment blanked (see the module docstring)."""
    out: list[str] = []
    depth = pos = opened = i = 0
    while (m := _TOKEN.search(text, i)) is not None:
        token, i = m.group(), m.end()
        if depth == 0:
            if token == '"':
                string = _STRING.match(text, m.start())
                i = string.end() if string else i
            elif token == "(*":
                out.append(text[pos : m.start()])
                depth, opened = 1, m.start()
            continue  # "(*)" is the operator, a lone "*)" closes nothing
        if token == "(*":
            depth += 1
        elif token == "*)":
            depth -= 1
            if depth == 0:
                out.append(_NOT_NEWLINE.sub(" ", text[opened:i]))
                pos = i
    out.append(_NOT_NEWLINE.sub(" ", text[opened:]) if depth else text[pos:])
    return "".join(out)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


@functools.lru_cache(maxsize=32)
def parse(text: str) -> tuple[Module, ...]:
    """The modules of a WhyML file, in order (see the module docstring).

    Cached: the mutation runner and the report ask many times per file."""
    clean = strip_comments(text)
    heads = list(_MODULE.finditer(clean))
    found: list[Module] = []
    for k, head in enumerate(heads):
        stop = heads[k + 1].start() if k + 1 < len(heads) else len(clean)
        ends = list(_END.finditer(clean, head.end(), stop))
        close = ends[-1].start() if ends else stop
        body = clean[head.end() : close]
        first = _line_of(clean, head.start())
        last = _line_of(clean, close)
        decls = _declarations(text, clean, head.end(), close, last)
        found.append(Module(head.group(1), first, last, body, decls))
    return tuple(found)


def _indent(text: str, offset: int) -> int:
    """Leading blanks of the original line at ``offset`` (a comment is not blank)."""
    line = text[text.rfind("\n", 0, offset) + 1 :]
    return len(line) - len(line.lstrip(" \t"))


def _declarations(
    text: str, clean: str, start: int, stop: int, module_end: int
) -> tuple[Declaration, ...]:
    matches = list(_DECL.finditer(clean, start, stop))
    if not matches:
        return ()
    indent = min(_indent(text, m.start()) for m in matches)
    top = [m for m in matches if _indent(text, m.start()) == indent]
    out: list[Declaration] = []
    for k, m in enumerate(top):
        line = _line_of(clean, m.start("kind"))
        end = _line_of(clean, top[k + 1].start("kind")) - 1 if k + 1 < len(top) else module_end - 1
        kind = " ".join([m.group("kind"), *m.group("mods").split()])
        out.append(Declaration(kind, m.group("name"), line, max(line, end)))
    return tuple(out)


def modules(text: str) -> dict[str, str]:
    """Module name -> its comment-free body."""
    return {m.name: m.body for m in parse(text)}


def module_names(text: str) -> list[str]:
    return [m.name for m in parse(text)]


def declarations(text: str) -> list[tuple[str, Declaration]]:
    """``(module, declaration)`` for every top-level declaration of the file."""
    return [(m.name, d) for m in parse(text) for d in m.declarations]


def module_at(text: str, line: int) -> str | None:
    """The module whose span contains ``line``, if any."""
    return next((m.name for m in parse(text) if m.start <= line <= m.end), None)


def definition(module: Module, name: str, text: str) -> str | None:
    """The comment-free text of declaration ``name`` after its first ``=`` line
    (a program's body), or None.  ``text`` is the whole file."""
    decl = module.declaration(name)
    if decl is None:
        return None
    lines = strip_comments(text).splitlines(keepends=True)[decl.start - 1 : decl.end]
    chunk = "".join(lines)
    eq = re.search(r"^\s*=\s", chunk, re.M)
    return chunk[eq.end() :] if eq else None
