#define _POSIX_C_SOURCE 199309L
/* exhaustive.c -- every input of the compiled float16/bfloat16 code of the
 * native kernel against independent correctly rounded oracles.
 *
 *   narrow-f16   all 2^32 binary32 inputs of sonnx_mul_f32_to_f16_bits
 *                against the F16C hardware conversion (vcvtps2ph, RNE)
 *   narrow-bf16  all 2^32 binary32 inputs of sonnx_mul_f32_to_bf16_bits
 *                against ref_bf16() (integer RNE with branches), itself
 *                checked against rne_format() (value-based, libm rint) on
 *                every 257th input
 *   widen-f16 / widen-bf16   all 2^16 patterns against _Float16 / the
 *                value m * 2^e rebuilt with ldexp
 *   mul-f16      all 2^32 pairs of sonnx_mul_f16: the exact product in
 *                binary64, to binary32 (exact), rounded by F16C
 *   mul-bf16     all 2^32 pairs of sonnx_mul_bf16: the exact product in
 *                binary64, to binary32 (hardware RNE), rounded by ref_bf16();
 *                every 4099th pair of both also against rne_format() of the
 *                exact product
 *   views-f32    all 2^32 binary32 patterns x through sonnx_mul_f32 (x * 1):
 *                the bits written are x's for every number and 0x7FC00000
 *                for every NaN, and the value written is the pattern's
 *                IEEE value rebuilt with ldexp: what the admitted contracts
 *                of the union views (f32_bits, f32_from_bits) and the header's
 *                axiomatic SonnxBits claim, on the code that runs
 *   views-f64    the same for sonnx_mul_f64 on every binary64 exponent
 *                (both signs) with 64 fractions each (0, 1, the top bits,
 *                all ones, random): 262,144 patterns
 *
 * Built with -DSONNX_MUL_HW (x86-64; native_exhaustive.py links the objects
 * the extension is built from), the loops selected at run time:
 *   mul-f16-f16c, mul-f16-f16c512   all 2^32 pairs of the F16C hardware
 *                     loops sonnx_mul_f16c_f16 (8-wide) and
 *                     sonnx_mul_f16c512_f16 (16-wide; native/hw/, WP
 *                     proves the loop from its vector operation's admitted
 *                     contract, which this checks) BIT FOR
 *                     BIT against the proved portable sonnx_mul_f16 (NaN
 *                     payloads and signs included), every 4099th also
 *                     against the oracle; each row of 2^16 pairs in two
 *                     calls cut at 2^16 - (1..7), so that the loops' tails
 *                     (not a multiple of the vector width) are run too
 *   mul-f16-f16c-layouts, mul-f16-f16c512-layouts   every length
 *                     1 .. 3 * 16 + 1 at every output misalignment 0..15
 *                     elements, and in place (c == a), against
 *                     sonnx_mul_f16: the whole vectors and the zero-padded
 *                     tail; the bytes around the output must not change
 *                     (what the admitted contract of the loops' vector
 *                     operation, mul_block, claims it writes)
 *   mul-bf16-avx2 / mul-bf16-avx512   the same for the proved sources
 *                     compiled with the avx2 / avx512 flags (native/isa.toml)
 *                     (sonnx_mul_avx2_bf16 ...) against sonnx_mul_bf16
 *   wrap8-stream8, wrap8-stream8512   all 2^16 (a, b) pairs of int8 and of
 *                     uint8 through the streaming wrap loops
 *                     sonnx_mul_stream8_wrap8 (32-wide) and
 *                     sonnx_mul_stream8512_wrap8 (64-wide; native/hw/: the
 *                     products by the variants' proved loops, the streaming
 *                     copy by its admitted vector operation) BIT FOR BIT against the proved portable
 *                     sonnx_mul_wrap_i8 / sonnx_mul_wrap_u8, in one call on
 *                     a buffer of 64 * 2^16 + 37 elements (longer than
 *                     SONNX_MUL_STREAM8_MIN_ELEMENTS: every pair at each of
 *                     the 64 byte positions of a vector), inputs and output
 *                     misaligned, the bytes around the output unchanged
 *   wrap8-stream8-layouts, wrap8-stream8512-layouts   every length
 *                     1 .. 3 * 64 + 1, and those from 64 before to 3 * 64 + 1
 *                     after one and two whole SONNX_MUL_STREAM8_BLOCKs, at
 *                     every misalignment 0..63 of the
 *                     output (the inputs misaligned otherwise), and in place
 *                     (c == a): the unaligned head, the streamed blocks and the
 *                     rest; the output starts as the complement of the
 *                     expected bytes and the bytes around it must not change
 * and `selftest` also runs planted faults of the hardware loops (rounding
 * toward zero; the hardware's sign of a NaN product; the float16 loop's
 * tail copied one element short; the streaming loop
 * leaving a block's last vector uncopied; skipping its tail), which must
 * be caught.
 *
 * Comparisons are bit for bit.  The narrowings' NaNs too: the sign, the
 * quiet bit set and the leading payload bits (what the header states of
 * the conversions; F16C's vcvtps2ph does the same).  For the products any
 * NaN matches any NaN (the oracles' payloads are the hardware's; the NaN
 * rule is checked by the views and the tests).  The oracles
 * share no code with the kernel: no bit tricks, values computed with
 * binary64 arithmetic, ldexp/frexp/rint, which are exact here.
 *
 * Usage: exhaustive [CHECK ...]   (default: all); `exhaustive selftest`
 * runs the oracles against deliberately wrong narrowings (truncation, a
 * wrong mask, ties rounded to odd, the wrong quiet bit of a NaN) and a
 * float64 loop without the NaN rule, and must report
 * mismatches: the negative control.
 * Prints one line per check: name inputs mismatches wall-seconds
 * cpu-seconds (the machine may be shared: CPU time is the check's own cost).  Exit 0 when
 * every check has zero mismatches (selftest: when every planted fault is
 * caught), 1 otherwise.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <immintrin.h>   /* F16C: the hardware binary32 -> binary16 conversion (oracle) */

