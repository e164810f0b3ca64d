/* common.h -- what every part of the exhaustive harness uses: the row
 * length (one row per 16-bit pattern), the wall clock, and a binary32's bits
 * (memcpy, no conversion).  clock_gettime needs _POSIX_C_SOURCE, which
 * exhaustive.c defines before any header.
 *
 * A part of the exhaustive harness native/verify/exhaustive.c, which is
 * one translation unit: native_exhaustive.py compiles that file alone, and
 * it includes each part once (a part includes the parts it uses).
 */
#ifndef EXHAUSTIVE_COMMON_H
#define EXHAUSTIVE_COMMON_H

#include <stdint.h>
#include <string.h>
#include <time.h>

#define BLOCK 65536U

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

#endif /* EXHAUSTIVE_COMMON_H */
