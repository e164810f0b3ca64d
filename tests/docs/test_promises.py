"""Every promise of SECURITY.md and of the threat model names the test that holds it.

A promise is a paragraph or a list item of those documents (``PROMISE_DOCUMENTS``)
outside the sections that promise nothing (``NO_PROMISE_SECTIONS``); tables, the lines
that introduce a list or a table (ending with ``:``) and the statements of what is *not*
promised (``NOT_PROMISES``, each with why) are left out. Each promise must name at least
one test as ``path/test_file.py::test_name``; the path may be shortened to the file's
name when that name is unique under tests/, and ``::test_name`` alone names a test of
the file named last in the same promise. Every test named must exist: the test files
are parsed with ast (nothing is imported or run), so a renamed or removed test fails
here. Negative controls: a planted name that does not exist, a promise that names no
test, a bare continuation, are each found.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"

PROMISE_DOCUMENTS = ("SECURITY.md", "docs/assurance/threat-model.md")
NO_PROMISE_SECTIONS = frozenset({
    "# Security",  # the title
    "## Reporting a problem",  # how to report, not what the product does
    "## What the product promises",  # the introduction to the sections below
    "# The threat model",  # the introduction: where the promises are
})  # fmt: skip
NOT_PROMISES = {
    # the first words of a paragraph that states a limit, not a promise -> why
    "Not covered by the bound:": "what the memory bound does not cover",
    "`python -I -S -m sonnx_mul_verify` does not work:": "a usage note",
    "**Trusted base of the check.**": "what the verifier cannot see",
    "- No limit is imposed on `run`": "the absence of a limit",
    "**Trusted:**": "who is trusted (the boundary, not a behaviour)",
}

REFERENCE = re.compile(r"(?<![\w/.])((?:tests/(?:[\w-]+/)*)?test_\w+\.py)?::(test_\w+)")
ITEM = re.compile(r"^(?:- |\d+\. )")


@dataclass(frozen=True)
class Promise:
    document: str
    line: int
    text: str


def promises(document: str, text: str) -> Iterator[Promise]:
    """The promises of a document: each paragraph and each list item (with the lines
    that continue it) outside NO_PROMISE_SECTIONS, but tables, introductions (a block
    ending with ``:``) and NOT_PROMISES."""
    section = ""
    block: list[str] = []
    start = 0

    def flush() -> Iterator[Promise]:
        joined = " ".join(line.strip() for line in block)
        if (
            block
            and section not in NO_PROMISE_SECTIONS
            and not joined.startswith("|")
            and not joined.endswith(":")
            and not any(joined.startswith(words) for words in NOT_PROMISES)
        ):
            yield Promise(document, start, joined)

    in_code = False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        if line.startswith("#"):
            yield from flush()
            section, block = line.strip(), []
        elif not line.strip():
            yield from flush()
            block = []
        else:
            if ITEM.match(line) and block:
                yield from flush()
                block = []
            if not block:
                start = number
            block.append(line)
    yield from flush()


@cache
def files_named(name: str) -> tuple[Path, ...]:
    return tuple(sorted(TESTS.rglob(name)))


@cache
def names_in(path: Path) -> frozenset[str]:
    """The test functions of a test file (module level, and methods of its classes)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.add(node.name)
        elif isinstance(node, ast.ClassDef):
            found |= {m.name for m in node.body if isinstance(m, ast.FunctionDef)}
    return frozenset(n for n in found if n.startswith("test_"))


def references(promise: Promise, root: Path = ROOT) -> tuple[list[str], list[str]]:
    """(the tests a promise names, as path::name; what is wrong with its references)."""
    named: list[str] = []
    problems: list[str] = []
    current: Path | None = None
    for m in REFERENCE.finditer(promise.text):
        file, name = m.group(1), m.group(2)
        if file is not None:
            if "/" in file:
                current = root / file if (root / file).is_file() else None
                if current is None:
                    problems.append(f"{file}: no such test file")
            else:
                found = files_named(file) if root == ROOT else tuple(root.rglob(file))
                current = found[0] if len(found) == 1 else None
                if current is None:
                    problems.append(f"{file}: {len(found)} test files of that name")
        elif current is None:
            problems.append(f"::{name}: no test file named before it")
            continue
        if current is None:
            continue
        if name not in names_in(current):
            problems.append(f"{current.relative_to(root).as_posix()}::{name}: no such test")
        else:
            named.append(f"{current.relative_to(root).as_posix()}::{name}")
    return named, problems


