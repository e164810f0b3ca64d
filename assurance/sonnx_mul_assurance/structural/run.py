"""The measured run (``run``): build, the requirement-based tests under coverage.py
once and again per ISA variant, the C harnesses, gcc's gcov of the kernel; then
:func:`.collect.collect` writes coverage.json."""

from __future__ import annotations

import os
import time
from pathlib import Path

from sonnx_mul_assurance.structural.build import (
    build,
    gcc_kernel,
    isa_variants,
    measuring_venv,
    run_logged,
)
from sonnx_mul_assurance.structural.collect import RunState, collect
from sonnx_mul_assurance.structural.scope import (
    BUILD,
    DESELECT,
    HARNESSES,
    OUT,
    SELECTION,
    TESTS,
    VARIANT_TESTS,
)


def run(root: Path, out: Path = OUT, tests: tuple[str, ...] = TESTS) -> int:
    """Build, run and write ``out``; 1 when any step failed (the file says which)."""
    start = time.perf_counter()
    work = root / BUILD
    copy, errors = build(root, work)
    prof = work / "profiles"
    prof.mkdir(parents=True, exist_ok=True)
    python = measuring_venv(work)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(copy), os.environ.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        ),
        "LLVM_PROFILE_FILE": str(prof / "py-%p-%m.profraw"),
        "COVERAGE_FILE": str(work / ".coverage"),
        # derandomized hypothesis (tests/conftest.py): the same items covered each run
        "HYPOTHESIS_PROFILE": "coverage",
    }
    rc = work / "coveragerc"
    rc.write_text(
        "[run]\nbranch = True\nparallel = True\n"
        f"source = {copy / 'sonnx_mul'}\n"
        # the tests' contexts are their node ids (tests/conftest.py switches them);
        # the tests' Python children are measured too (patch = subprocess)
        "patch = subprocess\n"
    )
    timings: dict[str, float] = {}
    variants = isa_variants(root, env)
    junits: list[Path] = []
    runs: list[tuple[str, list[str], dict[str, str]]] = []
    for index, selection in enumerate(tests):
        junits.append(work / f"pytest-{index}.xml")
        runs.append((selection, [selection, *SELECTION, f"--junitxml={junits[-1]}"], env))
    for variant in variants[1:]:
        junits.append(work / f"pytest-{variant}.xml")
        runs.append(
            (
                f"SONNX_MUL_ISA={variant}",
                [*VARIANT_TESTS, *DESELECT, f"--junitxml={junits[-1]}"],
                {**env, "SONNX_MUL_ISA": variant},
            )
        )
    for name, args, run_env in runs:
        t0 = time.perf_counter()
        done = run_logged(
            [
                str(python),
                "-m",
                "coverage",
                "run",
                f"--rcfile={rc}",
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                *args,
            ],
            root,
            run_env,
        )
        timings[name] = time.perf_counter() - t0
        print(done.stdout[-1500:], flush=True)
        if done.returncode != 0:
            errors.append(f"{name}: pytest exit {done.returncode}: {done.stdout.strip()[-300:]}")
    t0 = time.perf_counter()
    for source, harness_args in HARNESSES.items():
        harness = Path(source).stem
        exe = work / "bin" / harness
        if not exe.is_file():
            continue
        done = run_logged(
            [str(exe), *harness_args],
            root,
            {**os.environ, "LLVM_PROFILE_FILE": str(prof / f"{harness}.profraw")},
        )
        if done.returncode != 0:
            errors.append(f"{harness}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
    timings["C harnesses"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    gcov, gcov_errors = gcc_kernel(root, work)
    errors += gcov_errors
    timings["gcc gcov"] = time.perf_counter() - t0
    return collect(root, out, RunState(tests, variants, junits, timings, errors, gcov, start))
