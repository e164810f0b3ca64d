"""The exhaustive harness of the native kernel's float16/bfloat16 code (F-FLOAT).

The full runs (2^32 inputs each) belong to ``make verify-exhaustive``; here
the harness is built with the pinned flags, its negative control (planted
wrong narrowings must be caught) and the two widenings (every pattern) run.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from sonnx_mul_assurance import native_exhaustive

ROOT = Path(__file__).resolve().parents[2]

if shutil.which("gcc") is None or shutil.which("make") is None:
    pytest.skip("gcc and make are needed", allow_module_level=True)


def test_F_FLOAT_harness_negative_control_widenings_and_example() -> None:
    # one test: the builds share build/c-kernel (no two xdist workers at once)
    harness = native_exhaustive.build(ROOT)
    proc = subprocess.run([str(harness), "selftest"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout
    caught = {line.split()[0]: int(line.split()[1]) for line in proc.stdout.splitlines()}
    assert caught["selftest-truncating-bf16"] > 0 and caught["selftest-wrong-mask-f16"] > 0
    if native_exhaustive.is_x86_64():
        # the F16C hardware loops' planted faults (rounding toward zero, the
        # hardware's NaN sign), compared bit for bit with the proved loop
        for width in ("f16c", "f16c512"):
            assert caught[f"selftest-truncating-{width}"] > 0
            assert caught[f"selftest-nan-sign-{width}"] > 0

    proc = subprocess.run([str(harness), "widen-f16", "widen-bf16"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines()]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("widen-f16", "65536", "0"),
        ("widen-bf16", "65536", "0"),
    ]

    proc = subprocess.run(["make", "-s", "c-kernel"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all known answers agree" in proc.stdout


def test_F_FLOAT_hardware_checks_skip_only_with_a_reason() -> None:
    """A hardware check this CPU cannot run is recorded as skipped, with the
    missing features; the evidence names the CPU."""
    checks = native_exhaustive.CHECKS
    assert set(native_exhaustive.HW_CHECKS) <= set(checks)
    assert set(native_exhaustive.HW_NEEDS) == set(native_exhaustive.HW_CHECKS)
    skipped = native_exhaustive.skipped_checks(checks)
    assert set(skipped) <= set(native_exhaustive.HW_CHECKS)
    flags = native_exhaustive.cpu_flags()
    for check, needs in native_exhaustive.HW_NEEDS.items():
        if native_exhaustive.is_x86_64() and set(needs) <= flags:
            assert check not in skipped
        else:
            assert skipped[check]
