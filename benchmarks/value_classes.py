"""Time by value class (issue 28): does a product's time depend on the values?

For each element type, operands of one value class at a time (normal,
zeros, subnormal operands, subnormal results, overflow to infinity,
infinities and the canonical NaN, NaNs of every payload (quiet and
signalling, both signs), random bit patterns; integers: random, small, zeros,
and checked mode on small, large, negative and boundary values without
overflow), ``mul(a, b, out=out)`` at 10^6 elements against ``np.copyto`` of
the same array, interleaved in one run, medians of this process's CPU time.
The issue's targets: every class within 1.25x of the type's fastest,
checked mode within 2x of wrap, the slowest class within 2x of the copy.

    python benchmarks/value_classes.py [--quick] [--type int64 ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import ml_dtypes
import numpy as np
from sampling import Case, sample

from sonnx_mul import mul

N = 1_000_000
Job = tuple[str, str, np.ndarray, np.ndarray, str]
"""(type, value class, a, b, overflow mode)."""
REPEATS, QUICK_REPEATS = 21, 3  # samples of each class (rounds)
TARGET_SECONDS = 0.02  # of calls per sample
FLOAT_FORMATS = {  # dtype name -> (dtype, exponent bits, fraction bits)
    "float16": (np.dtype(np.float16), 5, 10),
    "bfloat16": (np.dtype(ml_dtypes.bfloat16), 8, 7),
    "float32": (np.dtype(np.float32), 8, 23),
    "float64": (np.dtype(np.float64), 11, 52),
}
INT_TYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")


def _zeros(dtype: np.dtype | str) -> np.ndarray:
    """N zeros in memory that was written: ``np.zeros`` returns fresh pages
    never touched (calloc), which the OS maps to one shared zero page, so a
    loop reading them reads one 4 KiB page from the cache instead of the
    array from memory, and the "zeros" class would time the page mapping
    (10-35% faster at 10^6 elements), not the values."""
    zeros = np.empty(N, dtype)
    zeros.fill(0)
    return zeros


def _bits(
    dtype: np.dtype, exponent: np.ndarray, fraction: np.ndarray, eb: int, fb: int
) -> np.ndarray:
    uint = np.dtype(f"u{dtype.itemsize}")
    word = (exponent.astype(np.uint64) << np.uint64(fb)) | fraction.astype(np.uint64)
    return word.astype(uint).view(dtype)


def float_classes(name: str, rng: np.random.Generator) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(a, b) of each value class for a float format, N elements each."""
    dtype, eb, fb = FLOAT_FORMATS[name]
    bias = (1 << (eb - 1)) - 1
    frac = rng.integers(0, 1 << fb, N, dtype=np.uint64)
    near_one = np.full(N, bias, np.uint64)
    tiny_exp = np.full(N, 1, np.uint64)  # the least normal binade
    big_exp = np.full(N, (1 << eb) - 2, np.uint64)
    uint = np.dtype(f"u{dtype.itemsize}")
    random_bits = rng.integers(0, np.iinfo(uint).max, N, dtype=uint, endpoint=True).view(dtype)
    special = np.array([np.inf, -np.inf, np.nan, 0.0], dtype=np.float64).astype(dtype)
    # every NaN the format has, not only the canonical one: random payloads,
    # quiet and signalling (the fraction's top bit), both signs
    signed_all_ones = ((1 << eb) - 1) + (rng.integers(0, 2, N, dtype=np.uint64) << np.uint64(eb))
    return {
        "normal": (
            _bits(dtype, near_one, frac, eb, fb),
            _bits(dtype, near_one, frac[::-1], eb, fb),
        ),
        "zeros": (_zeros(dtype), _bits(dtype, near_one, frac, eb, fb)),
        "subnormal operands": (
            _bits(dtype, np.zeros(N, np.uint64), frac | 1, eb, fb),
            _bits(dtype, near_one, frac, eb, fb),
        ),
        "subnormal results": (
            _bits(dtype, tiny_exp, frac, eb, fb),
            _bits(dtype, near_one - 3, frac, eb, fb),
        ),
        "overflow": (
            _bits(dtype, big_exp, frac, eb, fb),
            _bits(dtype, big_exp, frac[::-1], eb, fb),
        ),
        "inf and NaN": (np.resize(special, N), np.resize(special[::-1], N)),
        "NaN payloads": (
            _bits(dtype, signed_all_ones, frac | 1, eb, fb),
            _bits(dtype, near_one, frac, eb, fb),
        ),
        "random bits": (random_bits, random_bits[::-1].copy()),
    }


