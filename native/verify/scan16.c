/* scan16.c -- the 16-bit checked scans on every pair: each of the 2^32 pairs
 * of int16 and of uint16 goes through sonnx_mul_first_overflow_i16 / _u16 in
 * calls of 256 elements (a fixed, 256 consecutive values of b), so that every
 * pair passes the block scan's vector loop; each call's result must be the
 * index of the first product the exact (int32) arithmetic finds outside the
 * type, or 256.  `scan16 planted` runs the same comparison on a scan that
 * ignores the sign bit of the product's low half (a product in [2^15, 2^16)
 * passes), which it must catch.  Prints the calls and the mismatches; exit 1
 * on a mismatch (kernel) or on none (planted).  tests/operator/test_scan16_exhaustive.py
 * builds it with each x86-64 row of native/flags.mk. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sonnx_mul_kernel.h"

#define CALL 256

/* The planted fault: only the high half of each product tested. */
static size_t planted_i16(const int16_t *a, const int16_t *b, size_t n)
{
    size_t i;
    for (i = 0U; i < n; i++) {
        const int32_t p = (int32_t)a[i] * (int32_t)b[i];
        if ((p < -65536) || (p > 65535)) {
            break;
        }
    }
    return i;
}

static int fits_i16(int16_t x, int16_t y)
{
    const int32_t p = (int32_t)x * (int32_t)y;
    return (p >= -32768) && (p <= 32767);
}

static int fits_u16(uint16_t x, uint16_t y)
{
    return ((uint32_t)x * (uint32_t)y) <= 65535U;
}

int main(int argc, char **argv)
{
    const int planted = (argc == 2) && (strcmp(argv[1], "planted") == 0);
    static int16_t sa[CALL], sb[65536];
    static uint16_t ua[CALL], ub[65536];
    unsigned long long calls = 0U, bad = 0U;
    for (int32_t i = 0; i < 65536; i++) {
        sb[i] = (int16_t)(i - 32768);
        ub[i] = (uint16_t)i;
    }
    for (int32_t x = 0; x < 65536; x++) {
        for (int k = 0; k < CALL; k++) {
            sa[k] = (int16_t)(x - 32768);
            ua[k] = (uint16_t)x;
        }
        for (int32_t s = 0; s < 65536; s += CALL) {
            /* b runs over consecutive values and a * b is monotone in b, so
               the pairs that fit are an interval: when the call's first and
               last fit, all do; otherwise each is tested */
            const int both = fits_i16(sa[0], sb[s]) && fits_i16(sa[0], sb[s + CALL - 1]);
            const int uboth = fits_u16(ua[0], ub[s]) && fits_u16(ua[0], ub[s + CALL - 1]);
            size_t want = CALL, uwant = CALL;
            for (size_t k = CALL; k > 0U && !(both && uboth); k--) {
                const int32_t j = s + (int32_t)k - 1;
                want = fits_i16(sa[0], sb[j]) ? want : k - 1U;
                uwant = fits_u16(ua[0], ub[j]) ? uwant : k - 1U;
            }
            const size_t got = planted ? planted_i16(sa, sb + s, CALL)
                                       : sonnx_mul_first_overflow_i16(sa, sb + s, CALL);
            bad += (got != want) ? 1U : 0U;
            calls += 1U;
            if (!planted) {
                bad += (sonnx_mul_first_overflow_u16(ua, ub + s, CALL) != uwant) ? 1U : 0U;
                calls += 1U;
            }
        }
    }
    printf("calls %llu mismatches %llu\n", calls, bad);
    return planted ? (bad == 0U) : (bad != 0U);
}
