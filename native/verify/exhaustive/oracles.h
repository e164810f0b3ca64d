/* oracles.h -- the exhaustive harness's independent oracles: values
 * computed with binary64 arithmetic and ldexp/frexp/rint (exact here), the
 * F16C hardware narrowing, and bfloat16 rounding written apart from the
 * kernel; none shares code with it.
 *
 * A part of the exhaustive harness native/verify/exhaustive.c, which is
 * one translation unit: native_exhaustive.py compiles that file alone, and
 * it includes each part once (a part includes the parts it uses).
 */
#ifndef EXHAUSTIVE_ORACLES_H
#define EXHAUSTIVE_ORACLES_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <immintrin.h>   /* F16C: the hardware binary32 -> binary16 conversion (oracle) */

#include "common.h"

/* ---- independent oracles --------------------------------------------- */

/* The value of a binary32 / binary64 pattern that is not a NaN, rebuilt from
 * its fields with ldexp (exact in long double / double here). */
static double f32_pattern_value(uint32_t u)
{
    static double scale[256];   /* 2^(e - 150), 2^-149 for e = 0: ldexp once */
    if (scale[1] == 0.0) {
        for (int e = 0; e < 255; e++) {
            scale[e] = ldexp(1.0, e == 0 ? -149 : e - 150);
        }
    }
    const int e = (int)((u >> 23) & 0xFFU);
    const double m = (double)(u & 0x7FFFFFU) + (e == 0 ? 0.0 : 8388608.0);
    const double mag = e == 255 ? INFINITY : m * scale[e];   /* exact: 24 bits */
    return (u >> 31) != 0U ? -mag : mag;
}

static long double f64_pattern_value(uint64_t u)
{
    const int e = (int)((u >> 52) & 0x7FFU);
    const long double m = (long double)(u & 0xFFFFFFFFFFFFFULL);
    const long double mag = e == 2047 ? (long double)INFINITY
                            : e == 0  ? ldexpl(m, -1074)
                                      : ldexpl(m + 4503599627370496.0L, e - 1075);
    return (u >> 63) != 0U ? -mag : mag;
}

/* Round the binary64 value d (exact, finite or not) to the binary format with
 * p significand bits, least normal exponent emin (value 2^emin) and largest
 * finite value (2 - 2^(1-p)) * 2^emax, RNE, returned as a double. */
static double rne_format(double d, int p, int emin, int emax)
{
    if (isnan(d) || isinf(d) || d == 0.0) {
        return d;
    }
    int e;
    (void)frexp(fabs(d), &e);           /* |d| = f * 2^e, f in [0.5, 1) */
    int q = e - 1;                      /* |d| in [2^q, 2^(q+1)) */
    if (q < emin) {
        q = emin;                       /* subnormal: fixed quantum */
    }
    const int quantum = q - (p - 1);    /* ulp = 2^quantum */
    const double scaled = ldexp(d, -quantum);   /* exact */
    const double r = ldexp(rint(scaled), quantum); /* rint: RNE */
    const double max = ldexp(2.0 - ldexp(1.0, 1 - p), emax);
    if (fabs(r) > max) {
        return copysign(INFINITY, d);
    }
    return r;
}

/* binary16 / bfloat16 bits of a double that is one of their values (or inf,
 * NaN, a signed zero): through binary32, which holds every such value. */
static uint16_t bf16_bits_of_value(double v)
{
    if (isnan(v)) {
        return 0x7FC0U;
    }
    return (uint16_t)(bits_of((float)v) >> 16);
}

static uint16_t f16_bits_of_value(double v)
{
    _Float16 h = (_Float16)(float)v;    /* exact: v is a binary16 value */
    uint16_t u;
    memcpy(&u, &h, sizeof u);
    return u;
}

static double f16_value(uint16_t u)
{
    _Float16 h;
    memcpy(&h, &u, sizeof h);
    return (double)h;
}

static double bf16_value(uint16_t u)
{
    const int sign = (u >> 15) != 0;
    const int ex = (u >> 7) & 0xFF;
    const int m = u & 0x7F;
    double v;
    if (ex == 0xFF) {
        v = (m != 0) ? NAN : INFINITY;
    } else if (ex == 0) {
        v = ldexp((double)m, -133);
    } else {
        v = ldexp((double)(m + 128), ex - 134);
    }
    return sign ? -v : v;
}

/* binary16 bits of a binary32 value, rounded by the F16C instruction
 * vcvtps2ph (RNE; subnormals kept: the harness never sets FTZ/DAZ). */
static uint16_t f16c_bits(float x)
{
    return (uint16_t)_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT);
}

/* bfloat16 bits of a binary32 pattern, integer-only RNE written apart from
 * the kernel (branches, no carry trick): the reference of the bfloat16
 * checks, itself cross-checked against rne_format() on a sample. */
static uint16_t ref_bf16(uint32_t u)
{
    const uint32_t exponent = (u >> 23) & 0xFFU;
    const uint32_t mantissa = u & 0x7FFFFFU;
    if (exponent == 0xFFU && mantissa != 0U) {
        return 0x7FC0U;
    }
    uint32_t upper = u >> 16;
    const uint32_t lower = u & 0xFFFFU;
    if (lower > 0x8000U) {
        upper = upper + 1U;
    } else if (lower == 0x8000U && (upper & 1U) == 1U) {
        upper = upper + 1U;
    }
    return (uint16_t)upper;
}

/* The narrowing's reference: ref_bf16, and a NaN with its sign and leading
 * payload bits, the quiet bit (bit 6) set. */
static uint16_t ref_bf16_narrow(uint32_t u)
{
    const uint32_t exponent = (u >> 23) & 0xFFU;
    const uint32_t mantissa = u & 0x7FFFFFU;
    if (exponent == 0xFFU && mantissa != 0U) {
        return (uint16_t)((u >> 16) | 0x40U);
    }
    return ref_bf16(u);
}

static int is_nan16(uint16_t u, int exp_mask, int man_mask)
{
    return ((u & exp_mask) == exp_mask) && ((u & man_mask) != 0);
}

static int same16(uint16_t got, uint16_t want, int exp_mask, int man_mask)
{
    if (is_nan16(want, exp_mask, man_mask)) {
        return is_nan16(got, exp_mask, man_mask);
    }
    return got == want;
}

#endif /* EXHAUSTIVE_ORACLES_H */
