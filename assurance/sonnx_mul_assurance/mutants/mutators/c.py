"""C mutants, in the bodies of named functions: ``<``/``<=``, ``>``/``>=``,
``==``/``!=``, ``+``/``-`` (``+=``/``-=``), ``&&``/``||``, decimal constants +1 (not
an array's declared size), an early ``return``, a ``break``/``continue`` or an
expression statement deleted; never inside comments, string or character literals
or preprocessor lines.

What is code and what is not is Pygments' C lexer's word (``CLexer``, maintained
with Pygments, which pytest already depends on): it reads raw C, comments,
literals and preprocessor lines with their continuations included, where a C
parser (pycparser) wants preprocessed text. Its operators come one character at a
time, so the code it leaves is then split into C's tokens by one pattern
(:data:`_TOKEN`) at the same offsets."""

from __future__ import annotations

import re
from types import MappingProxyType

from pygments.lexers.c_cpp import CLexer
from pygments.token import Comment, String

from sonnx_mul_assurance.mutants.mutant import Mutant, line_starts, spread

_TOKEN = re.compile(
    r"0[xX][0-9A-Fa-f]+[uUlL]*|\d+[uUlL]*|[A-Za-z_]\w*"
    r"|->|\+\+|--|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|\S"
)
_OPS = MappingProxyType({
    "<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==",
    "+": "-", "-": "+", "+=": "-=", "-=": "+=", "&&": "||", "||": "&&",
})  # fmt: skip
_CONTROL = frozenset({"if", "while", "for", "switch"})
_NOT_STATEMENTS = frozenset({
    *_CONTROL, "do", "else", "case", "default", "goto", "return", "break", "continue",
    "const", "static", "struct", "enum", "unsigned", "signed", "volatile",
})  # fmt: skip


def c_code_mask(text: str) -> str:
    """``text`` with its comments, string and character literals and preprocessor
    lines (continuations included) blanked: what is left is code, at the same offsets."""
    out = list(text)
    lexed: list[tuple[int, object, str]] = list(CLexer().get_tokens_unprocessed(text))
    for start, kind, value in lexed:
        if kind in Comment or kind in String:  # Comment.Preproc: the preprocessor lines
            for j in range(start, start + len(value)):
                if out[j] != "\n":
                    out[j] = " "
    return "".join(out)


