/* bf16_loops.c -- design probes for the bfloat16 product's loop
 * (benchmarks/bf16_loops.py): the proved loop of native/src/sonnx_mul_bf16.c
 * (included: the same source, compiled here with each build's flags) and
 * two designs that are not in the product, each computing the same bits:
 *
 * 1 "selects": the loop before the rounding by one multiplier -- both
 *   operands' significands normalised, the rounding by two shr7 cascades
 *   (four selects on the bits of the shift each), as WP proved it then.
 * 2 "shifts": the adopted algorithm (the smaller magnitude normalised, one
 *   multiplier 2^(8 - s) whose high and low halves are the kept and the
 *   dropped bits) written with shifts and bitwise operations, which WP's
 *   provers do not prove equal to the header's arithmetic without lemma
 *   functions (docs/decisions/integer-bfloat16.md).
 *
 * probe_all_pairs compares a design with the proved loop on all 2^32
 * operand pairs; probe_interleaved times the loops in turn, call by call,
 * in thread CPU time (a time slice given to another process is not
 * counted: on a shared machine it doubles a wall-clock sample). */
#define _POSIX_C_SOURCE 199309L
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sonnx_mul_bf16.c"

static inline uint16_t sel_sig(uint16_t h)
{
    const uint16_t m0 = (uint16_t)(h % 128U);
    uint16_t m1 = m0;
    if (m0 < 8U) {
        m1 = (uint16_t)(m0 * 16U);
    }
    uint16_t m2 = m1;
    if (m1 < 32U) {
        m2 = (uint16_t)(m1 * 4U);
    }
    uint16_t m3 = m2;
    if (m2 < 64U) {
        m3 = (uint16_t)(m2 * 2U);
    }
    uint16_t sig = (uint16_t)(m3 * 2U);
    if (h >= 128U) {
        sig = (uint16_t)(m0 + 128U);
    }
    return sig;
}

static inline uint16_t sel_exp(uint16_t h)
{
    const uint16_t m0 = (uint16_t)(h % 128U);
    uint16_t m1 = m0;
    uint16_t s1 = 0U;
    if (m0 < 8U) {
        m1 = (uint16_t)(m0 * 16U);
    }
    if (m0 < 8U) {
        s1 = 4U;
    }
    uint16_t m2 = m1;
    uint16_t s2 = s1;
    if (m1 < 32U) {
        m2 = (uint16_t)(m1 * 4U);
    }
    if (m1 < 32U) {
        s2 = (uint16_t)(s1 + 2U);
    }
    uint16_t s3 = s2;
    if (m2 < 64U) {
        s3 = (uint16_t)(s2 + 1U);
    }
    uint16_t e = (uint16_t)(7U - s3);
    if (h >= 128U) {
        e = (uint16_t)((h / 128U) + 7U);
    }
    return e;
}

static inline uint16_t sel_shr7(uint16_t x, uint16_t s)
{
    const uint16_t x1 = (uint16_t)(x / 128U);
    uint16_t x2 = x1;
    if (((s / 8U) % 2U) == 1U) {
        x2 = (uint16_t)(x1 / 256U);
    }
    uint16_t x3 = x2;
    if (((s / 4U) % 2U) == 1U) {
        x3 = (uint16_t)(x2 / 16U);
    }
    uint16_t x4 = x3;
    if (((s / 2U) % 2U) == 1U) {
        x4 = (uint16_t)(x3 / 4U);
    }
    uint16_t x5 = x4;
    if ((s % 2U) == 1U) {
        x5 = (uint16_t)(x4 / 2U);
    }
    return x5;
}

