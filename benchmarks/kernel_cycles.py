"""Cycles per element of the C kernel alone (issue 28: the figure a WCET
analysis starts from).

The proved sources (``native/src``) are compiled with ``native/flags.py``'s
flags for the host compiler (the portable build: no ISA variant, no
hardware loop) together with ``kernel_cycles.c``, which times each kernel
call from C. For every type and value class of ``value_classes.py`` (both
overflow modes for integers) at 4096 elements (operands in the cache) and
at 10^6: the median over the calls of the time-stamp counter's ticks per
element (x86-64: reference cycles at the TSC's nominal rate, not the core's
clock) and of nanoseconds per element, and per type the worst class.

    python benchmarks/kernel_cycles.py [--quick]
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import value_classes

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "bench"
KINDS = {
    name: kind
    for kind, name in enumerate(
        ("float16", "bfloat16", "float32", "float64", *value_classes.INT_TYPES)
    )
}
SIZES = (4096, value_classes.N)


@functools.cache
def build(cc: str = "gcc") -> ctypes.CDLL:
    """The kernel and the timer as one shared library, with the kernel's flags
    (compiled once per process: the cycles, the FP-environment check and the
    report all use it)."""
    sys.path.insert(0, str(ROOT / "native"))
    import flags  # native/flags.py: the one source of the compile flags

    BUILD.mkdir(parents=True, exist_ok=True)
    lib = BUILD / "libsonnx_mul_cycles.so"
    sources = [*sorted((ROOT / "native/src").glob("*.c")), ROOT / "benchmarks/kernel_cycles.c"]
    argv = [cc, *flags.cflags(cc), "-fPIC", "-shared", f"-I{ROOT / 'native/include'}"]
    # written whole under a temporary name first: another test worker may load it
    with tempfile.TemporaryDirectory(dir=BUILD) as scratch:
        built = Path(scratch) / lib.name
        subprocess.run([*argv, *map(str, sources), "-o", str(built)], check=True)
        os.replace(built, lib)
    dll = ctypes.CDLL(str(lib))
    dll.sonnx_bench_run.restype = ctypes.c_int
    dll.sonnx_bench_run.argtypes = [
        ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
        ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
    ]  # fmt: skip
    return dll


@dataclass(frozen=True)
class Row:
    """One (type, class, size): median ticks and nanoseconds per element."""

    type: str
    klass: str
    n: int
    ticks: float
    ns: float


def _bits_view(x: np.ndarray) -> np.ndarray:
    """The operands the kernel takes: float16/bfloat16 as their uint16 patterns."""
    return x.view(np.uint16) if x.dtype.itemsize == 2 and x.dtype.kind != "i" else x


def time_class(
    dll: ctypes.CDLL,
    type_name: str,
    a: np.ndarray,
    b: np.ndarray,
    checked: bool,
    reps: int,
    c: np.ndarray | None = None,
) -> tuple[float, float]:
    """Median TSC ticks and ns per element of ``reps`` kernel calls into ``c``
    (a scratch array when None; the kernel's result is left there)."""
    a, b = np.ascontiguousarray(_bits_view(a)), np.ascontiguousarray(_bits_view(b))
    c = np.empty_like(a) if c is None else _bits_view(c)
    ns = np.zeros(reps, np.uint64)
    tsc = np.zeros(reps, np.uint64)
    status = dll.sonnx_bench_run(
        KINDS[type_name], int(checked), a.ctypes.data, b.ctypes.data, c.ctypes.data,
        a.size, reps, ns.ctypes.data, tsc.ctypes.data,
    )  # fmt: skip
    if status != 0:
        raise RuntimeError(f"kernel_cycles.c does not know {type_name}")
    return statistics.median(tsc.tolist()) / a.size, statistics.median(ns.tolist()) / a.size


def measure(quick: bool) -> list[Row]:
    dll = build()
    classes = value_classes.cases(np.random.default_rng(20261127))
    rows = []
    for n in SIZES:
        reps = (11 if quick else 31) if n > 4096 else (101 if quick else 1001)
        for type_name, klass, a, b, mode in classes:
            ticks, ns = time_class(dll, type_name, a[:n], b[:n], mode == "error", reps)
            rows.append(Row(type_name, klass, n, ticks, ns))
    return rows


def render(rows: list[Row], has_tsc: bool) -> list[str]:
    """Per type and size: the worst class's ticks and ns per element, and the best."""
    unit = "TSC ticks" if has_tsc else "(no TSC)"
    lines = [
        f"| type | n | worst class | {unit}/elem | ns/elem | best {unit}/elem | worst / best |",
        "|---|---|---|---|---|---|---|",
    ]
    for type_name in KINDS:
        for n in SIZES:
            mine = [r for r in rows if r.type == type_name and r.n == n]
            worst = max(mine, key=lambda r: r.ns)
            best = min(mine, key=lambda r: r.ns)
            lines.append(
                f"| {type_name} | {n} | {worst.klass} | {worst.ticks:.2f} | {worst.ns:.3f} "
                f"| {best.ticks:.2f} | {worst.ns / best.ns:.2f} |"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    rows = measure(args.quick)
    print("\n".join(render(rows, bool(build().sonnx_bench_has_tsc()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
