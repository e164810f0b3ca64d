"""Python mutants, from the standard library's tokenizer and ``ast``: comparison flips
(``<``/``<=``, ``==``/``!=``, ``is``/``is not``, ``in``/``not in``), arithmetic and
bit operators (``+``/``-``, ``<<``/``>>``, ``&``/``|``, ``//``/``%``), ``and``/``or``,
integer constants +1, ``True``/``False``, a ``raise`` statement replaced by ``pass``;
never inside annotations, strings or comments. A mutant that does not compile is
dropped."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from types import MappingProxyType

from sonnx_mul_assurance.mutants.mutant import Mutant, line_starts

_OPS = MappingProxyType({
    "<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==",
    "+": "-", "-": "+", "<<": ">>", ">>": "<<", "&": "|", "|": "&",
    "//": "%", "%": "//", "*": "//",
})  # fmt: skip
_NAMES = MappingProxyType({"and": "or", "or": "and", "True": "False", "False": "True"})


def _excluded_spans(tree: ast.AST, starts: list[int]) -> list[tuple[int, int]]:
    """Annotations: mutating them changes nothing that runs (docstrings and comments
    are no tokens the mutants are made of)."""
    spans = []
    for node in ast.walk(tree):
        targets: list[ast.expr | None] = []
        if isinstance(node, ast.arg):
            targets.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            targets.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            targets.append(node.annotation)
        for t in targets:
            if t is not None and t.end_lineno is not None and t.end_col_offset is not None:
                spans.append(
                    (
                        starts[t.lineno - 1] + t.col_offset,
                        starts[t.end_lineno - 1] + t.end_col_offset,
                    )
                )
    return spans


def python_mutants(file: str, text: str) -> list[Mutant]:
    tree = ast.parse(text)
    starts = line_starts(text)
    excluded = _excluded_spans(tree, starts)
    lines = text.splitlines()
    found: list[Mutant] = []

    def add(line: int, col: int, length: int, original: str, replacement: str) -> None:
        start = starts[line - 1] + col
        if any(a <= start < b for a, b in excluded):
            return
        context = lines[line - 1].strip()
        found.append(Mutant(file, line, start, start + length, original, replacement, context, col))

    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        (line, col), s = tok.start, tok.string
        if tok.type == tokenize.OP and s in _OPS:
            add(line, col, len(s), s, _OPS[s])
        elif tok.type == tokenize.NAME and s in _NAMES:
            add(line, col, len(s), s, _NAMES[s])
        elif tok.type == tokenize.NAME and s == "is":
            add(line, col, 2, "is", "is not")
        elif tok.type == tokenize.NAME and s == "in" and not _after_for(lines[line - 1], col):
            add(line, col, 2, "in", "not in")
        elif tok.type == tokenize.NUMBER and re.fullmatch(r"\d+", s):
            add(line, col, len(s), s, str(int(s) + 1))
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.end_lineno is not None:
            start = starts[node.lineno - 1] + node.col_offset
            end = starts[node.end_lineno - 1] + (node.end_col_offset or 0)
            context = lines[node.lineno - 1].strip()
            found.append(
                Mutant(file, node.lineno, start, end, text[start:end], "pass", context,
                       node.col_offset)
            )  # fmt: skip
    return [m for m in found if _compiles(m.apply(text))]


def _after_for(line: str, col: int) -> bool:
    """``in`` of a ``for`` clause (its mutant does not parse)."""
    return re.search(r"\bfor\b[^:]*$", line[:col]) is not None and "if" not in line[:col]


def _compiles(text: str) -> bool:
    try:
        compile(text, "<mutant>", "exec")
    except SyntaxError:
        return False
    return True
