"""The bfloat16 product's loop against two designs that are not in the product (a design probe).

Builds ``bf16_loops.c`` (which includes the proved ``native/src/sonnx_mul_bf16.c``)
once per x86-64 build the CPU runs (portable, avx2, avx512: ``native/flags.mk``'s
rows and ``native/isa.toml``'s), then, per build:

- each design ("selects": the loop before the rounding by one multiplier;
  "shifts": the same algorithm as the proved loop written with shifts and
  bitwise operations) compared with the proved loop on all 2^32 operand
  pairs; any difference is reported (exit 1);
- the proved loop, the designs and a copy of the operand timed on 10^6
  elements of each value class of ``make bench``
  (``value_classes.float_classes``), in turn call by call, ``--reps`` rounds,
  medians of thread CPU time, and each loop's spread (slowest class over
  fastest).

Not part of ``make bench`` (docs/decisions/integer-bfloat16.md).

    python benchmarks/bf16_loops.py [--reps 21] [--no-pairs]
"""

from __future__ import annotations

import argparse
import ctypes
import platform
import statistics

import numpy as np
from probe_build import builds, compile_probe, supported
from value_classes import float_classes

LOOPS = ("proved", "selects", "shifts")  # bf16_loops.c's `which`


def differences(dll: ctypes.CDLL, which: int) -> int:
    """The operand pairs, of all 2^32, where design ``which`` differs from the proved loop."""
    dll.probe_all_pairs.restype = ctypes.c_longlong
    return int(dll.probe_all_pairs(which))


def interleaved(dll: ctypes.CDLL, a: np.ndarray, b: np.ndarray, reps: int) -> list[float]:
    """Each loop's median (and the copy's, last) in µs over ``reps`` rounds."""
    c = np.empty_like(a)
    out = np.zeros((reps, len(LOOPS) + 1), np.uint64)
    dll.probe_interleaved.argtypes = [ctypes.c_int, *[ctypes.c_void_p] * 3, ctypes.c_size_t,
                                      ctypes.c_size_t, ctypes.c_void_p]  # fmt: skip
    dll.probe_interleaved(
        len(LOOPS), a.ctypes.data, b.ctypes.data, c.ctypes.data, a.size, reps, out.ctypes.data,
    )  # fmt: skip
    return [statistics.median(out[:, k].tolist()) / 1000 for k in range(len(LOOPS) + 1)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=21)
    parser.add_argument("--no-pairs", action="store_true", help="skip the 2^32-pair comparison")
    args = parser.parse_args(argv)
    if platform.machine() != "x86_64":
        print("bf16_loops: x86-64 only (its builds are the x86-64 variants)")
        return 0
    rng = np.random.default_rng(20261207)
    timed = {
        label: (a.view(np.uint16), b.view(np.uint16))
        for label, (a, b) in float_classes("bfloat16", rng).items()
    }
    failed = False
    for name, cflags in builds().items():
        if not supported(name):
            print(f"\n{name}: the CPU lacks it")
            continue
        dll = compile_probe("bf16_loops", name, cflags, [])
        print(f"\n{name}")
        if not args.no_pairs:
            for which in (1, 2):
                bad = differences(dll, which)
                failed |= bad != 0
                print(f"  {LOOPS[which]}: differs from the proved loop on {bad} of 2^32 pairs")
        print(f"| class | {' | '.join(LOOPS)} | copy | {LOOPS[0]} / copy |  (µs, medians)")
        print("|---" * (len(LOOPS) + 3) + "|")
        medians: dict[str, list[float]] = {loop: [] for loop in LOOPS}
        for label, (a, b) in timed.items():
            row = interleaved(dll, a, b, args.reps)
            for loop, t in zip(LOOPS, row, strict=False):
                medians[loop].append(t)
            cells = " | ".join(f"{t:.0f}" for t in row)
            print(f"| {label} | {cells} | {row[0] / row[-1]:.2f} |")
        spreads = ", ".join(f"{loop} {max(m) / min(m):.2f}" for loop, m in medians.items())
        print(f"  spread (slowest class median / fastest): {spreads}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
