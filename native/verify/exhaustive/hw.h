/* hw.h -- the exhaustive harness's checks of the loops the
 * extension selects at run time (built with -DSONNX_MUL_HW, x86-64): the
 * F16C float16 loops and the ISA variants' bfloat16 loop on every pair,
 * bit for bit against the proved portable loops; the streaming int8/uint8
 * wrap loops on every pair; every length and misalignment of both kinds
 * of loop, with the bytes around the output unchanged.
 *
 * A part of the exhaustive harness native/verify/exhaustive.c, which is
 * one translation unit: native_exhaustive.py compiles that file alone, and
 * it includes each part once (a part includes the parts it uses).
 */
#ifndef EXHAUSTIVE_HW_H
#define EXHAUSTIVE_HW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sonnx_mul_kernel.h"

#include "common.h"
#include "oracles.h"

#if defined(SONNX_MUL_HW)
#define SONNX_MUL_F16C_PLANTED_FAULTS
#include "sonnx_mul_f16c.h"
void sonnx_mul_avx2_bf16(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n);
void sonnx_mul_avx512_bf16(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n);
#define SONNX_MUL_STREAM8_PLANTED_FAULTS
#include "sonnx_mul_stream8.h"
#endif

#if defined(SONNX_MUL_HW)
typedef void (*loop16_fn)(const uint16_t *, const uint16_t *, uint16_t *, size_t);

/* Row i (every row_step-th) of the 2^16 x 2^16 pairs through `got` and
 * the proved `ref`, each in two calls cut at BLOCK - (1 + i % 7): bit for
 * bit.  For float16 every 4099th pair against the oracle too. */
static unsigned long long check_same(const char *name, loop16_fn got, loop16_fn ref, int bf,
                                     uint32_t row_step)
{
    static uint16_t a[BLOCK], b[BLOCK], c[BLOCK], r[BLOCK];
    unsigned long long bad = 0;
    for (uint32_t j = 0; j < BLOCK; j++) {
        b[j] = (uint16_t)j;
    }
    for (uint32_t i = 0; i < BLOCK; i += row_step) {
        const size_t cut = BLOCK - (1U + i % 7U);
        for (uint32_t j = 0; j < BLOCK; j++) {
            a[j] = (uint16_t)i;
        }
        got(a, b, c, cut);
        got(a + cut, b + cut, c + cut, BLOCK - cut);
        ref(a, b, r, cut);
        ref(a + cut, b + cut, r + cut, BLOCK - cut);
        for (uint32_t j = 0; j < BLOCK; j++) {
            if (!bf && ((i * BLOCK + j) % 4099U) == 0U) {
                const double exact = f16_value((uint16_t)i) * f16_value((uint16_t)j);
                const uint16_t want = f16_bits_of_value(rne_format(exact, 11, -14, 15));
                if (!same16(c[j], want, 0x7C00, 0x03FF)) {
                    if (bad < 3) {
                        fprintf(stderr, "  %s 0x%04x*0x%04x: got 0x%04x, oracle 0x%04x\n", name,
                                i, j, c[j], want);
                    }
                    bad++;
                }
            }
            if (c[j] != r[j]) {
                if (bad < 3) {
                    fprintf(stderr, "  %s 0x%04x*0x%04x: got 0x%04x, proved loop 0x%04x\n", name,
                            i, j, c[j], r[j]);
                }
                bad++;
            }
        }
    }
    return bad;
}

/* ---- the streaming int8/uint8 wrap loops (native/hw/sonnx_mul_stream8.c) -- */

typedef void (*loop8_fn)(const uint8_t *, const uint8_t *, uint8_t *, size_t);

#define PAIRS8 65536U
#define LONG8 (64U * PAIRS8 + 37U)
#define GUARD 64U
#if LONG8 <= SONNX_MUL_STREAM8_MIN_ELEMENTS
#error "the pairs buffer must be longer than the streaming threshold"
#endif

/* Mismatches printed by the current check (at most 3). */
static unsigned printed8;

/* Bytes [0, n) of got against want, and `guard` bytes each side of got
 * (0xA5 expected). */
