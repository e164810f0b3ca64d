/* probe_env.h -- what the design probes share (benchmarks/*.c): the MXCSR
 * of each floating-point environment they run a loop under, and a clock. */
#ifndef PROBE_ENV_H
#define PROBE_ENV_H

#include <stdint.h>
#include <time.h>

/* The MXCSR of environment `env`: 0 the default (round to nearest, no
 * FTZ/DAZ), 1 FTZ and DAZ, 2 toward -inf, 3 toward +inf, 4 toward zero
 * (probe_build.ENVIRONMENTS names 1..4). */
static inline unsigned int mxcsr_of(int env)
{
    static const unsigned int extra[5] = {0x0000U, 0x8040U, 0x2000U, 0x4000U, 0x6000U};
    return 0x1F80U | extra[env];
}

static inline uint64_t now_ns(void)
{
    struct timespec t;
    (void)clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000U + (uint64_t)t.tv_nsec;
}

#endif /* PROBE_ENV_H */
