"""The report's command lines (``report``, ``lint``, ``strictdoc``): roots, exit codes, messages.

Written against the mutants of ``report/cli.py`` and ``report/strictdoc.py``
(``make mutants``): each test pins one behaviour a planted fault changes.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from test_trace_report import AT, FIXTURE_REGISTRY, make_tree

from sonnx_mul.requirements import REGISTRY, Requirement
from sonnx_mul_assurance.report import cli as report_cli
from sonnx_mul_assurance.report import report as report_module
from sonnx_mul_assurance.report.strictdoc import export, mirror_sources, render_sdoc, sdoc_uid

REPO = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- find_root
def test_find_root_from_a_folder_inside_a_checkout(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "repo")
    inner = root / "why3"
    assert report_cli.find_root(inner) == root.resolve()
    assert report_cli.find_root(root) == root.resolve()


def test_find_root_defaults_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree(tmp_path / "repo")
    monkeypatch.chdir(root / "proofs")
    assert report_cli.find_root() == root.resolve()


def test_find_root_outside_any_checkout_is_the_tooling_s_own_checkout(tmp_path: Path) -> None:
    assert report_cli.find_root(tmp_path) == REPO


# ---------------------------------------------------------------- report
def test_report_command_green_exit_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_tree(tmp_path / "repo")
    monkeypatch.setattr(report_module, "_default_registry", lambda: FIXTURE_REGISTRY)
    argv = ["--root", str(root), "--out", str(tmp_path / "o"), "--no-probe"]
    code = report_cli.report_main(argv)
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "traceability gate: passed (2 requirements)" in out.out
    assert out.out.count("wrote ") == 3 and out.err == ""


def test_report_command_red_lists_every_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_tree(tmp_path / "repo")
    code = report_cli.main(
        ["report", "--root", str(root), "--out", str(tmp_path / "o"), "--no-probe"]
    )
    err = capsys.readouterr().err
    assert code == 1
    lines = err.splitlines()
    count = int(lines[0].split("(")[1].split()[0])
    assert lines[0] == f"traceability gate: FAILED ({count} problems)"
    assert len(lines) == count + 1 and all(line.startswith("  ") for line in lines[1:])


def test_report_require_accepts_only_optional_evidence(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "repo")
    out = str(tmp_path / "o")
    argv = ["--root", str(root), "--out", out, "--no-probe", "--require", "why3"]
    assert report_cli.report_main(argv) == 2  # argparse refuses: not optional evidence
    assert report_cli.report_main(["--root", str(root), "--no-probe"]) == 2  # --out required


def test_report_without_root_uses_the_checkout_around_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_tree(tmp_path / "repo")
    monkeypatch.chdir(root)
    assert report_cli.report_main(["--out", str(tmp_path / "o"), "--no-probe"]) == 1
    assert "src/sonnx_mul/a.py" in (tmp_path / "o" / "traceability.json").read_text()
    capsys.readouterr()


# ---------------------------------------------------------------- lint
def test_lint_exit_codes_and_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "repo"
    (root / "src/sonnx_mul").mkdir(parents=True)
    (root / "src/sonnx_mul/a.py").write_text(f"# {AT}relation(R1, scope=file)\n")
    assert report_cli.main(["lint", "--root", str(root)]) == 0
    assert capsys.readouterr().err == ""
    (root / "src/sonnx_mul/b.py").write_text(f"# {AT}relation(NOPE, scope=file)\n")
    (root / "src/sonnx_mul/c.py").write_text(f"# {AT}relation(NOPE2, scope=file)\n")
    assert report_cli.main(["lint", "--root", str(root)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == "marker lint: 2 problems" and len(err) == 3


def test_main_without_a_known_subcommand_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert report_cli.main([]) == 2
    assert report_cli.main(["nope"]) == 2
    assert "usage: python -m sonnx_mul_assurance.report" in capsys.readouterr().err
    assert report_cli.main(["lint", "--help"]) == 0


# ---------------------------------------------------------------- strictdoc
def test_sdoc_uids() -> None:
    assert sdoc_uid("F") == "REQ-F"
    assert sdoc_uid("R1") == "R1" and sdoc_uid("C1-OUT") == "C1-OUT"
    assert sdoc_uid("1X") == "REQ-1X"


def test_render_sdoc_parent_relations_and_text() -> None:
    registry = {
        "F": Requirement("F", "Value", "C[i] = A[i] * B[i]", None, "seed"),
        "F-WRAP": Requirement("F-WRAP", "Wrap", "modulo 2^bits", "F", "seed"),
    }
    text = render_sdoc(registry)
    assert text.count("[REQUIREMENT]") == 2
    assert "UID: REQ-F\nTITLE: F: Value\nSTATEMENT: >>>\nC[i] = A[i] * B[i]\n<<<" in text
    assert "RELATIONS:\n- TYPE: Parent\n  VALUE: REQ-F" in text
    assert text.count("RELATIONS:") == 1
    assert "COMMENT: >>>\nSource: seed\n<<<" in text


def test_mirror_sources_rewrites_marker_ids_only(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "m.py").write_text(f"# {AT}relation(F, R1, scope=function)\nF = 1\n")
    assert mirror_sources(root, tmp_path / "out") == 1
    mirrored = (tmp_path / "out" / "src" / "m.py").read_text()
    assert mirrored == f"# {AT}relation(REQ-F, R1, scope=function)\nF = 1\n"


def fake_strictdoc(tmp_path: Path, code: int) -> Path:
    exe = tmp_path / "bin" / "strictdoc"
    exe.parent.mkdir()
    exe.write_text(f'#!/bin/sh\necho "$@" > "{tmp_path}/argv"\nexit {code}\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


@pytest.mark.parametrize("code", [0, 3])
def test_export_runs_strictdoc_and_returns_its_exit_code(tmp_path: Path, code: int) -> None:
    exe = fake_strictdoc(tmp_path, code)
    out = tmp_path / "out"
    assert export(REPO, out, str(exe)) == code
    argv = (tmp_path / "argv").read_text().split()
    assert argv[:2] == ["export", str(out / "sdoc")]
    assert argv[2:] == [
        "--config", str(out / "strictdoc_config.py"), "--formats", "html",
        "--output-dir", str(out / "export"),
    ]  # fmt: skip


def test_export_without_strictdoc_exit_2_and_a_stale_mirror_is_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    (out / "source" / "stale").mkdir(parents=True)
    assert export(REPO, out, "no-such-strictdoc-sonnx") == 2
    assert "no-such-strictdoc-sonnx not found" in capsys.readouterr().err
    assert not (out / "source" / "stale").exists()
    sdoc = (out / "sdoc" / "requirements.sdoc").read_text()
    assert sdoc.count("[REQUIREMENT]") == len(REGISTRY)


def test_export_relative_out_is_under_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "repo"
    shutil.copytree(REPO / "tools", root / "tools")
    monkeypatch.chdir(tmp_path)
    assert export(root, Path("build/sd"), run=False) == 0
    assert (root / "build" / "sd" / "strictdoc_config.py").is_file()
    assert not (tmp_path / "build").exists()
    assert os.path.isdir(root / "build" / "sd" / "sdoc")


def test_strictdoc_command_line(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert (
        report_cli.main(["strictdoc", "--root", str(REPO), "--out", str(out), "--no-export"]) == 0
    )
    assert (out / "strictdoc_config.py").is_file()


def test_export_twice_into_the_same_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert export(REPO, out, run=False) == 0
    assert export(REPO, out, run=False) == 0  # the folders exist now: rewritten, not refused
    assert (out / "sdoc" / "requirements.sdoc").is_file()
