"""int64's checked scan: the proved test against the binary64 candidate (a design probe).

Builds ``int64_scan.c`` (which includes the generated ``native/src/sonnx_mul_int.c``)
once per x86-64 build the CPU runs (portable, avx2, avx512: ``native/flags.mk``'s
rows), then, per build:

- the two tests' verdicts compared on every pair of the edge values (0, 1,
  2^31, 2^32, floor(sqrt(2^63)), 2^62, 2^63 - 1 and the extremes, each +-2,
  both signs) and on random pairs of random magnitudes; any disagreement is
  reported (exit 1);
- one pass over 10^6 elements timed from C, min and median of ``--reps``:
  the reading floor (both operands read), the proved scan, the binary64
  scan, the wrap pass. ``checked / wrap`` is what checked mode would cost
  against wrap mode with each scan (scan + wrap over wrap).

Not part of ``make bench``: it measures a design that is not in the product
(``docs/native-kernel.md``, "int64's checked scan by a binary64 test").

    python benchmarks/int64_scan.py [--reps 41] [--random 10000000]
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "bench"
N = 1_000_000
PASSES = ("reading floor", "proved scan", "binary64 scan", "wrap pass")


VARIANTS = ("avx2", "avx512")


@functools.cache
def _rows() -> dict[str, list[str]]:
    sys.path.insert(0, str(ROOT / "native"))
    import flags  # native/flags.py: the one source of the compile flags

    return {**flags.table(), "portable": flags.cflags("gcc")}


def builds() -> dict[str, list[str]]:
    """The flags of each x86-64 build: the portable row, and it plus each variant's row."""
    rows = _rows()
    base = rows["portable"]
    return {"portable": base} | {v: [*base, *rows[f"SONNX_CFLAGS_{v.upper()}"]] for v in VARIANTS}


def supported(build: str) -> bool:
    """True when this CPU has the features flags.mk's SONNX_CPU_<build> row names."""
    if build == "portable":
        return True
    cpu = Path("/proc/cpuinfo").read_text(encoding="utf-8").split()
    return all(feature in cpu for feature in _rows()[f"SONNX_CPU_{build.upper()}"])


def build(name: str, cflags: list[str], planted: str = "") -> ctypes.CDLL:
    """The probe with ``cflags``; ``planted`` a PROBE_GAP_LIMIT other than 2^20 (a fault)."""
    BUILD.mkdir(parents=True, exist_ok=True)
    # a name per build and fault (a process loads a path once), written whole
    # under a temporary name first (another test worker may load it)
    lib = BUILD / f"libint64_scan_{name}{'_gap_' + planted if planted else ''}.so"
    fault = [f"-DPROBE_GAP_LIMIT={planted}"] if planted else []
    with tempfile.TemporaryDirectory(dir=BUILD) as scratch:
        built = Path(scratch) / lib.name
        argv = [
            "gcc", *cflags, *fault, "-fPIC", "-shared", f"-I{ROOT / 'native/include'}",
            f"-I{ROOT / 'native/src'}", str(ROOT / "benchmarks/int64_scan.c"), "-o", str(built),
        ]  # fmt: skip
        subprocess.run(argv, check=True)
        os.replace(built, lib)
    dll = ctypes.CDLL(str(lib))
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


def times(dll: ctypes.CDLL, which: int, a: np.ndarray, b: np.ndarray, reps: int) -> list[float]:
    """Microseconds of ``reps`` passes (the first, cold, dropped)."""
    c = np.empty_like(a)
    out = np.zeros(reps + 1, np.uint64)
    dll.probe_time(which, a.ctypes.data, b.ctypes.data, c.ctypes.data, a.size, reps + 1,
                   out.ctypes.data)  # fmt: skip
    return [t / 1000 for t in out[1:].tolist()]


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
          + " | ".join(f"{p} us min / median" for p in PASSES) + " | checked / wrap, proved "
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
        proved, binary64, wrap = mins[1], mins[2], mins[3]
        print(
            f"| {name} | {edge_bad} of {edges[0].size} | {random_bad} of {args.random} | {cells} "
            f"| {(proved + wrap) / wrap:.2f} | {(binary64 + wrap) / wrap:.2f} |"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
