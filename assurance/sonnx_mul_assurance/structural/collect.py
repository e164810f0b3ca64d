"""coverage.json from what the runs left in ``build/coverage``: the profiles merged
and exported by llvm-cov, coverage.py's data combined, per requirement the
Python its tests cover, the tools' versions and the run's costs."""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.structural.build import run_logged, tool_version
from sonnx_mul_assurance.structural.gate import summary
from sonnx_mul_assurance.structural.parse import (
    c_coverage,
    lcov_lines,
    python_by_requirement,
    python_coverage,
)
from sonnx_mul_assurance.structural.scope import (
    BUILD,
    C_FILES,
    CLANG,
    COVERAGE_FLAGS,
    HARNESSES,
    LLVM_COV,
    PROFDATA,
    SELECTION,
    VARIANT_TESTS,
)


@dataclass
class RunState:
    """What the runs of :func:`.run.run` leave for :func:`collect`."""

    tests: tuple[str, ...]
    variants: list[str]
    junits: list[Path]
    timings: dict[str, float]
    errors: list[str]
    gcov: dict[str, schema.CoverageGcov]
    start: float


def collect(root: Path, out: Path, state: RunState) -> int:
    """Merge the profiles and coverage.py's data of ``build/coverage`` and write ``out``."""
    work = root / BUILD
    copy, prof = work / "src", work / "profiles"
    tests, variants, junits = state.tests, state.variants, state.junits
    timings, errors, gcov, start = state.timings, state.errors, state.gcov, state.start
    env = {**os.environ, "COVERAGE_FILE": str(work / ".coverage")}
    rc = work / "coveragerc"
    # merge and export
    t0 = time.perf_counter()
    merged = work / "merged.profdata"
    raws = sorted(str(p) for p in prof.glob("*.profraw"))
    done = run_logged([PROFDATA, "merge", "-sparse", "-o", str(merged), *raws], root)
    if done.returncode != 0:
        errors.append(f"llvm-profdata merge: {done.stderr.strip()[-300:]}")
    module = next((copy / "sonnx_mul").glob("_native*.so"))
    objects = [
        str(module),
        *(
            f"-object={work / 'bin' / Path(h).stem}"
            for h in HARNESSES
            if (work / "bin" / Path(h).stem).is_file()
        ),
    ]
    sources = [str(root / f) for f in C_FILES]
    export = subprocess.run(
        [LLVM_COV, "export", *objects, f"-instr-profile={merged}", *sources],
        capture_output=True,
        text=True,
        check=False,
    )
    lcov = subprocess.run(
        [LLVM_COV, "export", "-format=lcov", *objects, f"-instr-profile={merged}", *sources],
        capture_output=True,
        text=True,
        check=False,
    )
    c_files: list[schema.CoverageFile] = []
    c_gaps: list[schema.CoverageGap] = []
    if export.returncode != 0 or lcov.returncode != 0:
        errors.append(f"llvm-cov export: {(export.stderr + lcov.stderr).strip()[-300:]}")
    else:
        c_files, c_gaps = c_coverage(
            json.loads(export.stdout), lcov_lines(lcov.stdout, root), root, C_FILES
        )
        missing = sorted(set(C_FILES) - {f.path for f in c_files})
        errors += [f"{m}: no coverage recorded (not built or never linked)" for m in missing]
    # Python
    cov = [sys.executable, "-m", "coverage"]
    subprocess.run([*cov, "combine", f"--rcfile={rc}", "-q"], cwd=root, env=env, check=False)
    pyjson = work / "python.json"
    done = run_logged([*cov, "json", f"--rcfile={rc}", "-o", str(pyjson), "-q"], root, env)
    py_files: list[schema.CoverageFile] = []
    py_gaps: list[schema.CoverageGap] = []
    requirements: dict[str, schema.CoverageRequirement] = {}
    if done.returncode != 0:
        errors.append(f"coverage json: {done.stderr.strip()[-300:]}")
    else:
        report = json.loads(pyjson.read_text())
        py_files, py_gaps = python_coverage(report, root, copy)
        contexts = _contexts_by_requirement(root, work / ".coverage", junits)
        requirements = python_by_requirement(work / ".coverage", report, contexts, copy)
    timings["merge and export"] = time.perf_counter() - t0
    evidence = schema.CoverageEvidence(
        tools={
            "clang": tool_version(CLANG),
            "llvm-cov": tool_version(LLVM_COV),
            "coverage.py": _coverage_version(),
            "python": platform.python_version(),
        },
        build=f"{CLANG} with {' '.join(COVERAGE_FLAGS)} after the pinned flags (native/flags.mk); "
        "the product as installed is built by gcc",
        tests=f"{' '.join(tests)}, each run {' '.join(SELECTION)}",
        isa_variants=variants,
        variant_tests=" ".join(VARIANT_TESTS),
        harnesses=[" ".join((source, *args)) for source, args in HARNESSES.items()],
        files=[*c_files, *py_files],
        gaps=[*c_gaps, *py_gaps],
        requirements=requirements,
        seconds=time.perf_counter() - start,
        timings=timings,
        errors=errors,
        cpu_seconds=_children_cpu(),
        gcov=gcov,
        environment=next((e for e in map(schema.junit_environment, junits) if e is not None), None),
    )
    schema.dump(evidence, root / out)
    print(summary(evidence))
    return 0 if not errors else 1


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return round(usage.ru_utime + usage.ru_stime, 1)


def _coverage_version() -> str:
    import coverage

    return str(coverage.__version__)


def _contexts_by_requirement(
    root: Path, data_file: Path, junit: list[Path]
) -> dict[str, list[str]]:
    """Per id, the coverage contexts (tests) that carry it, mapped as the report
    maps test cases to ids (their names and the markers of their files)."""
    from coverage import CoverageData

    from sonnx_mul.requirements import REGISTRY
    from sonnx_mul_assurance.report.evidence import testcase_items
    from sonnx_mul_assurance.report.markers import scan

    markers, _ = scan(root, set(REGISTRY))
    items, _ = testcase_items([p for p in junit if p.is_file()], root, markers, list(REGISTRY))
    by_case: dict[str, set[str]] = {}
    for item in items:
        by_case.setdefault(item.name or "", set()).update(item.ids)
    data = CoverageData(basename=str(data_file))
    data.read()
    out: dict[str, list[str]] = {}
    for context in sorted(data.measured_contexts()):
        for rid in sorted(by_case.get(junit_name(context), ())):
            out.setdefault(rid, []).append(context)
    return out


def junit_name(nodeid: str) -> str:
    """A pytest node id as the report names its JUnit case (``classname::name``):
    ``tests/operator/test_isa.py::Class::test_y[1]`` is
    ``tests.operator.test_isa.Class::test_y[1]``."""
    path, _, rest = nodeid.partition("::")
    parts = rest.split("::") if rest else [""]
    module = path.removesuffix(".py").replace("/", ".")
    return "::".join([".".join([module, *parts[:-1]]), parts[-1]])
