/* int64_scan.c -- int64's two checked tests side by side (benchmarks/int64_scan.py).
 *
 * The generated integer unit holds both: the division-free test from 32-bit
 * halves (excess_i64, the scan of every build but avx512) and the binary64
 * test (excess_f64_i64, native/int64_binary64.py: with w the wrapped product,
 * fits <=> |fl(fl(x) * fl(y)) - fl(w)| < 2^20; the avx512 build's scan).
 * WP proves each against the same contract; this file includes the unit to
 * reach both static block scans, compares their verdicts and times them
 * from C in whatever build it is compiled with. */
#define _POSIX_C_SOURCE 199309L
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define SONNX_MUL_I64_BOTH_SCANS /* both block scans, whatever the build */
#include "probe_env.h"
#include "sonnx_mul_int.c"

#define PROBE_BLOCK 2048U

/* Pairs on which the two tests disagree, element by element. */
size_t probe_disagreements(const int64_t *a, const int64_t *b, size_t n)
{
    size_t count = 0U;
    for (size_t i = 0U; i < n; i++) {
        const uint64_t halves = (excess_i64(a[i], b[i]) != 0U) ? 1U : 0U;
        const uint64_t binary64 = (excess_f64_i64(a[i], b[i]) != 0U) ? 1U : 0U;
        count += (halves != binary64) ? 1U : 0U;
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
 * the compiler keeps it): 0 reading floor, 1 the halves scan, 2 the
 * binary64 scan, 3 wrap pass into c. */
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
        return by_blocks(block_overflows_f64_i64, a, b, n);
    default:
        sonnx_mul_wrap_i64(a, b, c, n);
        return (uint64_t)c[0];
    }
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
