"""int64's two checked scans compared and timed: the halves test and the binary64 test.

Builds ``int64_scan.c`` (which includes the generated ``native/src/sonnx_mul_int.c``)
once per x86-64 build the CPU runs (the ISA variants of ``native/isa.toml``, ``native/flags.mk``'s
rows), then, per build:

- the two tests' verdicts compared on every pair of the edge values (0, 1,
  2^31, 2^32, floor(sqrt(2^63)), 2^62, 2^63 - 1 and the extremes, each +-2,
  both signs) and on random pairs of random magnitudes; any disagreement is
  reported (exit 1);
- one pass over 10^6 elements timed from C, min and median of ``--reps``:
  the reading floor (both operands read), the halves scan, the binary64
  scan, the wrap pass. ``checked / wrap`` is what checked mode costs
  against wrap mode with each scan (scan + wrap over wrap).

Both scans are the product's (the generated unit, proved by WP); the avx512
build runs the binary64 one, every other build the halves one.  Not part of
``make bench``, which times checked mode through ``mul`` (``docs/native-kernel.md``,
"int64's checked scan by a binary64 test").

    python benchmarks/int64_scan.py [--reps 41] [--random 10000000]
"""

from __future__ import annotations

import argparse
import ctypes
import platform
import statistics
import sys

import numpy as np
from probe_build import ROOT, builds, compile_probe, supported, times

sys.path.insert(0, str(ROOT / "native"))
import int64_binary64  # native/int64_binary64.py: the binary64 test's limit

N = 1_000_000
PASSES = ("reading floor", "halves scan", "binary64 scan", "wrap pass")


def build(name: str, cflags: list[str], planted: str = "") -> ctypes.CDLL:
    """The probe with ``cflags``; ``planted``: a limit of the binary64 test
    other than 2^20, in a copy of the generated unit (a fault)."""
    patch: tuple[str, str] | None = None
    if planted:
        unit = (ROOT / "native/src/sonnx_mul_int.c").read_text(encoding="utf-8")
        old = f"(size >= {int64_binary64.GAP_LIMIT}.0)"
        assert unit.count(old) == 1, "the binary64 test's limit is not where the fault goes"
        patch = ("sonnx_mul_int.c", unit.replace(old, f"(size >= {planted})"))
    dll = compile_probe("int64_scan", name, cflags, [], patch)
    dll.probe_disagreements.restype = ctypes.c_size_t
    dll.probe_disagreements.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    dll.probe_time.restype = ctypes.c_uint64
    dll.probe_time.argtypes = [
        ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
        ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p,
    ]  # fmt: skip
    return dll


def edge_pairs() -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of the edge values (each +-2, both signs, the extremes)."""
    centres = [0, 1, 2**31, 2**32, 3037000499, 2**62, 2**63 - 1]
    values = {c + d for c in centres for d in range(-2, 3)} | {-(2**63), -(2**63) + 1}
    values |= {-v for v in values}
    kept = np.array(sorted(v for v in values if -(2**63) <= v < 2**63), dtype=np.int64)
    a, b = np.meshgrid(kept, kept)
    return a.ravel().copy(), b.ravel().copy()


def random_pairs(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Random bits shifted right by a random amount, random signs: every magnitude."""

    def draw() -> np.ndarray:
        bits = rng.integers(0, 2**63, size=n, dtype=np.int64)
        magnitude = bits >> rng.integers(0, 63, size=n, dtype=np.int64)
        return np.where(rng.integers(0, 2, size=n) == 1, -magnitude, magnitude)

    return draw(), draw()


def disagreements(dll: ctypes.CDLL, a: np.ndarray, b: np.ndarray) -> int:
    return int(dll.probe_disagreements(a.ctypes.data, b.ctypes.data, a.size))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=41)
    parser.add_argument("--random", type=int, default=10_000_000)
    args = parser.parse_args(argv)
    if platform.machine() != "x86_64":
        print("int64_scan: x86-64 only (its builds are the x86-64 variants)")
        return 0
    rng = np.random.default_rng(20261201)
    edges = edge_pairs()
    randoms = random_pairs(rng, args.random)
    # operands that never overflow (|x|, |y| < 2^31), so that no scan stops early
    timed = tuple(rng.integers(-(2**31) + 1, 2**31, size=N, dtype=np.int64) for _ in range(2))
    failed = False
    print("| build | edge pairs differ | random pairs differ | "
          + " | ".join(f"{p} us min / median" for p in PASSES) + " | checked / wrap, halves "
          "| checked / wrap, binary64 |")  # fmt: skip
    print("|---" * (5 + len(PASSES)) + "|")
    for name, cflags in builds().items():
        if not supported(name):
            print(f"| {name} | (CPU lacks it) |")
            continue
        dll = build(name, cflags)
        edge_bad = disagreements(dll, *edges)
        random_bad = disagreements(dll, *randoms)
        failed |= edge_bad != 0 or random_bad != 0
        runs = [times(dll, which, *timed, args.reps) for which in range(len(PASSES))]
        mins = [min(r) for r in runs]
        cells = " | ".join(f"{min(r):.0f} / {statistics.median(r):.0f}" for r in runs)
        halves, binary64, wrap = mins[1], mins[2], mins[3]
        print(
            f"| {name} | {edge_bad} of {edges[0].size} | {random_bad} of {args.random} | {cells} "
            f"| {(halves + wrap) / wrap:.2f} | {(binary64 + wrap) / wrap:.2f} |"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
