"""``mul`` gives the same bits whatever floating-point environment the caller left.

Another library in the process may set flush-to-zero, denormals-are-zero or
a directed rounding mode (x86 MXCSR). The glue establishes the kernel's
environment around every call (native/include/sonnx_mul_fpenv.h) and
restores the caller's. Each mode is set through ctypes; the caller's MXCSR
must be back after the call, whole: its control bits and its status flags
(sticky exception bits the caller may still read), neither wiped nor joined
by the kernel's own. The negative control: numpy's loops
(``sonnx_mul.numpy_loops``, the kernel's contract twin, which does not
establish the environment) fail the same comparison under the same mode.

The glue restores the caller's MXCSR on every exit, a call it refuses
included. Those calls go to ``_native.multiply`` itself, with operands made
before the caller's MXCSR is set: numpy clears the status flags around its
own operations, which would hide a wiped flag.
"""

from __future__ import annotations

import ctypes
import platform
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from sonnx_mul import ArgumentError, IntegerOverflowError, ShapeError, _native, mul, numpy_loops
from sonnx_mul.dtypes import ALL_TYPES, ElementType

pytestmark = pytest.mark.skipif(
    platform.machine() not in ("x86_64", "AMD64"), reason="MXCSR is x86's"
)
DEFAULT = 0x1F80
FTZ, DAZ = 0x8000, 0x0040
ROUNDING = {"down": 0x2000, "up": 0x4000, "toward zero": 0x6000}
PRECISION, UNDERFLOW = 0x0020, 0x0010
STATUS = PRECISION | UNDERFLOW
"""Status flags a caller's earlier arithmetic left set (sticky): 0x1FB0 with the default."""
MODES = {
    "default": DEFAULT,  # no flag set: the kernel's own flags must not show
    "default, status flags set": DEFAULT | STATUS,
    "FTZ": DEFAULT | FTZ | STATUS,
    "DAZ": DEFAULT | DAZ | STATUS,
    "FTZ+DAZ": DEFAULT | FTZ | DAZ | STATUS,
    **{f"round {name}": DEFAULT | bits | STATUS for name, bits in ROUNDING.items()},
    "FTZ+DAZ, round toward zero": DEFAULT | FTZ | DAZ | ROUNDING["toward zero"] | STATUS,
}
FOREIGN = MODES["FTZ+DAZ, round toward zero"]


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
        assert after == caller, f"MXCSR {after:#x} after the call, caller's {caller:#x}"
        np.testing.assert_array_equal(
            got.view(uint), baseline[dtype.name].view(uint), err_msg=dtype.name
        )
        assert isinstance(unbracketed, np.ndarray)
        if not np.array_equal(unbracketed.view(uint), baseline[dtype.name].view(uint)):
            numpy_changed.append(dtype.name)
    # the negative control: the same comparison fails for the kernel's contract
    # twin that does not establish the environment (numpy's loops), in every
    # mode that changes subnormal or rounded products
    if caller & ~STATUS != DEFAULT:
        assert {"float32", "float64"} <= set(numpy_changed), numpy_changed
    else:
        assert numpy_changed == []


def test_the_four_float_types_are_checked() -> None:
    names = {dt.name for dt in _float_types()}
    assert names == {"float16", np.dtype(ml_dtypes.bfloat16).name, "float32", "float64"}


