/* sonnx_mul_stream8.c -- int8/uint8 wrap Mul with streaming (non-temporal)
 * stores, for arrays too large for the cache.  Compiled twice
 * (native/flags.mk):
 *   SONNX_CFLAGS_AVX2     -> sonnx_mul_stream8_wrap8, 32-byte streaming stores
 *   SONNX_CFLAGS_AVX512   -> sonnx_mul_stream8512_wrap8, 64-byte ones
 * and called only when the CPU has those instructions and n is at least
 * SONNX_MUL_STREAM8_MIN_ELEMENTS (the glue checks both at run time).
 *
 * Why: at 10^6 elements the three 1 MB streams of a multiply do not fit a
 * 2 MB L2 with ordinary stores (each store first reads the line it writes:
 * a fourth stream); a streaming store writes the line without reading it
 * and keeps a and b in the cache.
 *
 * No product is computed here: every product is computed by the variant's
 * WP-proved loop sonnx_mul_wrap_u8 (native/src, compiled with the same ISA
 * flags), BLOCK elements at a time into a buffer that stays in the L1
 * cache; this file only moves each block's bytes to c with streaming stores.
 * The int8 wrap and the uint8 wrap have the same bits (the low byte of the
 * product depends only on the factors' low bytes, whatever their sign), so
 * one loop serves both.  The elements before c's first WIDTH-aligned byte
 * and those after the last whole block go straight to c through the same
 * proved loop (ordinary stores).  _mm_sfence() before returning orders the
 * streaming stores before any later store of the caller.
 *
 * Not WP-proved (the copy is intrinsics): verified by exhaustion on the
 * compiled code (sonnx_mul_stream8.h). */
#include <immintrin.h>

#include "sonnx_mul_stream8.h"

#if !defined(__AVX2__)
#error "sonnx_mul_stream8.c is compiled with SONNX_CFLAGS_AVX2 or SONNX_CFLAGS_AVX512"
#endif

/* The products: the proved loop of the variant compiled with the same flags
 * (sonnx_mul_rename.h names it sonnx_mul_avx2_wrap_u8 / sonnx_mul_avx512_wrap_u8). */
#if defined(__AVX512BW__)
#define SONNX_MUL_VARIANT sonnx_mul_avx512
#else
#define SONNX_MUL_VARIANT sonnx_mul_avx2
#endif
#include "sonnx_mul_rename.h"
#include "sonnx_mul_kernel.h"

/* One vector of bytes: an unaligned load and a streaming (aligned) store. */
#if defined(__AVX512BW__)
#define WIDTH 64U
#define NAME(x) sonnx_mul_stream8512_##x
#define STREAM_COPY(dst, src) \
    _mm512_stream_si512((void *)(dst), _mm512_loadu_si512((const void *)(src)))
#else
#define WIDTH 32U
#define NAME(x) sonnx_mul_stream8_##x
#define STREAM_COPY(dst, src)                       \
    _mm256_stream_si256((__m256i *)(void *)(dst), \
                        _mm256_loadu_si256((const __m256i *)(const void *)(src)))
#endif

#define BLOCK SONNX_MUL_STREAM8_BLOCK
#if BLOCK % WIDTH != 0U
#error "SONNX_MUL_STREAM8_BLOCK must be a multiple of the vector width"
#endif

/* Bytes [0, count) of buf to c (WIDTH-aligned, count a multiple of WIDTH)
 * with streaming stores.  `fault` is 0 in the extension; 1 (the exhaustive
 * harness's negative control only) leaves each block's last vector uncopied. */
static inline void stream_block(uint8_t *c, const uint8_t *buf, size_t count, const int fault)
{
    const size_t end = (fault == 1) ? count - WIDTH : count;
    for (size_t j = 0; j < end; j += WIDTH) {
        STREAM_COPY(c + j, buf + j);
    }
}

/* fault 2 (planted only): the elements after the last whole block are skipped. */
static inline void loop(const uint8_t *a, const uint8_t *b, uint8_t *c, size_t n, const int fault)
{
    uint8_t buf[BLOCK] __attribute__((aligned(64)));
    /* head: up to the first WIDTH-aligned element of c */
    size_t head = (size_t)((WIDTH - ((uintptr_t)(void *)c % WIDTH)) % WIDTH);
    if (head > n) {
        head = n;
    }
    sonnx_mul_wrap_u8(a, b, c, head);
    size_t i = head;
    for (; (n - i) >= BLOCK; i += BLOCK) {
        /* the block's products are all read before c's block is written:
           c may be exactly a or b */
        sonnx_mul_wrap_u8(a + i, b + i, buf, BLOCK);
        stream_block(c + i, buf, BLOCK, fault);
    }
    if (fault != 2) {
        sonnx_mul_wrap_u8(a + i, b + i, c + i, n - i);
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
void NAME(wrap8_short_copy)(const uint8_t *a, const uint8_t *b, uint8_t *c, size_t n)
{
    loop(a, b, c, n, 1);
}

void NAME(wrap8_no_tail)(const uint8_t *a, const uint8_t *b, uint8_t *c, size_t n)
{
    loop(a, b, c, n, 2);
}
#endif
