"""The structural coverage gate (sonnx_mul_assurance.structural, report.coverage)
on small data: a tiny C file measured by clang-19 for real, and small
coverage.py reports.  Each planted case (code added with no test, a test
deleted, a stale or unreasoned exemption, a failed run) must fail the gate;
the same data with the case removed must pass it (the positive control)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.report import coverage as report_coverage
from sonnx_mul_assurance.structural.gate import gate_problems
from sonnx_mul_assurance.structural.parse import (
    c_coverage,
    lcov_lines,
    parse_gcov,
    python_coverage,
)
from sonnx_mul_assurance.structural.scope import (
    C_FILES,
    CLANG,
    COVERAGE_FLAGS,
    LLVM_COV,
    PROFDATA,
)

TINY = """
#include <stdlib.h>
int sign(int x) {
    if (x > 0) {
        return 1;
    }
    return 0;
}
int both(int a, int b) {
    if (a && b) {
        return 1;
    }
    return 0;
}
int main(int argc, char **argv) {
    int s = 0;
    for (int i = 1; i < argc; i++) {
        const char *t = argv[i];
        if (t[0] == 's') s += sign(atoi(t + 1));
        else s += both(t[1] == '1', t[2] == '1');
    }
    return s > 1000;
}
"""
"""Arguments: ``sN`` calls sign(N); ``bAB`` calls both(A, B)."""

EVERYTHING = ("s1", "s-1", "b11", "b10", "b01")
"""Every statement, both outcomes of each decision and MC/DC of ``a && b``."""

NO_B01 = ("s1", "s-1", "b11", "b10")
"""EVERYTHING but both(0, 1): a's effect on ``a && b`` is never shown."""

_CLANG_ABSENT = pytest.mark.skipif(
    not all(shutil.which(t) for t in (CLANG, PROFDATA, LLVM_COV)),
    reason="clang-19/llvm-19 not installed (make toolchains)",
)


def needs_clang(test: Callable[..., None]) -> Callable[..., None]:
    """A test that measures a C file with clang-19 for real: a toolchain test (needs_prover,
    which make check leaves out), skipped where make toolchains has not run."""
    marked: Callable[..., None] = pytest.mark.needs_prover(_CLANG_ABSENT(test))
    return marked


def _evidence(
    files: list[schema.CoverageFile], gaps: list[schema.CoverageGap]
) -> schema.CoverageEvidence:
    return schema.CoverageEvidence(
        tools={},
        build="test",
        tests="test",
        isa_variants=["portable"],
        variant_tests="",
        harnesses=[],
        files=files,
        gaps=gaps,
        requirements={},
        seconds=0.0,
        timings={},
        errors=[],
    )


def _measure_c(tmp_path: Path, runs: tuple[str, ...]) -> schema.CoverageEvidence:
    """Compile TINY with the coverage flags, run it with ``runs``, and read it
    as make coverage reads the kernel."""
    src = tmp_path / "tiny.c"
    src.write_text(TINY)
    exe = tmp_path / "tiny"
    subprocess.run([CLANG, "-O0", *COVERAGE_FLAGS, str(src), "-o", str(exe)], check=True)
    raw = tmp_path / "tiny.profraw"
    subprocess.run([str(exe), *runs], env={"LLVM_PROFILE_FILE": str(raw)}, check=True)
    data = tmp_path / "tiny.profdata"
    subprocess.run([PROFDATA, "merge", "-o", str(data), str(raw)], check=True)
    export, lines = _llvm_exports(exe, data, tmp_path, ["tiny.c"])
    files, gaps = c_coverage(export, lines, tmp_path, ["tiny.c"])
    return _evidence(files, gaps)


def _exempting(
    gaps: list[schema.CoverageGap], why: str = "defensive", function: str | None = None
) -> list[schema.CoverageExemption]:
    """An exemption of each gap (in ``function`` instead of the gap's, when given)."""
    return [
        schema.CoverageExemption(
            g.file, g.function if function is None else function, g.kind, g.line, g.what, why, "why"
        )
        for g in gaps
    ]