def all_promises(root: Path = ROOT) -> list[Promise]:
    return [
        p
        for document in PROMISE_DOCUMENTS
        for p in promises(document, (root / document).read_text())
    ]


def test_the_promises_are_found() -> None:
    found = all_promises()
    assert len(found) > 40
    assert {p.document for p in found} == set(PROMISE_DOCUMENTS)
    # every statement of NOT_PROMISES is still in a document (none left over)
    texts = [
        " ".join(line.strip() for line in (ROOT / d).read_text().splitlines())
        for d in PROMISE_DOCUMENTS
    ]
    for words in NOT_PROMISES:
        assert any(words.removeprefix("- ") in t for t in texts), words


def test_every_promise_names_a_test_and_every_test_named_exists() -> None:
    unnamed, wrong = [], []
    for p in all_promises():
        named, problems = references(p)
        if not named:
            unnamed.append(f"{p.document}:{p.line}: {p.text[:80]}")
        wrong += [f"{p.document}:{p.line}: {problem}" for problem in problems]
    assert wrong == []
    assert unnamed == []


# ---------------------------------------------------------------- negative controls
def test_negative_control_a_planted_name_that_does_not_exist_is_found() -> None:
    real = "tests/checker/test_wire_bounds.py::test_a_merged_tensor_counts_every_repeat"
    planted = Promise("SECURITY.md", 1, f"Held ({real}, `::test_no_such_test`).")
    named, problems = references(planted)
    assert named == [real]
    assert problems == ["tests/checker/test_wire_bounds.py::test_no_such_test: no such test"]


def test_negative_control_wrong_files_and_bare_continuations_are_found() -> None:
    planted = Promise(
        "SECURITY.md", 1,
        "`::test_orphan`, `tests/checker/test_gone.py::test_x`, `test_ambiguous.py::test_y`,"
        " `test_wire_bounds.py::test_a_merged_tensor_counts_every_repeat`",
    )  # fmt: skip
    named, problems = references(planted)
    assert named == ["tests/checker/test_wire_bounds.py::test_a_merged_tensor_counts_every_repeat"]
    assert problems == [
        "::test_orphan: no test file named before it",
        "tests/checker/test_gone.py: no such test file",
        "test_ambiguous.py: 0 test files of that name",
    ]


def test_negative_control_a_promise_without_a_test_is_found() -> None:
    text = (
        "# Security\n\nIntro, no promise.\n\n## What it does\n\n"
        "- **Never does X**: held by\n"
        "  `test_wire_bounds.py::test_a_merged_tensor_counts_every_repeat`.\n"
        "- **Never does Y**: no test named.\n\nChecks:\n\n| a | b |\n|---|---|\n\n"
        "Not covered by the bound: what is not promised.\n"
    )
    found = list(promises("SECURITY.md", text))
    assert [p.line for p in found] == [7, 9]
    assert [bool(references(p)[0]) for p in found] == [True, False]


def test_a_test_class_method_is_a_test_name(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_k.py").write_text(
        "class TestK:\n    def test_m(self) -> None:\n        pass\n\n\ndef helper() -> None:\n"
        "    pass\n"
    )
    ok = Promise("SECURITY.md", 1, "`tests/test_k.py::test_m`, `::helper`, `::test_n`")
    named, problems = references(ok, tmp_path)
    assert named == ["tests/test_k.py::test_m"]
    assert problems == ["tests/test_k.py::test_n: no such test"]  # `::helper`: not a test
