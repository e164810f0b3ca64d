/* sample.h -- the sizes of the portable harness's samples and the
 * pseudo-random patterns they add to the edge sets (xorshift64 rows,
 * splitmix64 low bits of the float columns).
 *
 * A part of the portable harness native/verify/portable.c, which is one
 * translation unit: every build compiles that file alone, and it includes
 * each part once (a part includes the parts it uses).
 */
#ifndef PORTABLE_SAMPLE_H
#define PORTABLE_SAMPLE_H

#include <stdint.h>

#define COLUMNS 65536U     /* one column per 16-bit pattern */
#define MAX_ROWS 64U       /* room for the float edge rows (47) */
#define MAX_INT_EDGES 32U  /* room for the integer edge set (at most 31) */
#define MAX_PAIRS (MAX_INT_EDGES * MAX_INT_EDGES)
#define SEED UINT64_C(0x9E3779B97F4A7C15)

/* ---- pseudo-random patterns ------------------------------------------- */

static uint64_t xorshift64(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}

static uint64_t splitmix64(uint64_t x)
{
    uint64_t z = x + SEED;
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

#endif /* PORTABLE_SAMPLE_H */
