"""``mul`` gives the same bits whatever floating-point environment the caller left.

Another library in the process may set flush-to-zero, denormals-are-zero or
a directed rounding mode (x86 MXCSR). The glue establishes the kernel's
environment around every call (native/include/sonnx_mul_fpenv.h) and
restores the caller's. Each mode is set through ctypes; the caller's MXCSR
must be back after the call. The negative control: numpy's loops
(``sonnx_mul.numpy_loops``, the kernel's contract twin, which does not
establish the environment) fail the same comparison under the same mode.
"""

from __future__ import annotations

import ctypes
import platform
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from sonnx_mul import mul, numpy_loops
from sonnx_mul.dtypes import ALL_TYPES

pytestmark = pytest.mark.skipif(
    platform.machine() not in ("x86_64", "AMD64"), reason="MXCSR is x86's"
)
DEFAULT = 0x1F80
FTZ, DAZ = 0x8000, 0x0040
ROUNDING = {"down": 0x2000, "up": 0x4000, "toward zero": 0x6000}
MODES = {
    "FTZ": DEFAULT | FTZ,
    "DAZ": DEFAULT | DAZ,
    "FTZ+DAZ": DEFAULT | FTZ | DAZ,
    **{f"round {name}": DEFAULT | bits for name, bits in ROUNDING.items()},
    "FTZ+DAZ, round toward zero": DEFAULT | FTZ | DAZ | ROUNDING["toward zero"],
}
STATUS_FLAGS = 0x3F


@pytest.fixture(scope="module")
def mxcsr(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    library = tmp_path_factory.mktemp("mxcsr") / "libmxcsr.so"
    source = Path(__file__).parent / "native" / "mxcsr.c"
    compiler = shutil.which("gcc")
    assert compiler is not None
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-O2", str(source), "-o", str(library)], check=True
    )
    lib = ctypes.CDLL(str(library))
    lib.sonnx_test_get_mxcsr.restype = ctypes.c_uint
    lib.sonnx_test_set_mxcsr.argtypes = [ctypes.c_uint]
    return lib


def _operands(dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Subnormal operands and results, ties, overflow, NaNs: every pattern pair of a sample."""
    width = dtype.itemsize * 8
    uint = np.dtype(f"u{dtype.itemsize}")
    rng = np.random.default_rng(20261126)
    if width == 16:
        a = np.repeat(np.arange(0, 1 << 16, 97, dtype=uint), 64)
        b = np.tile(rng.integers(0, 1 << 16, 64, dtype=uint), a.size // 64)
    else:
        a = rng.integers(0, np.iinfo(uint).max, 200_000, dtype=uint, endpoint=True)
        b = rng.integers(0, np.iinfo(uint).max, 200_000, dtype=uint, endpoint=True)
        # exponents near the bottom: subnormal operands and products
        mantissa = (1 << (23 if width == 32 else 52)) - 1
        low = rng.integers(0, mantissa, 100_000, dtype=uint)
        near_one = np.array(0x3F800000 if width == 32 else 0x3FF0000000000000, uint)
        a = np.concatenate([a, low, low | near_one])
        b = np.concatenate([b, np.full(100_000, near_one, uint), low])
    return a.view(dtype), b.view(dtype)


def _float_types() -> Iterator[np.dtype]:
    return (t.dtype for t in ALL_TYPES if t.is_float)


@pytest.fixture(scope="module")
def baseline() -> dict[str, np.ndarray]:
    return {dt.name: mul(*_operands(dt)) for dt in _float_types()}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_F_FLOAT_every_float_type_bit_identical_under_a_foreign_environment(
    mode: str, mxcsr: ctypes.CDLL, baseline: dict[str, np.ndarray]
) -> None:
    caller = MODES[mode]
    numpy_changed = []
    for dtype in _float_types():
        a, b = _operands(dtype)
        uint = np.dtype(f"u{dtype.itemsize}")
        mxcsr.sonnx_test_set_mxcsr(caller)
        try:
            got = mul(a, b)
            after = mxcsr.sonnx_test_get_mxcsr()
            unbracketed = numpy_loops.multiply(a, b, None, False)
        finally:
            mxcsr.sonnx_test_set_mxcsr(DEFAULT)
        assert after & ~STATUS_FLAGS == caller, (
            f"MXCSR {after:#x} after the call, caller's {caller:#x}"
        )
        np.testing.assert_array_equal(
            got.view(uint), baseline[dtype.name].view(uint), err_msg=dtype.name
        )
        assert isinstance(unbracketed, np.ndarray)
        if not np.array_equal(unbracketed.view(uint), baseline[dtype.name].view(uint)):
            numpy_changed.append(dtype.name)
    # the negative control: the same comparison fails for the kernel's contract
    # twin that does not establish the environment (numpy's loops)
    assert {"float32", "float64"} <= set(numpy_changed), numpy_changed


def test_the_four_float_types_are_checked() -> None:
    names = {dt.name for dt in _float_types()}
    assert names == {"float16", np.dtype(ml_dtypes.bfloat16).name, "float32", "float64"}
