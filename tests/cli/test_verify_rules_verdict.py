"""The verifier's rules on the report and the verdict: the report is read strictly
(and cannot be changed after reading), the verifier compares its own hash with the
one the report records, and the verdict (text or JSON, with its exit code) follows
from the findings; the self-test's child runs only when nothing was found.

Part of the verifier's rules pinned one by one in this process (the
``test_verify_rules_*.py`` files: the mutants of ``sonnx_mul_verify`` run
against them first); each test names the rule it holds.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
from verify_rules_support import small_package

import sonnx_mul_verify as v


def report_file(tmp_path: Path, doc: object) -> Path:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc))
    return path


def test_the_report_is_read_strictly(tmp_path: Path) -> None:
    files = {"api.py": "a" * 64}
    good = {"package": {"files": files, "verifier": {"sha256": "B" * 64}},
            "gate": {"passed": False, "problems": ["R1: none", 3]}}  # fmt: skip
    expected = v.read_expected(report_file(tmp_path, good))
    assert expected == v.Expected(files, False, ["R1: none", "3"], "B" * 64)
    for bad in (
        [], {"package": []}, {"package": {"files": {}}}, {"package": {"files": {"a": 1}}},
        {"package": {"files": files}}, {"package": {"files": files}, "gate": {"passed": 1}},
        {"package": {"files": files}, "gate": []},
    ):  # fmt: skip
        with pytest.raises(ValueError):
            v.read_expected(report_file(tmp_path, bad))
    plain = {"package": {"files": files, "verifier": "x"}, "gate": {"passed": True}}
    assert v.read_expected(report_file(tmp_path, plain)) == v.Expected(files, True, [], None)


@pytest.mark.parametrize(
    "package",
    [[], {"files": []}, {"files": {}}, {"files": {"a.py": 1}}, {}],
)
def test_a_package_block_without_file_hashes_is_refused(tmp_path: Path, package: object) -> None:
    """Each with a valid gate: the package block alone makes the report unreadable."""
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"package": package, "gate": {"passed": True}}))
    with pytest.raises(ValueError, match=r"package\.files"):
        v.read_expected(path)


def test_what_a_report_says_cannot_be_changed_after_reading() -> None:
    expected = v.Expected({"a.py": "0" * 64}, True, [])
    with pytest.raises(dataclasses.FrozenInstanceError):
        expected.gate_passed = False  # type: ignore[misc]


def test_the_verifier_compares_its_own_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = Path(v.__file__).resolve()
    digest = v.sha256(mine)
    monkeypatch.setattr(v, "own_cache_problems", lambda source: [])
    assert v.verifier_check(digest.upper()) == (
        [], [f"verifier: {mine} sha256 {digest} (trusted base: it cannot verify itself)"]
    )  # fmt: skip
    findings, notes = v.verifier_check("0" * 64)
    assert notes == [] and findings == [
        f"{mine} sha256 {digest} is not the verifier the report records ({'0' * 64})"
    ]
    assert v.verifier_check(None)[1][1] == "verifier: the report records no verifier hash"
    monkeypatch.setattr(v, "__file__", str(tmp_path / "gone.py"))
    findings, _ = v.verifier_check(None)
    assert len(findings) == 1 and "cannot be read" in findings[0]


def verify_small(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    gate: bool = True,
    child: bool = False,
    as_json: bool = False,
) -> tuple[int, str, str]:
    pkg = small_package(tmp_path)
    files = v.inventory(pkg)[0]
    gate_block = {"passed": gate, "problems": ["R1: none"]}
    report = report_file(tmp_path, {"package": {"files": files}, "gate": gate_block})
    code = v.verify(report, pkg, child=child, as_json=as_json)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def quiet_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No variable, hook or module of this process's own is judged."""
    for name in list(os.environ):
        if name.startswith("SONNX_MUL_") or name in v.INTERPRETER_ENVIRONMENT:
            monkeypatch.delenv(name)
    monkeypatch.setattr(v, "site_dirs", lambda path=None: [])
    monkeypatch.setattr(v, "CUSTOMIZE_MODULES", ())
    monkeypatch.setattr(v, "own_cache_problems", lambda source: [])
    # this process has imported sonnx_mul (from src/): not the package checked here
    monkeypatch.setattr(v, "foreign_modules", lambda *args: [])


