"""Exhaustive agreement of ``sonnx_mul.mul`` (the native kernel) with exact oracles
on the small types.

``python -m sonnx_mul_assurance.python.exhaustive`` (``make verify-exhaustive``):

* int8 and uint8, both overflow modes: every one of the 65,536 pairs,
  :func:`sonnx_mul.mul` against the exact product in Python ints reduced by
  the proved Python kernel (``kernel.mul_wrap``, ``kernel.first_overflow``).
* float16 and bfloat16: every one of the 2**32 pairs, ``sonnx_mul.mul`` on
  rows of 65,536 pairs against a correctly rounded oracle: the exact product in
  float64 (exact: 11- and 8-bit significands give at most 22-bit products,
  and the exponents stay far inside float64's range), rounded to the 16-bit
  format by :func:`round_f64_bits`, an integer round-to-nearest-even on the
  float64 bit pattern (numpy's own float64 -> float16 conversion is not used:
  it would be a second implementation under test, not an oracle). The
  oracle's inputs are decoded from the bit patterns by integer arithmetic too
  (:func:`decode_table`); it is computed for non-negative operands and serves
  the four sign combinations (:func:`compare_rows` says why that is exact).

The result records which kernel ran (``sonnx_mul.kernel``: the native one,
with its compiler and flags, unless ``SONNX_MUL_KERNEL=numpy`` asked for
numpy's loops).

Writes ``proofs/out/exhaustive.json``; exits 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from sonnx_mul import kernel as running_kernel
from sonnx_mul.api import mul
from sonnx_mul.dtypes import BFLOAT16, FLOAT16, INT8, UINT8, ElementType
from sonnx_mul.errors import IntegerOverflowError
from sonnx_mul.oracle import integers as kernel
from sonnx_mul_assurance.evidence import files
from sonnx_mul_assurance.evidence.schema import ExhaustiveEvidence, ExhaustiveResult, dump

Multiply = Callable[[np.ndarray, np.ndarray], np.ndarray]
KERNEL = f"{running_kernel.NAME} ({running_kernel.BUILD}; variant in use: {running_kernel.isa()})"
"""The multiply under test, as the results record it."""
U64 = np.uint64


# ------------------------------------------------------------ float oracle


def decode_table(etype: ElementType) -> np.ndarray:
    """float64 value of every bit pattern of a 16-bit float format (exact)."""
    p = etype.sb - 1
    bias = (1 << (etype.eb - 1)) - 1
    patterns = np.arange(1 << 16, dtype=np.int64)
    sign = np.where(patterns >> 15, -1.0, 1.0)
    biased = (patterns >> p) & ((1 << etype.eb) - 1)
    frac = (patterns & ((1 << p) - 1)).astype(np.float64)
    # frac and the powers of two are exact in float64; so are their products
    normal = (frac + float(1 << p)) * np.exp2((biased - bias - p).astype(np.float64))
    subnormal = frac * np.exp2(float(1 - bias - p))
    value = np.where(biased == 0, subnormal, normal)
    special = biased == (1 << etype.eb) - 1
    value = np.where(special & (frac == 0), np.inf, value)
    value = np.where(special & (frac != 0), np.nan, value)
    return sign * value


def round_f64_bits(exact: np.ndarray, etype: ElementType) -> tuple[np.ndarray, np.ndarray]:
    """(bit patterns, NaN mask): ``exact`` (float64) rounded to nearest even into ``etype``.

    Integer arithmetic on the float64 bit pattern. In the normal range the
    magnitude's pattern is rounded as an integer to ``p = sb - 1`` fraction
    bits (adding ``2**(s-1) - 1`` plus the kept lowest bit, then shifting by
    ``s = 52 - p``): a carry runs into the exponent field, which is exactly
    the move to the next binade, and rebiasing the exponent gives the 16-bit
    pattern (too large: infinity). Below the normal range the significand
    (hidden bit included) is shifted by the element's own amount and rounded
    the same way (subnormals, the carry to the smallest normal, underflow to
    zero). Zeros keep their sign; NaN and infinities map to themselves.
    """
    p = etype.sb - 1
    bias = (1 << (etype.eb - 1)) - 1
    exp_ones = (1 << etype.eb) - 1
    s = 52 - p
    u = np.ascontiguousarray(exact, dtype=np.float64).view(U64)
    mag = u & U64((1 << 63) - 1)
    sign = (u >> U64(48)).astype(np.uint16) & np.uint16(0x8000)
    rounded = (mag + U64((1 << (s - 1)) - 1) + ((mag >> U64(s)) & U64(1))) >> U64(s)
    rebias = (1023 - bias) << p
    body = rounded.astype(np.int64) - rebias
    body = np.minimum(body, exp_ones << p)  # overflow (and inf) -> infinity
    nan = mag > U64(0x7FF << 52)
    # below the smallest normal (1 - bias): subnormal rounding, element by element
    low = mag < U64((1023 + 1 - bias) << 52)
    if low.any():
        idx = np.flatnonzero(low)
        m_low = mag[idx]
        e64 = (m_low >> U64(52)).astype(np.int64)
        m = (m_low & U64((1 << 52) - 1)) | U64(1 << 52)
        shift = s + (1 - bias) - (e64 - 1023)
        too_small = shift >= 60  # below 2**-7 of the smallest subnormal's ulp
        sh = np.minimum(shift, 59).astype(U64)
        kept = m >> sh
        rest = m & ((U64(1) << sh) - U64(1))
        half = U64(1) << (sh - U64(1))
        kept += ((rest > half) | ((rest == half) & ((kept & U64(1)) == U64(1)))).astype(U64)
        kept[too_small | (m_low == U64(0))] = U64(0)
        body[idx] = kept.astype(np.int64)  # kept == 2**p is the smallest normal's pattern
    body[nan] = (exp_ones << p) | (1 << (p - 1))
    return sign | body.astype(np.uint16), nan


def oracle_bits(
    xs: np.ndarray, ys: np.ndarray, etype: ElementType
) -> tuple[np.ndarray, np.ndarray]:
    """Correctly rounded product bits (and NaN mask) of bit patterns xs[i] * ys[i]."""
    table = _table(etype)
    with np.errstate(invalid="ignore"):  # inf * 0 is NaN, as it should be
        exact = table[xs] * table[ys]
    return round_f64_bits(exact, etype)


def _table(etype: ElementType) -> np.ndarray:
    return _decoded(etype.onnx_name)


@functools.cache
def _decoded(name: str) -> np.ndarray:
    """decode_table of a 16-bit float type, computed once per process."""
    table = decode_table(FLOAT16 if name == FLOAT16.onnx_name else BFLOAT16)
    table.flags.writeable = False
    return table


@functools.lru_cache(maxsize=4)
def _all_patterns(copies: int) -> np.ndarray:
    """Every 16-bit pattern, ``copies`` times in a row (computed once per worker)."""
    patterns = np.tile(np.arange(1 << 16, dtype=np.uint16), copies)
    patterns.flags.writeable = False
    return patterns


def is_nan16(bits: np.ndarray, etype: ElementType) -> np.ndarray:
    p = etype.sb - 1
    exp_ones = (1 << etype.eb) - 1
    b = bits.astype(np.uint32)
    exponent_ones = ((b >> np.uint32(p)) & np.uint32(exp_ones)) == np.uint32(exp_ones)
    result: np.ndarray = exponent_ones & ((b & np.uint32((1 << p) - 1)) != 0)
    return result


def fast_path(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The code under test: the package's public ``mul`` (the native kernel)."""
    return mul(a, b)


