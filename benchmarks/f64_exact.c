/* f64_exact.c -- design probes for a float64 product whose time does not
 * depend on the values (benchmarks/f64_exact.py).
 *
 * The kernel's float64 loop (sonnx_mul_f64) multiplies in binary64; on an
 * Intel CPU a subnormal operand or result costs a microcode assist (float64
 * spread 5.2-5.5 there; docs/native-kernel.md, "Time by value class").
 * binary64 has no wider format to widen into, so the float32 cure (an exact
 * binary64 product of widened operands) does not apply.  Three candidates,
 * each rounding the exact product once to nearest even, with the kernel's
 * NaN rule (every NaN result is the canonical quiet NaN 0x7FF8...):
 *
 * 1 "integer": no float operation at all.  53-bit significands (a subnormal
 *   normalised by a count of leading zeros), the exact 106-bit product from
 *   four 32x32->64 multiplies, one rounding at a variable position (53 bits,
 *   fewer for a subnormal result) with a sticky bit, the carry of the
 *   rounding landing in the exponent field.
 * 2 "scaled": each operand split on its bits into an exact double A, its
 *   significand as an integer (2^52 + f for a normal operand; f, as
 *   (2^52 + f) - 2^52, for a subnormal one), and an exponent, so that
 *   |a| = A * 2^xa; P = A * B rounds once and is normal or zero; a normal
 *   result is P with X = xa + xb added to its exponent field (exact
 *   scaling); a subnormal result rounds A * B once at its quantum
 *   q = 2^(-1074 - X) as fma(A, B, C) with C = 2^52 q (the result's bits
 *   are then bits(S) - bits(C)); a zero operand gives P = 0 and so 0.
 * 3 "dekker": 2 without a fused multiply-add: P + e = A * B exactly by
 *   Dekker's product, and (P + e) / q rounded on P's bits and e's sign.
 *
 * In 2 and 3 the FPU never sees a subnormal operand nor makes a subnormal
 * result, so flush-to-zero and denormals-are-zero change nothing; the
 * rounding mode must be the default (the glue establishes it, as for every
 * float loop).  None is proved nor in the product: this file includes the
 * float source to reach sonnx_mul_f64 and compares and times the loops
 * from C.
 * PROBE_FAULT plants a fault: 1 the integer rounding's ties always up,
 * 2 the scaled subnormal rounding by a plain add (two roundings),
 * 3 the no-FMA rounding ignoring the sign of Dekker's error term. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <xmmintrin.h>

#include "probe_env.h"
#include "sonnx_mul_float.c"

#ifndef PROBE_FAULT
#define PROBE_FAULT 0
#endif

#define F64_ABS 0x7FFFFFFFFFFFFFFFULL
#define F64_INF 0x7FF0000000000000ULL
#define F64_FRAC 0x000FFFFFFFFFFFFFULL
#define F64_SIGN 0x8000000000000000ULL
#define F64_NAN 0x7FF8000000000000ULL

/* x when c (0 or 1), else y: a mask, no branch */
static inline uint64_t pick(uint64_t c, uint64_t x, uint64_t y)
{
    const uint64_t m = 0U - c;
    return (x & m) | (y & ~m);
}

static inline int64_t clamp64(int64_t x, int64_t lo, int64_t hi)
{
    const int64_t up = (x < lo) ? lo : x;
    return (up > hi) ? hi : up;
}

/* Infinities and NaN over the finite magnitude r, and the sign: r is 0
 * already when an operand is a zero (the integer candidate selects it, the
 * scaled ones get it from P = 0). */
static inline uint64_t specials(uint64_t ua, uint64_t ub, uint64_t r)
{
    const uint64_t aa = ua & F64_ABS;
    const uint64_t ab = ub & F64_ABS;
    const uint64_t inf = (uint64_t)(aa == F64_INF) | (uint64_t)(ab == F64_INF);
    const uint64_t zero = (uint64_t)(aa == 0U) | (uint64_t)(ab == 0U);
    const uint64_t nan = (uint64_t)(aa > F64_INF) | (uint64_t)(ab > F64_INF) | (inf & zero);
    const uint64_t res = pick(inf, F64_INF, r) | ((ua ^ ub) & F64_SIGN);
    return pick(nan, F64_NAN, res);
}

/* ---- 1: integer limbs ---------------------------------------------------- */

