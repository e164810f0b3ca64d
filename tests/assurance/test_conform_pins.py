"""Issue 29: conform's own rules (argument parsing, runtime options, the float
environment, the run's constants) each pinned by a test that fails when that
rule alone is changed: ``make mutants`` over ``conform/`` left these unnoticed.
"""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from sonnx_mul.cli.errors import UsageError
from sonnx_mul_assurance.conform import cli


@pytest.mark.parametrize(
    ("text", "count"),
    [("2^20", 1 << 20), ("2**3", 8), ("1e6", 10**6), ("3E2", 300), ("1_000", 1000), ("7", 7)],
)
def test_pair_counts_are_read_in_every_spelling(text: str, count: int) -> None:
    assert cli.pairs(text) == count


@pytest.mark.parametrize("text", ["lots", "2^", "1e", "-5", "1.5"])
def test_a_pair_count_that_is_not_one_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="not a pair count"):
        cli.pairs(text)


@pytest.mark.parametrize("text", ["-1", "x", "\u0661", ""])
def test_a_count_must_be_ascii_digits(text: str) -> None:
    """``str.isdigit`` alone accepts other scripts' digits; ``int`` would read them."""
    with pytest.raises(argparse.ArgumentTypeError, match="not a non-negative integer"):
        cli._count(text)
    assert cli._count("12") == 12


def _args(runtime: str, **options: object) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    cli.configure(p)
    args = p.parse_args(["--runtime", runtime])
    for k, v in options.items():
        setattr(args, k, v)
    return args


def test_each_runtime_takes_its_own_settings_only() -> None:
    with pytest.raises(UsageError, match=r"^--intra-op-threads is an onnxruntime setting$"):
        cli.make_runtime(_args("openvino", intra_op_threads=2))
    with pytest.raises(UsageError, match=r"^--device is an OpenVINO setting$"):
        cli.make_runtime(_args("onnxruntime", device="CPU"))
    ort = cli.make_runtime(_args("onnxruntime", intra_op_threads=1))
    assert ort.settings()["intra_op_num_threads"] == 1
    assert ort.settings()["inter_op_num_threads"] == 0  # onnxruntime's own default
    # --denormals-optimization on|off reaches OpenVINO as a boolean property
    for flag, value in (("on", "True"), ("off", "False")):
        ov = cli.make_runtime(_args("openvino", denormals_optimization=flag)).settings()
        assert ov["requested"] == {"CPU_DENORMALS_OPTIMIZATION": value}


# ------------------------------------------------------------------ float environment
_FTZ, _DAZ = 1 << 15, 1 << 6  # MXCSR bits: flush-to-zero, denormals-are-zero
_MXCSR = 28  # offset of __mxcsr in glibc's x86-64 fenv_t


def _set_mxcsr(bits: int) -> None:
    """Set MXCSR's FTZ/DAZ bits in this thread through libm (what onnxruntime's
    set_denormal_as_zero does), as a runtime under test may leave them."""
    import ctypes
    import struct

    from sonnx_mul_assurance.conform import fpu

    assert fpu._LIBM is not None
    env = ctypes.create_string_buffer(64)
    fpu._LIBM.fegetenv(env)
    mxcsr = struct.unpack_from("<I", env.raw, _MXCSR)[0]
    struct.pack_into("<I", env, _MXCSR, (mxcsr & ~(_FTZ | _DAZ)) | bits)
    fpu._LIBM.fesetenv(env)


x86_64_glibc = pytest.mark.skipif(
    __import__("platform").machine() != "x86_64" or __import__("platform").libc_ver()[0] != "glibc",
    reason="sets MXCSR through glibc's x86-64 fenv_t",
)


@x86_64_glibc
@pytest.mark.parametrize("bits", [_FTZ, _DAZ, _FTZ | _DAZ], ids=["ftz", "daz", "both"])
def test_flushing_is_detected_and_the_ieee_environment_restored(bits: int) -> None:
    """fpu.flushes sees FTZ alone and DAZ alone; ieee_environment runs its body in
    the default environment (glibc's FE_DFL_ENV) and gives the caller's back."""
    from sonnx_mul_assurance.conform import fpu

    assert not fpu.flushes()
    try:
        _set_mxcsr(bits)
        assert fpu.flushes()
        with fpu.ieee_environment():
            assert not fpu.flushes()
            tiny = np.array([np.float32(2.0**-126)]) * np.float32(0.5)
            assert tiny.view(np.uint32)[0] == 0x00400000  # the subnormal, not 0
        assert fpu.flushes()  # the caller's environment is back
    finally:
        _set_mxcsr(0)
    assert not fpu.flushes()


def test_a_flushing_environment_that_stays_flushing_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When restoring the default environment does not stop the flushing, no
    certified result may be computed: FloatEnvironmentError, the body never runs."""
    from sonnx_mul_assurance.conform import fpu

    class StuckLibm:  # fegetenv/fesetenv that change nothing
        def fegetenv(self, env: object) -> int:
            return 0

        def fesetenv(self, env: object) -> int:
            return 0

    monkeypatch.setattr(fpu, "flushes", lambda: True)
    monkeypatch.setattr(fpu, "_LIBM", StuckLibm())
    ran: list[bool] = []
    with pytest.raises(fpu.FloatEnvironmentError, match="still flushed"), fpu.ieee_environment():
        ran.append(True)
    assert ran == []


def test_opset_1_is_a_valid_opset(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--opset takes every opset from 1 (Mul-1: float16, float, double)."""
    from pathlib import Path

    from sonnx_mul.cli import main

    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    argv = ["conform", "--runtime", "conform_fakes:conforming", "--opset", "1", "--types",
            "float", "--budget", "2^12", "--random", "2^8", "--variants", "single"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr()
    assert main([*argv[:4], "0", *argv[5:]]) == 2
    assert "--opset must be at least 1" in capsys.readouterr().err
