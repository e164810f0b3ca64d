/* sonnx_mul_f16c.c -- float16 Mul with the F16C conversion instructions
 * (vcvtph2ps, vcvtps2ph).  Compiled twice (native/flags.mk):
 *   SONNX_CFLAGS_F16C                        -> sonnx_mul_f16c_f16, 8 elements
 *                                               at a time (AVX2 + F16C)
 *   SONNX_CFLAGS_AVX512 SONNX_CFLAGS_F16C    -> sonnx_mul_f16c512_f16, 16 at a
 *                                               time (the 512-bit forms)
 * and called only when the CPU has those instructions (the glue checks at
 * run time).
 *
 * The algorithm is exactly the proved portable loop's (sonnx_mul_f16 in
 * native/src/sonnx_mul_float.c), step for step:
 *   - the magnitudes |a|, |b| (sign bits cleared) are widened exactly to
 *     binary32 (vcvtph2ps: every float16 is a binary32, subnormals
 *     included; the process never sets DAZ -- the self-test would see it);
 *   - one binary32 product (vmulps, round to nearest even);
 *   - narrowed to float16 with round to nearest even given in the
 *     instruction (vcvtps2ph, imm _MM_FROUND_TO_NEAREST_INT: independent of
 *     MXCSR.RC), which overflows to infinity and keeps subnormals;
 *   - the sign of the result is replaced by the exclusive or of the
 *     operands' signs (IEEE 754 6.3), and a NaN result by the canonical
 *     NaN 0x7E00 (the kernel's NaN rule).
 * Not WP-proved: verified by exhaustion on the compiled code (sonnx_mul_f16c.h).
 *
 * Every element, the last n % WIDTH included, goes through the same vector
 * code (the tail through a zero-padded copy): one code path. */
#include <immintrin.h>
#include <string.h>

#include "sonnx_mul_f16c.h"
#include "sonnx_mul_config.h"

#if !defined(__F16C__) || !defined(__AVX2__)
#error "sonnx_mul_f16c.c is compiled with SONNX_CFLAGS_F16C (native/flags.mk)"
#endif

#define ROUND_NEAREST (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define ROUND_TRUNCATE (_MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)

/* One vector of float16 patterns (VEC), of binary32 (WIDE), and its ops. */
#if defined(__AVX512F__)
#define WIDTH 16U
#define NAME(x) sonnx_mul_f16c512_##x
typedef __m256i vec;
typedef __m512 wide;
#define LOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define STORE(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))
#define SET16(x) _mm256_set1_epi16(x)
#define AND(x, y) _mm256_and_si256((x), (y))
#define ANDNOT(x, y) _mm256_andnot_si256((x), (y))
#define OR(x, y) _mm256_or_si256((x), (y))
#define XOR(x, y) _mm256_xor_si256((x), (y))
#define GT16(x, y) _mm256_cmpgt_epi16((x), (y))
#define BLEND(x, y, m) _mm256_blendv_epi8((x), (y), (m))
#define WIDEN(x) _mm512_cvtph_ps(x)
#define MUL(x, y) _mm512_mul_ps((x), (y))
#define NARROW(x, r) _mm512_cvtps_ph((x), (r))
#else
#define WIDTH 8U
#define NAME(x) sonnx_mul_f16c_##x
typedef __m128i vec;
typedef __m256 wide;
#define LOAD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define STORE(p, v) _mm_storeu_si128((__m128i *)(void *)(p), (v))
#define SET16(x) _mm_set1_epi16(x)
#define AND(x, y) _mm_and_si128((x), (y))
#define ANDNOT(x, y) _mm_andnot_si128((x), (y))
#define OR(x, y) _mm_or_si128((x), (y))
#define XOR(x, y) _mm_xor_si128((x), (y))
#define GT16(x, y) _mm_cmpgt_epi16((x), (y))
#define BLEND(x, y, m) _mm_blendv_epi8((x), (y), (m))
#define WIDEN(x) _mm256_cvtph_ps(x)
#define MUL(x, y) _mm256_mul_ps((x), (y))
#define NARROW(x, r) _mm256_cvtps_ph((x), (r))
#endif

/* WIDTH float16 products.  `fault` is 0 in the extension; the planted
 * faults of the exhaustive harness's negative control only: 1 keeps the
 * hardware's NaN (payload) with the product's sign, 2 rounds toward zero. */
static inline vec mul_vec(vec a, vec b, const int fault)
{
    const vec magnitude = SET16(0x7FFF);
    const vec sign = ANDNOT(magnitude, XOR(a, b));
    const wide p = MUL(WIDEN(AND(a, magnitude)), WIDEN(AND(b, magnitude)));
    vec h;
    if (fault == 2) {
        h = NARROW(p, ROUND_TRUNCATE);
    } else {
        h = NARROW(p, ROUND_NEAREST);
    }
    const vec mh = AND(h, magnitude);
    if (fault == 1) {
        return OR(mh, sign);
    }
    /* The NaN rule (as in the portable loop): a NaN product is the
     * canonical NaN 0x7E00; 16-bit signed compare, exact since magnitudes
     * are below 0x8000. */
    const vec nan = GT16(mh, SET16(0x7C00));
    return BLEND(OR(mh, sign), SET16(0x7E00), nan);
}

static inline void loop(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n,
                        const int fault)
{
    size_t i = 0U;
    for (; (n - i) >= WIDTH; i += WIDTH) {
        STORE(c + i, mul_vec(LOAD(a + i), LOAD(b + i), fault));
    }
    if (i < n) {
        uint16_t ta[WIDTH];
        uint16_t tb[WIDTH];
        uint16_t tc[WIDTH];
        const size_t bytes = (n - i) * sizeof(uint16_t);
        memset(ta, 0, sizeof ta);
        memset(tb, 0, sizeof tb);
        memcpy(ta, a + i, bytes);
        memcpy(tb, b + i, bytes);
        STORE(tc, mul_vec(LOAD(ta), LOAD(tb), fault));
        memcpy(c + i, tc, bytes);
    }
}

#ifndef SONNX_MUL_F16C_PLANTED_FAULTS
void NAME(f16)(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n)
{
    loop(a, b, c, n, 0);
}
#else
/* The harness's second build of this file: the planted faults only (its
 * checks link the extension's own object for the real loop). */
void NAME(f16_nan_sign)(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n)
{
    loop(a, b, c, n, 1);
}

void NAME(f16_truncating)(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n)
{
    loop(a, b, c, n, 2);
}
#endif
