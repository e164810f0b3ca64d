"""Requirement markers: scanning, scope resolution and lint.

A marker is the text ``@relation(ID[, ID...], scope=SCOPE)`` (StrictDoc's
syntax) in a Python docstring or ``#`` comment, in a WhyML ``(* *)``
comment, or in a C ``/* */`` comment (``native/``: the kernel's C sources).
Scopes, resolved to a line range ``start..end`` of the file:

- ``function`` / ``class``: Python; ``function`` also C. The marker sits in
  the docstring of the ``def``/``class``, or in a comment line right above
  it (blank lines, other comments, decorators and, in C, ACSL blocks may come
  between). The range is the whole definition, decorators included; a C
  definition is found by :mod:`.cdefs`.
- ``file``: the whole file.
- ``line``: the marker's line; a marker on a line of its own (comment only)
  marks the next non-blank line instead.
- ``range_start`` ... ``range_end``: the lines between the two markers, which
  must name the same ids; ranges nest (last opened, first closed).

The lint fails on: an id not in the registry, an unknown scope, a malformed
marker (``@relations(``, ``@relation (``, ``@Relation(``, a missing comma,
no scope, an empty id list), an unbalanced range, and a ``function`` marker
that is attached to no function. A marker inside a backtick code span of its
line (a mention in documentation, as in the registry's docstring) is not a
marker.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from sonnx_mul.requirements import REGISTRY
from sonnx_mul_assurance.report import cdefs
from sonnx_mul_assurance.why3 import whyml

SCOPES: tuple[str, ...] = ("function", "class", "file", "line", "range_start", "range_end")
SCAN_DIRS: tuple[str, ...] = (
    "src",
    "tests",
    "why3",
    # the one tooling file that is evidence: the contracts CrossHair checks
    # (the rest of the tooling talks about markers without being marked)
    "assurance/sonnx_mul_assurance/python/contracts.py",
    # the C kernel that computes every product (Frama-C WP and MISRA evidence)
    "native",
    # the WP units that tie the kernel's contracts to the specification
    "proofs/wp",
)
SCAN_SUFFIXES: tuple[str, ...] = (".py", ".mlw", ".c", ".h")
C_SUFFIXES: tuple[str, ...] = (".c", ".h")

_AT = "@"
# Anything that looks like an attempt at a marker (any case, any suffix, spaces).
_SUSPECT = re.compile(_AT + r"\s*relation\w*", re.IGNORECASE)
_WELL_FORMED = re.compile(_AT + r"relation\(([^()]*)\)")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")


@dataclass(frozen=True)
class Problem:
    """A lint finding at ``path:line``."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True)
class Marker:
    """A resolved marker: ``ids`` relate to lines ``start..end`` of ``path``.

    ``line`` is where the marker text is (the ``range_start`` one for a
    range); ``name`` is the function or class for those scopes; ``module``
    the WhyML module that contains ``line``, if any.
    """

    path: str
    line: int
    ids: tuple[str, ...]
    scope: str
    start: int
    end: int
    name: str | None = None
    module: str | None = None

    @property
    def location(self) -> str:
        return f"{self.path}:{self.start}-{self.end}"

    def covers(self, line: int) -> bool:
        return self.start <= line <= self.end


@dataclass(frozen=True)
class _Raw:
    line: int
    ids: tuple[str, ...]
    scope: str
    comment_only: bool


_CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def _is_quoted(text: str, start: int) -> bool:
    """Whether ``start`` lies inside a backtick code span of the line."""
    return any(m.start(2) <= start < m.end(2) for m in _CODE_SPAN.finditer(text))


def _parse_body(body: str) -> tuple[tuple[str, ...], str] | str:
    """``(ids, scope)``, or an error message."""
    parts = [p.strip() for p in body.split(",")]
    if not parts or "scope=" not in parts[-1].replace(" ", ""):
        if any("scope" in p for p in parts):
            return "malformed marker: ids and scope= must be separated by commas"
        return "malformed marker: no scope= given"
    *ids, last = parts
    key, _, scope = (s.strip() for s in last.partition("="))
    if key != "scope" or not scope:
        return "malformed marker: ids and scope= must be separated by commas"
    if scope not in SCOPES:
        return f"unknown scope {scope!r} (one of {', '.join(SCOPES)})"
    if not ids:
        return "malformed marker: no requirement id"
    for rid in ids:
        if "=" in rid or not _ID.match(rid):
            return f"malformed marker: bad id {rid!r}"
    return tuple(ids), scope