#include "sonnx_mul_kernel.h"

#if defined(SONNX_MUL_HW)
#define SONNX_MUL_F16C_PLANTED_FAULTS
#include "sonnx_mul_f16c.h"
void sonnx_mul_avx2_bf16(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n);
void sonnx_mul_avx512_bf16(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n);
#define SONNX_MUL_STREAM8_PLANTED_FAULTS
#include "sonnx_mul_stream8.h"
#endif

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

/* ---- independent oracles --------------------------------------------- */

/* The value of a binary32 / binary64 pattern that is not a NaN, rebuilt from
 * its fields with ldexp (exact in long double / double here). */
static double f32_pattern_value(uint32_t u)
{
    static double scale[256];   /* 2^(e - 150), 2^-149 for e = 0: ldexp once */
    if (scale[1] == 0.0) {
        for (int e = 0; e < 255; e++) {
            scale[e] = ldexp(1.0, e == 0 ? -149 : e - 150);
        }
    }
    const int e = (int)((u >> 23) & 0xFFU);
    const double m = (double)(u & 0x7FFFFFU) + (e == 0 ? 0.0 : 8388608.0);
    const double mag = e == 255 ? INFINITY : m * scale[e];   /* exact: 24 bits */
    return (u >> 31) != 0U ? -mag : mag;
}

static long double f64_pattern_value(uint64_t u)
{
    const int e = (int)((u >> 52) & 0x7FFU);
    const long double m = (long double)(u & 0xFFFFFFFFFFFFFULL);
    const long double mag = e == 2047 ? (long double)INFINITY
                            : e == 0  ? ldexpl(m, -1074)
                                      : ldexpl(m + 4503599627370496.0L, e - 1075);
    return (u >> 63) != 0U ? -mag : mag;
}

/* Round the binary64 value d (exact, finite or not) to the binary format with
 * p significand bits, least normal exponent emin (value 2^emin) and largest
 * finite value (2 - 2^(1-p)) * 2^emax, RNE, returned as a double. */
