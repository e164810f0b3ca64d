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
 * one loop serves both.  The elements before c's first WIDTH-aligned byte go
 * straight to c through the same proved loop; those after the last whole
 * block go through the buffer too, copied with ordinary stores.
 * _mm_sfence() before returning orders the
 * streaming stores before any later store of the caller.
 *
 * WP proves the loop (its contract below: the same as sonnx_mul_wrap_u8's)
 * from the proved loop's contract and the contracts of its three machine
 * operations (the block copy with streaming stores, the length of the
 * unaligned head, the store fence), which are admitted: Frama-C has no model
 * of the instructions, and the compiled loop is verified by exhaustion
 * instead (sonnx_mul_stream8.h). */
/* @relation(F-RTE, scope=file) */
#include "sonnx_mul_stream8.h"

#ifndef __FRAMAC__
#include <immintrin.h>
#if !defined(__AVX2__)
#error "sonnx_mul_stream8.c is compiled with SONNX_CFLAGS_AVX2 or SONNX_CFLAGS_AVX512"
#endif
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

#if defined(__AVX512BW__)
#define WIDTH 64U
#define NAME(x) sonnx_mul_stream8512_##x
#else
#define WIDTH 32U
#define NAME(x) sonnx_mul_stream8_##x
#endif

#define BLOCK SONNX_MUL_STREAM8_BLOCK
#if BLOCK % WIDTH != 0U
#error "SONNX_MUL_STREAM8_BLOCK must be a multiple of the vector width"
#endif

/* ---- the machine operations: admitted contracts, bodies hidden from WP -- */

/* Bytes [0, count) of buf to c with streaming stores (c WIDTH-aligned, count
 * a multiple of WIDTH in every call below). */
/*@ requires valid_c: \valid(c + (0 .. count - 1));
    requires valid_buf: \valid_read(buf + (0 .. count - 1));
    requires apart: \separated(c + (0 .. count - 1), buf + (0 .. count - 1));
    assigns c[0 .. count - 1];
    ensures copied: \forall integer j; 0 <= j < count ==> c[j] == buf[j];
*/
static void stream_block(uint8_t *c, const uint8_t *buf, size_t count);

/* How many elements precede c's first WIDTH-aligned byte (at most n): any
 * value up to n is correct, the aligned ones are streamed. */
/*@ assigns \nothing;
    ensures bound: \result <= n;
*/
static size_t head_length(const uint8_t *c, size_t n);

/* Orders the streaming stores before any later store of the caller. */
/*@ assigns \nothing; */
static void store_fence(void);

#ifndef __FRAMAC__
static void stream_block(uint8_t *c, const uint8_t *buf, size_t count)
{
    for (size_t j = 0; j < count; j += WIDTH) {
#if defined(__AVX512BW__)
        _mm512_stream_si512((void *)(c + j), _mm512_loadu_si512((const void *)(buf + j)));
#else
        _mm256_stream_si256((__m256i *)(void *)(c + j),
                            _mm256_loadu_si256((const __m256i *)(const void *)(buf + j)));
#endif
    }
}

static size_t head_length(const uint8_t *c, size_t n)
{
    const size_t head = (size_t)((WIDTH - ((uintptr_t)(const void *)c % WIDTH)) % WIDTH);
    return (head > n) ? n : head;
}

static void store_fence(void)
{
    _mm_sfence();
}
#endif

/* ---- the loop --------------------------------------------------------- */

/* `fault` is 0 in the extension (and for WP); the planted faults of the
 * exhaustive harness's negative control only: 1 leaves each block's last
 * vector uncopied, 2 skips the elements after the last whole block. */
/* @relation(F-WRAP, scope=function) */
/*@ requires valid_a: \valid_read(a + (0 .. n - 1));
    requires valid_b: \valid_read(b + (0 .. n - 1));
    requires valid_c: \valid(c + (0 .. n - 1));
    requires alias_a: c == a || \separated(c + (0 .. n - 1), a + (0 .. n - 1));
    requires alias_b: c == b || \separated(c + (0 .. n - 1), b + (0 .. n - 1));
    requires no_fault: fault == 0;
    assigns c[0 .. n - 1];
    ensures wrap: \forall integer k; 0 <= k < n ==>
        sonnx_wraps_u8(c[k], \old(a[k]) * \old(b[k]));
*/
static void loop(const uint8_t *a, const uint8_t *b, uint8_t *c, size_t n, const int fault)
{
    uint8_t buf[BLOCK] __attribute__((aligned(64)));
    const size_t head = head_length(c, n);
    sonnx_mul_wrap_u8(a, b, c, head);
    size_t i = head;
    /*@ loop invariant head <= i <= n;
        loop invariant done: \forall integer k; 0 <= k < i ==>
            sonnx_wraps_u8(c[k], \at(a[k], Pre) * \at(b[k], Pre));
        loop invariant todo: \forall integer k; i <= k < n ==>
            a[k] == \at(a[k], Pre) && b[k] == \at(b[k], Pre);
        loop assigns i, c[head .. n - 1], buf[0 .. BLOCK - 1];
        loop variant n - i;
    */
    for (; (n - i) >= BLOCK; i += BLOCK) {
        /* the block's products are all computed before c's block is
           written: c may be exactly a or b */
        sonnx_mul_wrap_u8(a + i, b + i, buf, BLOCK);
        /*@ assert products: \forall integer k; i <= k < i + BLOCK ==>
                sonnx_wraps_u8(buf[k - i], \at(a[k], Pre) * \at(b[k], Pre)); */
        stream_block(c + i, buf, (fault == 1) ? (BLOCK - WIDTH) : BLOCK);
        /*@ assert streamed: \forall integer k; i <= k < i + BLOCK ==>
                sonnx_wraps_u8(c[k], \at(a[k], Pre) * \at(b[k], Pre)); */
    }
    /* the rest (fewer than BLOCK) through the buffer too, copied by
       ordinary stores: written straight into c + i by the proved loop, WP
       did not prove it (the callee's aliasing case c + i == a + i, with the
       offset, defeated CVC4 and Z3); the copy costs at most BLOCK bytes */
    const size_t rest = (fault == 2) ? 0U : (n - i);
    sonnx_mul_wrap_u8(a + i, b + i, buf, rest);
    /*@ assert rest_products: \forall integer k; i <= k < n ==>
            sonnx_wraps_u8(buf[k - i], \at(a[k], Pre) * \at(b[k], Pre)); */
    size_t j;
    /*@ loop invariant 0 <= j <= rest && rest == n - i;
        loop invariant source: \forall integer k; i <= k < n ==>
            sonnx_wraps_u8(buf[k - i], \at(a[k], Pre) * \at(b[k], Pre));
        loop invariant kept: \forall integer k; 0 <= k < i ==>
            sonnx_wraps_u8(c[k], \at(a[k], Pre) * \at(b[k], Pre));
        loop invariant copied: \forall integer k; i <= k < i + j ==>
            sonnx_wraps_u8(c[k], \at(a[k], Pre) * \at(b[k], Pre));
        loop assigns j, c[i .. n - 1];
        loop variant rest - j;
    */
    for (j = 0U; j < rest; j++) {
        c[i + j] = buf[j];
    }
    store_fence();
}

#ifndef SONNX_MUL_STREAM8_PLANTED_FAULTS
/* The entry point (named in full for the traceability scan: NAME() below
 * builds the planted faults' names). */
/* @relation(F-WRAP, scope=function) */
/*@ requires valid_a: \valid_read(a + (0 .. n - 1));
    requires valid_b: \valid_read(b + (0 .. n - 1));
    requires valid_c: \valid(c + (0 .. n - 1));
    requires alias_a: c == a || \separated(c + (0 .. n - 1), a + (0 .. n - 1));
    requires alias_b: c == b || \separated(c + (0 .. n - 1), b + (0 .. n - 1));
    assigns c[0 .. n - 1];
    ensures wrap: \forall integer k; 0 <= k < n ==>
        sonnx_wraps_u8(c[k], \old(a[k]) * \old(b[k]));
*/
#if !defined(__AVX512BW__) /* the build WP analyses */
void sonnx_mul_stream8_wrap8(const uint8_t *a, const uint8_t *b, uint8_t *c, size_t n)
#else
void sonnx_mul_stream8512_wrap8(const uint8_t *a, const uint8_t *b, uint8_t *c, size_t n)
#endif
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