def _matching(code: str, at: int) -> int:
    """The offset of the bracket closing the one at ``at`` (code already masked)."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    opening, closing = code[at], pairs[code[at]]
    depth = 0
    for j in range(at, len(code)):
        if code[j] == opening:
            depth += 1
        elif code[j] == closing:
            depth -= 1
            if depth == 0:
                return j
    raise ValueError(f"unbalanced {opening!r} at offset {at}")


def c_functions(code: str) -> dict[str, tuple[int, int]]:
    """Each function definition's name -> the offsets of its body, from ``{`` to
    after ``}`` (``code`` masked by :func:`c_code_mask`)."""
    found: dict[str, tuple[int, int]] = {}
    i = 0
    while True:
        m = re.compile(r"([A-Za-z_]\w*)\s*\(|[{]").search(code, i)
        if m is None:
            return found
        if m.group() == "{":  # a top-level initializer or type body: not a function
            i = _matching(code, m.start()) + 1
            continue
        close = _matching(code, m.end() - 1)
        after = re.compile(r"\s*").match(code, close + 1)
        body = after.end() if after else close + 1
        if body < len(code) and code[body] == "{" and m.group(1) not in _CONTROL:
            end = _matching(code, body) + 1
            found[m.group(1)] = (body, end)
            i = end
        else:
            i = close + 1


def _statements(tokens: list[re.Match[str]]) -> list[tuple[int, int, str, int]]:
    """(start, end, first token, brace depth in the body) of each statement that
    :func:`c_mutants` may delete: ``return``, ``break``, ``continue`` and expression
    statements (never a declaration, a control statement or a label)."""
    found = []
    parens: list[bool] = []  # for each open parenthesis: a control statement's head?
    depth = 0
    prev = ""
    closed_control = False
    for k, tok in enumerate(tokens):
        s = tok.group()
        start_here = not parens and (prev in (";", "{", "}", "else", "do") or closed_control)
        closed_control = False
        if s == "(":
            parens.append(prev in _CONTROL)
        elif s == ")":
            closed_control = parens.pop() if parens else False
        elif s == "{":
            depth += 1
        elif s == "}":
            depth -= 1
        if start_here and s not in ("{", "}", ";"):
            end = _statement_end(tokens, k)
            nxt = tokens[k + 1].group() if k + 1 < len(tokens) else ""
            # a type and a name (``size_t n``, ``PyArrayObject *c``): a declaration
            declaration = re.fullmatch(r"[A-Za-z_]\w*", s) is not None and (
                re.fullmatch(r"[A-Za-z_]\w*", nxt) is not None or nxt == "*"
            )
            jump = s in ("return", "break", "continue")
            expression = s not in _NOT_STATEMENTS and not declaration and nxt != ":"
            if (jump or expression) and end is not None:
                found.append((tok.start(), end, s, depth))
        prev = s
    return found


def _statement_end(tokens: list[re.Match[str]], k: int) -> int | None:
    """The offset after the ``;`` that ends the statement starting at token ``k``."""
    depth = 0
    for tok in tokens[k:]:
        s = tok.group()
        if s in "([{" and len(s) == 1:
            depth += 1
        elif s in ")]}" and len(s) == 1:
            depth -= 1
            if depth < 0:
                return None
        elif s == ";" and depth == 0:
            return tok.end()
    return None


def c_mutants(file: str, text: str, functions: tuple[str, ...]) -> list[Mutant]:
    """The C mutants of the bodies of ``functions`` (each must be defined in ``text``):
    comparison flips, ``+``/``-`` (``+=``/``-=``), ``&&``/``||``, decimal constants + 1
    (not an array's size in a declaration), an early ``return`` (one inside a nested
    block), a ``break``/``continue`` or an expression statement deleted (made ``;``).
    Never inside comments, string or character literals or preprocessor lines."""
    code = c_code_mask(text)
    bodies = c_functions(code)
    missing = [f for f in functions if f not in bodies]
    if missing:
        raise ValueError(f"{file}: no definition of {', '.join(missing)}")
    starts = line_starts(text)
    lines = text.splitlines()
    found: list[Mutant] = []

    def add(function: str, start: int, end: int, replacement: str) -> None:
        line = next(i for i, s in enumerate(starts) if s > start)
        found.append(
            Mutant(
                file, line, start, end, text[start:end], replacement,
                lines[line - 1].strip(), start - starts[line - 1], function=function,
            )
        )  # fmt: skip

    for function in functions:
        a, b = bodies[function]
        tokens = list(_TOKEN.finditer(code, a, b))
        for k, tok in enumerate(tokens):
            s = tok.group()
            if s in _OPS:
                add(function, tok.start(), tok.end(), _OPS[s])
            elif re.fullmatch(r"\d+[uUlL]*", s):
                size = k > 0 and tokens[k - 1].group() == "["
                if size and re.match(r"\s*\]\s*=\s*\{", code[tok.end() : b]):
                    continue  # an array's size in its declaration: the initializer fixes it
                digits = re.match(r"\d+", s)
                assert digits is not None
                new = str(int(digits.group()) + 1) + s[digits.end() :]
                add(function, tok.start(), tok.end(), new)
        for start, end, first, depth in _statements(tokens):
            if first == "return" and depth <= 1:
                continue  # the function's last word: deleting it falls off its end
            add(function, start, end, ";")
    return found


def spread_functions(mutants: list[Mutant], limit: int) -> list[Mutant]:
    """At most ``limit`` mutants, shared evenly among their functions (a function
    with fewer mutants than its share gives the rest to the others), evenly spaced
    within each function (deterministic)."""
    ordered = spread(mutants, len(mutants))  # numbers the occurrences
    groups: dict[str, list[Mutant]] = {}
    for m in ordered:
        groups.setdefault(m.function, []).append(m)
    quota: dict[str, int] = {}
    left = limit
    for n_left, name in enumerate(sorted(groups, key=lambda f: len(groups[f])), start=0):
        share = left // (len(groups) - n_left)
        quota[name] = min(len(groups[name]), share)
        left -= quota[name]
    chosen = [
        group[i * len(group) // quota[name]]
        for name, group in groups.items()
        for i in range(quota[name])
    ]
    return sorted(chosen, key=lambda m: (m.start, m.replacement))