static unsigned long long compare8(const char *name, const uint8_t *got, const uint8_t *want,
                                   size_t n, size_t before, size_t after)
{
    unsigned long long bad = 0;
    for (size_t j = 0; j < n; j++) {
        if (got[j] != want[j]) {
            if (printed8 < 3U) {
                printed8++;
                fprintf(stderr, "  %s n=%zu [%zu]: got 0x%02x, proved loop 0x%02x\n", name, n, j,
                        got[j], want[j]);
            }
            bad++;
        }
    }
    for (size_t j = 1; j <= before; j++) {
        bad += (got[-(ptrdiff_t)j] != 0xA5U);
    }
    for (size_t j = 0; j < after; j++) {
        bad += (got[n + j] != 0xA5U);
    }
    return bad;
}

/* Every (a, b) byte pair: element q of repeat r (of 64) holds pair
 * (q + r) mod 2^16, so that each pair meets every byte position of a
 * 64-byte vector; a, b and c at offsets 3, 11 and 5 from a 64-byte boundary.
 * int8 against sonnx_mul_wrap_i8, uint8 against sonnx_mul_wrap_u8. */
static unsigned long long check_stream8_pairs(const char *name, loop8_fn got)
{
    static uint8_t abuf[LONG8 + 128U], bbuf[LONG8 + 128U], cbuf[LONG8 + 2U * GUARD + 64U],
        want[LONG8];
    uint8_t *a = abuf + (64U - (uintptr_t)(void *)abuf % 64U) + 3U;
    uint8_t *b = bbuf + (64U - (uintptr_t)(void *)bbuf % 64U) + 11U;
    uint8_t *c = cbuf + (64U - (uintptr_t)(void *)cbuf % 64U) + GUARD + 5U;
    for (size_t j = 0; j < LONG8; j++) {
        const size_t pair = (j % PAIRS8 + j / PAIRS8) % PAIRS8;
        a[j] = (uint8_t)(pair >> 8);
        b[j] = (uint8_t)pair;
    }
    unsigned long long bad = 0;
    printed8 = 0U;
    for (int signed8 = 0; signed8 < 2; signed8++) {
        memset(c - GUARD, 0xA5, LONG8 + 2U * GUARD);
        if (signed8) {
            sonnx_mul_wrap_i8((const int8_t *)(const void *)a, (const int8_t *)(const void *)b,
                              (int8_t *)(void *)want, LONG8);
        } else {
            sonnx_mul_wrap_u8(a, b, want, LONG8);
        }
        got(a, b, c, LONG8);
        bad += compare8(name, c, want, LONG8, GUARD, GUARD);
    }
    return bad;
}

/* A loop on bytes (uint8) or on 16-bit elements (float16 bits): exactly
 * one member is set. */
typedef struct {
    loop8_fn bytes;
    loop16_fn halves;
} any_loop;

static size_t width(any_loop f)
{
    return (f.bytes != NULL) ? 1U : 2U;
}

static void run_loop(any_loop f, const uint8_t *a, const uint8_t *b, uint8_t *c, size_t n)
{
    if (f.bytes != NULL) {
        f.bytes(a, b, c, n);
    } else {
        f.halves((const uint16_t *)(const void *)a, (const uint16_t *)(const void *)b,
                 (uint16_t *)(void *)c, n);
    }
}

/* One layout case of the hardware loop `got` against the proved loop `ref`
 * it stands in for: n random elements at a and b; the output c first
 * separate, starting as the complement of the expected bytes, then in place
 * (c holding a); the GUARD bytes each side of c must stay 0xA5, as the
 * loop's `assigns` says. */
static unsigned long long layout_case(const char *name, any_loop got, any_loop ref,
                                      uint8_t *a, uint8_t *b, uint8_t *c, uint8_t *want,
                                      size_t n, uint32_t *seed)
{
    const size_t bytes = n * width(ref);
    for (size_t j = 0; j < bytes; j++) {
        *seed = *seed * 1103515245U + 12345U;
        a[j] = (uint8_t)(*seed >> 16);
        *seed = *seed * 1103515245U + 12345U;
        b[j] = (uint8_t)(*seed >> 16);
    }
    run_loop(ref, a, b, want, n);
    memset(c - GUARD, 0xA5, bytes + 2U * GUARD);
    for (size_t j = 0; j < bytes; j++) {
        c[j] = (uint8_t)~want[j];
    }
    run_loop(got, a, b, c, n);
    unsigned long long bad = compare8(name, c, want, bytes, GUARD, GUARD);
    memset(c - GUARD, 0xA5, bytes + 2U * GUARD);
    memcpy(c, a, bytes);
    run_loop(got, c, b, c, n);
    bad += compare8(name, c, want, bytes, GUARD, GUARD);
    return bad;
}