def _llvm_exports(
    exe: Path, data: Path, root: Path, sources: list[str]
) -> tuple[dict[str, Any], dict[str, dict[int, int]]]:
    """llvm-cov's JSON export and lcov lines of ``exe``'s profile ``data`` for
    ``sources`` (relative to ``root``), as make coverage exports the kernel's."""
    common = [str(exe), f"-instr-profile={data}", *(str(root / s) for s in sources)]
    export = subprocess.run(
        [LLVM_COV, "export", *common], capture_output=True, text=True, check=True
    ).stdout
    lcov = subprocess.run(
        [LLVM_COV, "export", "-format=lcov", *common], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(export), lcov_lines(lcov, root)


MACRO_HEADER = "/* a header of macros */\n#define BOTH(a, b) ((a) && (b))\n"
MACRO_USER = """#include "tiny.h"
int main(int argc, char **argv) {
    (void)argv;
    return BOTH(argc > 1, argc > 2) ? 1 : 0;
}
"""


@needs_clang
def test_a_condition_written_in_a_header_macro_is_counted_in_the_header(tmp_path: Path) -> None:
    """llvm gives a macro's branches the header's file id and its MC/DC record no file
    id at all: both are counted at the header's line (2), never at the same line of the
    file expanding the macro (where its #include or anything else may stand)."""
    (tmp_path / "tiny.h").write_text(MACRO_HEADER)
    src = tmp_path / "tiny.c"
    src.write_text(MACRO_USER)
    exe = tmp_path / "tiny"
    subprocess.run([CLANG, "-O0", *COVERAGE_FLAGS, str(src), "-o", str(exe)], check=True)
    raw, data = tmp_path / "tiny.profraw", tmp_path / "tiny.profdata"
    subprocess.run([str(exe)], env={"LLVM_PROFILE_FILE": str(raw)}, check=False)  # argc 1
    subprocess.run([PROFDATA, "merge", "-o", str(data), str(raw)], check=True)
    export, lines = _llvm_exports(exe, data, tmp_path, ["tiny.c", "tiny.h"])
    files, gaps = c_coverage(export, lines, tmp_path, ["tiny.c", "tiny.h"])
    in_header = {(g.kind, g.line, g.function) for g in gaps if g.file == "tiny.h"}
    assert ("branch", 2, "main") in in_header and ("mcdc", 2, "main") in in_header
    assert not [g for g in gaps if g.file == "tiny.c" and g.kind != "line"]
    header = next(f for f in files if f.path == "tiny.h")
    assert header.branches.total >= 2 and header.mcdc is not None and header.mcdc.total == 2
    # measured without the header, the macro's items are in no file (as for Python's)
    files, gaps = c_coverage(export, lines, tmp_path, ["tiny.c"])
    assert not [g for g in gaps if g.kind != "line"]


@needs_clang
def test_every_item_covered_passes_the_gate(tmp_path: Path) -> None:
    evidence = _measure_c(tmp_path, EVERYTHING)
    assert gate_problems(evidence, []) == []
    (tiny,) = evidence.files
    assert tiny.lines.complete and tiny.branches.complete
    assert tiny.mcdc is not None and tiny.mcdc == schema.CoverageCount(2, 2)
    names = {f.name for f in tiny.functions}
    assert {"sign", "both", "main"} <= names


@needs_clang
def test_code_added_with_no_test_fails_the_gate(tmp_path: Path) -> None:
    # sign() never given a value <= 0: the decision's false outcome and the
    # `return 0` behind it are new code no test runs
    evidence = _measure_c(tmp_path, ("s1", "b11", "b10", "b01"))
    problems = gate_problems(evidence, [])
    assert any(
        "not exempted" in p and "(sign) branch" in p and "false never taken" in p for p in problems
    )
    assert any("not exempted" in p and "(sign) line" in p for p in problems)


@needs_clang
def test_a_deleted_test_leaves_a_condition_not_shown_independent(tmp_path: Path) -> None:
    # without the (0, 1) case, a's effect on `a && b` is never shown: MC/DC
    # fails (and llvm's branch coverage, per condition, sees a never false)
    # while every statement stays covered
    evidence = _measure_c(tmp_path, NO_B01)
    problems = gate_problems(evidence, [])
    assert problems and all("(both)" in p for p in problems)
    assert any("(both) mcdc col 9: condition 1 of 2 not shown independent" in p for p in problems)
    (tiny,) = evidence.files
    assert tiny.lines.complete and tiny.mcdc == schema.CoverageCount(1, 2)


@needs_clang
def test_an_exempted_gap_passes_and_a_stale_exemption_fails(tmp_path: Path) -> None:
    evidence = _measure_c(tmp_path, NO_B01)
    exemptions = _exempting(evidence.gaps)
    assert gate_problems(evidence, exemptions) == []
    # the test comes back: the exemption no longer names a gap
    covered = _measure_c(tmp_path, EVERYTHING)
    problems = gate_problems(covered, exemptions)
    assert problems and all(p.startswith("stale coverage exemption") for p in problems)


@needs_clang
def test_an_exemption_of_another_function_at_the_gap_s_line_does_not_pass(
    tmp_path: Path,
) -> None:
    """After an edit, another function's item can land on an exempted line: the
    exemption names the old item, so it is stale and the new gap unlisted."""
    evidence = _measure_c(tmp_path, NO_B01)
    moved = _exempting(evidence.gaps, function="other")
    problems = gate_problems(evidence, moved)
    assert len(problems) == 2 * len(evidence.gaps)
    assert sum(p.startswith("stale coverage exemption") for p in problems) == len(evidence.gaps)
    assert sum(p.startswith("coverage gap not exempted") for p in problems) == len(evidence.gaps)


@needs_clang
def test_an_exemption_listed_twice_fails(tmp_path: Path) -> None:
    evidence = _measure_c(tmp_path, NO_B01)
    exemptions = _exempting(evidence.gaps)
    assert gate_problems(evidence, exemptions) == []
    first = exemptions[0]
    problems = gate_problems(evidence, [*exemptions, first])
    assert problems == [
        f"coverage exemption listed twice: {first.file}:{first.line} {first.kind} {first.what}"
    ]


def _py_report(missing_branch: bool) -> dict[str, Any]:
    """A coverage.py JSON report of one module with one decision."""
    missing = [[3, 5]] if missing_branch else []
    executed = [[3, 4]] + ([] if missing_branch else [[3, 5]])
    lines_missing = [5] if missing_branch else []
    lines_run = [1, 2, 3, 4] + ([] if missing_branch else [5])
    fn = {
        "executed_lines": [3, 4] + ([] if missing_branch else [5]),
        "missing_lines": lines_missing,
        "executed_branches": executed,
        "missing_branches": missing,
    }
    return {
        "files": {
            "src/sonnx_mul/tiny.py": {
                "executed_lines": lines_run,
                "missing_lines": lines_missing,
                "executed_branches": executed,
                "missing_branches": missing,
                "functions": {"f": fn, "": {"executed_lines": [1, 2], "missing_lines": []}},
                "summary": {
                    "covered_lines": len(lines_run),
                    "num_statements": 5,
                    "covered_branches": len(executed),
                    "num_branches": 2,
                },
            }
        }
    }


def test_python_branch_with_no_test_fails_the_gate(tmp_path: Path) -> None:
    files, gaps = python_coverage(_py_report(missing_branch=True), tmp_path, tmp_path / "copy")
    problems = gate_problems(_evidence(files, gaps), [])
    assert any("src/sonnx_mul/tiny.py:3 (f) branch to 5" in p for p in problems)
    assert any("src/sonnx_mul/tiny.py:5 (f) line" in p for p in problems)
    (tiny,) = files
    assert tiny.mcdc is None and tiny.branches == schema.CoverageCount(1, 2)
    files, gaps = python_coverage(_py_report(missing_branch=False), tmp_path, tmp_path / "copy")
    assert gate_problems(_evidence(files, gaps), []) == []


def test_an_exemption_needs_a_reason_and_a_run_must_measure_something() -> None:
    gap = schema.CoverageGap("a.c", "f", "line", 3, "")
    unreasoned = schema.CoverageExemption("a.c", "f", "line", 3, "", "defensive", " ")
    files = [
        schema.CoverageFile(
            "a.c",
            "c",
            schema.CoverageCount(1, 2),
            schema.CoverageCount(0, 0),
            schema.CoverageCount(0, 0),
            [],
        )
    ]
    assert any(
        "without a reason" in p for p in gate_problems(_evidence(files, [gap]), [unreasoned])
    )
    assert any("measured no file" in p for p in gate_problems(_evidence([], []), []))
    failed = _evidence(files, [])
    failed.errors.append("tests: pytest exit 1")
    assert gate_problems(failed, []) == ["coverage run: tests: pytest exit 1"]


def _entry(problems: list[str], why: dict[str, int], mcdc: bool) -> dict[str, Any]:
    count = {"covered": 2, "total": 2}
    return {
        "files": [
            {
                "path": "a.c",
                "language": "c" if mcdc else "python",
                "lines": count,
                "branches": count,
                "mcdc": count if mcdc else None,
            }
        ],
        "table": [["a.c", "2/2", "2/2", "2/2"]],
        "gaps": sum(why.values()),
        "exempted_by_reason": why,
        "problems": problems,
        "object_code": "clang measures, gcc ships.",
        "seconds": 1.0,
        "per_requirement_c": True,
    }


def test_the_a7_row_is_met_only_when_nothing_is_missing() -> None:
    assert report_coverage.objective(_entry([], {"defensive": 1}, mcdc=True)).status == "met"
    for entry, missing in (
        (_entry(["gap"], {}, mcdc=True), "gate problem"),
        (_entry([], {"not-analysed": 2}, mcdc=True), "not yet analysed"),
        (
            {**_entry([], {"not-analysed": 2}, mcdc=True), "not_analysed": {"a.py": [3, 9]}},
            "2 exempted item(s) not yet analysed (reason not-analysed): a.py lines 3, 9",
        ),
        (_entry([], {}, mcdc=False), "MC/DC of the 1 Python"),
        ({**_entry([], {}, mcdc=True), "per_requirement_c": False}, "per-requirement figures"),
        (None, "coverage run"),
    ):
        row = report_coverage.objective(entry)
        assert row.status == "partly met" and missing in row.note
    python_only = report_coverage.objective(_entry([], {}, mcdc=False))
    assert "the product's Python (1 modules): 2/2 st., 2/2 br., MC/DC not measured" in (
        python_only.output
    )


def test_the_report_reads_each_gate_problem_as_failed_unmapped_evidence(tmp_path: Path) -> None:
    gap = schema.CoverageGap("a.c", "f", "branch", 3, "col 5: true never taken")
    files = [
        schema.CoverageFile(
            "a.c",
            "c",
            schema.CoverageCount(1, 1),
            schema.CoverageCount(1, 2),
            None,
            [],
        )
    ]
    path = tmp_path / "coverage.json"
    schema.dump(_evidence(files, [gap]), path)
    mapped, unmapped = report_coverage.read(path, tmp_path)  # no exemption file
    assert mapped == [] and len(unmapped) == 1
    assert unmapped[0].ok is False and "a.c:3 (f) branch" in (unmapped[0].name or "")
    exempt = schema.CoverageExemptions(
        1, [schema.CoverageExemption("a.c", "f", "branch", 3, gap.what, "defensive", "why")]
    )
    schema.dump(exempt, tmp_path / "proofs" / "coverage-exemptions.json")
    assert report_coverage.read(path, tmp_path) == ([], [])


def test_the_gate_requires_coverage_json_and_fails_on_an_unlisted_gap(tmp_path: Path) -> None:
    from test_trace_report import coverage_evidence, make_tree, report_of

    root = make_tree(tmp_path)
    report = report_of(root)
    assert report["gate"]["passed"] is True
    row = next(o for o in report["objectives"] if o["standard"] == report_coverage.STANDARD)
    # the C code's per-requirement figures are not measured: "partly met", saying so
    assert row["status"] == "partly met" and "missing: per-requirement figures" in row["note"]
    gap = schema.CoverageGap("native/src/k.c", "k", "line", 9, "")
    schema.dump(coverage_evidence(gap), root / "proofs" / "out" / "coverage.json")
    report = report_of(root)
    assert report["gate"]["problems"] == [
        "unmapped failed coverage evidence: coverage gap not exempted: native/src/k.c:9 (k) line "
        "at proofs/coverage-exemptions.json (gap)"
    ]
    row = next(o for o in report["objectives"] if o["standard"] == report_coverage.STANDARD)
    assert row["status"] == "partly met"
    (root / "proofs" / "out" / "coverage.json").unlink()
    assert report_of(root)["gate"]["problems"] == [
        "evidence file proofs/out/coverage.json is missing"
    ]


def test_gcov_figures_are_read_per_file_not_from_the_closing_total(tmp_path: Path) -> None:
    text = (
        f"File '{tmp_path}/native/src/a.c'\nLines executed:87.35% of 166\n"
        "Branches executed:97.87% of 94\nTaken at least once:97.87% of 94\nNo calls\n"
        f"File '{tmp_path}/native/src/b.c'\nLines executed:100.00% of 241\n"
        "Branches executed:100.00% of 136\nTaken at least once:100.00% of 136\n"
        "Lines executed:94.84% of 407\n"
    )
    figures = parse_gcov(text, tmp_path)
    assert figures["native/src/a.c"].lines == schema.CoverageCount(145, 166)
    assert figures["native/src/a.c"].branches == schema.CoverageCount(92, 94)
    assert figures["native/src/b.c"].lines == schema.CoverageCount(241, 241)


@needs_clang
def test_a_covered_exemption_fails_whatever_its_class(tmp_path: Path) -> None:
    """The run is deterministic: an exemption whose item a run covers is stale,
    a not-analysed one too (a test added for it must remove it)."""
    evidence = _measure_c(tmp_path, NO_B01)
    for why in ("not-analysed", "defensive"):
        listed = _exempting(evidence.gaps, why)
        assert gate_problems(evidence, listed) == []
        covered = _measure_c(tmp_path, EVERYTHING)
        problems = gate_problems(covered, listed)
        assert len(problems) == len(listed) > 0
        assert all(p.startswith("stale coverage exemption") for p in problems)


def test_a_test_s_node_id_is_named_as_its_junit_case() -> None:
    """The per-requirement figures join coverage.py's contexts (node ids) with the
    report's JUnit cases: a module, a class, a parameter."""
    from sonnx_mul_assurance.structural.collect import junit_name

    assert junit_name("tests/operator/test_isa.py::test_x[1-a]") == (
        "tests.operator.test_isa::test_x[1-a]"
    )
    assert (
        junit_name("tests/cli/test_cli.py::TestRun::test_y") == "tests.cli.test_cli.TestRun::test_y"
    )
    assert junit_name("") == "::"


def test_every_c_source_of_the_product_is_measured() -> None:
    # a kernel file, hardware loop or glue file missing from the list would run
    # in the product with no structural coverage measured, and no gap reported
    root = Path(__file__).resolve().parents[2]
    sources = {
        p.relative_to(root).as_posix()
        for folder in ("native/src", "native/hw", "src/sonnx_mul")
        for p in (root / folder).glob("*.c")
    }
    assert sources and sources <= set(C_FILES), sorted(sources - set(C_FILES))