static double rne_format(double d, int p, int emin, int emax)
{
    if (isnan(d) || isinf(d) || d == 0.0) {
        return d;
    }
    int e;
    (void)frexp(fabs(d), &e);           /* |d| = f * 2^e, f in [0.5, 1) */
    int q = e - 1;                      /* |d| in [2^q, 2^(q+1)) */
    if (q < emin) {
        q = emin;                       /* subnormal: fixed quantum */
    }
    const int quantum = q - (p - 1);    /* ulp = 2^quantum */
    const double scaled = ldexp(d, -quantum);   /* exact */
    const double r = ldexp(rint(scaled), quantum); /* rint: RNE */
    const double max = ldexp(2.0 - ldexp(1.0, 1 - p), emax);
    if (fabs(r) > max) {
        return copysign(INFINITY, d);
    }
    return r;
}

/* binary16 / bfloat16 bits of a double that is one of their values (or inf,
 * NaN, a signed zero): through binary32, which holds every such value. */
static uint16_t bf16_bits_of_value(double v)
{
    if (isnan(v)) {
        return 0x7FC0U;
    }
    return (uint16_t)(bits_of((float)v) >> 16);
}

static uint16_t f16_bits_of_value(double v)
{
    _Float16 h = (_Float16)(float)v;    /* exact: v is a binary16 value */
    uint16_t u;
    memcpy(&u, &h, sizeof u);
    return u;
}

static double f16_value(uint16_t u)
{
    _Float16 h;
    memcpy(&h, &u, sizeof h);
    return (double)h;
}

static double bf16_value(uint16_t u)
{
    const int sign = (u >> 15) != 0;
    const int ex = (u >> 7) & 0xFF;
    const int m = u & 0x7F;
    double v;
    if (ex == 0xFF) {
        v = (m != 0) ? NAN : INFINITY;
    } else if (ex == 0) {
        v = ldexp((double)m, -133);
    } else {
        v = ldexp((double)(m + 128), ex - 134);
    }
    return sign ? -v : v;
}

/* binary16 bits of a binary32 value, rounded by the F16C instruction
 * vcvtps2ph (RNE; subnormals kept: the harness never sets FTZ/DAZ). */
static uint16_t f16c_bits(float x)
{
    return (uint16_t)_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT);
}

/* bfloat16 bits of a binary32 pattern, integer-only RNE written apart from
 * the kernel (branches, no carry trick): the reference of the bfloat16
 * checks, itself cross-checked against rne_format() on a sample. */
static uint16_t ref_bf16(uint32_t u)
{
    const uint32_t exponent = (u >> 23) & 0xFFU;
    const uint32_t mantissa = u & 0x7FFFFFU;
    if (exponent == 0xFFU && mantissa != 0U) {
        return 0x7FC0U;
    }
    uint32_t upper = u >> 16;
    const uint32_t lower = u & 0xFFFFU;
    if (lower > 0x8000U) {
        upper = upper + 1U;
    } else if (lower == 0x8000U && (upper & 1U) == 1U) {
        upper = upper + 1U;
    }
    return (uint16_t)upper;
}

/* The narrowing's reference: ref_bf16, and a NaN with its sign and leading
 * payload bits, the quiet bit (bit 6) set. */
static uint16_t ref_bf16_narrow(uint32_t u)
{
    const uint32_t exponent = (u >> 23) & 0xFFU;
    const uint32_t mantissa = u & 0x7FFFFFU;
    if (exponent == 0xFFU && mantissa != 0U) {
        return (uint16_t)((u >> 16) | 0x40U);
    }
    return ref_bf16(u);
}

static int is_nan16(uint16_t u, int exp_mask, int man_mask)
{
    return ((u & exp_mask) == exp_mask) && ((u & man_mask) != 0);
}

static int same16(uint16_t got, uint16_t want, int exp_mask, int man_mask)
{
    if (is_nan16(want, exp_mask, man_mask)) {
        return is_nan16(got, exp_mask, man_mask);
    }
    return got == want;
}

/* ---- narrowings under test (kernel, or planted faults) ----------------- */

typedef uint16_t (*narrow_fn)(float);

static uint16_t truncating_bf16(float x)   /* planted: truncation, no rounding */
{
    return (uint16_t)(bits_of(x) >> 16);
}