static inline uint16_t sel_mul1(uint16_t a, uint16_t b)
{
    const uint16_t sign = (uint16_t)((((a / 32768U) + (b / 32768U)) % 2U) * 32768U);
    const uint16_t ha = (uint16_t)(a % 32768U);
    const uint16_t hb = (uint16_t)(b % 32768U);
    const uint16_t p = (uint16_t)((uint32_t)sel_sig(ha) * (uint32_t)sel_sig(hb));
    const uint16_t t0 = (uint16_t)((uint32_t)sel_exp(ha) + (uint32_t)sel_exp(hb));
    /* each step stated in the terms of sonnx_bf16_mul_bits: a wrong step
       fails its own goal (a second of CVC4), not only `value` (a minute) */
        /* p in [2^14, 2^16) unless an operand is 0 (then p is 0 and q any
       value that keeps q + lsb - 1 from wrapping) */
    uint16_t q = (uint16_t)(p * 2U);
    if (p >= 32768U) {
        q = p;
    }
    if (p < 16384U) {
        q = 32768U;
    }
    uint16_t t = t0;
    if (p >= 32768U) {
        t = (uint16_t)(t0 + 1U);
    }
    uint16_t s = 0U;
    if (t < 142U) {
        s = (uint16_t)(142U - t);
    }
    if (t < 134U) {
        s = 9U;
    }
        const uint16_t lsb = (uint16_t)((sel_shr7(q, s) / 2U) % 2U);
    const uint16_t u = sel_shr7((uint16_t)((q + lsb) - 1U), s);
        uint16_t hi = 0U;
    if (t >= 142U) {
        hi = (uint16_t)((t - 142U) * 128U);
    }
    uint16_t r = (uint16_t)(hi + ((u / 2U) + (u % 2U)));
        if (r > 32640U) {
        r = 32640U;             /* overflow: infinity */
    }
    if ((ha == 0U) || (hb == 0U)) {
        r = 0U;
    }
    if ((ha == 32640U) || (hb == 32640U)) {
        r = 32640U;
    }
    uint16_t res = (uint16_t)(r + sign);
    if ((ha > 32640U) || (hb > 32640U) || ((ha == 32640U) && (hb == 0U)) ||
        ((hb == 32640U) && (ha == 0U))) {
        res = 32704U;           /* the canonical NaN */
    }
    return res;
}

static void selects_loop(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n)
{
    for (size_t i = 0U; i < n; i++) {
        c[i] = sel_mul1(a[i], b[i]);
    }
}

static inline uint16_t shifts_mul1(uint16_t a, uint16_t b)
{
    const uint16_t sign = (uint16_t)((a ^ b) & 0x8000U);
    const uint16_t ha = (uint16_t)(a & 0x7FFFU);
    const uint16_t hb = (uint16_t)(b & 0x7FFFU);
    uint16_t lo = ha; if (hb < ha) lo = hb;
    uint16_t hi = hb; if (hb < ha) hi = ha;
    /* lo's significand normalised */
    const uint16_t m0 = (uint16_t)(lo & 127U);
    uint16_t m1 = m0; uint16_t e1 = 7U;
    if (m0 < 8U) m1 = (uint16_t)(m0 << 4);
    if (m0 < 8U) e1 = 3U;
    uint16_t m2 = m1; uint16_t e2 = e1;
    if (m1 < 32U) m2 = (uint16_t)(m1 << 2);
    if (m1 < 32U) e2 = (uint16_t)(e1 - 2U);
    uint16_t m3 = m2; uint16_t e3 = e2;
    if (m2 < 64U) m3 = (uint16_t)(m2 << 1);
    if (m2 < 64U) e3 = (uint16_t)(e2 - 1U);
    uint16_t siglo = (uint16_t)(m3 << 1);
    uint16_t elo = e3;
    if (lo >= 128U) siglo = (uint16_t)(m0 + 128U);
    if (lo >= 128U) elo = (uint16_t)((lo >> 7) + 7U);
    const uint16_t sighi = (uint16_t)((hi & 127U) | 128U);
    const uint16_t ehi = (uint16_t)((hi >> 7) + 7U);
    const uint16_t p = (uint16_t)((uint32_t)siglo * sighi);
    uint16_t q = (uint16_t)(p << 1);
    uint16_t t = (uint16_t)(elo + ehi);
    if (p >= 32768U) q = p;
    if (p >= 32768U) t = (uint16_t)(t + 1U);
    /* m = 2^(t - 134) in [1, 256], 0 below */
    const uint16_t k = (uint16_t)(t - 134U);
    uint16_t w1 = 1U; if (k & 1U) w1 = 2U;
    uint16_t w2 = w1; if (k & 2U) w2 = (uint16_t)(w1 << 2);
    uint16_t w3 = w2; if (k & 4U) w3 = (uint16_t)(w2 << 4);
    if (t >= 142U) w3 = 256U;
    if (t < 134U) w3 = 0U;
    const uint16_t keep = (uint16_t)(((uint32_t)q * w3) >> 16);
    const uint16_t rest = (uint16_t)((uint32_t)q * w3);
    uint16_t up = 0U;
    if (rest > (uint16_t)(32768U - (keep & 1U))) up = 1U;
    uint16_t hx = 0U;
    if (t >= 142U) hx = (uint16_t)((t - 142U) << 7);
    uint16_t r = (uint16_t)(hx + keep + up);
    if (r > 32640U) r = 32640U;
    if (lo == 0U) r = 0U;
    if (hi == 32640U) r = 32640U;
    uint16_t res = (uint16_t)(r | sign);
    if ((hi > 32640U) || ((hi == 32640U) && (lo == 0U))) res = 32704U;
    return res;
}
static void shifts_loop(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n)
{
    for (size_t i = 0U; i < n; i++) {
        c[i] = shifts_mul1(a[i], b[i]);
    }
}

