"""The environment of a test run, probed: platform, compiler, floating-point mode.

The working group's tests-part1 asks each test run to record where it ran,
with which compiler, and in which floating-point mode, the denormal policy
included. :func:`probe` answers from the process that runs the tests: the
platform, the native extension it imports (its compiler and pinned flags,
the ISA variant in use), the rounding mode and the handling of subnormals
of the process (binary64 and binary32 arithmetic of numpy, which runs in the
process's floating-point environment), and the kernel's own policy, shown
through ``sonnx_mul.mul`` on subnormal operands and results.
``tests/conftest.py`` writes it into the suite's JUnit XML
(:func:`junit_properties`); ``run.json`` and ``coverage.json`` copy it.
"""

from __future__ import annotations

import platform
from dataclasses import asdict

import numpy as np

from sonnx_mul_assurance.evidence import schema

KERNEL_FP_MODE = (
    "established by the glue around every call (native/include/sonnx_mul_fpenv.h): "
    "on x86 MXCSR 0x1F80 (round to nearest even, every exception masked, FTZ and DAZ "
    "clear), elsewhere C99 FE_DFL_ENV; the caller's environment restored after the call"
)


def _rounding() -> str:
    """The process's binary64 rounding mode, from four sums whose results differ
    between the four IEEE modes."""
    one, tiny = np.float64(1.0), np.float64(2.0**-60)
    up = one + tiny > one
    down = -one - tiny < -one
    if not up and not down:
        tie = np.float64(1.0) + np.float64(2.0**-53) * np.float64(3.0)  # 1 + 1.5 ulp
        nearest = tie == np.float64(1.0) + np.float64(2.0**-51)
        return "to nearest, ties to even" if nearest else "toward zero"
    return "upward" if up else "downward"


def _bits(x: np.ndarray) -> list[int]:
    # compared as bit patterns: under DAZ a comparison reads a subnormal as zero
    return [int(v) for v in x.view(np.uint32).tolist()]


def _denormals() -> str:
    """The process's subnormal handling (FTZ: results flushed, DAZ: operands read
    as zero) and the kernel's, each shown on binary32 products."""
    normal = np.array([2.0**-126], np.float32)  # the smallest normal
    subnormal = np.array([1], np.uint32).view(np.float32)  # the smallest subnormal
    process = []
    if _bits(normal * np.float32(0.5)) == [0]:
        process.append("subnormal results flushed to zero (FTZ)")
    if _bits(subnormal * np.float32(2.0**30)) == [0]:  # a normal result: FTZ keeps it
        process.append("subnormal operands read as zero (DAZ)")
    process_policy = "; ".join(process) or "subnormals kept (FTZ and DAZ off)"
    from sonnx_mul import mul

    a = np.concatenate([normal, subnormal])
    b = np.array([0.5, 2.0], np.float32)
    kept = _bits(mul(a, b)) == [0x00400000, 0x00000002]
    kernel = "subnormals kept, never flushed" if kept else "subnormals FLUSHED (not IEEE)"
    return f"process: {process_policy}; kernel (sonnx_mul.mul): {kernel}"


def probe() -> schema.TestEnvironment:
    """The environment of this process (it imports the native extension)."""
    from sonnx_mul import _native

    return schema.TestEnvironment(
        platform=platform.platform(),
        machine=platform.machine(),
        python=platform.python_version(),
        numpy=np.__version__,
        isa=str(_native.isa()),
        isas=" ".join(str(i) for i in _native.isas()),
        compiler=str(_native.COMPILER),
        build_flags=str(_native.BUILD_FLAGS),
        flt_eval_method=int(_native.FLT_EVAL_METHOD),
        kernel_fp_mode=KERNEL_FP_MODE,
        rounding=_rounding(),
        denormals=_denormals(),
    )


def junit_properties(env: schema.TestEnvironment) -> list[tuple[str, str]]:
    """The JUnit testsuite properties of ``env`` (read back by ``schema.junit_environment``)."""
    return [(f"{schema.ENVIRONMENT_PREFIX}{k}", str(v)) for k, v in asdict(env).items()]
