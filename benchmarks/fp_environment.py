"""The FP-environment check of `make bench` (issue 28).

For each float type, ``mul(a, b, out=out)`` on 10^6 random bit patterns
(every class at once: subnormals, ties, overflow, NaNs) under each x86
MXCSR setting another library may leave (FTZ, DAZ, each directed rounding):
whether the bits equal those under the default environment, and the time
against the default (medians of CPU time; the glue establishes the kernel's
environment around each call and restores the caller's).  numpy's multiply
of the same operands is the control: under FTZ/DAZ or another rounding it
gives other bits.

    python benchmarks/fp_environment.py [--quick]
"""

from __future__ import annotations

import argparse
import platform
import sys
from dataclasses import dataclass
from functools import partial

import kernel_cycles
import numpy as np
import value_classes
from sampling import median_cpu

from sonnx_mul import mul

DEFAULT = 0x1F80
FTZ, DAZ = 0x8000, 0x0040
MODES = {
    "FTZ+DAZ": DEFAULT | FTZ | DAZ,
    "round down": DEFAULT | 0x2000,
    "round up": DEFAULT | 0x4000,
    "round toward zero": DEFAULT | 0x6000,
}


@dataclass(frozen=True)
class Row:
    """One float type under one foreign MXCSR."""

    type: str
    mode: str
    identical: bool
    numpy_identical: bool
    time_ratio: float


def measure(quick: bool) -> list[Row]:
    if platform.machine() not in ("x86_64", "AMD64"):
        return []
    dll = kernel_cycles.build()
    dll.sonnx_bench_get_mxcsr.restype = kernel_cycles.ctypes.c_uint
    dll.sonnx_bench_set_mxcsr.argtypes = [kernel_cycles.ctypes.c_uint]
    rng = np.random.default_rng(20261127)
    repeats = 3 if quick else 11
    rows = []
    for name in value_classes.FLOAT_FORMATS:
        a, b = value_classes.float_classes(name, rng)["random bits"]
        uint = np.dtype(f"u{a.dtype.itemsize}")
        out = np.empty_like(a)
        mul(a, b, out=out)
        with np.errstate(all="ignore"):
            want, numpy_want = out.view(uint).copy(), np.multiply(a, b).view(uint)
        base = median_cpu(partial(mul, a, b, out=out), repeats)
        for mode, mxcsr in MODES.items():
            dll.sonnx_bench_set_mxcsr(mxcsr)
            try:
                mul(a, b, out=out)
                got = out.view(uint).copy()
                with np.errstate(all="ignore"):
                    numpy_got = np.multiply(a, b).view(uint)
                seconds = median_cpu(partial(mul, a, b, out=out), repeats)
            finally:
                dll.sonnx_bench_set_mxcsr(DEFAULT)
            rows.append(
                Row(
                    name,
                    mode,
                    bool(np.array_equal(got, want)),
                    bool(np.array_equal(numpy_got, numpy_want)),
                    seconds / base,
                )
            )
    return rows


def render(rows: list[Row]) -> list[str]:
    lines = [
        "| type | caller's MXCSR | mul bit-identical | numpy bit-identical | time x default |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        yes = {True: "yes", False: "**no**"}
        lines.append(
            f"| {r.type} | {r.mode} | {yes[r.identical]} | {'yes' if r.numpy_identical else 'no'} "
            f"| {r.time_ratio:.2f} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    rows = measure(args.quick)
    print("\n".join(render(rows)))
    return 0 if all(r.identical for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