static inline uint64_t mul_integer(uint64_t ua, uint64_t ub)
{
    const uint64_t aa = ua & F64_ABS;
    const uint64_t ab = ub & F64_ABS;
    int64_t ea = (int64_t)(aa >> 52U);
    int64_t eb = (int64_t)(ab >> 52U);
    /* value = sig * 2^(e - 1075), bit 52 of sig set (a zero stays 0: masked) */
    uint64_t siga = (aa & F64_FRAC) | ((uint64_t)(ea != 0) << 52U);
    uint64_t sigb = (ab & F64_FRAC) | ((uint64_t)(eb != 0) << 52U);
    ea += (int64_t)(ea == 0);
    eb += (int64_t)(eb == 0);
    const int64_t lza = (int64_t)__builtin_clzll(siga | 1U) - 11;
    const int64_t lzb = (int64_t)__builtin_clzll(sigb | 1U) - 11;
    siga <<= lza;
    ea -= lza;
    sigb <<= lzb;
    eb -= lzb;
    /* the exact 106-bit product hi:lo */
    const uint64_t al = siga & 0xFFFFFFFFU;
    const uint64_t ah = siga >> 32U;
    const uint64_t bl = sigb & 0xFFFFFFFFU;
    const uint64_t bh = sigb >> 32U;
    const uint64_t ll = al * bl;
    const uint64_t mid = (al * bh) + (ah * bl);
    const uint64_t lo = ll + (mid << 32U);
    const uint64_t hi = (ah * bh) + (mid >> 32U) + (uint64_t)(lo < ll);
    /* bits 105..42 of the product, a sticky bit for 41..0 */
    const uint64_t x = (hi << 22U) | (lo >> 42U);
    const uint64_t st0 = (uint64_t)((lo << 22U) != 0U);
    const uint64_t top = x >> 63U;
    const int64_t er = ea + eb - 1023 + (int64_t)top; /* biased, before rounding */
    const int64_t below = (1 - er > 0) ? 1 - er : 0;  /* subnormal: extra shift */
    const int64_t k = 10 + (int64_t)top + below;
    const uint64_t tiny = (uint64_t)(k > 64);
    const uint64_t sh = (uint64_t)((tiny != 0U) ? 63 : k - 1);
    uint64_t m = (x >> 1U) >> sh;
    const uint64_t half = (x >> sh) & 1U;
    const uint64_t sticky = (uint64_t)((x << (64U - sh)) != 0U) | st0;
#if PROBE_FAULT == 1
    m += half;
#else
    m += half & (sticky | m);
#endif
    const uint64_t e = (er > 0) ? (uint64_t)(er - 1) : 0U;
    uint64_t r = (e << 52U) + m; /* a carry of the rounding lands in the exponent */
    r = pick((uint64_t)(r >= F64_INF), F64_INF, r);
    r = pick(tiny | (uint64_t)(aa == 0U) | (uint64_t)(ab == 0U), 0U, r);
    return specials(ua, ub, r);
}

/* ---- 2: scaled operands, one floating rounding ----------------------------- */

/* The exact A with |u| = A * 2^x, u a magnitude: its significand as an
 * integer, 2^52 + f for a normal u (the pattern 0x433... | f itself), f for
 * a subnormal one ((2^52 + f) - 2^52: two normal numbers), 0 for a zero. */
static inline double scaled(uint64_t u, int64_t *x)
{
    const uint64_t e = u >> 52U;
    const double offset = f64_of_pattern(pick((uint64_t)(e == 0U), 0x4330000000000000ULL, 0U));
    *x = ((e > 1U) ? (int64_t)e : 1) - 1075;
    return f64_of_pattern(0x4330000000000000ULL | (u & F64_FRAC)) - offset;
}

/* The scaled operands of ua and ub: |ua| = *a * 2^xa, and X = xa + xb. */
static inline int64_t scale_both(uint64_t ua, uint64_t ub, double *a, double *b)
{
    int64_t xa;
    int64_t xb;
    *a = scaled(ua & F64_ABS, &xa);
    *b = scaled(ub & F64_ABS, &xb);
    return xa + xb;
}

/* The normal result: P = a * b with x added to its exponent field (or
 * infinity); *er gets that field (below 1: the result is subnormal). */
static inline uint64_t normal_result(uint64_t bp, int64_t x, int64_t *er)
{
    *er = (int64_t)(bp >> 52U) + x;
    const uint64_t rn = bp + ((uint64_t)x << 52U);
    return pick((uint64_t)(*er >= 2047), F64_INF, rn);
}

/* 2: the subnormal result as fma(a, b, C), C = 2^(-1022 - x) = 2^52 times
 * its quantum, x clamped so that C is normal for every element (a
 * subnormal result has x <= -1023; below -1200 it rounds to 0 anyway). */
