"""The 16-bit checked scans on every pair (native/verify/scan16.c): each of
the 2^32 pairs of int16 and of uint16 through sonnx_mul_first_overflow_i16 /
_u16, in calls of 256 elements so that every pair passes the block scan's
vector loop, against the exact product, in each x86-64 build this CPU runs
(the int16 scan reads the bits of negative values through admitted C99
conversion facts: this is their check on the compiled code); and the same
comparison fails on a scan that ignores the low half's sign bit."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import probe_build

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="the builds are the x86-64 variants"
)
CALLS = 2 * 65536 * 256  # both types: 65536 values of a, 256 calls of 256 b each


def _run(build: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    exe = tmp_path / f"scan16_{build}"
    subprocess.run(
        ["gcc", *probe_build.builds()[build], f"-I{ROOT / 'native/include'}",
         str(ROOT / "native/src/sonnx_mul_int.c"), str(ROOT / "native/verify/scan16.c"),
         "-o", str(exe)],
        check=True,
    )  # fmt: skip
    return subprocess.run([str(exe), *args], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("build", sorted(probe_build.builds()))
def test_F_CHECKED_every_16_bit_pair_gets_the_exact_verdict(build: str, tmp_path: Path) -> None:
    if not probe_build.supported(build):
        pytest.skip(f"this CPU does not run the {build} build")
    run = _run(build, tmp_path)
    assert run.stdout.split() == ["calls", str(CALLS), "mismatches", "0"], run.stdout
    assert run.returncode == 0


def test_negative_control_a_scan_blind_to_the_low_half_is_caught(tmp_path: Path) -> None:
    run = _run("portable", tmp_path, "planted")
    calls, bad = int(run.stdout.split()[1]), int(run.stdout.split()[3])
    assert calls == CALLS // 2 and bad > 0, run.stdout
    assert run.returncode == 0
