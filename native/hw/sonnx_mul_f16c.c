/* sonnx_mul_f16c.c -- float16 Mul with the F16C conversion instructions
 * (vcvtph2ps, vcvtps2ph), eight elements at a time; compiled with
 * SONNX_CFLAGS_F16C (native/flags.mk) and called only when the CPU has
 * AVX2 and F16C (the glue checks at run time).
 *
 * The algorithm is exactly the proved portable loop's (sonnx_mul_f16 in
 * native/src/sonnx_mul_float.c), step for step:
 *   - when a is a NaN, its magnitude stands for b's too (then the product
 *     of two NaNs is a's, whichever operand vmulps keeps);
 *   - the magnitudes |a|, |b| (sign bits cleared) are widened exactly to
 *     binary32 (vcvtph2ps: every float16 is a binary32, subnormals
 *     included; the process never sets DAZ -- the self-test would see it);
 *   - one binary32 product (vmulps, round to nearest even);
 *   - narrowed to float16 with round to nearest even given in the
 *     instruction (vcvtps2ph, imm _MM_FROUND_TO_NEAREST_INT: independent of
 *     MXCSR.RC), which overflows to infinity and keeps subnormals; a NaN
 *     becomes the quiet NaN with the leading payload bits, as in the
 *     portable narrowing;
 *   - the sign of the result is replaced by the exclusive or of the
 *     operands' signs (IEEE 754 6.3; for a NaN as the portable loop does).
 * Not WP-proved: verified by exhaustion on the compiled code (sonnx_mul_f16c.h).
 *
 * Every element, the last n % 8 included, goes through the same eight-wide
 * vector code (the tail through a zero-padded copy): one code path. */
#include <immintrin.h>
#include <string.h>

#include "sonnx_mul_f16c.h"
#include "sonnx_mul_config.h"

#if !defined(__F16C__) || !defined(__AVX2__)
#error "sonnx_mul_f16c.c is compiled with SONNX_CFLAGS_F16C (native/flags.mk)"
#endif

#define ROUND_NEAREST (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define ROUND_TRUNCATE (_MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)

/* Eight float16 products.  `fault` is 0 in the extension; the planted
 * faults of the exhaustive harness's negative control only: 1 keeps the
 * hardware's sign of a NaN product, 2 rounds toward zero. */
static inline __m128i mul8(__m128i a, __m128i b, const int fault)
{
    const __m128i magnitude = _mm_set1_epi16(0x7FFF);
    const __m128i sign = _mm_andnot_si128(magnitude, _mm_xor_si128(a, b));
    const __m128i ma = _mm_and_si128(a, magnitude);
    /* A NaN a stands for b too (as in the portable loop): 16-bit signed
     * compare, exact since magnitudes are below 0x8000. */
    const __m128i a_nan = _mm_cmpgt_epi16(ma, _mm_set1_epi16(0x7C00));
    const __m128i mb = _mm_blendv_epi8(_mm_and_si128(b, magnitude), ma, a_nan);
    const __m256 wa = _mm256_cvtph_ps(ma);
    const __m256 wb = _mm256_cvtph_ps(mb);
    const __m256 p = _mm256_mul_ps(wa, wb);
    __m128i h;
    if (fault == 2) {
        h = _mm256_cvtps_ph(p, ROUND_TRUNCATE);
    } else {
        h = _mm256_cvtps_ph(p, ROUND_NEAREST);
    }
    if (fault == 1) {
        return _mm_or_si128(h, sign);
    }
    return _mm_or_si128(_mm_and_si128(h, magnitude), sign);
}

static inline void loop(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n,
                        const int fault)
{
    size_t i = 0U;
    for (; (n - i) >= 8U; i += 8U) {
        const __m128i va = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
        const __m128i vb = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
        _mm_storeu_si128((__m128i *)(void *)(c + i), mul8(va, vb, fault));
    }
    if (i < n) {
        uint16_t ta[8] = {0U, 0U, 0U, 0U, 0U, 0U, 0U, 0U};
        uint16_t tb[8] = {0U, 0U, 0U, 0U, 0U, 0U, 0U, 0U};
        uint16_t tc[8];
        const size_t bytes = (n - i) * sizeof(uint16_t);
        memcpy(ta, a + i, bytes);
        memcpy(tb, b + i, bytes);
        _mm_storeu_si128((__m128i *)(void *)tc,
                         mul8(_mm_loadu_si128((const __m128i *)(const void *)ta),
                              _mm_loadu_si128((const __m128i *)(const void *)tb), fault));
        memcpy(c + i, tc, bytes);
    }
}

#ifndef SONNX_MUL_F16C_PLANTED_FAULTS
void sonnx_mul_f16c_f16(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n)
{
    loop(a, b, c, n, 0);
}
#else
/* The harness's second build of this file: the planted faults only (its
 * checks link the extension's own object for sonnx_mul_f16c_f16). */
void sonnx_mul_f16c_f16_nan_sign(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n)
{
    loop(a, b, c, n, 1);
}

void sonnx_mul_f16c_f16_truncating(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n)
{
    loop(a, b, c, n, 2);
}
#endif
