/* kernel_cycles.c -- the C kernel alone, timed from C (benchmarks/kernel_cycles.py).
 *
 * Built into a shared library with the proved sources and native/flags.py's
 * flags; Python hands it the operands of one value class and reads, per
 * call of the kernel, the wall time (CLOCK_MONOTONIC, ns) and on x86-64 the
 * time-stamp counter (reference cycles, rdtsc).  No Python, no glue and no
 * allocation inside the timed region. */
#define _POSIX_C_SOURCE 199309L
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "sonnx_mul_fpenv.h"
#include "sonnx_mul_kernel.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static uint64_t ticks(void) { return (uint64_t)__rdtsc(); }
#define SONNX_BENCH_HAS_TSC 1
#else
static uint64_t ticks(void) { return 0U; }
#define SONNX_BENCH_HAS_TSC 0
#endif

static uint64_t now_ns(void)
{
    struct timespec t;
    (void)clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000U + (uint64_t)t.tv_nsec;
}

int sonnx_bench_has_tsc(void) { return SONNX_BENCH_HAS_TSC; }

/* One call of the kernel named by `kind`, `checked` selecting the
 * overflow-checking entry point of an integer type; returns 0, or -1 for an
 * unknown kind. */
static int call(int kind, int checked, const void *a, const void *b, void *c, size_t n)
{
#define SONNX_INT(K, T, S)                                                      \
    case K:                                                                     \
        if (checked) {                                                          \
            (void)sonnx_mul_checked_##S((const T *)a, (const T *)b, (T *)c, n); \
        } else {                                                                \
            sonnx_mul_wrap_##S((const T *)a, (const T *)b, (T *)c, n);          \
        }                                                                       \
        return 0;
    switch (kind) {
    case 0: sonnx_mul_f16((const uint16_t *)a, (const uint16_t *)b, (uint16_t *)c, n); return 0;
    case 1: sonnx_mul_bf16((const uint16_t *)a, (const uint16_t *)b, (uint16_t *)c, n); return 0;
    case 2: sonnx_mul_f32((const float *)a, (const float *)b, (float *)c, n); return 0;
    case 3: sonnx_mul_f64((const double *)a, (const double *)b, (double *)c, n); return 0;
    SONNX_INT(4, int8_t, i8)
    SONNX_INT(5, uint8_t, u8)
    SONNX_INT(6, int16_t, i16)
    SONNX_INT(7, uint16_t, u16)
    SONNX_INT(8, int32_t, i32)
    SONNX_INT(9, uint32_t, u32)
    SONNX_INT(10, int64_t, i64)
    SONNX_INT(11, uint64_t, u64)
    default: return -1;
    }
#undef SONNX_INT
}

/* `reps` timed calls (after one untimed call that warms the caches):
 * ns[r] and tsc[r] receive each call's wall time and TSC ticks. */
int sonnx_bench_run(int kind, int checked, const void *a, const void *b, void *c, size_t n,
                    int reps, uint64_t *ns, uint64_t *tsc)
{
    if (call(kind, checked, a, b, c, n) != 0) {
        return -1;
    }
    for (int r = 0; r < reps; r++) {
        const uint64_t t0 = now_ns();
        const uint64_t k0 = ticks();
        (void)call(kind, checked, a, b, c, n);
        const uint64_t k1 = ticks();
        const uint64_t t1 = now_ns();
        ns[r] = t1 - t0;
        tsc[r] = k1 - k0;
    }
    return 0;
}

/* The fixed cost of a call (benchmarks/call_cost.py): the wall time of
 * `calls` calls in a row of the kernel named by `kind` on n elements,
 * bracketed by the glue's floating-point environment (sonnx_mul_fpenv.h:
 * the caller's saved, the default set, the caller's restored) when
 * `bracket` is 1; with n == 0 the bracket alone.  ns, or 0 for an unknown
 * kind. */
uint64_t sonnx_bench_batch_ns(int kind, int bracket, const void *a, const void *b, void *c,
                              size_t n, int calls)
{
    if (n > 0U && call(kind, 0, a, b, c, n) != 0) {
        return 0U;
    }
    const uint64_t t0 = now_ns();
    for (int r = 0; r < calls; r++) {
        if (bracket) {
            sonnx_mul_fpenv saved = sonnx_mul_fpenv_enter();
            if (n > 0U) {
                (void)call(kind, 0, a, b, c, n);
            }
            sonnx_mul_fpenv_leave(&saved);
        } else if (n > 0U) {
            (void)call(kind, 0, a, b, c, n);
        }
    }
    return now_ns() - t0;
}

/* The x86 MXCSR, for the FP-environment check of `make bench`
 * (benchmarks/fp_environment.py); elsewhere 0 and a no-op. */
#if defined(__x86_64__) || defined(__i386__)
unsigned int sonnx_bench_get_mxcsr(void) { return _mm_getcsr(); }
void sonnx_bench_set_mxcsr(unsigned int value) { _mm_setcsr(value); }
#else
unsigned int sonnx_bench_get_mxcsr(void) { return 0U; }
void sonnx_bench_set_mxcsr(unsigned int value) { (void)value; }
#endif
