"""float64 by an exact product rounded once, on integers or on scaled operands (a design probe).

Builds ``f64_exact.c`` (which includes the generated ``native/src/sonnx_mul_float.c``)
once per x86-64 build the CPU runs (portable, avx2, avx512: ``native/flags.mk``'s
rows, plus ``-mfma`` where the CPU has it and ``-mavx512cd`` for avx512, which
the candidates need to vectorise), then, per build and candidate (integer,
scaled, dekker):

- the candidate's bits compared with the kernel's ``sonnx_mul_f64`` (the
  proved hardware loop, default environment) on every pair of the edge
  values and on random pairs of every comparison class (among them exact
  ties and near-ties at the subnormal rounding position); any difference is
  reported (exit 1);
- the candidate run again under flush-to-zero + denormals-are-zero and each
  directed rounding, bits compared with its default-environment result: the
  integer candidate must match under all four, the scaled ones under
  FTZ+DAZ (the evidence that no subnormal reaches the FPU; they assume the
  default rounding, which the glue establishes);
- every loop timed from C on 10^6 elements of each value class of ``make
  bench`` (``value_classes.float_classes``), min and median of ``--reps``,
  and each loop's spread (slowest class over fastest).

Not part of ``make bench``: it measures designs that are not in the product
(``docs/native-kernel.md``, "float64 whose time does not depend on the values").

    python benchmarks/f64_exact.py [--reps 21] [--random 1000000]
"""

from __future__ import annotations

import argparse
import ctypes
import platform

import numpy as np
from probe_build import (
    ENVIRONMENTS,
    REFERENCE,
    builds,
    class_table,
    compile_probe,
    environment_differences,
    run,
    supported,
)
from value_classes import float_classes

LOOPS = ("hardware", "integer", "scaled", "dekker")  # probe_run's `which`
CANDIDATES = (1, 2, 3)
FAULTS = {"integer": 1, "scaled": 2, "dekker": 3}  # PROBE_FAULT of each candidate's planted fault
# (exponent field ranges of a, of b): every class's operands and results by construction
CLASSES: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {
    "normal": ((1000, 1050), (1000, 1050)),
    "subnormal operands": ((0, 1), (1100, 2000)),
    "near underflow": ((486, 540), (486, 540)),  # results subnormal, tiny or just normal
    "overflow": ((1600, 2047), (1600, 2047)),
    "zeros": ((0, 1), (0, 1)),  # fractions zeroed below
    "infinities and NaN": ((2047, 2048), (900, 1100)),
    "random bits": ((0, 2048), (0, 2048)),
}
TIES = ("normal", "near underflow")  # also drawn with 26 fraction bits: many exact halves


def build(name: str, cflags: list[str], fault: int = 0) -> ctypes.CDLL:
    """The probe with ``cflags``; ``fault``: PROBE_FAULT (0 none)."""
    extra = ["-mfma"] if name != REFERENCE else []
    extra += ["-mavx512cd"] if "-mavx512f" in cflags else []  # the AVX-512 build
    dll = compile_probe("f64_exact", name, [*cflags, *extra], [f"-DPROBE_FAULT={fault}"])
    pointers = [ctypes.c_void_p] * 3
    dll.probe_run.restype = None
    dll.probe_run.argtypes = [ctypes.c_int, ctypes.c_int, *pointers, ctypes.c_size_t]
    dll.probe_time.restype = None
    dll.probe_time.argtypes = [ctypes.c_int, *pointers, ctypes.c_size_t, ctypes.c_size_t,
                               ctypes.c_void_p]  # fmt: skip
    return dll


def runs(name: str) -> bool:
    """This CPU runs build ``name`` (and has FMA for the non-portable ones)."""
    if not supported(name):
        return False
    return name == REFERENCE or "fma" in open("/proc/cpuinfo", encoding="utf-8").read().split()


