"""The kernel refuses to compile under any flag that changes float semantics.

``native/include/sonnx_mul_config.h`` reads what the compiler reveals
(``__FAST_MATH__``, ``__NO_SIGNED_ZEROS__``, ``__RECIPROCAL_MATH__``,
``__ASSOCIATIVE_MATH__``, ``__FINITE_MATH_ONLY__``, ``__GCC_IEC_559``): each
unsafe flag, appended after the pinned flags as a careless build would, must
stop the compile of every kernel source that does float arithmetic; the
pinned flags alone must not (the positive control). gcc reveals every flag
below; clang 14 reveals only those in ``UNSAFE_CLANG`` (-ffast-math and the
spellings that imply it, -ffinite-math-only): ``CLANG_SILENT`` pins what it
keeps to itself (docs/native-kernel.md says so), so that a clang that starts
revealing one is noticed and the guard's test grows.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sonnx_mul_assurance.c import flags

ROOT = Path(__file__).resolve().parents[2]
SOURCES = (
    "native/src/sonnx_mul_float.c",
    "native/src/sonnx_mul_int.c",
    "native/hw/sonnx_mul_f16c.c",
)
# flag(s) appended -> the flag the #error names.  (-Ofast after the pinned
# -fno-fast-math is plain -O3: gcc applies -O levels before -f flags; -Ofast
# alone is -ffast-math and is stopped as such.)
UNSAFE_GCC = {
    "-ffast-math": "-ffast-math",
    "-funsafe-math-optimizations": "-funsafe-math-optimizations",
    "-fno-signed-zeros": "-fno-signed-zeros",
    "-freciprocal-math": "-freciprocal-math",
    "-ffinite-math-only": "-ffinite-math-only",
    # -fassociative-math is ignored unless signed zeros and traps are given up too.
    "-fno-signed-zeros -fno-trapping-math -fassociative-math": "-fno-signed-zeros",
}
UNSAFE_CLANG = {
    "-ffast-math": "-ffast-math",
    "-ffp-model=fast": "-ffast-math",
    "-ffinite-math-only": "-ffinite-math-only",
}
CLANG_SILENT = (
    "-funsafe-math-optimizations",
    "-fno-signed-zeros",
    "-freciprocal-math",
    "-fno-honor-nans",
    "-fdenormal-fp-math=preserve-sign",
)
CLANG = pytest.param("clang", marks=pytest.mark.needs_prover)  # make toolchains installs it
COMPILERS = ["gcc", CLANG]
CASES = [("gcc", flag, named) for flag, named in UNSAFE_GCC.items()] + [
    pytest.param("clang", flag, named, marks=pytest.mark.needs_prover)
    for flag, named in UNSAFE_CLANG.items()
]


def _compile(
    cc: str, source: str, extra: list[str], pinned: bool = True
) -> subprocess.CompletedProcess[str]:
    rows = flags.table(ROOT)
    cflags = flags.cflags(ROOT, cc)  # this machine's, as every build takes them
    if not pinned:  # the target's row only, without the pinned float semantics
        semantics = {*rows["SONNX_CFLAGS"], *rows["SONNX_CFLAGS_GCC"], *rows["SONNX_CFLAGS_CLANG"]}
        cflags = ["-std=c99", "-O2", *(f for f in cflags if f not in semantics)]
    cflags += rows["SONNX_WARNFLAGS"]
    # a hardware loop's source: the first of its builds' flags (native/isa.toml)
    cflags += next(
        (
            list(v.loop_cflags(loop))
            for v, loop in flags.hardware_loops(ROOT)
            if loop.source == source
        ),
        [],
    )
    command = [cc, *cflags, *extra, "-I", str(ROOT / "native/include"), "-fsyntax-only"]
    return subprocess.run([*command, str(ROOT / source)], capture_output=True, text=True)


def _macros(*flag: str) -> str:
    return subprocess.run(
        ["clang", *flag, "-dM", "-E", "-x", "c", "-"],
        input="",
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.mark.parametrize("cc", COMPILERS)
@pytest.mark.parametrize("source", SOURCES)
def test_pinned_flags_compile(cc: str, source: str) -> None:
    proc = _compile(cc, source, [])
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize(("cc", "flag", "named"), CASES)
def test_each_unsafe_flag_stops_the_compile(cc: str, flag: str, named: str, source: str) -> None:
    proc = _compile(cc, source, flag.split())
    assert proc.returncode != 0
    assert "#error" in proc.stderr and "sonnx_mul must not be built with" in proc.stderr
    assert named in proc.stderr, proc.stderr


@pytest.mark.parametrize("cc", COMPILERS)
@pytest.mark.parametrize("source", SOURCES)
def test_ofast_instead_of_the_pinned_flags_stops_the_compile(cc: str, source: str) -> None:
    proc = _compile(cc, source, ["-Ofast"], pinned=False)
    assert proc.returncode != 0
    assert "sonnx_mul must not be built with -ffast-math or -Ofast" in proc.stderr, proc.stderr


@pytest.mark.needs_prover  # clang
@pytest.mark.parametrize("flag", CLANG_SILENT)
def test_what_clang_keeps_to_itself(flag: str) -> None:
    """clang 14 defines no macro for these: the guard cannot see them (documented)."""
    assert _macros(flag) == _macros()