static uint16_t wrong_mask_f16(float x)    /* planted: kernel result, lowest mantissa bit cleared */
{
    return (uint16_t)(sonnx_mul_f32_to_f16_bits(x) & 0xFFFEU);
}

/* planted: a tie (exactly half way between two bfloat16 values) goes to
 * the odd neighbour; every other input as the kernel */
static uint16_t ties_to_odd_bf16(float x)
{
    const uint32_t u = bits_of(x);
    const int nan = ((u & 0x7F800000U) == 0x7F800000U) && ((u & 0x7FFFFFU) != 0U);
    if (!nan && (u & 0xFFFFU) == 0x8000U) {
        return (uint16_t)((u >> 16) | 1U);
    }
    return sonnx_mul_f32_to_bf16_bits(x);
}

/* planted: a NaN quieted with bit 5 instead of bit 6 */
static uint16_t quiet_bit5_bf16(float x)
{
    const uint16_t r = sonnx_mul_f32_to_bf16_bits(x);
    const uint32_t u = bits_of(x);
    const int nan = ((u & 0x7F800000U) == 0x7F800000U) && ((u & 0x7FFFFFU) != 0U);
    return nan ? (uint16_t)((u >> 16) | 0x20U) : r;
}

/* planted: a tie in float16's normal range goes to the odd neighbour */
static uint16_t ties_to_odd_f16(float x)
{
    const uint32_t u = bits_of(x);
    const uint32_t mag = u & 0x7FFFFFFFU;
    if (mag >= 0x38800000U && mag < 0x47800000U && (mag & 0x1FFFU) == 0x1000U) {
        return (uint16_t)(((u >> 16) & 0x8000U) | (((mag - 0x38000000U) >> 13) | 1U));
    }
    return sonnx_mul_f32_to_f16_bits(x);
}

/* planted: a NaN quieted with bit 8 instead of bit 9 */
static uint16_t quiet_bit8_f16(float x)
{
    const uint16_t r = sonnx_mul_f32_to_f16_bits(x);
    const uint32_t u = bits_of(x);
    const int nan = ((u & 0x7F800000U) == 0x7F800000U) && ((u & 0x7FFFFFU) != 0U);
    return nan ? (uint16_t)(((u >> 16) & 0x8000U) | 0x7D00U | ((u >> 13) & 0x2FFU)) : r;
}

static unsigned long long check_narrow_f16(narrow_fn f, uint64_t stride)
{
    unsigned long long bad = 0;
    for (uint64_t u = 0; u <= 0xFFFFFFFFULL; u += stride) {
        const float x = float_of((uint32_t)u);
        const uint16_t want = f16c_bits(x);
        if (f(x) != want) {
            if (bad < 3) {
                fprintf(stderr, "  narrow-f16 0x%08llx: got 0x%04x want 0x%04x\n",
                        (unsigned long long)u, f(x), want);
            }
            bad++;
        }
    }
    return bad;
}

static unsigned long long check_narrow_bf16(narrow_fn f, uint64_t stride)
{
    unsigned long long bad = 0;
    for (uint64_t u = 0; u <= 0xFFFFFFFFULL; u += stride) {
        const float x = float_of((uint32_t)u);
        const uint16_t want = ref_bf16_narrow((uint32_t)u);
        if ((u % 257U) == 0U) { /* the reference against the value-based RNE */
            const uint16_t value = bf16_bits_of_value(rne_format((double)x, 8, -126, 127));
            if (!same16(want, value, 0x7F80, 0x007F)) {
                fprintf(stderr, "  reference bf16 0x%08llx: 0x%04x vs value 0x%04x\n",
                        (unsigned long long)u, want, value);
                bad++;
            }
        }
        if (f(x) != want) {
            if (bad < 3) {
                fprintf(stderr, "  narrow-bf16 0x%08llx: got 0x%04x want 0x%04x\n",
                        (unsigned long long)u, f(x), want);
            }
            bad++;
        }
    }
    return bad;
}

