"""The runtime self-test: literal vectors are right; an FTZ/DAZ process cannot change ``mul``
and fails the self-test of a kernel that does not establish its environment."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sonnx_mul import selftest
from sonnx_mul.dtypes import ALL_TYPES, by_onnx_name
from sonnx_mul.known_answers import NAN, VECTORS
from support import oracle_mul_bits

NATIVE = Path(__file__).parent / "native" / "ftz.c"


def test_F_vectors_cover_every_type_and_match_the_exact_oracle():
    assert {v.type_name for v in VECTORS} == {t.onnx_name for t in ALL_TYPES}
    for v in VECTORS:
        etype = by_onnx_name(v.type_name)
        if etype.is_float:
            expected = oracle_mul_bits(v.a, v.b, etype)
            assert v.expected == (NAN if expected is None else expected), v
        else:
            assert v.fits == (etype.lo <= v.a * v.b <= etype.hi), v
            assert (v.expected - v.a * v.b) % (1 << etype.bits) == 0, v
            assert etype.lo <= v.expected <= etype.hi, v


def test_F_FLOAT_selftest_passes_in_a_normal_process():
    report = selftest()
    assert report.ok, report.failures
    assert report.checked == len(VECTORS) >= 60


def _run_selftest_after_loading(
    library: Path | None, kernel: str = "native", vectors: str = ""
) -> subprocess.CompletedProcess:
    load = f"ctypes.CDLL({str(library)!r}); " if library else ""
    code = (
        "import ctypes, numpy, sonnx_mul, sonnx_mul.known_answers as s; "
        + load
        + vectors
        # is the process's FPU flushing? (the least float32 subnormal times one)
        + "print('ftz', numpy.float32(1.4e-45) * numpy.float32(1.0) == 0); "
        + "r = s.selftest(); print(*r.failures, sep='\\n'); "
        + "raise SystemExit(0 if r.ok else 1)"
    )
    env = {**os.environ, "SONNX_MUL_KERNEL": kernel}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )


@pytest.fixture(scope="module")
def ftz_library(tmp_path_factory) -> Path:
    compiler = shutil.which("gcc") or shutil.which("cc")
    assert compiler, "a C compiler is needed to build the FTZ library"
    library = tmp_path_factory.mktemp("ftz") / "libftz.so"
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-O2", "-ffast-math", str(NATIVE), "-o", str(library)],
        check=True,
    )
    return library


def test_F_FLOAT_mul_is_immune_to_a_library_that_sets_flush_to_zero(ftz_library):
    result = _run_selftest_after_loading(ftz_library)
    assert "ftz True" in result.stdout  # the library did flush the process's FPU
    assert result.returncode == 0, result.stdout + result.stderr


def test_F_FLOAT_selftest_of_an_unbracketed_kernel_fails_with_flush_to_zero(ftz_library):
    # numpy's loops (the diagnosis kernel) do not establish the environment:
    # the subnormal vectors catch the flushing process.
    result = _run_selftest_after_loading(ftz_library, kernel="numpy")
    assert result.returncode == 1, result.stdout + result.stderr
    for type_name in ("float", "double"):
        assert f"{type_name}: subnormal" in result.stdout


def test_F_FLOAT_same_subprocess_without_the_library_passes():
    result = _run_selftest_after_loading(None, kernel="numpy")
    assert "ftz False" in result.stdout
    assert result.returncode == 0, result.stdout + result.stderr


def test_negative_control_a_selftest_without_subnormal_vectors_misses_ftz(ftz_library):
    # The FTZ catch depends on the subnormal vectors: with them removed, the
    # same poisoned process passes the unbracketed kernel, so the vectors are
    # what catches FTZ.
    vectors = (
        "s.VECTORS = tuple(v for v in s.VECTORS if 'subnormal' not in v.what "
        "and 'underflow' not in v.what); "
    )
    result = _run_selftest_after_loading(ftz_library, kernel="numpy", vectors=vectors)
    assert "ftz True" in result.stdout
    assert result.returncode == 0, result.stdout + result.stderr


def test_F_selftest_runs_through_the_native_kernel():
    """Every vector's product comes from sonnx_mul._native.multiply or, through mul's
    plain lane, sonnx_mul._native.plain (counted by a profile hook)."""
    from sonnx_mul import _native

    calls = []

    def hook(frame, event, arg):
        if event == "c_call" and (arg is _native.multiply or arg is _native.plain):
            calls.append(1)

    sys.setprofile(hook)
    try:
        report = selftest()
    finally:
        sys.setprofile(None)
    assert report.ok and report.kernel == "native"
    integers = sum(1 for v in VECTORS if not by_onnx_name(v.type_name).is_float)
    # integers: wrap and overflow="error"; then, when a variant other than the
    # portable build runs, each type compared with the portable build (the
    # variant and the portable build, both modes for integers)
    compared = 0
    if report.isa != "portable":
        compared = sum(2 if t.is_float else 4 for t in ALL_TYPES)
        assert report.isa_compared == len(ALL_TYPES)
    assert len(calls) == len(VECTORS) + integers + compared
