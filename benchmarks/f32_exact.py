"""float32 by an exact binary64 product rounded on the bits (a design probe).

Builds ``f32_exact.c`` (which includes the generated ``native/src/sonnx_mul_float.c``)
once per x86-64 build the CPU runs (the ISA variants of ``native/isa.toml``, ``native/flags.mk``'s
rows), then, per build:

- the candidate's bits compared with the kernel's ``sonnx_mul_f32`` (the
  proved hardware loop, default environment) on every pair of the edge
  values and on random pairs of every value class; any difference is
  reported (exit 1);
- the candidate run again under flush-to-zero + denormals-are-zero and each
  directed rounding, bits compared with its default-environment result
  (exit 1 when one differs; the hardware loop's own differences are shown);
- the kernel's loop taken apart: loop 2 is it without the NaN rule, loop 3
  the binary32 product ``a * b`` other runtimes run; both must give the
  kernel's bits on every product that is not a NaN (exit 1 otherwise);
- the four loops timed from C on 10^6 elements of each value class, min and
  median of ``--reps``, each over the kernel's, and each loop's spread
  (slowest class over fastest): what the NaN rule and the widening cost.

Not part of ``make bench``: it measures a design that is not in the product
(``docs/lab/native-kernel-timings.md``, the paragraph "A float32 loop whose time does
not depend on the values").

    python benchmarks/f32_exact.py [--reps 31] [--random 1000000]
"""

from __future__ import annotations

import argparse
import ctypes
import platform

import numpy as np
from probe_build import (
    ENVIRONMENTS,
    builds,
    class_table,
    compile_probe,
    environment_differences,
    run,
    supported,
)

N = 1_000_000
LOOPS = ("hardware", "exact", "no NaN rule", "binary32")
# (exponent field ranges of a, of b): every class's operands and results by construction
CLASSES: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {
    "normal": ((120, 135), (120, 135)),
    "subnormal operands": ((0, 1), (150, 200)),
    "subnormal results": ((40, 60), (40, 60)),
    "overflow": ((200, 250), (200, 250)),
    "zeros": ((0, 1), (0, 1)),  # mantissas zeroed below
    "infinities and NaN": ((255, 256), (100, 140)),
    "random bits": ((0, 256), (0, 256)),
}


def build(
    name: str, cflags: list[str], planted: bool = False, part_fault: bool = False
) -> ctypes.CDLL:
    """The probe with ``cflags``; planted faults: ``planted``, every tie of the
    exact loop rounded down; ``part_fault``, loop 2 squaring its first operand."""
    defines = (["-DPROBE_TIE_LSB=0"] if planted else []) + (
        ["-DPROBE_PART_B=a"] if part_fault else []
    )
    dll = compile_probe("f32_exact", name, cflags, defines)
    pointers = [ctypes.c_void_p] * 3
    dll.probe_run.restype = None
    dll.probe_run.argtypes = [ctypes.c_int, ctypes.c_int, *pointers, ctypes.c_size_t]
    dll.probe_time.restype = None
    dll.probe_time.argtypes = [ctypes.c_int, *pointers, ctypes.c_size_t, ctypes.c_size_t,
                               ctypes.c_void_p]  # fmt: skip
    return dll


def edge_pairs() -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of the edge patterns: exponent fields at the ends of
    each range and around the bias, significands at both ends, a half and an
    alternating pattern, both signs, the quiet and a signalling NaN."""
    exponents = (0, 1, 2, 23, 24, 25, 26, 50, 100, 126, 127, 128, 150, 200, 253, 254, 255)
    significands = (0, 1, 2, 0x3FFFFF, 0x400000, 0x400001, 0x555555, 0x7FFFFE, 0x7FFFFF)
    values = np.array(
        [s | e << 23 | sign << 31 for e in exponents for s in significands for sign in (0, 1)],
        dtype=np.uint32,
    )
    a, b = np.meshgrid(values, values)
    return a.ravel().copy(), b.ravel().copy()


def class_pairs(rng: np.random.Generator, name: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n pairs of class ``name``: random significands and signs, exponents in its ranges."""

    def draw(lo: int, hi: int) -> np.ndarray:
        exponent = rng.integers(lo, hi, size=n, dtype=np.uint32)
        significand = rng.integers(0, 1 << 23, size=n, dtype=np.uint32)
        if name == "zeros":
            significand[:] = 0
        sign = rng.integers(0, 2, size=n, dtype=np.uint32)
        return (sign << 31) | (exponent << 23) | significand

    (alo, ahi), (blo, bhi) = CLASSES[name]
    return draw(alo, ahi), draw(blo, bhi)


def differences(dll: ctypes.CDLL, a: np.ndarray, b: np.ndarray) -> int:
    """Pairs on which the candidate's bits are not the hardware loop's."""
    return int(np.count_nonzero(run(dll, 0, 0, a, b) != run(dll, 1, 0, a, b)))


def non_nan_differences(dll: ctypes.CDLL, which: int, a: np.ndarray, b: np.ndarray) -> int:
    """Pairs whose product is not a NaN on which loop ``which`` differs from the kernel's."""
    kernel = run(dll, 0, 0, a, b)
    number = (kernel & 0x7FFFFFFF) <= 0x7F800000
    return int(np.count_nonzero((run(dll, which, 0, a, b) != kernel) & number))


def all_classes(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    pairs = [class_pairs(rng, name, n) for name in CLASSES]
    return np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=31)
    parser.add_argument("--random", type=int, default=1_000_000, help="pairs per class compared")
    args = parser.parse_args(argv)
    if platform.machine() != "x86_64":
        print("f32_exact: x86-64 only (its builds are the x86-64 variants, MXCSR)")
        return 0
    rng = np.random.default_rng(20261202)
    edges = edge_pairs()
    compared = all_classes(rng, args.random)
    timed = {name: class_pairs(rng, name, N) for name in CLASSES}
    failed = False
    for name, cflags in builds().items():
        if not supported(name):
            print(f"\n{name}: the CPU lacks it")
            continue
        dll = build(name, cflags)
        edge_bad = differences(dll, *edges)
        random_bad = differences(dll, *compared)
        env_exact = environment_differences(dll, 1, *compared)
        env_hardware = environment_differences(dll, 0, *compared)
        parts_bad = [non_nan_differences(dll, which, *compared) for which in (2, 3)]
        failed |= edge_bad != 0 or random_bad != 0 or any(env_exact) or any(parts_bad)
        print(f"\n{name}: bits differ from the hardware loop's on {edge_bad} of {edges[0].size} "
              f"edge pairs and {random_bad} of {compared[0].size} class pairs")  # fmt: skip
        print(f"  products that are not a NaN: {LOOPS[2]} differs on {parts_bad[0]}, "
              f"{LOOPS[3]} on {parts_bad[1]} of {compared[0].size} class pairs")  # fmt: skip
        exact_cells, hardware_cells = (" / ".join(map(str, e)) for e in (env_exact, env_hardware))
        print(f"  foreign environment ({', '.join(ENVIRONMENTS)}): exact {exact_cells} pairs "
              f"differ from its default; hardware {hardware_cells}")  # fmt: skip
        class_table(dll, LOOPS, timed, args.reps)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