@pytest.mark.usefixtures("quiet_environment")
def test_the_verdict_lines_and_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = verify_small(tmp_path / "ok", capsys)
    assert code == v.EXIT_OK and err == ""
    assert out.splitlines()[-1].startswith("verify-install: OK: 3 files of ")
    code, out, err = verify_small(tmp_path / "gate", capsys, gate=False)
    assert code == v.EXIT_GATE_FAILED and "OK" not in out
    assert "FAILED GATE" in err and "(1 problems: R1: none)" in err
    monkeypatch.setenv("PYTHONHOME", "/elsewhere")
    code, out, err = verify_small(tmp_path / "bad", capsys)
    assert code == v.EXIT_MISMATCH
    assert out.splitlines()[0].startswith("environment: PYTHONHOME='/elsewhere' is set")
    assert err.strip().endswith("(1 findings)") and "MISMATCH" in err


@pytest.mark.usefixtures("quiet_environment")
def test_the_verdict_in_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = verify_small(tmp_path / "ok", capsys, as_json=True)
    doc = json.loads(out)
    assert (code, err, doc["verdict"], doc["exit_code"], doc["findings"]) == (0, "", "ok", 0, [])
    code, out, _ = verify_small(tmp_path / "gate", capsys, gate=False, as_json=True)
    assert (code, json.loads(out)["verdict"]) == (3, "failed-gate")
    monkeypatch.setenv("PYTHONHOME", "/elsewhere")
    code, out, _ = verify_small(tmp_path / "bad", capsys, as_json=True)
    doc = json.loads(out)
    assert (code, doc["verdict"], doc["findings"][0]["label"]) == (1, "mismatch", "environment")


@pytest.mark.usefixtures("quiet_environment")
def test_no_package_is_a_finding_with_the_environment_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    report = report_file(tmp_path, {"package": {"files": {"a.py": "0" * 64}},
                                    "gate": {"passed": True}})  # fmt: skip
    monkeypatch.setattr(v, "search_path", lambda environ=None: [tmp_path / "none"])
    monkeypatch.setenv("PYTHONHOME", "/elsewhere")
    assert v.verify(report, child=False) == v.EXIT_MISMATCH
    lines = capsys.readouterr().out.splitlines()
    assert "missing: no sonnx_mul package on the search path" in lines
    assert any(line.startswith("environment: PYTHONHOME=") for line in lines)


@pytest.mark.usefixtures("quiet_environment")
def test_the_child_runs_only_when_nothing_was_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[list[Path]] = []

    def child(pkg: Path, verified: object, path: list[Path]) -> tuple[list[str], list[str]]:
        ran.append(path)
        return ["self-test FAIL x"], []

    monkeypatch.setattr(v, "selftest_in_child", child)
    code, out, _ = verify_small(tmp_path, capsys, child=True)
    assert code == v.EXIT_MISMATCH and "selftest: self-test FAIL x" in out.splitlines()
    assert ran and ran[0][0] == (tmp_path / "sonnx_mul").resolve().parent
    monkeypatch.setenv("PYTHONHOME", "/elsewhere")
    ran.clear()
    verify_small(tmp_path / "again", capsys, child=True)
    assert ran == []


@pytest.mark.usefixtures("quiet_environment")
def test_the_command_runs_the_self_test_in_a_child(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = small_package(tmp_path)
    report = report_file(tmp_path, {"package": {"files": v.inventory(pkg)[0]},
                                    "gate": {"passed": True}})  # fmt: skip
    ran: list[Path] = []

    def child(where: Path, verified: object, path: object) -> tuple[list[str], list[str]]:
        ran.append(where)
        return [], ["self-test passed"]

    monkeypatch.setattr(v, "selftest_in_child", child)
    monkeypatch.setattr(v, "search_path", lambda environ=None: [tmp_path])
    assert v.verify_install_main([str(report)]) == v.EXIT_OK
    assert ran == [pkg] and "note: self-test passed" in capsys.readouterr().out
