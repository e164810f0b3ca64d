"""Operand pairs to try, per element type.

Contract: every generator is deterministic for a given type and seed, and
yields :class:`Chunk` objects of two 1-D arrays of the type, of equal length.

- int8/uint8: all 65,536 pairs (one chunk).
- float16/bfloat16: all 2^32 pairs, streamed in chunks of ``ROWS`` values of
  ``a`` against every ``b``; under a budget smaller than 2^32, the edge set
  and a seeded sample instead.
- other types (16/32/64-bit): an edge set generated from the type's format
  (see :func:`float_edges`, :func:`int_edges`) plus seeded random pairs.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from sonnx_mul.dtypes import ElementType

EXHAUSTIVE_BITS = 16
"""Types of at most this width can be run exhaustively (2^(2*bits) pairs)."""
ALWAYS_EXHAUSTIVE_BITS = 8
"""Types of at most this width always are (65,536 pairs)."""
ROWS = 256
"""Values of ``a`` per chunk of a 16-bit exhaustive run: 256 x 65,536 = 2^24 pairs."""
DEFAULT_RANDOM = 1 << 20
"""Random pairs per non-exhaustive type when no budget says otherwise."""


@dataclass(frozen=True)
class Chunk:
    """Pairs ``(a[i], b[i])`` of one kind: ``exhaustive``, ``edge`` or ``random``."""

    kind: str
    a: np.ndarray
    b: np.ndarray

    def __len__(self) -> int:
        return int(self.a.shape[0])


@dataclass(frozen=True)
class Plan:
    """What a run of one type tries: ``total`` pairs in ``chunks`` (lazy)."""

    etype: ElementType
    mode: str  # "exhaustive" or "edge+random"
    total: int
    seed: int
    budget: int | None
    random_pairs: int

    def chunks(self) -> Iterator[Chunk]:
        """The chunks, generated on demand (a 2^32 run never holds more than one)."""
        if self.mode == "exhaustive":
            yield from _exhaustive(self.etype)
            return
        edges = edge_pairs(self.etype)
        yield edges
        yield from random_chunks(self.etype, self.random_pairs, self.seed)


def plan(
    etype: ElementType, *, budget: int | None = None, seed: int = 0, random: int | None = None
) -> Plan:
    """The pairs to try for ``etype``.

    ``budget`` caps the pairs of a type (``None``: no cap); the edge set is
    always tried whole. 8-bit types are always exhaustive; 16-bit float types
    are exhaustive when the budget allows 2^32 pairs; ``random`` (default
    ``DEFAULT_RANDOM``, capped by the budget) random pairs are added otherwise.
    """
    space = 1 << (2 * etype.bits)
    exhaustive = etype.bits <= ALWAYS_EXHAUSTIVE_BITS or (
        etype.is_float and etype.bits <= EXHAUSTIVE_BITS and (budget is None or budget >= space)
    )
    if exhaustive:
        return Plan(etype, "exhaustive", space, seed, budget, 0)
    n_edges = len(edge_pairs(etype))
    wanted = DEFAULT_RANDOM if random is None else random
    if etype.is_float and etype.bits <= EXHAUSTIVE_BITS and random is None and budget is not None:
        wanted = budget  # a sampled 16-bit float run spends its whole budget
    if budget is not None:
        wanted = min(wanted, max(budget - n_edges, 0))
    return Plan(etype, "edge+random", n_edges + wanted, seed, budget, wanted)


def _exhaustive(etype: ElementType) -> Iterator[Chunk]:
    u = etype.uint_view
    every = np.arange(1 << etype.bits, dtype=np.uint64).astype(u)
    rows = min(ROWS, every.size)
    b = np.tile(every, rows).view(etype.dtype)  # the same in every chunk: built once
    b.flags.writeable = False
    for start in range(0, every.size, rows):
        a = np.repeat(every[start : start + rows], every.size)
        yield Chunk("exhaustive", a.view(etype.dtype), b)


def _rng(etype: ElementType, seed: int) -> np.random.Generator:
    # crc32 of the name (not hash()): the same seed gives the same pairs in every process
    return np.random.default_rng([seed, zlib.crc32(etype.onnx_name.encode())])


MAX_CHUNK = 1 << 24
"""Pairs per chunk of a random run (memory stays bounded whatever the budget)."""


def random_chunks(etype: ElementType, n: int, seed: int) -> Iterator[Chunk]:
    """``n`` seeded random pairs in chunks of at most ``MAX_CHUNK``, drawn in
    sequence from one generator: the same ``n`` and seed give the same pairs."""
    rng = _rng(etype, seed)
    for start in range(0, n, MAX_CHUNK):
        yield random_pairs(etype, min(MAX_CHUNK, n - start), rng)


def random_pairs(etype: ElementType, n: int, rng: np.random.Generator | int) -> Chunk:
    """``n`` random pairs (``rng`` a generator, or a seed): uniform bit patterns,
    and for floats half of them with exponents chosen so that the product is
    near one end of the normal range."""
    if isinstance(rng, int):
        rng = _rng(etype, rng)
    u = etype.uint_view
    a = rng.integers(0, 1 << etype.bits, size=n, dtype=np.uint64, endpoint=False).astype(u)
    b = rng.integers(0, 1 << etype.bits, size=n, dtype=np.uint64, endpoint=False).astype(u)
    if etype.is_float and n:
        half = n // 2
        a[:half], b[:half] = _near_limits(etype, rng, half)
    return Chunk("random", a.view(etype.dtype), b.view(etype.dtype))


def _near_limits(etype: ElementType, rng: np.random.Generator, n: int) -> tuple[Any, Any]:
    """Pairs whose exponents sum near the overflow or the underflow threshold."""
    m = etype.sb - 1
    bias = (1 << (etype.eb - 1)) - 1
    emax, emin = bias, 1 - bias
    u = etype.uint_view
    # the product's exponent lands within p binades of one threshold or the other
    target = np.where(rng.integers(0, 2, n) == 1, emax, emin - m)
    total = target + rng.integers(-etype.sb - 1, etype.sb + 2, n)
    ea = rng.integers(emin, emax + 1, n)
    eb_ = np.clip(total - ea, emin, emax)
    frac_a = rng.integers(0, 1 << m, n, dtype=np.uint64)
    frac_b = rng.integers(0, 1 << m, n, dtype=np.uint64)
    sign_a = rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(etype.bits - 1)
    sign_b = rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(etype.bits - 1)
    a = sign_a | ((ea + bias).astype(np.uint64) << np.uint64(m)) | frac_a
    b = sign_b | ((eb_ + bias).astype(np.uint64) << np.uint64(m)) | frac_b
    return a.astype(u), b.astype(u)


# ------------------------------------------------------------------ edge sets
def edge_pairs(etype: ElementType) -> Chunk:
    """The type's edge set (deterministic, no seed): see the module docstring."""
    pairs = float_edges(etype) if etype.is_float else int_edges(etype)
    u = etype.uint_view
    if etype.is_float:
        a = np.array([p[0] for p in pairs], dtype=np.uint64).astype(u).view(etype.dtype)
        b = np.array([p[1] for p in pairs], dtype=np.uint64).astype(u).view(etype.dtype)
    else:
        a = np.array([p[0] for p in pairs], dtype=object).astype(etype.dtype)
        b = np.array([p[1] for p in pairs], dtype=object).astype(etype.dtype)
    return Chunk("edge", a, b)


