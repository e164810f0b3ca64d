/* f32_exact.c -- a design probe for a float32 product whose time does not
 * depend on the values (benchmarks/f32_exact.py).
 *
 * The kernel's float32 loop (sonnx_mul_f32) multiplied in binary32 when
 * this probe was written; on an Intel CPU a subnormal operand or result
 * costs a microcode assist, 5-6x the time of normal data
 * (docs/native-kernel.md, "Time by value class").  It now multiplies the
 * widened operands in binary64 and narrows once (loop 0 here).
 * The candidate below never gives the FPU a subnormal: each operand is
 * split on its bits into an integer significand s (24 bits, the implicit
 * bit put back for a normal) and an exponent k (1 for a subnormal), so that
 * x = s * 2^(k - 150); the binary64 product of the two significands is exact
 * (an integer below 2^48, converted from integers below 2^24) and normal or
 * zero, so neither a rounding mode nor flush-to-zero nor denormals-are-zero
 * changes it; then one rounding to nearest even to binary32 on the bits of
 * that product, its exponent moved by kx + ky - 300: a normal result takes
 * 29 fraction bits off, a subnormal one shifts the 53-bit significand right
 * by 30 to 53 (two truncating shifts, as the float16 narrowing does),
 * overflow gives infinity; zeros, infinities and NaN by selects, a NaN as
 * the canonical quiet NaN (the kernel's rule).  Not proved, not in the
 * product: this file includes the float source to reach sonnx_mul_f32 and
 * compares and times the two from C.
 *
 * Two more loops take the kernel's apart, to say where its time goes:
 * loop 2 is the kernel's without the NaN rule (the same widened product and
 * narrowing, the hardware's NaN written as it comes), loop 3 the binary32
 * product `a * b` that other runtimes run (its time depends on the values
 * on Intel; on the Zen 4 it is the memory's).  Both give the kernel's bits
 * on every product that is not a NaN. */
#define _POSIX_C_SOURCE 199309L
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <xmmintrin.h>

#include "probe_env.h"
#include "sonnx_mul_float.c"

#ifndef PROBE_TIE_LSB
#define PROBE_TIE_LSB 1 /* 0 is a planted fault: every tie rounded down */
#endif

/* One product on the patterns x and y: the binary32 pattern written. */
static inline uint32_t exact_f32(uint32_t x, uint32_t y)
{
    const uint32_t mx = x & 0x7FFFFFFFU;
    const uint32_t my = y & 0x7FFFFFFFU;
    const uint32_t ex = mx >> 23U;
    const uint32_t ey = my >> 23U;
    uint32_t sx = (mx & 0x7FFFFFU) | 0x800000U;
    uint32_t sy = (my & 0x7FFFFFU) | 0x800000U;
    uint32_t kx = ex;
    uint32_t ky = ey;
    if (ex == 0U) {
        sx = mx;
    }
    if (ex == 0U) {
        kx = 1U;
    }
    if (ey == 0U) {
        sy = my;
    }
    if (ey == 0U) {
        ky = 1U;
    }
    sonnx_f64_view p;
    p.f = (double)sx * (double)sy; /* exact: an integer below 2^48 */
    const int64_t er = (int64_t)(p.u >> 52U) + (int64_t)(kx + ky) - 1196; /* binary32 exponent */
    const uint64_t frac = p.u & 0xFFFFFFFFFFFFFULL;
    const uint64_t lsb = ((frac >> 29U) & 1U) * PROBE_TIE_LSB;
    const uint64_t normal = ((uint64_t)er << 23U) + ((frac + 0xFFFFFFFULL + lsb) >> 29U);
    const uint64_t sig = frac | 0x10000000000000ULL;
    uint64_t s = (uint64_t)(29 - er); /* the right shift less one, for er <= 0 */
    if (er < -24) {
        s = 63U;
    }
    const uint64_t z = sig >> s;
    const uint64_t t = (sig + (((z >> 1U) & 1U) * PROBE_TIE_LSB) - 1U) >> s;
    const uint64_t sub = (t >> 1U) + (t & 1U);
    uint64_t r = normal;
    if (er <= 0) {
        r = sub;
    }
    if (er > 254) {
        r = 0x7F800000U;
    }
    if ((mx == 0U) || (my == 0U)) {
        r = 0U;
    }
    if ((ex == 255U) || (ey == 255U)) {
        r = 0x7F800000U;
    }
    uint32_t res = (uint32_t)r | ((x ^ y) & 0x80000000U);
    if ((mx > 0x7F800000U) || (my > 0x7F800000U) || ((mx == 0x7F800000U) && (my == 0U)) ||
        ((my == 0x7F800000U) && (mx == 0U))) {
        res = 0x7FC00000U;
    }
    return res;
}

static void exact_loop(const uint32_t *a, const uint32_t *b, uint32_t *c, size_t n)
{
    for (size_t i = 0U; i < n; i++) {
        c[i] = exact_f32(a[i], b[i]);
    }
}

#ifndef PROBE_PART_B
#define PROBE_PART_B b /* a is a planted fault: loop 2 squares its first operand */
#endif

static void widened_loop(const float *a, const float *b, float *c, size_t n)
{
    for (size_t i = 0U; i < n; i++) {
        c[i] = (float)SONNX_WIDE((double)a[i] * (double)PROBE_PART_B[i]);
    }
}

static void binary32_loop(const float *a, const float *b, float *c, size_t n)
{
    for (size_t i = 0U; i < n; i++) {
        c[i] = a[i] * b[i];
    }
}

/* Runs loop `which` (0 the kernel's sonnx_mul_f32, 1 the exact loop, 2 the
 * kernel's without the NaN rule, 3 the binary32 product) on n pairs under
 * environment `env`, restoring the caller's MXCSR. */
void probe_run(int which, int env, const uint32_t *a, const uint32_t *b, uint32_t *c, size_t n)
{
    const unsigned int saved = _mm_getcsr();
    _mm_setcsr(mxcsr_of(env));
    if (which == 0) {
        sonnx_mul_f32((const float *)(const void *)a, (const float *)(const void *)b,
                      (float *)(void *)c, n);
    } else if (which == 1) {
        exact_loop(a, b, c, n);
    } else if (which == 2) {
        widened_loop((const float *)(const void *)a, (const float *)(const void *)b,
                     (float *)(void *)c, n);
    } else {
        binary32_loop((const float *)(const void *)a, (const float *)(const void *)b,
                      (float *)(void *)c, n);
    }
    _mm_setcsr(saved);
}

/* Runs loop `which` `reps` times in the default environment, each time into
 * times_ns[k]. */
void probe_time(int which, const uint32_t *a, const uint32_t *b, uint32_t *c, size_t n,
                size_t reps, uint64_t *times_ns)
{
    for (size_t k = 0U; k < reps; k++) {
        const uint64_t t0 = now_ns();
        probe_run(which, 0, a, b, c, n);
        times_ns[k] = now_ns() - t0;
    }
}
