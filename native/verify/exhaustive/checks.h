/* checks.h -- the exhaustive harness's checks of the portable compiled
 * code: both narrowings on every binary32 input, both widenings on every
 * pattern, sonnx_mul_f16 and sonnx_mul_bf16 on every pair, and the union
 * views of sonnx_mul_f32 and sonnx_mul_f64; the narrowing and the float64
 * loop checked are parameters, so that the selftest can pass planted ones.
 *
 * A part of the exhaustive harness native/verify/exhaustive.c, which is
 * one translation unit: native_exhaustive.py compiles that file alone, and
 * it includes each part once (a part includes the parts it uses).
 */
#ifndef EXHAUSTIVE_CHECKS_H
#define EXHAUSTIVE_CHECKS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sonnx_mul_kernel.h"

#include "common.h"
#include "oracles.h"

/* A narrowing under test: the kernel's, or a planted fault. */
typedef uint16_t (*narrow_fn)(float);

static unsigned long long check_narrow_f16(narrow_fn f, uint64_t stride)
{
    unsigned long long bad = 0;
    for (uint64_t u = 0; u <= 0xFFFFFFFFULL; u += stride) {
        const float x = float_of((uint32_t)u);
        const uint16_t want = f16c_bits(x);
        if (f(x) != want) {
            if (bad < 3) {
                fprintf(stderr, "  narrow-f16 0x%08llx: got 0x%04x want 0x%04x\n",
                        (unsigned long long)u, f(x), want);
            }
            bad++;
        }
    }
    return bad;
}

static unsigned long long check_narrow_bf16(narrow_fn f, uint64_t stride)
{
    unsigned long long bad = 0;
    for (uint64_t u = 0; u <= 0xFFFFFFFFULL; u += stride) {
        const float x = float_of((uint32_t)u);
        const uint16_t want = ref_bf16_narrow((uint32_t)u);
        if ((u % 257U) == 0U) { /* the reference against the value-based RNE */
            const uint16_t value = bf16_bits_of_value(rne_format((double)x, 8, -126, 127));
            if (!same16(want, value, 0x7F80, 0x007F)) {
                fprintf(stderr, "  reference bf16 0x%08llx: 0x%04x vs value 0x%04x\n",
                        (unsigned long long)u, want, value);
                bad++;
            }
        }
        if (f(x) != want) {
            if (bad < 3) {
                fprintf(stderr, "  narrow-bf16 0x%08llx: got 0x%04x want 0x%04x\n",
                        (unsigned long long)u, f(x), want);
            }
            bad++;
        }
    }
    return bad;
}

static unsigned long long check_widen(int bf)
{
    unsigned long long bad = 0;
    for (uint32_t u = 0; u <= 0xFFFFU; u++) {
        const uint16_t h = (uint16_t)u;
        const double want = bf ? bf16_value(h) : f16_value(h);
        const float got = bf ? sonnx_mul_bf16_bits_to_f32(h) : sonnx_mul_f16_bits_to_f32(h);
        const int ok = isnan(want) ? isnan(got)
                                   : (bits_of(got) == bits_of((float)want));
        if (!ok) {
            bad++;
        }
    }
    return bad;
}

static unsigned long long check_mul(int bf)
{
    static uint16_t a[BLOCK], b[BLOCK], c[BLOCK];
    static double bval[BLOCK];
    unsigned long long bad = 0;
    for (uint32_t j = 0; j < BLOCK; j++) {
        b[j] = (uint16_t)j;
        bval[j] = bf ? bf16_value((uint16_t)j) : f16_value((uint16_t)j);
    }
    for (uint32_t i = 0; i < BLOCK; i++) {
        const double av = bf ? bf16_value((uint16_t)i) : f16_value((uint16_t)i);
        for (uint32_t j = 0; j < BLOCK; j++) {
            a[j] = (uint16_t)i;
        }
        if (bf) {
            sonnx_mul_bf16(a, b, c, BLOCK);
        } else {
            sonnx_mul_f16(a, b, c, BLOCK);
        }
        for (uint32_t j = 0; j < BLOCK; j++) {
            const double exact = av * bval[j]; /* exact in binary64 */
            /* one rounding to binary32 (exact for float16 products; for
               bfloat16 the double rounding is innocuous: why3/widen.mlw
               bfloat16_double_rounding), then the independent narrowing;
               every 4099th pair also against the value-based RNE of the
               exact product (no binary32 step at all). */
            const float wide = (float)exact;
            const uint16_t want = bf ? ref_bf16(bits_of(wide)) : f16c_bits(wide);
            if (((i * BLOCK + j) % 4099U) == 0U) {
                const uint16_t value = bf ? bf16_bits_of_value(rne_format(exact, 8, -126, 127))
                                          : f16_bits_of_value(rne_format(exact, 11, -14, 15));
                const int agree = bf ? same16(want, value, 0x7F80, 0x007F)
                                     : same16(want, value, 0x7C00, 0x03FF);
                if (!agree) {
                    fprintf(stderr, "  oracle disagreement 0x%04x*0x%04x\n", i, j);
                    bad++;
                }
            }
            const int ok = bf ? same16(c[j], want, 0x7F80, 0x007F)
                              : same16(c[j], want, 0x7C00, 0x03FF);
            if (!ok) {
                if (bad < 3) {
                    fprintf(stderr, "  mul-%s 0x%04x*0x%04x: got 0x%04x want 0x%04x\n",
                            bf ? "bf16" : "f16", i, j, c[j], want);
                }
                bad++;
            }
        }
    }
    return bad;
}