static inline uint64_t mul_scaled(uint64_t ua, uint64_t ub)
{
    double a;
    double b;
    const int64_t x = scale_both(ua, ub, &a, &b);
    int64_t er;
    const uint64_t rn = normal_result(f64_pattern(a * b), x, &er);
    const uint64_t bc = (uint64_t)(1 - clamp64(x, -1200, -1023)) << 52U;
#if PROBE_FAULT == 2
    const double s = (a * b) + f64_of_pattern(bc);
#else
    const double s = fma(a, b, f64_of_pattern(bc));
#endif
    return specials(ua, ub, pick((uint64_t)(er >= 1), rn, f64_pattern(s) - bc));
}

/* 3: the same without a fused multiply-add: P + e == a * b exactly
 * (Dekker's product, every intermediate normal), and (P + e) / q rounded on
 * P's significand: below or above the half bit decides, an exact half goes
 * the way of e's sign (|e| <= ulp(P) / 2), or to even when e == 0. */
static inline uint64_t mul_dekker(uint64_t ua, uint64_t ub)
{
    double a;
    double b;
    const int64_t x = scale_both(ua, ub, &a, &b);
    const double p = a * b;
    const uint64_t bp = f64_pattern(p);
    int64_t er;
    const uint64_t rn = normal_result(bp, x, &er);
    const double split = 134217729.0; /* 2^27 + 1 */
    const double ta = split * a;
    const double ahi = ta - (ta - a);
    const double alo = a - ahi;
    const double tb = split * b;
    const double bhi = tb - (tb - b);
    const double blo = b - bhi;
    const uint64_t be = f64_pattern((((ahi * bhi) - p) + (ahi * blo) + (alo * bhi)) + (alo * blo));
    const uint64_t sig = (bp & F64_FRAC) | (1ULL << 52U);
    const uint64_t k = (uint64_t)clamp64(1 - er, 1, 60);
    const uint64_t n0 = sig >> k;
    const uint64_t half = (sig >> (k - 1U)) & 1U;
    const uint64_t rest = (uint64_t)(((sig << (64U - k)) << 1U) != 0U);
#if PROBE_FAULT == 3
    const uint64_t tie_up = n0 & 1U;
#else
    const uint64_t tie_up = pick((uint64_t)((be & F64_ABS) != 0U), (be >> 63U) ^ 1U, n0 & 1U);
#endif
    const uint64_t rs = n0 + (half & (rest | tie_up));
    return specials(ua, ub, pick((uint64_t)(er >= 1), rn, rs));
}

static void integer_loop(const uint64_t *a, const uint64_t *b, uint64_t *c, size_t n)
{
    for (size_t i = 0U; i < n; i++) {
        c[i] = mul_integer(a[i], b[i]);
    }
}

static void scaled_loop(const uint64_t *a, const uint64_t *b, uint64_t *c, size_t n)
{
    for (size_t i = 0U; i < n; i++) {
        c[i] = mul_scaled(a[i], b[i]);
    }
}

static void dekker_loop(const uint64_t *a, const uint64_t *b, uint64_t *c, size_t n)
{
    for (size_t i = 0U; i < n; i++) {
        c[i] = mul_dekker(a[i], b[i]);
    }
}

/* Runs loop `which` (0 the kernel's sonnx_mul_f64, 1 integer, 2 scaled, 3
 * scaled without fma) on
 * n pairs of patterns under environment `env`, restoring the caller's MXCSR. */
void probe_run(int which, int env, const uint64_t *a, const uint64_t *b, uint64_t *c, size_t n)
{
    const unsigned int saved = _mm_getcsr();
    _mm_setcsr(mxcsr_of(env));
    if (which == 0) {
        sonnx_mul_f64((const double *)(const void *)a, (const double *)(const void *)b,
                      (double *)(void *)c, n);
    } else if (which == 1) {
        integer_loop(a, b, c, n);
    } else if (which == 2) {
        scaled_loop(a, b, c, n);
    } else {
        dekker_loop(a, b, c, n);
    }
    _mm_setcsr(saved);
}

/* Runs loop `which` `reps` times in the default environment, each time into
 * times_ns[k]. */
void probe_time(int which, const uint64_t *a, const uint64_t *b, uint64_t *c, size_t n,
                size_t reps, uint64_t *times_ns)
{
    for (size_t k = 0U; k < reps; k++) {
        const uint64_t t0 = now_ns();
        probe_run(which, 0, a, b, c, n);
        times_ns[k] = now_ns() - t0;
    }
}