def _refused_calls() -> dict[str, tuple[tuple[object, ...], type[Exception], str]]:
    """Calls the glue itself refuses: its arguments, the exception, its message."""
    x = np.arange(1, 9, dtype=np.float32)
    read_only = np.zeros(8, np.float32)
    read_only.flags.writeable = False
    shared = np.zeros(9, np.float32)
    return {
        "three arguments": ((x, x, None), TypeError, "takes 4 or 5 arguments"),
        "unknown isa": ((x, x, None, False, "no-such-isa"), ValueError, "no-such-isa"),
        "a not an array": (([1.0] * 8, x, None, False), TypeError, "a must be a numpy"),
        "checked's truth fails": ((x, x, None, np.array([True, False])), ValueError, "truth"),
        "element types differ": ((x, x.astype(np.float64), None, False), TypeError, "one element"),
        "a type outside the profile": ((x.astype(np.complex64),) * 2 + (None, False), TypeError,
                                       "one element"),
        "shapes differ": ((x, x[:7], None, False), ValueError, "same non-empty shape"),
        "empty": ((x[:0], x[:0], None, False), ValueError, "same non-empty shape"),
        "out of another type": ((x, x, np.zeros(8, np.float64), False), TypeError, "out must"),
        "out of another shape": ((x, x, np.zeros(7, np.float32), False), ValueError, "shape of A"),
        "out read-only": ((x, x, read_only, False), ValueError, "read-only"),
        "out overlapping": ((shared[:8], x, shared[1:], False), ValueError, "exactly A or B"),
    }  # fmt: skip


def _accepted_calls() -> dict[str, tuple[tuple[object, ...], object]]:
    """Calls the glue carries out, one per path: its arguments and what it returns."""
    f32 = np.array([1e-40, 3.0, 3e38, -0.0, np.inf, np.nan, 1.5, 2.0**-140], np.float32)
    big = np.full(2 * _native.GIL_RELEASE_MIN_ELEMENTS, 1.5e-30, np.float64)  # GIL released
    i8 = np.array([3, 100, -7, 64], np.int8)
    fortran = np.asfortranarray(np.array([[1, 2], [100, 3]], np.int8))
    swapped = f32.astype(f32.dtype.newbyteorder())  # a byte order: the iterator's path
    out = np.zeros(8, np.float32)
    with np.errstate(all="ignore"):  # overflow, invalid and underflow are the point
        f32_bits, big_bits = (f32 * f32).view(np.uint32), (big * big).view(np.uint64)
    return {
        "float32": ((f32, f32, None, False), f32_bits),
        "float64, many elements": ((big, big, None, False), big_bits),
        "float32 into out": ((f32, f32, out, False), f32_bits),
        "int8 checked, an overflow": ((i8, i8, None, True), 1),
        "int8 checked, Fortran order": ((fortran, fortran, None, True), 2),
        "float32 swapped bytes": ((swapped, f32, None, False), f32_bits),
    }


@pytest.mark.parametrize("caller", [MODES["default, status flags set"], FOREIGN],
                         ids=lambda c: f"{c:#x}")  # fmt: skip
@pytest.mark.parametrize("case", sorted(_refused_calls()))
def test_F_FLOAT_a_call_the_glue_refuses_leaves_the_callers_environment(
    case: str, caller: int, mxcsr: ctypes.CDLL
) -> None:
    args, error, message = _refused_calls()[case]
    mxcsr.sonnx_test_set_mxcsr(caller)
    try:
        with pytest.raises(error, match=message):
            _native.multiply(*args)
        after = mxcsr.sonnx_test_get_mxcsr()
    finally:
        mxcsr.sonnx_test_set_mxcsr(DEFAULT)
    assert after == caller, f"MXCSR {after:#x} after a refused call, caller's {caller:#x}"


@pytest.mark.parametrize("caller", [MODES["default, status flags set"], FOREIGN],
                         ids=lambda c: f"{c:#x}")  # fmt: skip
@pytest.mark.parametrize("case", sorted(_accepted_calls()))
def test_F_FLOAT_a_call_the_glue_carries_out_leaves_the_callers_environment(
    case: str, caller: int, mxcsr: ctypes.CDLL
) -> None:
    args, want = _accepted_calls()[case]
    mxcsr.sonnx_test_set_mxcsr(caller)
    try:
        got = _native.multiply(*args)
        after = mxcsr.sonnx_test_get_mxcsr()
    finally:
        mxcsr.sonnx_test_set_mxcsr(DEFAULT)
    assert after == caller, f"MXCSR {after:#x} after the call, caller's {caller:#x}"
    if isinstance(want, np.ndarray):  # products compared by bit pattern, NaNs included
        assert isinstance(got, np.ndarray)
        np.testing.assert_array_equal(got.view(want.dtype), want)
    else:
        assert got == want