SIGN = 0x8000
MAGNITUDES = 1 << 15
MAGNITUDES_PER_CHUNK = 8
"""Magnitudes of first operands per job: each is checked with both signs,
against every second operand (8 * 2 * 65536 = 1 Mi pairs)."""


def positive_oracle(magnitudes: np.ndarray, etype: ElementType) -> tuple[np.ndarray, np.ndarray]:
    """Oracle bits and NaN masks of x * y, x in ``magnitudes``, y in [0, 2**15) (2-d).

    Both operands are non-negative (sign bit clear), so every non-NaN result
    has its sign bit clear too.
    """
    table = _table(etype)
    with np.errstate(invalid="ignore"):  # inf * 0 is NaN, as it should be
        exact = np.multiply.outer(table[magnitudes], table[:MAGNITUDES]).reshape(-1)
    bits, nan = round_f64_bits(exact, etype)
    shape = (magnitudes.size, MAGNITUDES)
    return bits.reshape(shape), nan.reshape(shape)


def compare_rows(
    rows: np.ndarray, etype: ElementType, multiply: Multiply = fast_path
) -> tuple[int, int, list[tuple[int, int, int, int]]]:
    """Check ``multiply`` on every pair (x, y), x in ``rows``, y any pattern.

    Returns (pairs checked, mismatches, up to 5 examples (x, y, got, expected)).
    A NaN result must be a NaN (any payload); every other result bit-exact.

    The oracle is computed once per magnitude pair |x|, |y| and serves the
    four sign combinations: round to nearest even is symmetric, so the
    correctly rounded product of (-1)^s |x| and (-1)^t |y| is the one of |x|
    and |y| with the sign bit s xor t, for every non-NaN result (zeros and
    infinities included), and NaN-ness does not depend on the signs. Every
    pair still goes through ``multiply`` itself.
    """
    rows = rows.astype(np.uint32)
    magnitudes, where = np.unique(rows & (SIGN - 1), return_inverse=True)
    positive, positive_nan = positive_oracle(magnitudes, etype)
    ys = _all_patterns(1).view(etype.dtype)
    flip = np.uint16(SIGN)
    pairs = mismatches = 0
    examples: list[tuple[int, int, int, int]] = []
    for row, k in zip(rows.tolist(), where.tolist(), strict=True):
        a = np.full(1 << 16, row, np.uint16).view(etype.dtype)
        got = np.ascontiguousarray(multiply(a, ys)).view(np.uint16)
        # y < 2**15 first (sign of y clear), then the same magnitudes negated
        same, other = (positive[k], positive[k] ^ flip)
        expected = np.concatenate([other, same] if row & SIGN else [same, other])
        differ = np.flatnonzero(got != expected)
        if differ.size:  # a NaN result may have any payload: only NaN-ness is compared there
            nan = np.concatenate([positive_nan[k], positive_nan[k]])[differ]
            differ = differ[~(nan & is_nan16(got[differ], etype))]
        pairs += got.size
        mismatches += int(differ.size)
        examples += [
            (row, int(y), int(got[y]), int(expected[y])) for y in differ[: 5 - len(examples)]
        ]
    return pairs, mismatches, examples