/* Every length 1 .. 3 * 64 + 1 at every output misalignment 0..63 (the
 * inputs at other misalignments), separate and in place, of a streaming
 * loop against sonnx_mul_wrap_u8. */
static unsigned long long check_stream8_layouts(const char *name, loop8_fn got,
                                                unsigned long long *cases)
{
    /* every length up to 3 vectors, and the lengths within 3 vectors after
       and 1 before one and two whole blocks (a block and the rest, at every
       misalignment of the head) */
    enum { SHORT = 3 * 64 + 1, MAXLEN = 2 * SONNX_MUL_STREAM8_BLOCK + SHORT,
           SPAN = MAXLEN + 64 + 2 * GUARD };
    static uint8_t abuf[SPAN + 64], bbuf[SPAN + 64], cbuf[SPAN + 64], want[MAXLEN];
    uint8_t *a0 = abuf + (64U - (uintptr_t)(void *)abuf % 64U);
    uint8_t *b0 = bbuf + (64U - (uintptr_t)(void *)bbuf % 64U);
    uint8_t *c0 = cbuf + (64U - (uintptr_t)(void *)cbuf % 64U) + GUARD;
    const any_loop hw = {got, NULL}, proved = {sonnx_mul_wrap_u8, NULL};
    uint32_t seed = 12345U;
    unsigned long long bad = 0;
    printed8 = 0U;
    *cases = 0;
    for (size_t m = 0; m < 64U; m++) {
        for (size_t n = 1; n <= (size_t)MAXLEN; n++) {
            const size_t rest = n % SONNX_MUL_STREAM8_BLOCK;
            if (rest > (size_t)SHORT && rest < SONNX_MUL_STREAM8_BLOCK - 64U) {
                continue;
            }
            bad += layout_case(name, hw, proved, a0 + (m * 5U + 1U) % 64U,
                               b0 + (m * 11U + 7U) % 64U, c0 + m, want, n, &seed);
            *cases += 2U;
        }
    }
    return bad;
}
#endif

#if defined(SONNX_MUL_HW)
/* Every length 1 .. 3 * 16 + 1 at every output misalignment 0..15
 * elements (the inputs misaligned otherwise), separate and in place, of a
 * float16 hardware loop against the proved sonnx_mul_f16 (the pairs check
 * covers the values; this one the whole vectors, the zero-padded tail and
 * what the loop writes). */
static unsigned long long check_f16c_layouts(const char *name, loop16_fn got,
                                             unsigned long long *cases)
{
    enum { MAXLEN = 3 * 16 + 1, SPAN = MAXLEN + 16 + GUARD };
    static uint16_t abuf[SPAN + 32], bbuf[SPAN + 32], cbuf[SPAN + 32], want[MAXLEN];
    uint16_t *c0 = cbuf + GUARD / 2U;
    const any_loop hw = {NULL, got}, proved = {NULL, sonnx_mul_f16};
    uint32_t seed = 4242U;
    unsigned long long bad = 0;
    printed8 = 0U;
    *cases = 0;
    for (size_t m = 0; m < 16U; m++) {
        for (size_t n = 1; n <= (size_t)MAXLEN; n++) {
            bad += layout_case(name, hw, proved,
                               (uint8_t *)(void *)(abuf + (m * 5U + 1U) % 16U),
                               (uint8_t *)(void *)(bbuf + (m * 11U + 7U) % 16U),
                               (uint8_t *)(void *)(c0 + m), (uint8_t *)(void *)want, n, &seed);
            *cases += 2U;
        }
    }
    return bad;
}
#endif

#endif /* EXHAUSTIVE_HW_H */