@pytest.mark.parametrize("etype", ALL_TYPES, ids=lambda t: t.dtype.name)
def test_F_FLOAT_mul_restores_the_callers_environment_for_every_type_and_refusal(
    etype: ElementType, mxcsr: ctypes.CDLL
) -> None:
    """Through the public ``mul``: both overflow modes, strided and ``out=``
    calls, an overflow refused, and arguments refused before the glue."""
    x = np.arange(1, 9).astype(etype.dtype)
    big = np.full(8, 100).astype(etype.dtype)  # 100 * 100 overflows every 8-bit type
    out = np.empty(8, etype.dtype)
    calls: list[tuple[str, Callable[[], object], type[Exception] | None]] = [
        ("wrap", lambda: mul(x, x), None),
        ("checked", lambda: mul(x, x, overflow="error"), None),
        ("a broadcast (refused)", lambda: mul(x.reshape(8, 1), x.reshape(1, 8)), ShapeError),
        ("strided", lambda: mul(x[::2], x[1::2]), None),
        ("out", lambda: mul(x, x, out=out), None),
        ("shapes differ", lambda: mul(x, x[:3]), ShapeError),
        ("an unknown overflow mode", lambda: mul(x, x, overflow="saturate"), ArgumentError),
    ]
    if etype.bits == 8 and not etype.is_float:
        calls.append(("an overflow", lambda: mul(big, big, overflow="error"),
                      IntegerOverflowError))  # fmt: skip
    for caller in (MODES["default, status flags set"], FOREIGN):
        for name, call, error in calls:
            mxcsr.sonnx_test_set_mxcsr(caller)
            try:
                if error is None:
                    call()
                else:
                    with pytest.raises(error):
                        call()
                after = mxcsr.sonnx_test_get_mxcsr()
            finally:
                mxcsr.sonnx_test_set_mxcsr(DEFAULT)
            assert after == caller, f"{name}: MXCSR {after:#x} after mul, caller's {caller:#x}"


@pytest.mark.parametrize(
    ("mode", "rounding", "process"),
    [
        ("default", "to nearest, ties to even", "subnormals kept (FTZ and DAZ off)"),
        ("FTZ", "to nearest, ties to even", "subnormal results flushed to zero (FTZ)"),
        ("DAZ", "to nearest, ties to even", "subnormal operands read as zero (DAZ)"),
        ("round up", "upward", "subnormals kept (FTZ and DAZ off)"),
        ("round down", "downward", "subnormals kept (FTZ and DAZ off)"),
        ("round toward zero", "toward zero", "subnormals kept (FTZ and DAZ off)"),
    ],
)
def test_F_FLOAT_the_recorded_environment_says_the_process_mode_and_the_kernel_s_policy(
    mode: str, rounding: str, process: str, mxcsr: ctypes.CDLL
) -> None:
    """The test-run evidence's probe (evidence/environment.py) names the mode a
    caller set (the negative controls: each foreign mode is seen), and the
    kernel's denormal policy stays "kept" under every one of them."""
    from sonnx_mul_assurance.evidence import environment

    mxcsr.sonnx_test_set_mxcsr(MODES[mode])
    try:
        env = environment.probe()
    finally:
        mxcsr.sonnx_test_set_mxcsr(DEFAULT)
    assert env.rounding == rounding
    kernel = "kernel (sonnx_mul.mul): subnormals kept, never flushed"
    assert env.denormals == f"process: {process}; {kernel}"
    assert env.flt_eval_method == 0 and env.compiler == _native.COMPILER
