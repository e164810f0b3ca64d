"""The proof pipeline behind ``make prove``: every verification step, then the report.

Steps run as subprocesses of this Python: the agreement of the Why3 tables
and check order with the Python registry, the Why3 proofs, the CrossHair
contract checks, the test suite with its agreement checks (JUnit XML for
the report: ``make test``'s, when it passed on this very tree,
:mod:`.suite`), the structural coverage run (:mod:`.structural`), and the
traceability report with its gate. A failing step
does not stop the later ones, so the report shows everything that failed;
the pipeline fails when any step failed. Wall and CPU times (per step, and
the wall time of the whole run) are printed and written to
``proofs/out/pipeline.json``.

The prover steps run side by side (Why3, CrossHair one function at a time,
the Frama-C WP proof of the native C kernel and its MISRA check): none
reads what another writes, and on two cores they keep both busy.  The tests
start as soon as only one prover step is left (``Stage.overlap``): the
last one alone would leave a core idle.  Each step keeps its own exit code,
time and output; a step that shares the terminal prints its output in one
block when it ends.

    python -m sonnx_mul_assurance.pipeline [--root DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from sonnx_mul_assurance.evidence import files, schema


@dataclass(frozen=True)
class Step:
    name: str
    argv: tuple[str, ...]


@dataclass(frozen=True)
class Stage:
    """Steps that run concurrently; the stage starts once at most ``overlap``
    steps of the stages before it are still running (0: after all of them)."""

    steps: tuple[Step, ...]
    overlap: int = 0


Outcome = schema.PipelineStep
"""What a step did (the records of ``pipeline.json``)."""


def stages(out_dir: str) -> tuple[Stage, ...]:
    """The pipeline's steps, with paths relative to the repository root."""
    python = sys.executable
    return (
        Stage((Step("tables", (python, "-m", "sonnx_mul_assurance.generate", "--check")),)),
        Stage(
            (
                Step("why3", (python, "-m", "sonnx_mul_assurance.why3.driver", "check")),
                Step(
                    "crosshair",
                    (python, "-m", "sonnx_mul_assurance.python.crosshair", "check", "--jobs", "1"),
                ),
                # the native kernel: Frama-C WP (mostly prover waits and Qed) and
                # the MISRA check, beside Why3 and CrossHair (neither reads the other)
                Step("wp", (python, "-m", "sonnx_mul_assurance.c.wp", "check")),
                Step("misra", (python, "-m", "sonnx_mul_assurance.c.misra", "check")),
                # the Coq proofs of Why3 goals (coqc, a few seconds)
                Step("coq", (python, "-m", "sonnx_mul_assurance.why3.coq", "check")),
            )
        ),
        # The tests read nothing the provers write: they start as soon as one
        # core is free (the last prover step alone leaves the other idle for
        # 30 s and more), so at most three jobs share the two cores.
        Stage(
            (
                # make test's JUnit when it ran on this very tree, else a run
                Step(
                    "tests",
                    (
                        python,
                        "-m",
                        "sonnx_mul_assurance.suite",
                        "prove",
                        f"{out_dir}/{files.PYTEST}",
                    ),
                ),
                # structural coverage: an instrumented clang build of its own
                # (build/coverage) and the requirement-based tests against it
                Step("coverage", (python, "-m", "sonnx_mul_assurance.structural", "run")),
            ),
            overlap=1,
        ),
        Stage(
            (
                Step(
                    "report",
                    (python, "-m", "sonnx_mul_assurance.report", "report", "--out", out_dir),
                ),
            )
        ),
    )


def steps(out_dir: str) -> tuple[Step, ...]:
    """Every step, in the order of the summary."""
    return tuple(step for stage in stages(out_dir) for step in stage.steps)


def run_stages(root: Path, plan: Sequence[Stage]) -> list[Outcome]:
    """Run the stages in order (each once its ``overlap`` allows); a step that
    runs alone prints as it goes, the others print their output in one block
    each as they end.  Outcomes in the order of the steps."""
    outcomes: dict[str, Outcome] = {}
    running: dict[Future[tuple[str, int, float]], tuple[Step, float]] = {}
    alone: set[str] = set()  # steps that print to the terminal as they go

    def collect(future: Future[tuple[str, int, float]]) -> None:
        step, started = running.pop(future)
        output, code, cpu = future.result()
        seconds = time.perf_counter() - started
        if step.name not in alone:
            print(f"== {step.name} output:\n{output}", end="" if output.endswith("\n") else "\n")
        print(f"== {step.name}: exit {code} after {seconds:.1f} s", flush=True)
        outcomes[step.name] = Outcome(step.name, code, seconds, cpu)

    workers = sum(len(stage.steps) for stage in plan)
    # one waiting thread per step, so that no pipe fills up and blocks its step
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for stage in plan:
            while len(running) > stage.overlap:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    collect(future)
            lone = len(stage.steps) == 1 and not running
            for step in stage.steps:
                print(f"== {step.name}: {' '.join(step.argv[1:])}", flush=True)
                if lone:
                    alone.add(step.name)
                    proc = subprocess.Popen(step.argv, cwd=root, text=True)
                else:
                    proc = subprocess.Popen(
                        step.argv,
                        cwd=root,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT,
                        text=True,
                    )
                running[pool.submit(_wait, proc)] = (step, time.perf_counter())
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                collect(future)
    return [outcomes[step.name] for stage in plan for step in stage.steps]


def run_stage(root: Path, stage: tuple[Step, ...]) -> list[Outcome]:
    """Run the steps of one stage concurrently."""
    return run_stages(root, (Stage(stage),))


def _wait(proc: subprocess.Popen[str]) -> tuple[str, int, float]:
    """(output, exit code, CPU seconds) of ``proc``: its own rusage, from
    wait4, counts every descendant it waited for (provers, xdist workers)."""
    output = proc.stdout.read() if proc.stdout is not None else ""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.stdout is not None:
        proc.stdout.close()
    return output, proc.returncode, usage.ru_utime + usage.ru_stime


def run(root: Path, out_dir: str = "proofs/out") -> list[Outcome]:
    """Run every step in ``root``; never raises on a failing step."""
    (root / out_dir).mkdir(parents=True, exist_ok=True)
    return run_stages(root, stages(out_dir))


def summary(outcomes: list[Outcome], total: float) -> str:
    """The per-step table; ``total`` is the wall time of the whole run (the
    steps of a stage overlap, so it is less than the sum of their times)."""
    lines = ["== make prove summary"]
    for o in outcomes:
        verdict = "ok" if o.exit_code == 0 else f"FAILED (exit {o.exit_code})"
        lines.append(f"  {o.name:<10} {o.seconds:7.1f} s  (CPU {o.cpu_seconds:6.1f} s)  {verdict}")
    failed = [o.name for o in outcomes if o.exit_code != 0]
    lines.append(
        f"  {'total':<10} {total:7.1f} s  " + (f"FAILED: {', '.join(failed)}" if failed else "ok")
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="repository root")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    outcomes = run(args.root)
    total = time.perf_counter() - start
    print(summary(outcomes, total))
    record = schema.PipelineRecord(steps=outcomes, total_seconds=total)
    schema.dump(record, args.root / files.evidence_path(files.PIPELINE))
    return 0 if all(o.exit_code == 0 for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
