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

from sonnx_mul_assurance.c import native_exhaustive

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
    # ties rounded to odd and a NaN's wrong quiet bit, in both formats: the
    # narrowings are compared bit for bit, NaNs included
    for fmt in ("bf16", "f16"):
        assert caught[f"selftest-ties-to-odd-{fmt}"] > 0
        assert caught[f"selftest-quiet-bit-{fmt}"] > 0
    assert caught["selftest-no-rule-f64"] > 0  # views-f64 sees the hardware's NaN
    # the hardware loops' planted faults this CPU can run (F16C: rounding
    # toward zero, the hardware's NaN, the tail copied one element short;
    # streaming int8/uint8: a block's last
    # vector left uncopied, the tail skipped), bit for bit with the proved
    # loops; the 512-bit ones only with AVX-512 (an illegal instruction otherwise)
    assert len(caught) == native_exhaustive.planted_faults(ROOT)
    widths = {"": "f16c", "512": "f16c512"}
    for suffix in ("", "512"):
        if native_exhaustive.skipped_checks(ROOT, (f"mul-f16-{widths[suffix]}",)):
            continue
        assert caught[f"selftest-truncating-f16c{suffix}"] > 0
        assert caught[f"selftest-nan-sign-f16c{suffix}"] > 0
        assert caught[f"selftest-short-tail-f16c{suffix}"] > 0
        assert caught[f"selftest-short-copy-stream8{suffix}"] > 0
        assert caught[f"selftest-no-tail-stream8{suffix}"] > 0

    # views-f64: the admitted contracts of the binary64 views on the
    # compiled loop (262,144 patterns, a fraction of a second)
    proc = subprocess.run(
        [str(harness), "widen-f16", "widen-bf16", "views-f64"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines()]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("widen-f16", "65536", "0"),
        ("widen-bf16", "65536", "0"),
        ("views-f64", "262144", "0"),
    ]

    if native_exhaustive.is_x86_64():
        # the streaming int8/uint8 loops: every byte pair and every
        # length/misalignment, and the float16 loops' layouts (a fraction of
        # a second), on the CPUs that have them
        checks = [
            c
            for c in native_exhaustive.HW_CHECKS
            if (c.startswith("wrap8-") or (c.startswith("mul-f16-") and c.endswith("-layouts")))
            and c not in native_exhaustive.skipped_checks(ROOT, (c,))
        ]
        proc = subprocess.run([str(harness), *checks], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        rows = {line.split()[0]: line.split()[1:3] for line in proc.stdout.splitlines()}
        assert set(rows) == set(checks)
        # layouts: 64 misalignments x 2 (separate, in place) x the 709 lengths
        # 1..193, 1984..2241 and 4032..4289 (a block of 2048 and the rest)
        layouts = str(64 * 2 * (193 + 2 * 258))
        for check, (inputs, bad) in rows.items():
            if check.startswith("mul-f16-"):
                expected = str(16 * 2 * 49)  # 16 misalignments x 2 x the lengths 1..49
            elif check.endswith("-layouts"):
                expected = layouts
            else:
                expected = "131072"
            assert (inputs, bad) == (expected, "0"), check

    proc = subprocess.run(["make", "-s", "c-kernel"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all known answers agree" in proc.stdout


def test_F_FLOAT_hardware_checks_skip_only_with_a_reason() -> None:
    """A hardware check this CPU cannot run is recorded as skipped, with the
    missing features; the evidence names the CPU."""
    checks = native_exhaustive.CHECKS
    assert set(native_exhaustive.HW_CHECKS) <= set(checks)
    needs = native_exhaustive.hw_needs(ROOT)
    assert set(needs) == set(native_exhaustive.HW_CHECKS)
    skipped = native_exhaustive.skipped_checks(ROOT, checks)
    assert set(skipped) <= set(native_exhaustive.HW_CHECKS)
    flags = native_exhaustive.cpu_flags()
    for check, features in needs.items():
        if native_exhaustive.is_x86_64() and set(features) <= flags:
            assert check not in skipped
        else:
            assert skipped[check]