def int_classes(
    name: str, rng: np.random.Generator
) -> dict[str, tuple[np.ndarray, np.ndarray, str]]:
    """(a, b, overflow mode) of each integer value class, none of the checked ones overflowing."""
    info = np.iinfo(name)
    root = int(np.sqrt(float(info.max)))
    lo = 0 if info.min == 0 else -root
    rand = rng.integers(info.min, info.max, N, dtype=name, endpoint=True)
    small = rng.integers(max(info.min, -8), 8, N, dtype=name, endpoint=True)
    large = rng.integers(root // 2, root, N, dtype=name, endpoint=True)
    negative = -large if info.min < 0 else large[::-1].copy()
    boundary = np.resize(np.array([info.max, info.min, 1, 0], dtype=name), N)
    ones = np.resize(np.array([1, 1, 1, 5], dtype=name), N)
    del lo
    return {
        "random (wrap)": (rand, rand[::-1].copy(), "wrap"),
        "small (wrap)": (small, small[::-1].copy(), "wrap"),
        "zeros (wrap)": (_zeros(name), rand, "wrap"),
        "small (error)": (small, small[::-1].copy(), "error"),
        "large (error)": (large, large[::-1].copy(), "error"),
        "negative (error)": (negative, large, "error"),
        "boundary (error)": (boundary, ones, "error"),
    }


@dataclass(frozen=True)
class Row:
    """One value class of one type: median CPU seconds of mul and of np.copyto."""

    type: str
    klass: str
    mul: float
    copy: float

    @property
    def checked(self) -> bool:
        return self.klass.endswith("(error)")


def cases(rng: np.random.Generator) -> list[Job]:
    """(type, class, a, b, overflow mode) of every value class of every type."""
    jobs: list[Job] = []
    for name in FLOAT_FORMATS:
        jobs += [(name, c, a, b, "wrap") for c, (a, b) in float_classes(name, rng).items()]
    for name in INT_TYPES:
        jobs += [(name, c, a, b, m) for c, (a, b, m) in int_classes(name, rng).items()]
    return jobs


def measure(repeats: int, types: list[str] | None = None) -> list[Row]:
    """One row per (type, class): the mul, and the copy of its first operand
    (of every type, or of ``types``)."""
    jobs = cases(np.random.default_rng(20261126))
    rows: list[Row] = []
    for type_name in dict.fromkeys(job[0] for job in jobs):
        if types and type_name not in types:
            continue
        rows += _measure_type([job for job in jobs if job[0] == type_name], repeats)
    return rows


def _measure_type(mine: list[Job], repeats: int) -> list[Row]:
    """Every class of one type on the same three arrays (its operands copied
    in before each sample of its mul): the addresses, and so the caches and
    pages, are the same for all, and only the values differ.  Sampled
    round-robin (``sampling.sample``): one sample of every class's mul and
    copy per round."""
    left, right = np.empty_like(mine[0][2]), np.empty_like(mine[0][2])
    out, copy = np.empty_like(left), np.empty_like(left)
    use_copy = partial(np.copyto, copy, left)

    def load(a: np.ndarray, b: np.ndarray) -> None:
        np.copyto(left, a)
        np.copyto(right, b)

    calls: dict[str, Case] = {}
    prepare: dict[str, Callable[[], None]] = {}
    for _, klass, a, b, mode in mine:
        load(a, b)
        mul(left, right, out=out, overflow=mode)  # raises if a checked class overflowed
        calls[f"{klass} mul"] = partial(mul, left, right, out=out, overflow=mode)
        prepare[f"{klass} mul"] = partial(load, a, b)
        calls[f"{klass} copy"] = use_copy
    samples = sample(calls, repeats, TARGET_SECONDS, time.process_time, prepare)
    rows = []
    for type_name, klass, *_ in mine:
        m, c = samples[f"{klass} mul"], samples[f"{klass} copy"]
        row = Row(type_name, klass, statistics.median(m), statistics.median(c))
        rows.append(row)
        print(
            f"{type_name:9s} {klass:20s} {row.mul * 1e3:8.3f} ms  x{row.mul / row.copy:6.2f} copy"
        )
    return rows


def render(rows: list[Row]) -> list[str]:
    """The value-class table, then per type: the spread of the wrap classes and of
    the checked ones, checked against wrap, and the slowest class against the copy."""
    lines = ["| type | class | mul (ms) | x fastest | x np.copyto |", "|---|---|---|---|---|"]
    summary = [
        "",
        "| type | spread, wrap | spread, checked | checked / wrap | slowest x np.copyto |",
        "|---|---|---|---|---|",
    ]
    for type_name in dict.fromkeys(r.type for r in rows):
        mine = [r for r in rows if r.type == type_name]
        fastest = min(r.mul for r in mine)
        for r in mine:
            ratios = f"{r.mul / fastest:.2f} | {r.mul / r.copy:.2f}"
            lines.append(f"| {r.type} | {r.klass} | {r.mul * 1e3:.3f} | {ratios} |")
        wrap = [r.mul for r in mine if not r.checked]
        checked = [r.mul for r in mine if r.checked]
        slowest = max(mine, key=lambda r: r.mul)
        modes = (
            f"{max(checked) / min(checked):.2f} | {max(checked) / min(wrap):.2f}"
            if checked
            else "- | -"
        )
        summary.append(
            f"| {type_name} | {max(wrap) / min(wrap):.2f} | {modes} | "
            f"{slowest.mul / slowest.copy:.2f} ({slowest.klass}) |"
        )
    return lines + summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--type", action="append", help="only this type (repeatable)")
    args = parser.parse_args(argv)
    rows = measure(QUICK_REPEATS if args.quick else REPEATS, args.type)
    print("\n".join(render(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
