"""Issue 29, item 7: every file a comment or a document names exists.

Scans the comments and docstrings of the Python sources (``src``,
``assurance``, ``tests``, ``benchmarks``, ``native``, ``tools``, ``examples``;
string literals are data, e.g. test fixtures), the whole text of the other
sources, the Makefile and the Markdown documents for paths of the
repository (``src/...``, ``tests/...``, ``native/...``, ``docs/...``, ...) and
checks that each names a file or folder of the
tree. Paths that name what a run writes (``proofs/out/``, ``build/``) or a
placeholder (``DIR``, ``...``, globs) are not files of the tree and are
skipped. Before issue 29, a ``docs`` folder of seeds (requirements.py and the
report's text) and a flags file in ``native`` pointed nowhere.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOP = ("src", "tests", "assurance", "native", "docs", "proofs", "why3", "benchmarks", "tools",
       "examples", "requirements")  # fmt: skip
PATH = re.compile(r"(?<![\w./-])((?:" + "|".join(TOP) + r")/[A-Za-z0-9_./-]*[A-Za-z0-9_])")
GENERATED = ("proofs/out", "build/", "docs/report-screenshots/")
SCANNED = ("src", "assurance", "tests", "benchmarks", "native", "tools", "examples", "docs")
SUFFIXES = {".py", ".c", ".h", ".md", ".mk", ".sh", ".mlw", ".toml", ".pyi", ".txt"}
# Files of a temporary tree a test builds, named in that test's docstring or comments.
FIXTURE_TREES = {
    ("tests/report/test_native_evidence.py", "native/src/k.c"),
    ("tests/report/test_gate_rules.py", "src/sonnx_mul/a.py"),
}


def sources() -> list[Path]:
    found = [ROOT / "Makefile", *ROOT.glob("*.md")]
    for top in SCANNED:
        found += [
            p for p in (ROOT / top).rglob("*")
            if p.is_file() and p.suffix in SUFFIXES and "out" not in p.relative_to(ROOT).parts
        ]  # fmt: skip
    return found


def named(text: str) -> set[str]:
    out = set()
    for match in PATH.finditer(text):
        path = match.group(1).rstrip(".")
        if any(ch in path for ch in "*{}<>") or path.startswith(GENERATED):
            continue
        if re.search(r"/(DIR|NAME|FILE|X|\.\.\.)(/|$)|\.\.\.", path):
            continue
        out.add(path)
    return out


def prose(source: Path) -> str:
    """What a file says in words: a Python file's comments and docstrings, else its text."""
    text = source.read_text(encoding="utf-8")
    if source.suffix not in (".py", ".pyi"):
        return text
    parts = [
        tok.string for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.type == tokenize.COMMENT
    ]  # fmt: skip
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            parts.append(ast.get_docstring(node) or "")
    return "\n".join(parts)


def missing() -> list[tuple[str, str]]:
    gaps = []
    for source in sources():
        rel = str(source.relative_to(ROOT))
        try:
            text = prose(source)
        except (UnicodeDecodeError, SyntaxError):
            continue
        for path in sorted(named(text)):
            # relative to the repository, or to a folder the naming file is in
            # (the assurance package names its own modules from its folder)
            bases = [ROOT, *(p for p in source.parents if p.is_relative_to(ROOT))]
            found = any((base / path).exists() for base in bases)
            if not found and (rel, path) not in FIXTURE_TREES:
                gaps.append((rel, path))
    return gaps


def test_every_path_named_in_comments_and_docs_exists() -> None:
    assert missing() == []


def test_negative_control_a_dangling_pointer_is_found(tmp_path: Path) -> None:
    text = "see tests/cli/no_such_test.py and src/sonnx_mul/api.py"
    found = named(text)
    assert found == {"tests/cli/no_such_test.py", "src/sonnx_mul/api.py"}
    assert not (ROOT / "tests/cli/no_such_test.py").exists()
