"""The proof pipeline behind ``make prove``: every verification step, then the report.

Steps run in order, each as a subprocess of this Python: the agreement of
the Why3 tables and check order with the Python registry, the Why3 proofs,
the CrossHair contract checks, the test suite with its agreement checks
(JUnit XML for the report), and the traceability report with its gate. A
failing step does not stop the later ones, so the report shows everything
that failed; the pipeline fails when any step failed. Wall times are
printed and written to ``proofs/out/pipeline.json``.

    python -m sonnx_mul.proof.pipeline [--root DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class Step:
    name: str
    argv: tuple[str, ...]


@dataclass(frozen=True)
class Outcome:
    name: str
    exit_code: int
    seconds: float


def steps(out_dir: str) -> tuple[Step, ...]:
    """The pipeline's steps, with paths relative to the repository root."""
    python = sys.executable
    return (
        Step("tables", (python, "-m", "sonnx_mul.proof.tables", "check")),
        Step("why3", (python, "-m", "sonnx_mul.proof.why3", "check")),
        Step("crosshair", (python, "-m", "sonnx_mul.proof.crosshair", "check")),
        Step(
            "tests",
            (python, "-m", "pytest", "-q", "-n", "2", f"--junitxml={out_dir}/pytest.xml"),
        ),
        Step("report", (python, "-m", "sonnx_mul.trace", "report", "--out", out_dir)),
    )


def run(root: Path, out_dir: str = "proofs/out") -> list[Outcome]:
    """Run every step in ``root``; never raises on a failing step."""
    (root / out_dir).mkdir(parents=True, exist_ok=True)
    outcomes = []
    for step in steps(out_dir):
        print(f"== {step.name}: {' '.join(step.argv[1:])}", flush=True)
        start = time.perf_counter()
        code = subprocess.run(step.argv, cwd=root, check=False).returncode
        outcomes.append(Outcome(step.name, code, time.perf_counter() - start))
    return outcomes


def summary(outcomes: list[Outcome]) -> str:
    lines = ["== make prove summary"]
    for o in outcomes:
        verdict = "ok" if o.exit_code == 0 else f"FAILED (exit {o.exit_code})"
        lines.append(f"  {o.name:<10} {o.seconds:7.1f} s  {verdict}")
    total = sum(o.seconds for o in outcomes)
    failed = [o.name for o in outcomes if o.exit_code != 0]
    lines.append(
        f"  {'total':<10} {total:7.1f} s  " + (f"FAILED: {', '.join(failed)}" if failed else "ok")
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="repository root")
    args = parser.parse_args(argv)
    outcomes = run(args.root)
    print(summary(outcomes))
    record = {
        "steps": [asdict(o) for o in outcomes],
        "total_seconds": sum(o.seconds for o in outcomes),
    }
    (args.root / "proofs" / "out" / "pipeline.json").write_text(json.dumps(record, indent=2) + "\n")
    return 0 if all(o.exit_code == 0 for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