static unsigned long long check_widen(int bf)
{
    unsigned long long bad = 0;
    for (uint32_t u = 0; u <= 0xFFFFU; u++) {
        const uint16_t h = (uint16_t)u;
        const double want = bf ? bf16_value(h) : f16_value(h);
        const float got = bf ? sonnx_mul_bf16_bits_to_f32(h) : sonnx_mul_f16_bits_to_f32(h);
        const int ok = isnan(want) ? isnan(got)
                                   : (bits_of(got) == bits_of((float)want));
        if (!ok) {
            bad++;
        }
    }
    return bad;
}

static unsigned long long check_mul(int bf)
{
    static uint16_t a[BLOCK], b[BLOCK], c[BLOCK];
    static double bval[BLOCK];
    unsigned long long bad = 0;
    for (uint32_t j = 0; j < BLOCK; j++) {
        b[j] = (uint16_t)j;
        bval[j] = bf ? bf16_value((uint16_t)j) : f16_value((uint16_t)j);
    }
    for (uint32_t i = 0; i < BLOCK; i++) {
        const double av = bf ? bf16_value((uint16_t)i) : f16_value((uint16_t)i);
        for (uint32_t j = 0; j < BLOCK; j++) {
            a[j] = (uint16_t)i;
        }
        if (bf) {
            sonnx_mul_bf16(a, b, c, BLOCK);
        } else {
            sonnx_mul_f16(a, b, c, BLOCK);
        }
        for (uint32_t j = 0; j < BLOCK; j++) {
            const double exact = av * bval[j]; /* exact in binary64 */
            /* one rounding to binary32 (exact for float16 products; for
               bfloat16 the double rounding is innocuous: why3/widen.mlw
               bfloat16_double_rounding), then the independent narrowing;
               every 4099th pair also against the value-based RNE of the
               exact product (no binary32 step at all). */
            const float wide = (float)exact;
            const uint16_t want = bf ? ref_bf16(bits_of(wide)) : f16c_bits(wide);
            if (((i * BLOCK + j) % 4099U) == 0U) {
                const uint16_t value = bf ? bf16_bits_of_value(rne_format(exact, 8, -126, 127))
                                          : f16_bits_of_value(rne_format(exact, 11, -14, 15));
                const int agree = bf ? same16(want, value, 0x7F80, 0x007F)
                                     : same16(want, value, 0x7C00, 0x03FF);
                if (!agree) {
                    fprintf(stderr, "  oracle disagreement 0x%04x*0x%04x\n", i, j);
                    bad++;
                }
            }
            const int ok = bf ? same16(c[j], want, 0x7F80, 0x007F)
                              : same16(c[j], want, 0x7C00, 0x03FF);
            if (!ok) {
                if (bad < 3) {
                    fprintf(stderr, "  mul-%s 0x%04x*0x%04x: got 0x%04x want 0x%04x\n",
                            bf ? "bf16" : "f16", i, j, c[j], want);
                }
                bad++;
            }
        }
    }
    return bad;
}

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

/* views-f32: every pattern x through the compiled float32 loop as x * 1. */
static unsigned long long check_views_f32(void)
{
    enum { ROW = 65536 };
    static float a[ROW], one[ROW], c[ROW];
    unsigned long long bad = 0ULL;
    for (size_t i = 0; i < ROW; i++) {
        one[i] = 1.0F;
    }
    for (uint64_t hi = 0; hi < 65536U; hi++) {
        for (uint32_t lo = 0; lo < ROW; lo++) {
            a[lo] = float_of((uint32_t)(hi << 16) | lo);
        }
        sonnx_mul_f32(a, one, c, ROW);
        for (uint32_t lo = 0; lo < ROW; lo++) {
            const uint32_t u = (uint32_t)(hi << 16) | lo;
            const uint32_t got = bits_of(c[lo]);
            const int nan = (u & 0x7FFFFFFFU) > 0x7F800000U;
            const int ok = nan ? got == 0x7FC00000U
                               : got == u && (double)c[lo] == f32_pattern_value(u) &&
                                     !signbit(c[lo]) == !signbit(f32_pattern_value(u)) &&
                                     !isnan(c[lo]);
            if (!ok && bad++ < 5ULL) {
                printf("  views-f32 %08x -> %08x\n", u, got);
            }
        }
    }
    return bad;
}