/* views-f32: every pattern x through the compiled float32 loop as x * 1. */
static unsigned long long check_views_f32(void)
{
    enum { ROW = 65536 };
    static float a[ROW], one[ROW], c[ROW];
    unsigned long long bad = 0ULL;
    for (size_t i = 0; i < ROW; i++) {
        one[i] = 1.0F;
    }
    for (uint64_t hi = 0; hi < 65536U; hi++) {
        for (uint32_t lo = 0; lo < ROW; lo++) {
            a[lo] = float_of((uint32_t)(hi << 16) | lo);
        }
        sonnx_mul_f32(a, one, c, ROW);
        for (uint32_t lo = 0; lo < ROW; lo++) {
            const uint32_t u = (uint32_t)(hi << 16) | lo;
            const uint32_t got = bits_of(c[lo]);
            const int nan = (u & 0x7FFFFFFFU) > 0x7F800000U;
            const int ok = nan ? got == 0x7FC00000U
                               : got == u && (double)c[lo] == f32_pattern_value(u) &&
                                     !signbit(c[lo]) == !signbit(f32_pattern_value(u)) &&
                                     !isnan(c[lo]);
            if (!ok && bad++ < 5ULL) {
                printf("  views-f32 %08x -> %08x\n", u, got);
            }
        }
    }
    return bad;
}

/* A float64 loop under test: the kernel's, or a planted fault. */
typedef void (*loop64_fn)(const double *, const double *, double *, size_t);

/* views-f64: every exponent and sign, 64 fractions each, as x * 1. */
static unsigned long long check_views_f64(loop64_fn loop, unsigned long long *inputs)
{
    enum { FRACS = 64, ROW = 2 * 2048 * FRACS };
    static double a[ROW], one[ROW], c[ROW];
    static uint64_t pattern[ROW];
    uint64_t state = 0x9E3779B97F4A7C15ULL;
    size_t n = 0;
    for (uint64_t sign = 0; sign < 2U; sign++) {
        for (uint64_t e = 0; e < 2048U; e++) {
            for (unsigned f = 0; f < FRACS; f++) {
                uint64_t frac;
                state = state * 6364136223846793005ULL + 1442695040888963407ULL;
                switch (f) {
                case 0: frac = 0U; break;
                case 1: frac = 1U; break;
                case 2: frac = 1ULL << 51; break;   /* the quiet bit of a NaN */
                case 3: frac = (1ULL << 51) | 1U; break;
                case 4: frac = 0xFFFFFFFFFFFFFULL; break;
                case 5: frac = 1ULL << 50; break;
                default: frac = state >> 12; break;
                }
                pattern[n] = (sign << 63) | (e << 52) | frac;
                memcpy(&a[n], &pattern[n], sizeof a[n]);
                one[n] = 1.0;
                n++;
            }
        }
    }
    loop(a, one, c, (size_t)ROW);
    unsigned long long bad = 0ULL;
    for (size_t i = 0; i < (size_t)ROW; i++) {
        const uint64_t u = pattern[i];
        uint64_t got;
        memcpy(&got, &c[i], sizeof got);
        const int nan = (u & 0x7FFFFFFFFFFFFFFFULL) > 0x7FF0000000000000ULL;
        const int ok = nan ? got == 0x7FF8000000000000ULL
                           : got == u && (long double)c[i] == f64_pattern_value(u) &&
                                 !signbit(c[i]) == !signbit(f64_pattern_value(u)) && !isnan(c[i]);
        if (!ok && bad++ < 5ULL && loop == sonnx_mul_f64) {   /* planted: counted only */
            printf("  views-f64 %016llx -> %016llx\n", (unsigned long long)u, (unsigned long long)got);
        }
    }
    *inputs = (unsigned long long)ROW;
    return bad;
}

#endif /* EXHAUSTIVE_CHECKS_H */
