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
    assert names == [
        "tables",
        "why3",
        "crosshair",
        "wp",
        "misra",
        "coq",
        "tests",
        "coverage",
        "report",
    ]
    # the report comes last, after every step whose evidence it reads
    assert [s.name for s in pipeline.stages("proofs/out")[-1].steps] == ["report"]
    assert pipeline.stages("proofs/out")[-1].overlap == 0


# C (next stage, overlap 1) must start while B (this stage) still runs, and
# only after A (this stage) has ended: B waits for C's file, C for A's.
def test_a_stage_with_overlap_starts_once_one_step_is_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = step("a", "import pathlib, time; time.sleep(0.5); pathlib.Path('from_a').write_text('x')")
    b = step("b", WAITS.replace("from_a", "from_c"))
    c = step(
        "c",
        "import pathlib, sys\n"
        "ok = pathlib.Path('from_a').exists()\n"
        "pathlib.Path('from_c').write_text('x')\n"
        "sys.exit(0 if ok else 7)\n",
    )
    plan = (pipeline.Stage((a, b)), pipeline.Stage((c,), overlap=1))
    outcomes = pipeline.run_stages(tmp_path, plan)
    assert [(o.name, o.exit_code) for o in outcomes] == [("a", 0), ("b", 0), ("c", 0)]
    # negative control: without the overlap C waits for B, which waits for C
    # (B gives up after its 120 s; here a short wait proves the point)
    quick = step("b", WAITS.replace("from_a", "from_c").replace("1200", "20"))
    for name in ("from_a", "from_c"):
        (tmp_path / name).unlink()
    outcomes = pipeline.run_stages(tmp_path, (pipeline.Stage((a, quick)), pipeline.Stage((c,))))
    assert [(o.name, o.exit_code) for o in outcomes] == [("a", 0), ("b", 9), ("c", 0)]