def _worker(job: tuple[str, int, int, int]) -> tuple[int, int, list[tuple[int, int, int, int]]]:
    name, start, stop, limit = job
    etype = FLOAT16 if name == FLOAT16.onnx_name else BFLOAT16
    magnitudes = np.arange(start, stop, dtype=np.uint32)
    rows = np.concatenate([magnitudes, magnitudes | SIGN])
    return compare_rows(rows[rows < limit], etype)


def check_float(etype: ElementType, jobs: int = 2, rows: int = 1 << 16) -> ExhaustiveResult:
    """Every pair whose first operand is below ``rows`` (all 2**32 by default)."""
    top = min(rows, MAGNITUDES)
    chunks = [
        (etype.onnx_name, s, min(s + MAGNITUDES_PER_CHUNK, top), rows)
        for s in range(0, top, MAGNITUDES_PER_CHUNK)
    ]
    start = time.monotonic()
    cpu_before = _children_cpu()
    pairs = mismatches = 0
    examples: list[tuple[int, int, int, int]] = []
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(jobs) as pool:
        for n, bad, ex in pool.imap_unordered(_worker, chunks):
            pairs += n
            mismatches += bad
            examples.extend(ex[: max(0, 10 - len(examples))])
        pool.close()
        pool.join()  # the workers are reaped: their CPU time is counted
    elapsed = time.monotonic() - start
    cpu = _children_cpu() - cpu_before
    return ExhaustiveResult(
        type=etype.onnx_name,
        requirements=["F-FLOAT"],
        pairs=pairs,
        mismatches=mismatches,
        examples=[
            {"a_bits": x, "b_bits": y, "got_bits": g, "expected_bits": e} for x, y, g, e in examples
        ],
        time=round(elapsed, 2),
        pairs_per_second=round(pairs / elapsed) if elapsed > 0 else None,
        workers=jobs,
        cpu_seconds=round(cpu, 2),
        kernel=KERNEL,
    )