typedef void (*bf16_loop)(const uint16_t *, const uint16_t *, uint16_t *, size_t);

/* 0 the proved loop, 1 "selects", 2 "shifts" */
static bf16_loop loop_of(int which)
{
    return which == 0 ? sonnx_mul_bf16 : which == 1 ? selects_loop : shifts_loop;
}

void probe_run(int which, const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n)
{
    loop_of(which)(a, b, c, n);
}

/* The pairs of all 2^32 whose bits from design `which` differ from the
 * proved loop's (-1 when out of memory). */
long long probe_all_pairs(int which)
{
    const size_t m = 65536U;
    uint16_t *a = malloc(m * 2U), *b = malloc(m * 2U), *c0 = malloc(m * 2U), *c1 = malloc(m * 2U);
    long long bad = 0;
    if (a == NULL || b == NULL || c0 == NULL || c1 == NULL) {
        bad = -1;
    } else {
        for (size_t j = 0U; j < m; j++) {
            b[j] = (uint16_t)j;
        }
        for (size_t i = 0U; i < m && bad >= 0; i++) {
            for (size_t j = 0U; j < m; j++) {
                a[j] = (uint16_t)i;
            }
            sonnx_mul_bf16(a, b, c0, m);
            loop_of(which)(a, b, c1, m);
            for (size_t j = 0U; j < m; j++) {
                bad += c0[j] != c1[j];
            }
        }
    }
    free(a);
    free(b);
    free(c0);
    free(c1);
    return bad;
}

static uint64_t cpu_ns(void)
{
    struct timespec t;
    (void)clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000U + (uint64_t)t.tv_nsec;
}

/* reps rounds; in each, loops 0 .. loops - 1 in turn, then a copy of a
 * (loops + 1 columns): times_ns[round * (loops + 1) + column]. */
void probe_interleaved(int loops, const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n,
                       size_t reps, uint64_t *times_ns)
{
    const size_t columns = (size_t)loops + 1U;
    for (size_t r = 0U; r < reps; r++) {
        for (int which = 0; which < loops; which++) {
            const uint64_t t0 = cpu_ns();
            loop_of(which)(a, b, c, n);
            times_ns[r * columns + (size_t)which] = cpu_ns() - t0;
        }
        const uint64_t t0 = cpu_ns();
        memcpy(c, a, n * 2U);
        times_ns[r * columns + (size_t)loops] = cpu_ns() - t0;
    }
}
