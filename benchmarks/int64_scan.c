/* int64_scan.c -- a design probe for int64's checked mode (benchmarks/int64_scan.py).
 *
 * The proved scan decides "the product fits in int64" from 32-bit halves
 * (excess_i64 in native/src/sonnx_mul_int.c).  The candidate decides it by a
 * binary64 test: with w the wrapped product (x * y mod 2^64, as int64),
 *
 *     fits  <=>  |fl(fl(x) * fl(y)) - fl(w)| < 2^20
 *
 * (docs/native-kernel.md, "int64's checked scan by a binary64 test": if the
 * product fits, w is the product and the three roundings leave a gap below
 * 2^14; if not, they differ by a non-zero multiple of 2^64 and the gap stays
 * above 2^62; every value is an integer, so no subnormal and no rounding
 * mode changes the verdict).  Not proved, not in the product: this file
 * includes the generated source to reach its static scan, and compares and
 * times the two from C. */
#define _POSIX_C_SOURCE 199309L
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "sonnx_mul_int.c"

#define PROBE_BLOCK 2048U
#ifndef PROBE_GAP_LIMIT
#define PROBE_GAP_LIMIT 1048576.0 /* 2^20; another value is a planted fault */
#endif

/* The binary64 test's verdict for one pair: 1 when the product does not fit. */
static inline uint64_t binary64_excess(int64_t x, int64_t y)
{
    const uint64_t r = (uint64_t)x * (uint64_t)y;
    /* r as int64 through in-range steps, as sonnx_mul_wrap_i64 does */
    const int64_t w = (r > 9223372036854775807ULL)
                          ? -(int64_t)(18446744073709551615ULL - r) - 1LL
                          : (int64_t)r;
    const double gap = ((double)x * (double)y) - (double)w;
    const double size = (gap < 0.0) ? -gap : gap;
    return (size >= PROBE_GAP_LIMIT) ? 1U : 0U;
}

static int binary64_block(const int64_t *a, const int64_t *b, size_t from, size_t to)
{
    uint64_t acc = 0U;
    for (size_t j = from; j < to; j++) {
        acc |= binary64_excess(a[j], b[j]);
    }
    return (acc != 0U) ? 1 : 0;
}

/* Pairs on which the two tests disagree, element by element. */
size_t probe_disagreements(const int64_t *a, const int64_t *b, size_t n)
{
    size_t count = 0U;
    for (size_t i = 0U; i < n; i++) {
        const uint64_t proved = (excess_i64(a[i], b[i]) != 0U) ? 1U : 0U;
        count += (proved != binary64_excess(a[i], b[i])) ? 1U : 0U;
    }
    return count;
}

/* One scan of n elements by blocks, as sonnx_mul_first_overflow_i64 does:
 * nonzero when a block flags an overflow. */
static uint64_t by_blocks(int (*block)(const int64_t *, const int64_t *, size_t, size_t),
                          const int64_t *a, const int64_t *b, size_t n)
{
    uint64_t seen = 0U;
    for (size_t start = 0U; start < n; start += PROBE_BLOCK) {
        const size_t end = (n - start < PROBE_BLOCK) ? n : start + PROBE_BLOCK;
        seen |= (uint64_t)block(a, b, start, end);
    }
    return seen;
}

/* What one pass over n elements computes (its result is returned so that
 * the compiler keeps it): 0 reading floor, 1 proved scan, 2 binary64 scan,
 * 3 wrap pass into c. */
static uint64_t pass(int which, const int64_t *a, const int64_t *b, int64_t *c, size_t n)
{
    uint64_t seen = 0U;
    switch (which) {
    case 0:
        for (size_t j = 0U; j < n; j++) {
            seen ^= (uint64_t)a[j] ^ (uint64_t)b[j];
        }
        return seen;
    case 1:
        return by_blocks(block_overflows_i64, a, b, n);
    case 2:
        return by_blocks(binary64_block, a, b, n);
    default:
        sonnx_mul_wrap_i64(a, b, c, n);
        return (uint64_t)c[0];
    }
}

static uint64_t now_ns(void)
{
    struct timespec t;
    (void)clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000U + (uint64_t)t.tv_nsec;
}

/* Runs pass `which` `reps` times, each time into times_ns[k]; returns the
 * OR of the passes' results (a scan's "something overflowed"). */
uint64_t probe_time(int which, const int64_t *a, const int64_t *b, int64_t *c, size_t n,
                    size_t reps, uint64_t *times_ns)
{
    uint64_t seen = 0U;
    for (size_t k = 0U; k < reps; k++) {
        const uint64_t t0 = now_ns();
        seen |= pass(which, a, b, c, n);
        times_ns[k] = now_ns() - t0;
    }
    return seen;
}
