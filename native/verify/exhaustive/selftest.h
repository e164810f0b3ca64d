/* selftest.h -- the exhaustive harness's negative control (`exhaustive
 * selftest`): planted wrong narrowings, a float64 loop without the NaN
 * rule and planted faults of the hardware loops, each run through the
 * check that must catch it.
 *
 * A part of the exhaustive harness native/verify/exhaustive.c, which is
 * one translation unit: native_exhaustive.py compiles that file alone, and
 * it includes each part once (a part includes the parts it uses).
 */
#ifndef EXHAUSTIVE_SELFTEST_H
#define EXHAUSTIVE_SELFTEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sonnx_mul_kernel.h"

#include "common.h"
#include "checks.h"
#include "hw.h"

/* ---- planted faults ---------------------------------------------------- */

static uint16_t truncating_bf16(float x)   /* planted: truncation, no rounding */
{
    return (uint16_t)(bits_of(x) >> 16);
}

static uint16_t wrong_mask_f16(float x)    /* planted: kernel result, lowest mantissa bit cleared */
{
    return (uint16_t)(sonnx_mul_f32_to_f16_bits(x) & 0xFFFEU);
}

/* planted: a tie (exactly half way between two bfloat16 values) goes to
 * the odd neighbour; every other input as the kernel */
static uint16_t ties_to_odd_bf16(float x)
{
    const uint32_t u = bits_of(x);
    const int nan = ((u & 0x7F800000U) == 0x7F800000U) && ((u & 0x7FFFFFU) != 0U);
    if (!nan && (u & 0xFFFFU) == 0x8000U) {
        return (uint16_t)((u >> 16) | 1U);
    }
    return sonnx_mul_f32_to_bf16_bits(x);
}

/* planted: a NaN quieted with bit 5 instead of bit 6 */
static uint16_t quiet_bit5_bf16(float x)
{
    const uint16_t r = sonnx_mul_f32_to_bf16_bits(x);
    const uint32_t u = bits_of(x);
    const int nan = ((u & 0x7F800000U) == 0x7F800000U) && ((u & 0x7FFFFFU) != 0U);
    return nan ? (uint16_t)((u >> 16) | 0x20U) : r;
}

/* planted: a tie in float16's normal range goes to the odd neighbour */
static uint16_t ties_to_odd_f16(float x)
{
    const uint32_t u = bits_of(x);
    const uint32_t mag = u & 0x7FFFFFFFU;
    if (mag >= 0x38800000U && mag < 0x47800000U && (mag & 0x1FFFU) == 0x1000U) {
        return (uint16_t)(((u >> 16) & 0x8000U) | (((mag - 0x38000000U) >> 13) | 1U));
    }
    return sonnx_mul_f32_to_f16_bits(x);
}

/* planted: a NaN quieted with bit 8 instead of bit 9 */
static uint16_t quiet_bit8_f16(float x)
{
    const uint16_t r = sonnx_mul_f32_to_f16_bits(x);
    const uint32_t u = bits_of(x);
    const int nan = ((u & 0x7F800000U) == 0x7F800000U) && ((u & 0x7FFFFFU) != 0U);
    return nan ? (uint16_t)(((u >> 16) & 0x8000U) | 0x7D00U | ((u >> 13) & 0x2FFU)) : r;
}

/* planted: the float64 loop without the NaN rule (the hardware's NaN kept) */
static void no_rule_f64(const double *a, const double *b, double *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        c[i] = a[i] * b[i];
    }
}

/* Every planted fault this CPU can run, each through the check that must
 * catch it, on a sample; one line per fault (name, mismatches caught,
 * seconds).  0 when every one is caught, 1 otherwise. */
