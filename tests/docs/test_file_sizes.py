"""No hand-written file is longer than about 600 lines, the verifier excepted.

A file past that size holds more than one job and costs the next maintainer a
read of the whole to change a part: split it by job (the C harnesses, the
generator, the coverage tooling and the large test files were split so).
Not counted: generated files (their generator is the file to read), data and
recorded outputs (manifests, pins, measurements, conformance runs), copies of
outside texts, and the dated history of docs/lab.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import tree_files  # tests/tree_files.py
from sonnx_mul_assurance import generate

ROOT = Path(__file__).resolve().parents[2]

LIMIT = 650
"""Lines: "about 600", with the slack a file near the line needs."""

EXCEPTIONS = {
    "src/sonnx_mul_verify.py": (
        "the verifier of verify-install: one standard-library file that runs outside "
        "the package and imports nothing of it, so that it can check an installation "
        "it does not trust"
    ),
}
"""Hand-written files allowed past LIMIT, each with its reason."""

DATA_SUFFIXES = frozenset(
    {".json", ".lock", ".xml", ".html", ".onnx", ".npy", ".pb", ".png", ".bin", ".txt"}
)
NOT_HAND_WRITTEN = ("docs/lab/", "docs/conformance/runs/", "docs/spec/sources/", "proofs/out/")
"""Folders of dated history, recorded outputs and copies of outside texts."""


def counted(names: list[str], generated: set[str]) -> list[str]:
    """The hand-written files among ``names`` (relative POSIX paths)."""
    return [
        name
        for name in names
        if name not in generated
        and Path(name).suffix not in DATA_SUFFIXES
        and not name.startswith(NOT_HAND_WRITTEN)
    ]


def line_count(path: Path) -> int:
    return len(path.read_bytes().splitlines())


def problems(root: Path, names: list[str], generated: set[str]) -> list[str]:
    """Every hand-written file past LIMIT that EXCEPTIONS does not name, and every
    exception that no longer holds (its file gone, or back under the limit)."""
    found = []
    sizes = {name: line_count(root / name) for name in counted(names, generated)}
    for name, lines in sorted(sizes.items()):
        if lines > LIMIT and name not in EXCEPTIONS:
            found.append(f"{name}: {lines} lines (limit {LIMIT}): split it by job")
    for name in sorted(EXCEPTIONS):
        if sizes.get(name, 0) <= LIMIT:
            found.append(f"{name}: excepted from the size limit but not past it (or gone)")
    return found


def _generated(root: Path) -> set[str]:
    return {p.as_posix() for p in generate.generated_files(root)} - set(EXCEPTIONS)


def test_no_hand_written_file_is_past_the_limit() -> None:
    assert problems(ROOT, tree_files.listed_files(ROOT), _generated(ROOT)) == []


def test_every_exception_has_a_reason() -> None:
    assert all(len(reason) > 40 for reason in EXCEPTIONS.values())


def _tree(tmp_path: Path, files: dict[str, int]) -> list[str]:
    for name, lines in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n" * lines)
    return list(files)


@pytest.mark.parametrize(
    "name", ["src/sonnx_mul/big.py", "native/src/big.c", "docs/big.md", "tests/test_big.py"]
)
def test_a_planted_long_file_is_found(tmp_path: Path, name: str) -> None:
    names = _tree(tmp_path, {name: LIMIT + 1, "src/sonnx_mul_verify.py": LIMIT + 500})
    assert problems(tmp_path, names, set()) == [
        f"{name}: {LIMIT + 1} lines (limit {LIMIT}): split it by job"
    ]


def test_a_file_at_the_limit_passes(tmp_path: Path) -> None:
    names = _tree(tmp_path, {"a.py": LIMIT, "src/sonnx_mul_verify.py": LIMIT + 1})
    assert problems(tmp_path, names, set()) == []


def test_generated_files_data_and_history_are_not_counted(tmp_path: Path) -> None:
    long = LIMIT + 1
    names = _tree(
        tmp_path,
        {
            "native/src/gen.c": long,
            "proofs/manifest.json": long,
            "docs/lab/history.md": long,
            "docs/conformance/runs/x/stdout.txt": long,
            "src/sonnx_mul_verify.py": long,
        },
    )
    assert problems(tmp_path, names, {"native/src/gen.c"}) == []
    # the same generated file, once nothing generates it, is counted
    assert problems(tmp_path, names, set()) == [
        f"native/src/gen.c: {long} lines (limit {LIMIT}): split it by job"
    ]


def test_an_exception_that_no_longer_holds_is_found(tmp_path: Path) -> None:
    names = _tree(tmp_path, {"src/sonnx_mul_verify.py": 10})
    assert problems(tmp_path, names, set()) == [
        "src/sonnx_mul_verify.py: excepted from the size limit but not past it (or gone)"
    ]