def _raw_markers(rel: str, lines: list[str], problems: list[Problem]) -> list[_Raw]:
    found: list[_Raw] = []
    for number, text in enumerate(lines, start=1):
        for suspect in _SUSPECT.finditer(text):
            if _is_quoted(text, suspect.start()):
                continue
            good = _WELL_FORMED.match(text, suspect.start())
            if good is None:
                problems.append(Problem(rel, number, f"malformed marker {text.strip()!r}"))
                continue
            parsed = _parse_body(good.group(1))
            if isinstance(parsed, str):
                problems.append(Problem(rel, number, parsed))
                continue
            ids, scope = parsed
            stripped = text.strip()
            comment_only = (
                stripped.startswith(("#", "//"))
                or (stripped.startswith("(*") and stripped.endswith("*)"))
                or (stripped.startswith("/*") and stripped.endswith("*/"))
            )
            found.append(_Raw(number, ids, scope, comment_only))
    return found


def _definitions(source: str) -> list[tuple[int, int, int, str, str, int | None]]:
    """(first line incl. decorators, def line, end line, kind, name, docstring end)."""
    tree = ast.parse(source)
    out: list[tuple[int, int, int, str, str, int | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            doc_end: int | None = None
            body0 = node.body[0] if node.body else None
            if (
                isinstance(body0, ast.Expr)
                and isinstance(body0.value, ast.Constant)
                and isinstance(body0.value.value, str)
            ):
                doc_end = body0.end_lineno
            end = node.end_lineno or node.lineno
            out.append((first, node.lineno, end, kind, node.name, doc_end))
    return out


def _attach(
    raw: _Raw, lines: list[str], defs: list[tuple[int, int, int, str, str, int | None]]
) -> tuple[int, int, str] | None:
    """Range and name of the definition a function/class marker belongs to."""
    kind = raw.scope
    # In a docstring: the innermost definition whose docstring holds the line.
    inside = [d for d in defs if d[3] == kind and d[5] is not None and d[1] < raw.line <= d[5]]
    if inside:
        d = max(inside, key=lambda d: d[1])
        return d[0], d[2], d[4]
    if not raw.comment_only:
        return None
    # A comment above the definition: skip blanks, comments, decorators.
    for number in range(raw.line + 1, len(lines) + 1):
        stripped = lines[number - 1].strip()
        if not stripped or stripped.startswith("#"):
            continue
        for d in defs:
            if d[3] == kind and d[0] == number:
                return d[0], d[2], d[4]
        return None
    return None


def _attach_c(raw: _Raw, lines: list[str], defs: list[cdefs.CDef]) -> tuple[int, int, str] | None:
    """Range and name of the C definition a comment-only function marker sits above:
    only blank lines and comments (ACSL contracts included) may come between."""
    if not raw.comment_only:
        return None
    code = cdefs.blank("\n".join(lines)).splitlines()
    for number in range(raw.line + 1, len(code) + 1):
        found = next(((d.start, d.end, d.name) for d in defs if d.start == number), None)
        if found is not None or code[number - 1].strip():  # a ghost block is all comment
            return found
    return None


def module_spans(lines: list[str]) -> list[tuple[str, int, int]]:
    """WhyML module spans ``(name, first line, last line)`` (:mod:`..whyml`)."""
    return [(m.name, m.start, m.end) for m in whyml.parse("\n".join(lines))]


def module_at(spans: list[tuple[str, int, int]], line: int) -> str | None:
    for name, start, end in spans:
        if start <= line <= end:
            return name
    return None


def scan_file(
    path: Path, root: Path, known_ids: Collection[str] | None = None
) -> tuple[list[Marker], list[Problem]]:
    """Markers of one file and the lint problems found in it."""
    rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.splitlines()
    problems: list[Problem] = []
    raws = _raw_markers(rel, lines, problems)
    if not raws:
        return [], problems
    is_py = path.suffix == ".py"
    is_c = path.suffix in C_SUFFIXES
    c_defs = cdefs.definitions(text) if is_c else []
    defs: list[tuple[int, int, int, str, str, int | None]] = []
    if is_py:
        try:
            defs = _definitions(text)
        except SyntaxError as exc:
            problems.append(Problem(rel, exc.lineno or 1, f"cannot parse: {exc.msg}"))
    spans = [] if is_py or is_c else module_spans(lines)
    markers: list[Marker] = []
    stack: list[_Raw] = []
    for raw in raws:
        if known_ids is not None:
            for rid in raw.ids:
                if rid not in known_ids:
                    problems.append(Problem(rel, raw.line, f"unknown requirement id {rid!r}"))
        module = module_at(spans, raw.line)
        if raw.scope in ("function", "class"):
            if not is_py and not (is_c and raw.scope == "function"):
                problems.append(
                    Problem(rel, raw.line, f"scope={raw.scope} is for Python; use a range here")
                )
                continue
            attached = _attach_c(raw, lines, c_defs) if is_c else _attach(raw, lines, defs)
            if attached is None:
                problems.append(
                    Problem(
                        rel, raw.line, f"scope={raw.scope} marker is attached to no {raw.scope}"
                    )
                )
                continue
            start, end, name = attached
            markers.append(Marker(rel, raw.line, raw.ids, raw.scope, start, end, name, module))
        elif raw.scope == "file":
            markers.append(Marker(rel, raw.line, raw.ids, "file", 1, len(lines), None, module))
        elif raw.scope == "line":
            target = raw.line
            if raw.comment_only:
                target = next(
                    (n for n in range(raw.line + 1, len(lines) + 1) if lines[n - 1].strip()),
                    raw.line,
                )
            markers.append(Marker(rel, raw.line, raw.ids, "line", target, target, None, module))
        elif raw.scope == "range_start":
            stack.append(raw)
        else:  # range_end
            if not stack:
                problems.append(Problem(rel, raw.line, "range_end without a range_start"))
                continue
            opened = stack.pop()
            if set(opened.ids) != set(raw.ids):
                problems.append(
                    Problem(
                        rel,
                        raw.line,
                        f"range_end {', '.join(raw.ids)} closes range_start "
                        f"{', '.join(opened.ids)} of line {opened.line}",
                    )
                )
                continue
            markers.append(
                Marker(
                    rel,
                    opened.line,
                    opened.ids,
                    "range",
                    opened.line,
                    raw.line,
                    None,
                    module_at(spans, opened.line),
                )
            )
    for opened in stack:
        problems.append(
            Problem(rel, opened.line, f"range_start {', '.join(opened.ids)} is never closed")
        )
    return markers, problems


def iter_files(root: Path, dirs: Iterable[str] = SCAN_DIRS) -> list[Path]:
    """The files of ``SCAN_SUFFIXES`` under ``root/dirs`` (a directory or one
    file), sorted."""
    files: list[Path] = []
    for d in dirs:
        base = root / d
        for path in [base] if base.is_file() else base.rglob("*"):
            if (
                path.is_file()
                and path.suffix in SCAN_SUFFIXES
                and "__pycache__" not in path.parts
                and not any(p.startswith(".") for p in path.relative_to(root).parts)
            ):
                files.append(path)
    return sorted(files)


def scan(
    root: Path, known_ids: Collection[str] | None = None, dirs: Iterable[str] = SCAN_DIRS
) -> tuple[list[Marker], list[Problem]]:
    """All markers under ``root/dirs`` and all lint problems."""
    markers: list[Marker] = []
    problems: list[Problem] = []
    for path in iter_files(root, dirs):
        m, p = scan_file(path, root, known_ids)
        markers.extend(m)
        problems.extend(p)
    return markers, problems


def lint(
    root: Path, known_ids: Collection[str] | None = None, dirs: Iterable[str] = SCAN_DIRS
) -> list[Problem]:
    """Lint problems of every marker under ``root/dirs`` (default: the registry ids)."""
    if known_ids is None:
        known_ids = REGISTRY.keys()
    return scan(root, known_ids, dirs)[1]