static int selftest(void)
{
    int failed = 0;
    double t0;
    /* Each planted fault must be caught (on a sample: every 4099th input). */
    t0 = now();
    const unsigned long long b1 = check_narrow_bf16(truncating_bf16, 4099U);
    printf("selftest-truncating-bf16 %llu caught %.2f\n", b1, now() - t0);
    t0 = now();
    const unsigned long long b2 = check_narrow_f16(wrong_mask_f16, 4099U);
    printf("selftest-wrong-mask-f16 %llu caught %.2f\n", b2, now() - t0);
    static const struct {
        const char *name;
        narrow_fn fn;
        int bf;
    } narrowings[] = {
        {"selftest-ties-to-odd-bf16", ties_to_odd_bf16, 1},
        {"selftest-quiet-bit-bf16", quiet_bit5_bf16, 1},
        {"selftest-ties-to-odd-f16", ties_to_odd_f16, 0},
        {"selftest-quiet-bit-f16", quiet_bit8_f16, 0},
    };
    for (size_t k = 0; k < sizeof narrowings / sizeof narrowings[0]; k++) {
        t0 = now();
        const unsigned long long caught = narrowings[k].bf
            ? check_narrow_bf16(narrowings[k].fn, 4099U)
            : check_narrow_f16(narrowings[k].fn, 4099U);
        printf("%s %llu caught %.2f\n", narrowings[k].name, caught, now() - t0);
        failed |= (caught == 0ULL);
    }
    t0 = now();
    unsigned long long views;
    const unsigned long long b3 = check_views_f64(no_rule_f64, &views);
    printf("selftest-no-rule-f64 %llu caught %.2f\n", b3, now() - t0);
#if defined(SONNX_MUL_HW)
    /* The planted hardware loops this CPU can run (the others would
     * stop on an illegal instruction; native_exhaustive.py expects the
     * same list from the CPU's flags). */
    __builtin_cpu_init();
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
    const int avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                       __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                       __builtin_cpu_supports("avx512dq");
    static const struct {
        const char *name;
        void (*fn)(const uint16_t *, const uint16_t *, uint16_t *, size_t);
        int wide;
    } planted16[] = {
        {"selftest-truncating-f16c", sonnx_mul_f16c_f16_truncating, 0},
        {"selftest-nan-sign-f16c", sonnx_mul_f16c_f16_nan_sign, 0},
        {"selftest-short-tail-f16c", sonnx_mul_f16c_f16_short_tail, 0},
        {"selftest-truncating-f16c512", sonnx_mul_f16c512_f16_truncating, 1},
        {"selftest-nan-sign-f16c512", sonnx_mul_f16c512_f16_nan_sign, 1},
        {"selftest-short-tail-f16c512", sonnx_mul_f16c512_f16_short_tail, 1},
    };
    int missed = 0;
    for (size_t p = 0; p < sizeof planted16 / sizeof planted16[0]; p++) {
        if (!avx2 || (planted16[p].wide && !avx512)) {
            continue;
        }
        t0 = now();
        unsigned long long cases;
        const unsigned long long caught =
            check_same("planted", planted16[p].fn, sonnx_mul_f16, 0, 257U) +
            check_f16c_layouts("planted", planted16[p].fn, &cases);
        printf("%s %llu caught %.2f\n", planted16[p].name, caught, now() - t0);
        missed |= caught == 0ULL;
    }
    /* The streaming int8/uint8 loops: the pairs and the layouts checks. */
    static const struct {
        const char *name;
        loop8_fn fn;
        int wide;
    } planted8[] = {
        {"selftest-short-copy-stream8", sonnx_mul_stream8_wrap8_short_copy, 0},
        {"selftest-no-tail-stream8", sonnx_mul_stream8_wrap8_no_tail, 0},
        {"selftest-short-copy-stream8512", sonnx_mul_stream8512_wrap8_short_copy, 1},
        {"selftest-no-tail-stream8512", sonnx_mul_stream8512_wrap8_no_tail, 1},
    };
    for (size_t p = 0; p < sizeof planted8 / sizeof planted8[0]; p++) {
        unsigned long long cases;
        if (!avx2 || (planted8[p].wide && !avx512)) {
            continue;
        }
        t0 = now();
        const unsigned long long caught = check_stream8_pairs("planted", planted8[p].fn) +
                                          check_stream8_layouts("planted", planted8[p].fn,
                                                                &cases);
        printf("%s %llu caught %.2f\n", planted8[p].name, caught, now() - t0);
        missed |= caught == 0ULL;
    }
    if (missed) {
        return 1;
    }
#endif
    return (b1 > 0ULL && b2 > 0ULL && b3 > 0ULL && !failed) ? 0 : 1;
}

#endif /* EXHAUSTIVE_SELFTEST_H */
