"""The verifier's rules on the package as imported: the modules loaded from files it
did not verify, and the self-test it runs in a child process (how the child is
started, which of its lines are read, and what makes its answer a note or a
finding).

Part of the verifier's rules pinned one by one in this process (the
``test_verify_rules_*.py`` files: the mutants of ``sonnx_mul_verify`` run
against them first); each test names the rule it holds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from verify_rules_support import flags_with, small_package

import sonnx_mul_verify as v


def test_modules_from_unverified_files_are_named(tmp_path: Path) -> None:
    pkg = small_package(tmp_path)
    modules: dict[str, object] = {
        "sonnx_mul": str(pkg / "__init__.py"),
        "sonnx_mul.api": str(pkg / "api.py"),
        "sonnx_mul.evil": "/tmp/evil.py",
        "sonnx_mul.made": None,
        "sonnx_mulx": "/tmp/other.py",
        "numpy": "/tmp/numpy.py",
    }
    assert v.foreign_modules(pkg, ["__init__.py"], modules) == [
        "sonnx_mul.api (from " + str(pkg / "api.py") + ")",
        "sonnx_mul.evil (from /tmp/evil.py)",
        "sonnx_mul.made (not loaded from a file)",
    ]
    assert v.foreign_modules(pkg, ["__init__.py", "api.py"], {}) == []


def test_a_module_object_that_is_not_a_module_has_no_file(tmp_path: Path) -> None:
    pkg = small_package(tmp_path)
    assert v.foreign_modules(pkg, [], {"sonnx_mul.odd": object()}) == [
        "sonnx_mul.odd (not loaded from a file)"
    ]


def child_answer(
    monkeypatch: pytest.MonkeyPatch, returncode: int, stdout: str = "", stderr: str = ""
) -> list[list[str]]:
    """Make the child process answer this (its argv is recorded)."""
    calls: list[list[str]] = []

    def fake_run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append(argv)
        return subprocess.CompletedProcess(argv, returncode, stdout, stderr)

    monkeypatch.setattr(v.subprocess, "run", fake_run)
    return calls


def answer(pkg: Path, **changed: object) -> str:
    doc: dict[str, object] = {
        "kernel": "native", "isa": "avx2", "ok": True, "checked": 68, "failures": [],
        "modules": {"sonnx_mul": str(pkg / "__init__.py")},
    } | changed  # fmt: skip
    return "some output\n" + json.dumps(doc) + "\n"


def test_a_passing_child_is_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = small_package(tmp_path)
    calls = child_answer(monkeypatch, 0, answer(pkg))
    assert v.selftest_in_child(pkg, ["__init__.py"], [tmp_path]) == (
        [], ["self-test passed: 68 known-answer vectors on the native kernel, variant avx2"]
    )  # fmt: skip
    assert calls[0][:3] == [sys.executable, "-I", "-c"] and json.loads(calls[0][4]) == [
        str(tmp_path)
    ]
    monkeypatch.setattr(sys, "flags", flags_with(no_site=1))
    calls = child_answer(monkeypatch, 0, answer(pkg))
    v.selftest_in_child(pkg, ["__init__.py"], [])
    assert calls[0][1:3] == ["-I", "-S"]


@pytest.mark.parametrize(
    ("returncode", "changed", "finding"),
    [
        (-9, {}, "importing the package in a child process was killed by signal 9"),
        (3, {}, "importing the package in a child process failed (exit 3): the last line"),
        (0, {"kernel": "numpy"}, "the numpy kernel runs, not the proved native kernel"),
        (0, {"ok": False, "failures": ["f32 1*1"]}, "self-test FAIL f32 1*1"),
        (0, {"ok": 1}, None),
        (0, {"modules": {"sonnx_mul.x": "/tmp/x.py"}}, "module sonnx_mul.x (from /tmp/x.py)"),
        (0, {"kernel": None, "modules": []}, "no answer from the self-test: the last line"),
    ],
)
def test_a_failing_child_is_a_finding(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    returncode: int,
    changed: dict[str, object],
    finding: str | None,
) -> None:
    pkg = small_package(tmp_path)
    child_answer(monkeypatch, returncode, answer(pkg, **changed), "a\nthe last line\n")
    findings, notes = v.selftest_in_child(pkg, ["__init__.py"], [])
    if finding is None:  # "ok" must be exactly true: no note, no pass
        assert notes == [] and findings == []
    else:
        assert any(finding in f for f in findings), findings


def test_a_child_with_no_answer_is_a_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = small_package(tmp_path)
    child_answer(monkeypatch, 0, "", "")
    findings, _ = v.selftest_in_child(pkg, [], [])
    assert findings == ["importing the package in a child process: no answer from the self-test: "]

    def cannot_start(argv: list[str], **kwargs: object) -> None:
        raise subprocess.TimeoutExpired(argv, v.CHILD_TIMEOUT)

    monkeypatch.setattr(v.subprocess, "run", cannot_start)
    findings, _ = v.selftest_in_child(pkg, [], [])
    assert len(findings) == 1 and findings[0].startswith("the package could not be imported")


def test_the_child_is_started_with_its_output_captured_as_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = small_package(tmp_path)
    seen: list[dict[str, object]] = []

    def fake_run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        seen.append(kwargs)
        return subprocess.CompletedProcess(argv, 0, answer(pkg), "")

    monkeypatch.setattr(v.subprocess, "run", fake_run)
    v.selftest_in_child(pkg, ["__init__.py"], [])
    assert seen == [{
        "capture_output": True, "text": True, "timeout": v.CHILD_TIMEOUT, "check": False,
        "stdin": subprocess.DEVNULL, "errors": "replace",
    }]  # fmt: skip


def test_the_childs_last_lines_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = small_package(tmp_path)
    only_answer = answer(pkg).splitlines()[-1]
    child_answer(monkeypatch, 0, only_answer)
    assert v.selftest_in_child(pkg, ["__init__.py"], [])[0] == []
    child_answer(monkeypatch, 0, "a\nb\n" + only_answer + "\n")
    assert v.selftest_in_child(pkg, ["__init__.py"], [])[0] == []
    child_answer(monkeypatch, 5, "", "x" * 300 + "\n")
    (finding,) = v.selftest_in_child(pkg, [], [])[0]
    assert finding.endswith("failed (exit 5): " + "x" * 200)
    failures = [f"vector {i}" for i in range(12)]
    child_answer(monkeypatch, 0, answer(pkg, ok=False, failures=failures))
    findings = v.selftest_in_child(pkg, ["__init__.py"], [])[0]
    assert findings == [f"self-test FAIL vector {i}" for i in range(10)]