/* views-f64: every exponent and sign, 64 fractions each, as x * 1. */
typedef void (*loop64_fn)(const double *, const double *, double *, size_t);

/* planted: the float64 loop without the NaN rule (the hardware's NaN kept) */
static void no_rule_f64(const double *a, const double *b, double *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        c[i] = a[i] * b[i];
    }
}

static unsigned long long check_views_f64(loop64_fn loop, unsigned long long *inputs)
{
    enum { FRACS = 64, ROW = 2 * 2048 * FRACS };
    static double a[ROW], one[ROW], c[ROW];
    static uint64_t pattern[ROW];
    uint64_t state = 0x9E3779B97F4A7C15ULL;
    size_t n = 0;
    for (uint64_t sign = 0; sign < 2U; sign++) {
        for (uint64_t e = 0; e < 2048U; e++) {
            for (unsigned f = 0; f < FRACS; f++) {
                uint64_t frac;
                state = state * 6364136223846793005ULL + 1442695040888963407ULL;
                switch (f) {
                case 0: frac = 0U; break;
                case 1: frac = 1U; break;
                case 2: frac = 1ULL << 51; break;   /* the quiet bit of a NaN */
                case 3: frac = (1ULL << 51) | 1U; break;
                case 4: frac = 0xFFFFFFFFFFFFFULL; break;
                case 5: frac = 1ULL << 50; break;
                default: frac = state >> 12; break;
                }
                pattern[n] = (sign << 63) | (e << 52) | frac;
                memcpy(&a[n], &pattern[n], sizeof a[n]);
                one[n] = 1.0;
                n++;
            }
        }
    }
    loop(a, one, c, (size_t)ROW);
    unsigned long long bad = 0ULL;
    for (size_t i = 0; i < (size_t)ROW; i++) {
        const uint64_t u = pattern[i];
        uint64_t got;
        memcpy(&got, &c[i], sizeof got);
        const int nan = (u & 0x7FFFFFFFFFFFFFFFULL) > 0x7FF0000000000000ULL;
        const int ok = nan ? got == 0x7FF8000000000000ULL
                           : got == u && (long double)c[i] == f64_pattern_value(u) &&
                                 !signbit(c[i]) == !signbit(f64_pattern_value(u)) && !isnan(c[i]);
        if (!ok && bad++ < 5ULL && loop == sonnx_mul_f64) {   /* planted: counted only */
            printf("  views-f64 %016llx -> %016llx\n", (unsigned long long)u, (unsigned long long)got);
        }
    }
    *inputs = (unsigned long long)ROW;
    return bad;
}

static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu0;

static int report(const char *name, unsigned long long inputs, unsigned long long bad, double t0)
{
    const double c = cpu();
    printf("%s %llu %llu %.2f %.2f\n", name, inputs, bad, now() - t0, c - cpu0);
    cpu0 = c;
    fflush(stdout);
    return bad == 0ULL ? 0 : 1;
}

