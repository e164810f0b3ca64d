"""The report lists the SONNX working group's classes per E_MUL tag, each with its
test cases from the suite's JUnit results, and its gate fails a class left
without a passing case once the results hold the classes' cases."""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import quoteattr

from sonnx_mul_assurance.evidence.schema import JUnitCase
from sonnx_mul_assurance.report import wg_classes
from sonnx_mul_assurance.report.report import build_report, write_report

REPO = Path(__file__).resolve().parents[2]
CLASSNAME = "tests.operator.test_wg_classes"


def _case(tag: str, key: str, onnx_type: str, status: str = "passed") -> JUnitCase:
    test = wg_classes.TESTED_BY[tag]
    name = f"{test}[{wg_classes.case_id(tag, key, onnx_type)}]"
    return JUnitCase(CLASSNAME, name, status, 0.01, "", "pytest.xml")  # type: ignore[arg-type]


def _junit(path: Path, cases: list[JUnitCase]) -> None:
    body = "".join(
        f'<testcase classname="{c.classname}" name="{c.name}" time="0.01">'
        + ('<failure message="planted"/>' if c.status == "failed" else "")
        + "</testcase>"
        for c in cases
    )
    path.write_text(f'<testsuites><testsuite name="pytest">{body}</testsuite></testsuites>')


def test_every_class_with_a_passing_case_passes() -> None:
    entry = wg_classes.section([_case(*c) for c in wg_classes.cases()])
    assert set(entry) == set(wg_classes.TAGS)
    assert wg_classes.problems(entry) == [] == wg_classes.gate_problems(entry)
    nan = next(c for c in entry["E_MUL_FLOAT_FUNC_0010"] if c["class"] == "nan")
    assert [n for n, _ in nan["cases"]] == [
        f"{CLASSNAME}::test_F_FLOAT_wg_class[E_MUL_FLOAT_FUNC_0010-nan-{t}]"
        for t in ("double", "float16", "float")
    ]


def test_a_class_without_a_passing_case_is_a_problem_once_the_classes_ran() -> None:
    """Negative controls: a class whose cases were deleted, one whose case failed."""
    everything = wg_classes.cases()
    kept = [c for c in everything if not (c[0] == "E_MUL_INT_FUNC_0010" and c[1] == "wraps")]
    cases = [_case(*c) for c in kept]
    cases = [
        _case(*c, status="failed") if c[:2] == ("E_MUL_FLOAT_FUNC_0010", "neg_zero") else x
        for c, x in zip(kept, cases, strict=True)
    ]
    problems = wg_classes.gate_problems(wg_classes.section(cases))
    assert problems == [
        "SONNX test class E_MUL_FLOAT_FUNC_0010 / neg_zero: no passing test case",
        "SONNX test class E_MUL_INT_FUNC_0010 / wraps: no passing test case",
    ]
    # a run without any of the classes' cases (part of the suite) is not asked for them
    assert wg_classes.gate_problems(wg_classes.section([])) == []
    assert len(wg_classes.problems(wg_classes.section([]))) == sum(
        len(v) for v in wg_classes.CLASSES.values()
    )


def test_the_report_lists_each_tag_s_classes_with_their_cases_and_gates_them(
    tmp_path: Path,
) -> None:
    edir = tmp_path / "out"
    edir.mkdir()
    cases = [_case(*c) for c in wg_classes.cases() if c[1] != "max_subnormal"]
    _junit(edir / "pytest.xml", cases)
    report = build_report(REPO, edir, probe_tools=False)
    entry = report["wg_classes"]
    subnormal = next(c for c in entry["E_MUL_FLOAT_FUNC_0010"] if c["class"] == "max_subnormal")
    assert subnormal["cases"] == []
    assert (
        "SONNX test class E_MUL_FLOAT_FUNC_0010 / max_subnormal: no passing test case"
        in report["gate"]["problems"]
    )
    write_report(report, tmp_path, REPO)
    md = (tmp_path / "traceability.md").read_text()
    assert "The working group's test classes (tests-part2), per E_MUL tag" in md
    row = next(x for x in md.splitlines() if "`E_MUL_INT_FUNC_0010`" in x and "| wraps |" in x)
    assert "4/4 passed: test_F_WRAP_wg_class [int16, int32, int64, int8]" in row
    assert "no test case in the results" in md


def test_the_report_shows_the_test_run_s_environment_or_that_it_is_not_recorded(
    tmp_path: Path,
) -> None:
    """The platform, compiler and floating-point mode (denormal policy included)
    of the run come from pytest.xml's properties; a file without them says so."""
    from sonnx_mul_assurance.evidence import environment, schema

    edir = tmp_path / "out"
    edir.mkdir()
    _junit(edir / "pytest.xml", [])
    assert schema.junit_environment(edir / "pytest.xml") is None  # the negative control
    bare = build_report(REPO, edir, probe_tools=False)
    assert bare["test_environment"] is None
    env = environment.probe()
    props = "".join(
        f"<property name={quoteattr(n)} value={quoteattr(v)}/>"
        for n, v in environment.junit_properties(env)
    )
    (edir / "pytest.xml").write_text(
        f'<testsuites><testsuite name="pytest"><properties>{props}</properties>'
        "</testsuite></testsuites>"
    )
    assert schema.junit_environment(edir / "pytest.xml") == env
    report = build_report(REPO, edir, probe_tools=False)
    assert report["test_environment"]["denormals"] == env.denormals
    write_report(report, tmp_path, REPO)
    md = (tmp_path / "traceability.md").read_text()
    assert "The test run's environment" in md and env.compiler in md
    assert "subnormals kept, never flushed" in md
