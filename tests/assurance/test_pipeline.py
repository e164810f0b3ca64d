"""The ``make prove`` pipeline runner: concurrent steps keep their own exit
code, output and time; the pipeline fails when any step fails."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sonnx_mul_assurance import pipeline
from sonnx_mul_assurance.pipeline import Outcome, Step

PY = sys.executable


def step(name: str, code: str) -> Step:
    return Step(name, (PY, "-c", code))


# B waits (up to 120 s) for a file that A writes: it can only pass when the
# two steps of the stage really run at the same time.
WAITS = (
    "import pathlib, sys, time\n"
    "for _ in range(1200):\n"
    "    if pathlib.Path('from_a').exists(): print('b saw a'); sys.exit(0)\n"
    "    time.sleep(0.1)\n"
    "sys.exit(9)\n"
)


def test_concurrent_steps_keep_their_exit_codes_and_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = step(
        "a",
        "import pathlib, sys; pathlib.Path('from_a').write_text('x'); print('a out'); sys.exit(3)",
    )
    b = step("b", WAITS)
    outcomes = pipeline.run_stage(tmp_path, (b, a))
    assert [(o.name, o.exit_code) for o in outcomes] == [("b", 0), ("a", 3)]
    out = capsys.readouterr().out
    assert "== a output:\na out\n" in out and "== b output:\nb saw a\n" in out
    assert "== a: exit 3" in out and "== b: exit 0" in out


# a grandchild that spins: its CPU must reach the step's figure
SPINS = (
    "import subprocess, sys\n"
    "subprocess.run([sys.executable, '-c', 'sum(range(3_000_000))'], check=True)\n"
)


def test_lone_step_and_summary_name_the_failed_steps(tmp_path: Path) -> None:
    (ok,) = pipeline.run_stage(tmp_path, (step("ok", SPINS),))
    assert ok.exit_code == 0 and ok.cpu_seconds > 0
    text = pipeline.summary([ok, Outcome("bad", 2, 1.0)], total=1.5)
    assert "FAILED (exit 2)" in text and "FAILED: bad" in text and "1.5 s" in text


def test_every_verification_step_is_in_the_pipeline() -> None:
    names = [s.name for s in pipeline.steps("proofs/out")]
    assert names == ["tables", "why3", "crosshair", "wp", "misra", "tests", "report"]
    # the report comes last, after every step whose evidence it reads
    assert [s.name for s in pipeline.stages("proofs/out")[-1]] == ["report"]
