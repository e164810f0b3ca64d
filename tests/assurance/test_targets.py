"""The kernel on several compilers and targets: the flag table, the portable harness, the check.

``make check-targets`` (in CI) builds every target of native/flags.mk under
qemu-user; here, on the host: the flag selection, gcc and clang giving the
same bits (NaNs included) as x86-64 gcc, the negative controls of the
harness (a wrong rounding, a lost subnormal, a wrong NaN rule, each planted
in a copy of the kernel, must fail ``make c-kernel``), of the comparison
(a differing hash, a mismatch, a failed build) and of the target guard (x87
arithmetic, a compiler for an architecture flags.mk has no row for).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sonnx_mul_assurance.c import flags, targets

ROOT = Path(__file__).resolve().parents[2]
FLOAT_TYPES = {"f16", "bf16", "f32", "f64"}


@pytest.fixture(scope="module")
def host_results() -> dict[str, dict[str, Any]]:
    """x86-64 gcc and clang through the driver itself (make c-kernel, build/targets/<name>)."""
    reference, clang = targets.TARGETS[:2]
    assert (reference.cc, clang.cc) == ("gcc", "clang")
    return {t.name: targets.build_and_run(ROOT, t, ()) for t in (reference, clang)}


@pytest.mark.needs_prover  # clang
def test_F_FLOAT_gcc_and_clang_agree_bit_for_bit_nans_included(
    host_results: dict[str, dict[str, Any]],
) -> None:
    gcc, clang = (host_results[t.name] for t in targets.TARGETS[:2])
    for result in (gcc, clang):
        assert result["exit"] == 0 and result["known_answers"], result["log"]
    assert set(gcc["types"]) >= FLOAT_TYPES and set(gcc["types"]) == set(clang["types"])
    for name, row in gcc["types"].items():
        assert row["mismatches"] == 0 and row["pairs"] > 0, row
        assert clang["types"][name]["mismatches"] == 0
        assert clang["types"][name]["hash"] == row["hash"], name
    assert targets.verdicts(host_results, targets.TARGETS[0].name) == []


@pytest.mark.needs_prover  # clang, the cross compilers
def test_the_flag_table_selects_by_target_and_compiler() -> None:
    rows = flags.table(ROOT)
    assert rows["SONNX_TARGETS"] == ["x86_64", "i686", "aarch64", "arm", "riscv64"]
    gcc, clang = flags.cflags(ROOT, "gcc"), flags.cflags(ROOT, "clang")
    assert "-fexcess-precision=standard" in gcc and "-fexcess-precision=standard" not in clang
    assert gcc[: len(rows["SONNX_CFLAGS"])] == rows["SONNX_CFLAGS"]
    for target in targets.TARGETS:
        arch = flags.target(ROOT, target.cc) if shutil.which(target.cc) else None
        assert arch is None or arch in rows["SONNX_TARGETS"], target


def test_a_compiler_for_an_unlisted_target_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "mips-linux-gnu-gcc"
    fake.write_text(
        '#!/bin/sh\n[ "$1" = -dumpmachine ] && echo mips-linux-gnu && exit 0\nexec gcc "$@"\n'
    )
    fake.chmod(0o755)
    proc = subprocess.run(
        ["python3", str(ROOT / "native/flags.py"), str(fake)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1 and "targets mips" in proc.stderr
    made = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "c-kernel",
            f"KERNEL_CC={fake}",
            f"KERNEL_DIR={tmp_path / 'b'}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert made.returncode != 0 and not (tmp_path / "b" / "example").exists()


@pytest.mark.needs_prover  # i686-linux-gnu-gcc
def test_x87_arithmetic_is_refused_on_i686() -> None:
    cc = "i686-linux-gnu-gcc"
    assert shutil.which(cc), "make toolchains installs it"
    pinned = [cc, *flags.cflags(ROOT, cc), "-I", str(ROOT / "native/include"), "-fsyntax-only"]
    source = str(ROOT / "native/src/sonnx_mul_float.c")
    x87 = subprocess.run([*pinned, "-mfpmath=387", source], capture_output=True, text=True)
    assert x87.returncode != 0 and "FLT_EVAL_METHOD == 0" in x87.stderr
    sse2 = subprocess.run([*pinned, source], capture_output=True, text=True)
    assert sse2.returncode == 0, sse2.stderr


# (text in native/src/sonnx_mul_float.c, its planted replacement, the type whose bits must differ)
PLANTED = {
    "wrong NaN rule": ("r = 0x7FC00000U;", "r = 0xFFC00000U;", "f32"),
    "wrong rounding": (
        "((mag - 939524096U) + 4095U + lsb) / 8192U",
        "((mag - 939524096U) + 4096U + (lsb * 0U)) / 8192U",
        "f16",
    ),
    "lost subnormal": (
        "        bits = (m4 * 8192U) + ((112U - s4) * 8388608U);",
        "        bits = (m4 * 0U) + ((112U - s4) * 0U);",
        "f16",
    ),
    "wrong f64 NaN rule": ("r = 0x7FF8000000000000U;", "r = 0x7FF8000000000001U;", "f64"),
}


@pytest.mark.parametrize("fault", sorted(PLANTED))
def test_the_portable_harness_catches_a_planted_fault(fault: str, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "native", tmp_path / "native")
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    source = tmp_path / "native/src/sonnx_mul_float.c"
    text, planted, type_name = PLANTED[fault]
    assert source.read_text().count(text) == 1
    source.write_text(source.read_text().replace(text, planted))
    # the harness alone (the example's known answers would stop make first)
    harness = tmp_path / "build" / "portable"
    made = subprocess.run(
        ["make", "--no-print-directory", str(harness), f"KERNEL_DIR={harness.parent}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    proc = subprocess.run([str(harness)], capture_output=True, text=True, check=False)
    rows = {row["type"]: row for row in map(json.loads, proc.stdout.splitlines())}
    assert proc.returncode == 1
    assert rows[type_name]["mismatches"] > 0, rows[type_name]
    assert rows[type_name]["first_mismatch"] is not None


def _result(**types: str) -> dict[str, Any]:
    return {
        "exit": 0,
        "known_answers": True,
        "log": "",
        "types": {t: {"type": t, "pairs": 1, "mismatches": 0, "hash": h} for t, h in types.items()},
    }


def test_the_comparison_fails_on_any_difference() -> None:
    same = {"ref": _result(f32="a", f16="b"), "arm": _result(f32="a", f16="b")}
    assert targets.verdicts(same, "ref") == []
    other_hash = {"ref": _result(f32="a", f16="b"), "arm": _result(f32="a", f16="c")}
    assert targets.verdicts(other_hash, "ref") == ["arm f16: hash c is not ref's b"]
    missing = {"ref": _result(f32="a", f16="b"), "arm": _result(f32="a")}
    assert "types" in targets.verdicts(missing, "ref")[0]
    mismatch = {"ref": _result(f32="a"), "arm": _result(f32="a")}
    mismatch["arm"]["types"]["f32"]["mismatches"] = 3
    assert targets.verdicts(mismatch, "ref") == ["arm f32: 3 mismatches with the oracle"]
    failed = {"ref": _result(f32="a"), "arm": {**_result(f32="a"), "exit": 2}}
    assert targets.verdicts(failed, "ref")[0].startswith("arm: make c-kernel failed")
