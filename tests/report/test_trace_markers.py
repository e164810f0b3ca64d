"""Marker scanner and lint: scopes resolve to line ranges; every malformed marker fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from sonnx_mul.requirements import REGISTRY
from sonnx_mul_assurance.report import lint_main
from sonnx_mul_assurance.report.markers import lint, scan

AT = "@"  # markers are spelt by concatenation so that this file holds none
IDS = {"R1", "R4", "C1", "F", "F-WRAP"}


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_repository_markers_are_clean() -> None:
    root = Path(__file__).resolve().parents[2]
    assert lint(root, REGISTRY.keys()) == []


def test_scopes_resolve_to_line_ranges(tmp_path: Path) -> None:
    write(
        tmp_path,
        "src/m.py",
        f"# {AT}relation(C1, scope=file)\n"  # 1
        "\n"
        f"# {AT}relation(R1, R4, scope=function)\n"  # 3
        "@staticmethod\n"  # 4
        "def f():\n"  # 5
        "    return 1\n"  # 6
        "\n"
        "def g():\n"  # 8
        f'    """Doc.\n\n    {AT}relation(F, scope=function)\n    """\n'  # 9-12
        "    return 2\n"  # 13
        f"# {AT}relation(F-WRAP, scope=range_start)\n"  # 14
        "X = 1\n"
        f"# {AT}relation(F-WRAP, scope=range_end)\n"  # 16
        f"Y = 2  # {AT}relation(R1, scope=line)\n",  # 17
    )
    markers, problems = scan(tmp_path, IDS)
    assert problems == []
    got = {(m.ids, m.scope, m.start, m.end, m.name) for m in markers}
    assert got == {
        (("C1",), "file", 1, 17, None),
        (("R1", "R4"), "function", 4, 6, "f"),
        (("F",), "function", 8, 13, "g"),
        (("F-WRAP",), "range", 14, 16, None),
        (("R1",), "line", 17, 17, None),
    }


def test_whyml_ranges_and_modules(tmp_path: Path) -> None:
    write(
        tmp_path,
        "why3/t.mlw",
        "module M\n"
        f"  (* {AT}relation(F, scope=range_start) *)\n"
        "  lemma l: true\n"
        f"  (* {AT}relation(F, scope=range_end) *)\n"
        "end\n",
    )
    markers, problems = scan(tmp_path, IDS)
    assert problems == []
    assert [(m.ids, m.start, m.end, m.module) for m in markers] == [(("F",), 2, 4, "M")]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (f"# {AT}relation(R9, scope=file)", "unknown requirement id 'R9'"),
        (f"# {AT}relations(R1, scope=file)", "malformed marker"),
        (f"# {AT}relation (R1, scope=file)", "malformed marker"),
        (f"# {AT}Relation(R1, scope=file)", "malformed marker"),
        (f"# {AT}relation(R1 scope=file)", "separated by commas"),
        (f"# {AT}relation(R1)", "no scope"),
        (f"# {AT}relation(R1, scope=everywhere)", "unknown scope 'everywhere'"),
        (f"# {AT}relation(scope=file)", "no requirement id"),
        (f"# {AT}relation(R1, scope=range_start)", "never closed"),
        (f"# {AT}relation(R1, scope=range_end)", "without a range_start"),
        (f"# {AT}relation(R1, scope=function)\nX = 1", "attached to no function"),
    ],
)
def test_lint_fails_with_file_and_line(tmp_path: Path, line: str, expected: str) -> None:
    write(tmp_path, "src/ok.py", "X = 1\n")
    write(tmp_path, "tests/bad.py", f'"""Doc."""\n\n{line}\n')
    problems = lint(tmp_path, IDS)
    assert len(problems) == 1, problems
    assert problems[0].path == "tests/bad.py"
    assert problems[0].line == 3
    assert expected in problems[0].message
    assert str(problems[0]).startswith("tests/bad.py:3: ")


def test_mismatched_range_end_fails(tmp_path: Path) -> None:
    write(
        tmp_path,
        "why3/a.mlw",
        f"(* {AT}relation(R1, scope=range_start) *)\n(* {AT}relation(R4, scope=range_end) *)\n",
    )
    problems = lint(tmp_path, IDS)
    assert any("closes range_start R1" in p.message for p in problems)


def test_quoted_mentions_are_not_markers(tmp_path: Path) -> None:
    write(tmp_path, "src/doc.py", f'"""Use ``{AT}relation(ID, ...)`` or `{AT}relations(`."""\n')
    assert lint(tmp_path, IDS) == []


def test_lint_command_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "src/sonnx_mul/requirements.py", "")
    write(tmp_path, "src/a.py", f"# {AT}relation(R1, scope=file)\n")
    assert lint_main(["--root", str(tmp_path)]) == 0
    write(tmp_path, "why3/b.mlw", f"(* {AT}relation(NOPE, scope=file) *)\n")
    assert lint_main(["--root", str(tmp_path)]) == 1
    assert "why3/b.mlw:1: unknown requirement id 'NOPE'" in capsys.readouterr().err


def test_strictdoc_export_files_without_strictdoc(tmp_path: Path) -> None:
    from sonnx_mul_assurance.report.strictdoc import export, sdoc_uid

    root = Path(__file__).resolve().parents[2]
    assert export(root, tmp_path, run=False) == 0
    sdoc = (tmp_path / "sdoc" / "requirements.sdoc").read_text(encoding="utf-8")
    assert sdoc.count("[REQUIREMENT]") == len(REGISTRY)
    assert sdoc_uid("F") == "REQ-F" and sdoc_uid("F-WRAP") == "F-WRAP"
    assert "@SOURCE@" not in (tmp_path / "strictdoc_config.py").read_text(encoding="utf-8")
    mirrored = (tmp_path / "source" / "src" / "sonnx_mul" / "kernel.py").read_text()
    assert f"{AT}relation(REQ-F, F-FLOAT" in mirrored