static int selected(int argc, char **argv, const char *name)
{
    if (argc <= 1) {
        return 1;
    }
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], name) == 0) {
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    int failed = 0;
    double t0;
    const unsigned long long all = 4294967296ULL;
    cpu0 = cpu();
    if (argc == 2 && strcmp(argv[1], "selftest") == 0) {
        /* Each planted fault must be caught (on a sample: every 4099th input). */
        t0 = now();
        const unsigned long long b1 = check_narrow_bf16(truncating_bf16, 4099U);
        printf("selftest-truncating-bf16 %llu caught %.2f\n", b1, now() - t0);
        t0 = now();
        const unsigned long long b2 = check_narrow_f16(wrong_mask_f16, 4099U);
        printf("selftest-wrong-mask-f16 %llu caught %.2f\n", b2, now() - t0);
        static const struct {
            const char *name;
            narrow_fn fn;
            int bf;
        } narrowings[] = {
            {"selftest-ties-to-odd-bf16", ties_to_odd_bf16, 1},
            {"selftest-quiet-bit-bf16", quiet_bit5_bf16, 1},
            {"selftest-ties-to-odd-f16", ties_to_odd_f16, 0},
            {"selftest-quiet-bit-f16", quiet_bit8_f16, 0},
        };
        for (size_t k = 0; k < sizeof narrowings / sizeof narrowings[0]; k++) {
            t0 = now();
            const unsigned long long caught = narrowings[k].bf
                ? check_narrow_bf16(narrowings[k].fn, 4099U)
                : check_narrow_f16(narrowings[k].fn, 4099U);
            printf("%s %llu caught %.2f\n", narrowings[k].name, caught, now() - t0);
            failed |= (caught == 0ULL);
        }
        t0 = now();
        unsigned long long views;
        const unsigned long long b3 = check_views_f64(no_rule_f64, &views);
        printf("selftest-no-rule-f64 %llu caught %.2f\n", b3, now() - t0);
#if defined(SONNX_MUL_HW)
        /* The planted hardware loops this CPU can run (the others would
         * stop on an illegal instruction; native_exhaustive.py expects the
         * same list from the CPU's flags). */
        __builtin_cpu_init();
        const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
        const int avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                           __builtin_cpu_supports("avx512dq");
        static const struct {
            const char *name;
            void (*fn)(const uint16_t *, const uint16_t *, uint16_t *, size_t);
            int wide;
        } planted16[] = {
            {"selftest-truncating-f16c", sonnx_mul_f16c_f16_truncating, 0},
            {"selftest-nan-sign-f16c", sonnx_mul_f16c_f16_nan_sign, 0},
            {"selftest-short-tail-f16c", sonnx_mul_f16c_f16_short_tail, 0},
            {"selftest-truncating-f16c512", sonnx_mul_f16c512_f16_truncating, 1},
            {"selftest-nan-sign-f16c512", sonnx_mul_f16c512_f16_nan_sign, 1},
            {"selftest-short-tail-f16c512", sonnx_mul_f16c512_f16_short_tail, 1},
        };
        int missed = 0;
        for (size_t p = 0; p < sizeof planted16 / sizeof planted16[0]; p++) {
            if (!avx2 || (planted16[p].wide && !avx512)) {
                continue;
            }
            t0 = now();
            unsigned long long cases;
            const unsigned long long caught =
                check_same("planted", planted16[p].fn, sonnx_mul_f16, 0, 257U) +
                check_f16c_layouts("planted", planted16[p].fn, &cases);
            printf("%s %llu caught %.2f\n", planted16[p].name, caught, now() - t0);
            missed |= caught == 0ULL;
        }
        /* The streaming int8/uint8 loops: the pairs and the layouts checks. */
        static const struct {
            const char *name;
            loop8_fn fn;
            int wide;
        } planted8[] = {
            {"selftest-short-copy-stream8", sonnx_mul_stream8_wrap8_short_copy, 0},
            {"selftest-no-tail-stream8", sonnx_mul_stream8_wrap8_no_tail, 0},
            {"selftest-short-copy-stream8512", sonnx_mul_stream8512_wrap8_short_copy, 1},
            {"selftest-no-tail-stream8512", sonnx_mul_stream8512_wrap8_no_tail, 1},
        };
        for (size_t p = 0; p < sizeof planted8 / sizeof planted8[0]; p++) {
            unsigned long long cases;
            if (!avx2 || (planted8[p].wide && !avx512)) {
                continue;
            }
            t0 = now();
            const unsigned long long caught = check_stream8_pairs("planted", planted8[p].fn) +
                                              check_stream8_layouts("planted", planted8[p].fn,
                                                                    &cases);
            printf("%s %llu caught %.2f\n", planted8[p].name, caught, now() - t0);
            missed |= caught == 0ULL;
        }
        if (missed) {
            return 1;
        }
#endif
        return (b1 > 0ULL && b2 > 0ULL && b3 > 0ULL && !failed) ? 0 : 1;
    }
    if (selected(argc, argv, "widen-f16")) {
        t0 = now();
        failed |= report("widen-f16", 65536ULL, check_widen(0), t0);
    }
    if (selected(argc, argv, "widen-bf16")) {
        t0 = now();
        failed |= report("widen-bf16", 65536ULL, check_widen(1), t0);
    }
    if (selected(argc, argv, "narrow-f16")) {
        t0 = now();
        failed |= report("narrow-f16", all, check_narrow_f16(sonnx_mul_f32_to_f16_bits, 1U), t0);
    }
    if (selected(argc, argv, "narrow-bf16")) {
        t0 = now();
        failed |= report("narrow-bf16", all, check_narrow_bf16(sonnx_mul_f32_to_bf16_bits, 1U), t0);
    }
    if (selected(argc, argv, "views-f32")) {
        t0 = now();
        failed |= report("views-f32", all, check_views_f32(), t0);
    }
    if (selected(argc, argv, "views-f64")) {
        unsigned long long inputs;
        t0 = now();
        const unsigned long long bad = check_views_f64(sonnx_mul_f64, &inputs);
        failed |= report("views-f64", inputs, bad, t0);
    }
    if (selected(argc, argv, "mul-f16")) {
        t0 = now();
        failed |= report("mul-f16", all, check_mul(0), t0);
    }
    if (selected(argc, argv, "mul-bf16")) {
        t0 = now();
        failed |= report("mul-bf16", all, check_mul(1), t0);
    }
#if defined(SONNX_MUL_HW)
    if (selected(argc, argv, "mul-f16-f16c")) {
        t0 = now();
        failed |= report("mul-f16-f16c", all,
                         check_same("mul-f16-f16c", sonnx_mul_f16c_f16, sonnx_mul_f16, 0, 1U), t0);
    }
    if (selected(argc, argv, "mul-f16-f16c512")) {
        t0 = now();
        failed |= report(
            "mul-f16-f16c512", all,
            check_same("mul-f16-f16c512", sonnx_mul_f16c512_f16, sonnx_mul_f16, 0, 1U), t0);
    }
    static const struct {
        const char *name;
        loop16_fn fn;
    } f16c_layouts[] = {
        {"mul-f16-f16c-layouts", sonnx_mul_f16c_f16},
        {"mul-f16-f16c512-layouts", sonnx_mul_f16c512_f16},
    };
    for (size_t v = 0; v < sizeof f16c_layouts / sizeof f16c_layouts[0]; v++) {
        if (selected(argc, argv, f16c_layouts[v].name)) {
            unsigned long long cases;
            t0 = now();
            const unsigned long long bad =
                check_f16c_layouts(f16c_layouts[v].name, f16c_layouts[v].fn, &cases);
            failed |= report(f16c_layouts[v].name, cases, bad, t0);
        }
    }
    if (selected(argc, argv, "mul-bf16-avx2")) {
        t0 = now();
        failed |= report("mul-bf16-avx2", all,
                         check_same("mul-bf16-avx2", sonnx_mul_avx2_bf16, sonnx_mul_bf16, 1, 1U), t0);
    }
    if (selected(argc, argv, "mul-bf16-avx512")) {
        t0 = now();
        failed |= report(
            "mul-bf16-avx512", all,
            check_same("mul-bf16-avx512", sonnx_mul_avx512_bf16, sonnx_mul_bf16, 1, 1U), t0);
    }
    static const struct {
        const char *name;
        const char *layouts;
        loop8_fn fn;
    } stream8[] = {
        {"wrap8-stream8", "wrap8-stream8-layouts", sonnx_mul_stream8_wrap8},
        {"wrap8-stream8512", "wrap8-stream8512-layouts", sonnx_mul_stream8512_wrap8},
    };
    for (size_t v = 0; v < sizeof stream8 / sizeof stream8[0]; v++) {
        if (selected(argc, argv, stream8[v].name)) {
            t0 = now();
            /* inputs: the 2^16 pairs, once as int8 and once as uint8 */
            failed |= report(stream8[v].name, 2ULL * PAIRS8,
                             check_stream8_pairs(stream8[v].name, stream8[v].fn), t0);
        }
        if (selected(argc, argv, stream8[v].layouts)) {
            unsigned long long cases;
            t0 = now();
            const unsigned long long bad =
                check_stream8_layouts(stream8[v].layouts, stream8[v].fn, &cases);
            failed |= report(stream8[v].layouts, cases, bad, t0);
        }
    }
#endif
    return failed;
}
