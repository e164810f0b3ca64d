/* sonnx_mul_stream8.c -- int8/uint8 wrap Mul with streaming (non-temporal)
 * stores, for arrays too large for the cache.  Compiled twice
 * (native/flags.mk):
 *   SONNX_CFLAGS_AVX2     -> sonnx_mul_stream8_wrap8, 32 elements at a time
 *   SONNX_CFLAGS_AVX512   -> sonnx_mul_stream8512_wrap8, 64 at a time
 *                            (AVX-512BW: 16-bit multiplies on 512 bits)
 * and called only when the CPU has those instructions and n is at least
 * SONNX_MUL_STREAM8_MIN_ELEMENTS (the glue checks both at run time).
 *
 * Why: at 10^6 elements the three 1 MB streams of a multiply do not fit the
 * L2 with ordinary stores (each store first reads the line it writes: a
 * fourth stream); a streaming store writes the line without reading it and
 * keeps a and b in the cache.
 *
 * The arithmetic: the wrapped 8-bit product is the low byte of the exact
 * product, and the low byte of a 16-bit product depends only on the low
 * bytes of its factors.  So each 16-bit lane holding two bytes (even, odd)
 * gives
 *   - the even byte's product: the low byte of the lane product a * b
 *     (vpmullw), its high byte masked off;
 *   - the odd byte's product: (a & 0xFF00) * (b >> 8) (vpsrlw, vpmullw),
 *     whose low byte is 0 and whose high byte is a_odd * b_odd mod 2^8;
 * OR-ed together.  The two's-complement wrap of int8 and the modulo-2^8
 * result of uint8 have the same bits, so one loop serves both.
 * Not WP-proved: verified by exhaustion on the compiled code
 * (sonnx_mul_stream8.h).
 *
 * Every element goes through the same vector code: the body (c aligned to
 * the vector width) with streaming stores, the unaligned head and the last
 * n % WIDTH elements through a zero-padded copy (ordinary stores into the
 * copy, then memcpy to c); _mm_sfence() before returning orders the
 * streaming stores before any later store of the caller. */
#include <immintrin.h>
#include <string.h>

#include "sonnx_mul_stream8.h"

#if !defined(__AVX2__)
#error "sonnx_mul_stream8.c is compiled with SONNX_CFLAGS_AVX2 or SONNX_CFLAGS_AVX512"
#endif

/* One vector of bytes and its operations. */
#if defined(__AVX512BW__)
#define WIDTH 64U
#define NAME(x) sonnx_mul_stream8512_##x
typedef __m512i vec;
#define LOAD(p) _mm512_loadu_si512((const void *)(p))
#define STORE(p, v) _mm512_storeu_si512((void *)(p), (v))
#define STREAM(p, v) _mm512_stream_si512((void *)(p), (v))
#define SET16(x) _mm512_set1_epi16(x)
#define AND(x, y) _mm512_and_si512((x), (y))
#define OR(x, y) _mm512_or_si512((x), (y))
#define MUL16(x, y) _mm512_mullo_epi16((x), (y))
#define SHR16(x, k) _mm512_srli_epi16((x), (k))
#else
#define WIDTH 32U
#define NAME(x) sonnx_mul_stream8_##x
typedef __m256i vec;
#define LOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define STORE(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))
#define STREAM(p, v) _mm256_stream_si256((__m256i *)(void *)(p), (v))
#define SET16(x) _mm256_set1_epi16(x)
#define AND(x, y) _mm256_and_si256((x), (y))
#define OR(x, y) _mm256_or_si256((x), (y))
#define MUL16(x, y) _mm256_mullo_epi16((x), (y))
#define SHR16(x, k) _mm256_srli_epi16((x), (k))
#endif

/* WIDTH wrapped byte products.  `fault` is 0 in the extension; the planted
 * faults of the exhaustive harness's negative control only: 1 keeps the
 * high byte of the even bytes' lane product (no mask). */
static inline vec mul_vec(vec a, vec b, const int fault)
{
    const vec low = SET16(0x00FF);
    const vec high = SET16((short)0xFF00);
    vec even = MUL16(a, b);
    if (fault != 1) {
        even = AND(even, low);
    }
    const vec odd = MUL16(AND(a, high), SHR16(b, 8));
    return OR(even, odd);
}

/* n - i < WIDTH elements from i through a zero-padded copy (the same
 * mul_vec; an ordinary store into the copy). */
static inline void padded(const uint8_t *a, const uint8_t *b, uint8_t *c, size_t count,
                          const int fault)
{
    uint8_t ta[WIDTH];
    uint8_t tb[WIDTH];
    uint8_t tc[WIDTH];
    memset(ta, 0, sizeof ta);
    memset(tb, 0, sizeof tb);
    memcpy(ta, a, count);
    memcpy(tb, b, count);
    STORE(tc, mul_vec(LOAD(ta), LOAD(tb), fault));
    memcpy(c, tc, count);
}

/* fault 2 (planted only): the last n % WIDTH elements are skipped. */
static inline void loop(const uint8_t *a, const uint8_t *b, uint8_t *c, size_t n, const int fault)
{
    /* head: up to the first WIDTH-aligned element of c */
    size_t head = (size_t)((WIDTH - ((uintptr_t)(void *)c % WIDTH)) % WIDTH);
    if (head > n) {
        head = n;
    }
    if (head > 0U) {
        padded(a, b, c, head, fault);
    }
    size_t i = head;
    for (; (n - i) >= WIDTH; i += WIDTH) {
        STREAM(c + i, mul_vec(LOAD(a + i), LOAD(b + i), fault));
    }
    if (i < n && fault != 2) {
        padded(a + i, b + i, c + i, n - i, fault);
    }
    _mm_sfence();
}

#ifndef SONNX_MUL_STREAM8_PLANTED_FAULTS
void NAME(wrap8)(const uint8_t *a, const uint8_t *b, uint8_t *c, size_t n)
{
    loop(a, b, c, n, 0);
}
#else
/* The harness's second build of this file: the planted faults only (its
 * checks link the extension's own object for the real loop). */
void NAME(wrap8_high_byte)(const uint8_t *a, const uint8_t *b, uint8_t *c, size_t n)
{
    loop(a, b, c, n, 1);
}

void NAME(wrap8_no_tail)(const uint8_t *a, const uint8_t *b, uint8_t *c, size_t n)
{
    loop(a, b, c, n, 2);
}
#endif
