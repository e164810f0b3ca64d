"""The kernel refuses to compile under any flag that changes float semantics.

``native/include/sonnx_mul_config.h`` reads what the compiler reveals
(``__FAST_MATH__``, ``__NO_SIGNED_ZEROS__``, ``__RECIPROCAL_MATH__``,
``__ASSOCIATIVE_MATH__``, ``__FINITE_MATH_ONLY__``, ``__GCC_IEC_559``): each
unsafe flag, appended after the pinned flags as a careless build would, must
stop the compile of every kernel source that does float arithmetic; the
pinned flags alone must not (the positive control).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from sonnx_mul_assurance.c import native_exhaustive

ROOT = Path(__file__).resolve().parents[2]
SOURCES = (
    "native/src/sonnx_mul_float.c",
    "native/src/sonnx_mul_int.c",
    "native/hw/sonnx_mul_f16c.c",
)
# (-Ofast after the pinned -fno-fast-math is plain -O3: gcc applies -O levels
# before -f flags; -Ofast alone is -ffast-math and is stopped as such.)
UNSAFE = {
    "-ffast-math": "-ffast-math",
    "-funsafe-math-optimizations": "-funsafe-math-optimizations",
    "-fno-signed-zeros": "-fno-signed-zeros",
    "-freciprocal-math": "-freciprocal-math",
    "-ffinite-math-only": "-ffinite-math-only",
    # -fassociative-math is ignored unless signed zeros and traps are given up too.
    "-fno-signed-zeros -fno-trapping-math -fassociative-math": "-fno-signed-zeros",
}

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")


def _compile(
    source: str, extra: list[str], pinned: bool = True
) -> subprocess.CompletedProcess[str]:
    flags = native_exhaustive.read_flags(ROOT / "native/flags.mk")
    cflags = native_exhaustive.compile_flags(ROOT)  # this machine's, as every build takes them
    if not pinned:  # the same without the pinned float semantics
        cflags = ["-std=c99", "-O2", *(f for f in cflags if f not in flags["SONNX_CFLAGS"])]
    cflags += flags["SONNX_WARNFLAGS"]
    if source.endswith("f16c.c"):
        cflags += flags["SONNX_CFLAGS_F16C"]
    command = ["gcc", *cflags, *extra, "-I", str(ROOT / "native/include"), "-fsyntax-only"]
    return subprocess.run([*command, str(ROOT / source)], capture_output=True, text=True)


@pytest.mark.parametrize("source", SOURCES)
def test_pinned_flags_compile(source: str) -> None:
    proc = _compile(source, [])
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("flag", sorted(UNSAFE))
def test_each_unsafe_flag_stops_the_compile(source: str, flag: str) -> None:
    proc = _compile(source, flag.split())
    assert proc.returncode != 0
    assert "#error" in proc.stderr and "sonnx_mul must not be built with" in proc.stderr
    assert UNSAFE[flag] in proc.stderr, proc.stderr


@pytest.mark.parametrize("source", SOURCES)
def test_ofast_instead_of_the_pinned_flags_stops_the_compile(source: str) -> None:
    proc = _compile(source, ["-Ofast"], pinned=False)
    assert proc.returncode != 0
    assert "sonnx_mul must not be built with -ffast-math or -Ofast" in proc.stderr, proc.stderr