def _dedup(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return list(dict.fromkeys(pairs))


def float_edges(etype: ElementType) -> list[tuple[int, int]]:
    """Bit-pattern pairs of a float format, each sign combination included:

    the special values crossed with each other (±0, ±inf, quiet and signalling
    NaN, the smallest and largest subnormal and normal values, 1 and its
    neighbours); ties to even in every binade, normal and subnormal results
    (one rounding down to even, one up); products at the overflow threshold
    and one step past it; products at the underflow thresholds (half the
    smallest subnormal, the subnormal/normal boundary).
    """
    m = etype.sb - 1
    bias = (1 << (etype.eb - 1)) - 1
    emax, emin = bias, 1 - bias
    inf = ((1 << etype.eb) - 1) << m
    sign = 1 << (etype.bits - 1)

    def num(e: int, frac: int = 0) -> int:
        """Bits of (1 + frac/2^m) * 2^e, subnormal when e < emin (frac then shifted in)."""
        if e >= emin:
            return ((e + bias) << m) | frac
        shift = emin - e
        full = (1 << m) | frac
        assert full % (1 << shift) == 0, "not representable"
        return full >> shift

    one_ulp = 1
    specials = [
        0, 1, 2, 3, (1 << m) - 1, 1 << m, (1 << m) | 1,
        num(0), num(0, one_ulp), num(-1, (1 << m) - 1), num(0, 1 << (m - 1)), num(1),
        num(emax, (1 << m) - 1), num(emax, (1 << m) - 2), num(emax),
        inf, inf | (1 << (m - 1)), inf | 1, inf | (1 << (m - 1)) | 1,
    ]  # fmt: skip
    base: list[tuple[int, int]] = [(x, y) for x in specials for y in specials]

    built: list[tuple[int, int]] = []
    # Ties to even in every binade of the result: (1 + 2^-k)(1 + 2^-(m+1-k)) has a
    # half-ulp term (rounds down to even); (1 + 2^-m)(1.5) an odd last bit (rounds up).
    for e in range(emin - m, emax + 1):
        ea = max(min(e, emax), emin)
        eb_ = e - ea
        for fa, fb in ((1 << (m - 1), 1 << (m - 1)), (1, 1 << (m - 1)), (3, 1 << (m - 1))):
            if eb_ >= emin or (((1 << m) | fb) % (1 << (emin - eb_)) == 0):
                built.append((num(ea, fa), num(eb_, fb)))
        if m >= 2:
            k = m // 2 + 1
            fa, fb = 1 << (m - k), 1 << (m - (m + 1 - k))
            if eb_ >= emin or (((1 << m) | fb) % (1 << (emin - eb_)) == 0):
                built.append((num(ea, fa), num(eb_, fb)))
    # Overflow threshold: max finite times 1 (exact), times 1 + ulp (inf), the tie
    # (2 - 2^-(m+1)) * 2^emax built as max * (1 + 2^-(m+1))-ish neighbours.
    mx = num(emax, (1 << m) - 1)
    for y in (num(0), num(0, 1), num(-1, (1 << m) - 1), num(1), num(-1)):
        built.append((mx, y))
        built.append((num(emax), y))
        built.append((num(emax, 1), y))
    half_e = emax // 2
    for fa in (0, 1, (1 << m) - 1, 1 << (m - 1)):
        for fb in (0, 1, (1 << m) - 1, (1 << m) - 2):
            built.append((num(half_e, fa), num(emax - half_e, fb)))
            built.append((num(half_e + 1, fa), num(emax - half_e, fb)))
    # Underflow: half the smallest subnormal (tie to 0), 3/4 of it, 1.5 times it,
    # the midpoint between the largest subnormal and the smallest normal.
    for y in (num(-1), num(-1, 1 << (m - 1)), num(-2), num(0, 1 << (m - 1)), num(0)):
        built.append((1, y))
        built.append((3, y))
    built.append((num(emin), num(-1, (1 << m) - 1)))  # min normal * (1 - 2^-(m+1)): tie
    built.append((num(emin, 1), num(-1, (1 << m) - 1)))
    built.append(((1 << m) - 1, num(0, 1)))  # largest subnormal times 1 + ulp
    for k in range(1, m + 3):  # normal operand times 2^-k: subnormal results
        built.append((num(emin, 1), num(-k) if -k >= emin else num(emin)))
    every: list[tuple[int, int]] = []
    for x, y in base + built:
        for sx in (0, sign):
            for sy in (0, sign):
                every.append((x | sx, y | sy))
    return _dedup(every)


def int_edges(etype: ElementType) -> list[tuple[int, int]]:
    """Value pairs of an integer type: its interesting values crossed (0, ±1, ±2,
    the limits and their neighbours, powers of two and their neighbours), and
    for each small factor ``a`` the ``b`` whose product is the largest value at
    or below each range limit and one step past it, in both signs."""
    n, lo, hi = etype.bits, etype.lo, etype.hi
    values = {0, 1, 2, 3, hi, hi - 1, lo, lo + 1}
    for k in range(n):
        for v in (1 << k, (1 << k) - 1, (1 << k) + 1):
            values |= {v, -v}
    values = {v for v in values if lo <= v <= hi}
    ordered = sorted(values)
    pairs = [(x, y) for x in ordered for y in ordered]
    factors = sorted(
        {
            2,
            3,
            5,
            7,
            10,
            100,
            255,
            *(1 << k for k in range(1, n)),
            *((1 << k) + 1 for k in range(1, n - 1)),
        }
    )
    limits = [hi + 1] + ([lo] if etype.signed else [1 << n])
    for f in factors:
        for limit in limits:
            q = abs(limit) // f
            for b in (q - 1, q, q + 1):
                for sa, sb in ((1, 1), (-1, 1), (1, -1), (-1, -1)):
                    x, y = sa * f, sb * b
                    if lo <= x <= hi and lo <= y <= hi:
                        pairs.append((x, y))
    return _dedup(pairs)
