"""How the report reads test outcomes: only a pass is evidence (issue 19).

An errored test is a failure, a skipped one is not evidence, an xfail is not
evidence. Checked twice: on JUnit written by pytest itself (the real
producer, so the reader cannot drift from it) and on the gate of the
fixture tree, where R1's only test takes each outcome in turn.

The reader is the schema's ``read_junit``: every case says itself (``ok``)
whether it is a pass (True), a failure (False) or no evidence (None); the
old reader's word list (``status_ok``) is gone.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_trace_report import make_tree, report_of

from sonnx_mul_assurance.evidence.schema import JUnitCase, read_junit

OUTCOMES = """
import pytest

def test_passes():
    pass

def test_fails():
    assert 1 == 2

@pytest.fixture
def broken():
    raise RuntimeError("fixture")

def test_errors(broken):
    pass

@pytest.fixture
def bad_teardown():
    yield
    raise RuntimeError("teardown")

def test_passes_then_errors_in_teardown(bad_teardown):
    pass

def test_skipped():
    pytest.skip("not here")

@pytest.mark.xfail(reason="known")
def test_xfails():
    assert False

@pytest.mark.xfail(reason="known", strict=True)
def test_xpasses_strict():
    pass
"""


@pytest.fixture(scope="module")
def real_junit(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[JUnitCase]]:
    """The cases the reader gives for the JUnit pytest writes, by test name."""
    tmp = tmp_path_factory.mktemp("junit")
    (tmp / "test_outcomes.py").write_text(OUTCOMES, encoding="utf-8")
    xml = tmp / "out.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
         f"--junitxml={xml}", "test_outcomes.py"],
        cwd=tmp, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    found: dict[str, list[JUnitCase]] = {}
    for case in read_junit([xml]):
        assert case.report == str(xml)
        found.setdefault(case.name, []).append(case)
    assert set(found) >= {"test_passes", "test_fails", "test_skipped"}, found  # pytest ran
    return found


def evidence_of(cases: list[JUnitCase]) -> bool:
    """What the gate makes of a test: evidence only if every record of it passed."""
    return bool(cases) and all(case.ok is True for case in cases)


@pytest.mark.parametrize(
    ("name", "is_evidence", "is_failure"),
    [
        ("test_passes", True, False),
        ("test_fails", False, True),
        ("test_errors", False, True),
        ("test_passes_then_errors_in_teardown", False, True),
        ("test_skipped", False, False),
        ("test_xfails", False, False),
        ("test_xpasses_strict", False, True),
    ],
)
def test_real_pytest_outcomes_are_read_right(
    real_junit: dict[str, list[JUnitCase]], name: str, is_evidence: bool, is_failure: bool
) -> None:
    cases = real_junit[name]
    statuses = [c.status for c in cases]
    assert evidence_of(cases) is is_evidence, statuses
    assert any(c.ok is False for c in cases) is is_failure, statuses


def test_real_outcomes_keep_their_names(real_junit: dict[str, list[JUnitCase]]) -> None:
    def statuses(name: str) -> list[str]:
        return [c.status for c in real_junit[name]]

    assert "error" in statuses("test_errors")
    assert "skipped" in statuses("test_skipped")
    assert statuses("test_xfails") == ["xfailed"]
    assert [c.ok for c in real_junit["test_skipped"]] == [None]  # neither pass nor failure


CASE = '<testcase classname="tests.test_a" name="test_R1_same" time="0.01">'


@pytest.mark.parametrize(
    ("body", "expected", "skipped"),
    [
        ("", [], 0),  # the negative control: a pass is evidence
        ('<error message="boom">t</error>', ["R1: no test evidence; 1 test failed"], 0),
        ('<failure message="boom">t</failure>', ["R1: no test evidence; 1 test failed"], 0),
        ('<skipped type="pytest.skip" message="s"/>', ["R1: no test evidence"], 1),
        ('<skipped type="pytest.xfail" message="known"/>', ["R1: no test evidence"], 1),
        (
            '<skipped type="pytest.skip" message="s"/><error message="teardown">t</error>',
            ["R1: no test evidence; 1 test failed"],
            0,
        ),
        (
            '<system-out>noise</system-out><failure message="late">t</failure>',
            ["R1: no test evidence; 1 test failed"],
            0,
        ),
    ],
    ids=["pass", "error", "failure", "skipped", "xfail", "skip-then-error", "output-then-failure"],
)
def test_the_gate_on_each_outcome_of_the_only_test(
    tmp_path: Path, body: str, expected: list[str], skipped: int
) -> None:
    root = make_tree(tmp_path)
    xml = root / "proofs/out/pytest.xml"
    text = xml.read_text(encoding="utf-8")
    old = f"{CASE}</testcase>"
    assert old in text
    xml.write_text(text.replace(old, f"{CASE}{body}</testcase>"), encoding="utf-8")
    report = report_of(root)
    assert report["gate"]["problems"] == expected
    assert report["requirements"]["R1"]["skipped_tests"] == skipped
    statuses = [e["status"] for e in report["requirements"]["R1"]["evidence"]["test"]]
    assert all(s != "skipped" and s != "xfailed" for s in statuses)  # never listed as evidence