def _children_cpu() -> float:
    """User + system CPU seconds of this process's finished children (the workers):
    with the wall time, it tells a busy machine from a slow check."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# ------------------------------------------------------------------ integers


def check_int(etype: ElementType, rows: int | None = None) -> ExhaustiveResult:
    """Every pair of an 8-bit type (first operands: the ``rows`` smallest, default all),
    overflow="wrap" and overflow="error"."""
    start = time.monotonic()
    values = np.arange(etype.lo, etype.hi + 1, dtype=np.int64)
    firsts = values if rows is None else values[:rows]
    av = np.repeat(firsts, values.size)
    bv = np.tile(values, firsts.size)
    a_list = [int(v) for v in av]
    b_list = [int(v) for v in bv]
    a = av.astype(etype.dtype)
    b = bv.astype(etype.dtype)
    problems: list[str] = []

    wrapped = kernel.mul_wrap(a_list, b_list, etype.bits, etype.signed)
    got = [int(v) for v in mul(a, b)]
    wrap_bad = [i for i, (g, w) in enumerate(zip(got, wrapped, strict=True)) if g != w]
    problems += [f"wrap: {a_list[i]} * {b_list[i]} gave {got[i]}" for i in wrap_bad[:5]]

    exact = kernel.mul_exact(a_list, b_list)
    fits = [etype.lo <= p <= etype.hi for p in exact]
    idx_fit = np.flatnonzero(np.array(fits))
    error_bad = 0
    got_fit = [int(v) for v in mul(a[idx_fit], b[idx_fit], overflow="error")]
    for k, i in enumerate(idx_fit):
        if got_fit[k] != exact[i]:
            error_bad += 1
            problems.append(f"error: {a_list[i]} * {b_list[i]} gave {got_fit[k]}")
    for i in np.flatnonzero(~np.array(fits)):
        try:
            mul(a[i : i + 1], b[i : i + 1], overflow="error")
        except IntegerOverflowError as err:
            if (
                err.index == 0
                and kernel.first_overflow([a_list[i]], [b_list[i]], etype.lo, etype.hi) == 0
            ):
                continue
        error_bad += 1
        problems.append(f"error: {a_list[i]} * {b_list[i]} not refused")
    elapsed = time.monotonic() - start
    n = len(a_list)
    return ExhaustiveResult(
        type=etype.onnx_name,
        requirements=["F-WRAP", "F-CHECKED"],
        pairs=n,
        modes=["wrap", "error"],
        overflowing_pairs=n - len(idx_fit),
        mismatches=len(wrap_bad) + error_bad,
        examples=list(problems[:10]),
        time=round(elapsed, 2),
        pairs_per_second=round(2 * n / elapsed) if elapsed > 0 else None,
        kernel=KERNEL,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sonnx_mul_assurance.python.exhaustive")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rows", type=int, default=1 << 16, help="first operands (float types)")
    parser.add_argument("--types", default="int8,uint8,float16,bfloat16")
    parser.add_argument("--out", type=Path, default=files.evidence_path(files.EXHAUSTIVE))
    args = parser.parse_args(argv)
    wanted = args.types.split(",")
    results: list[ExhaustiveResult] = []
    for etype in (INT8, UINT8):
        if etype.onnx_name in wanted:
            results.append(check_int(etype))
            print(_line(results[-1]), flush=True)
    for etype in (FLOAT16, BFLOAT16):
        if etype.onnx_name in wanted:
            results.append(check_float(etype, args.jobs, args.rows))
            print(_line(results[-1]), flush=True)
    ok = bool(results) and all(r.ok for r in results)
    report = ExhaustiveEvidence(
        tool="sonnx_mul_assurance.python.exhaustive",
        numpy=np.__version__,
        complete=False,
        results=results,
        passed=ok,
        kernel=KERNEL,
    )
    report.complete = not report.gaps()  # fewer --rows or --types: partial
    dump(report, args.out)
    return 0 if ok else 1


def _line(r: ExhaustiveResult) -> str:
    cpu = f" ({r.cpu_seconds} s CPU in {r.workers} workers)" if r.cpu_seconds is not None else ""
    return (
        f"{r.type:9} {r.pairs:>11,} pairs  {r.mismatches} mismatches  "
        f"{r.time} s{cpu}  {r.pairs_per_second or 0:,} pairs/s"
    )


if __name__ == "__main__":
    sys.exit(main())