def edge_pairs() -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of the edge patterns: exponent fields at the ends of
    the range, around the bias and around half of the underflow threshold,
    fractions at both ends, a half and an alternating pattern, both signs,
    the quiet and a signalling NaN."""
    exponents = (0, 1, 2, 26, 27, 52, 53, 54, 485, 486, 511, 512, 513, 537, 538,
                 1022, 1023, 1024, 1536, 2045, 2046, 2047)  # fmt: skip
    fractions = (0, 1, 2, (1 << 51) - 1, 1 << 51, (1 << 51) + 1, 0x5555555555555,
                 (1 << 52) - 2, (1 << 52) - 1)  # fmt: skip
    values = np.array(
        [f | e << 52 | sign << 63 for e in exponents for f in fractions for sign in (0, 1)],
        dtype=np.uint64,
    )
    a, b = np.meshgrid(values, values)
    return a.ravel().copy(), b.ravel().copy()


def class_pairs(
    rng: np.random.Generator, name: str, n: int, ties: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """n pairs of class ``name``: random fractions and signs, exponents in its
    ranges; ``ties``: only the top 26 fraction bits random (exact halves)."""

    def draw(lo: int, hi: int) -> np.ndarray:
        exponent = rng.integers(lo, hi, size=n, dtype=np.uint64)
        fraction = rng.integers(0, 1 << 52, size=n, dtype=np.uint64)
        if ties:
            fraction &= np.uint64(((1 << 26) - 1) << 26)
        if name == "zeros":
            fraction[:] = 0
        sign = rng.integers(0, 2, size=n, dtype=np.uint64)
        return (sign << np.uint64(63)) | (exponent << np.uint64(52)) | fraction

    (alo, ahi), (blo, bhi) = CLASSES[name]
    return draw(alo, ahi), draw(blo, bhi)


def all_classes(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    pairs = [class_pairs(rng, name, n) for name in CLASSES]
    pairs += [class_pairs(rng, name, n, ties=True) for name in TIES]
    return np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])


def differences(dll: ctypes.CDLL, which: int, a: np.ndarray, b: np.ndarray) -> int:
    """Pairs on which candidate ``which``'s bits are not the hardware loop's."""
    return int(np.count_nonzero(run(dll, 0, 0, a, b) != run(dll, which, 0, a, b)))


def required(which: int, env_counts: list[int]) -> bool:
    """The environment immunity a candidate claims: every environment for the
    integer one, FTZ+DAZ for the scaled ones (they assume the default rounding)."""
    return not any(env_counts) if which == 1 else env_counts[0] == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=21)
    parser.add_argument("--random", type=int, default=1_000_000, help="pairs per class compared")
    args = parser.parse_args(argv)
    if platform.machine() != "x86_64":
        print("f64_exact: x86-64 only (its builds are the x86-64 variants, MXCSR)")
        return 0
    rng = np.random.default_rng(20261202)
    edges = edge_pairs()
    compared = all_classes(rng, args.random)
    timed = {
        label: (a.view(np.uint64), b.view(np.uint64))
        for label, (a, b) in float_classes("float64", rng).items()
    }
    failed = False
    for name, cflags in builds().items():
        if not runs(name):
            print(f"\n{name}: the CPU lacks it")
            continue
        dll = build(name, cflags)
        print(f"\n{name}: {edges[0].size} edge pairs, {compared[0].size} class pairs")
        for which in CANDIDATES:
            edge_bad = differences(dll, which, *edges)
            random_bad = differences(dll, which, *compared)
            env_counts = environment_differences(dll, which, *compared)
            failed |= edge_bad != 0 or random_bad != 0 or not required(which, env_counts)
            print(f"  {LOOPS[which]}: bits differ from the hardware loop's on {edge_bad} edge "
                  f"and {random_bad} class pairs; under {', '.join(ENVIRONMENTS)}: "
                  f"{' / '.join(map(str, env_counts))} differ from its default")  # fmt: skip
        hardware_env = environment_differences(dll, 0, *compared)
        print(f"  hardware loop under the same environments: {' / '.join(map(str, hardware_env))}")
        class_table(dll, LOOPS, timed, args.reps)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
