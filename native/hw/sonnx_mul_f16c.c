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
 *     included; the glue clears DAZ around the call, sonnx_mul_fpenv.h);
 *   - one binary32 product (vmulps, round to nearest even);
 *   - narrowed to float16 with round to nearest even given in the
 *     instruction (vcvtps2ph, imm _MM_FROUND_TO_NEAREST_INT: independent of
 *     MXCSR.RC), which overflows to infinity and keeps subnormals;
 *   - the sign of the result is replaced by the exclusive or of the
 *     operands' signs (IEEE 754 6.3), and a NaN result by the canonical
 *     NaN 0x7E00 (the kernel's NaN rule).
 *
 * Every element, the last n % WIDTH included, goes through the same vector
 * code (the tail through a zero-padded copy): one code path.
 *
 * WP proves the loop (its contract below: sonnx_mul_f16's, word for word;
 * `make prove` compares the two) from the ADMITTED contract of its machine
 * operation, the WIDTH products of one vector (mul_block), whose body WP
 * does not see: Frama-C has no model of the instructions.  What WP proves
 * is the loop's own part: every element written once, by whole vectors and
 * the zero-padded tail, with the value the admitted contract gives its
 * lane (sonnx_f16_mul_bits of the operands before the call, the proved
 * portable loop's value; uninterpreted in this unit, so the loop is proved
 * for every such function), nothing read or written out of bounds,
 * nothing else written, the NaN rule.  The admitted contract (and every
 * value) is verified by exhaustion on the compiled code against the proved
 * portable loop (sonnx_mul_f16c.h). */
/* @relation(F-RTE, scope=file) */
/* the value sonnx_f16_mul_bits uninterpreted (sonnx_mul_kernel.h) */
#define SONNX_MUL_F16_VALUE_OPAQUE 1
#include "sonnx_mul_f16c.h"
#include "sonnx_mul_config.h"
#include "sonnx_mul_kernel.h"

#ifndef __FRAMAC__
#include <immintrin.h>
#if !defined(__F16C__) || !defined(__AVX2__)
#error "sonnx_mul_f16c.c is compiled with SONNX_CFLAGS_F16C (native/flags.mk)"
#endif
#endif

#if defined(__AVX512F__)
#define WIDTH 16U
#define NAME(x) sonnx_mul_f16c512_##x
#else
#define WIDTH 8U
#define NAME(x) sonnx_mul_f16c_##x
#endif

/* ---- the machine operation: admitted contract, body hidden from WP ---- */

/* The WIDTH products of one vector: c[k] from a[k] and b[k], for k from
 * `at` (the offset is a parameter so that the contract speaks of the
 * caller's indices).  All lanes are loaded before c is stored, so c may be
 * exactly a or b.
 * `fault` is 0 in the extension (and for WP); the planted faults of the
 * exhaustive harness's negative control only: 1 keeps the hardware's NaN
 * (payload) with the product's sign, 2 rounds toward zero (loop() adds 3:
 * the tail copied one element short). */
/*@ requires valid_a: \valid_read(a + (at .. at + WIDTH - 1));
    requires valid_b: \valid_read(b + (at .. at + WIDTH - 1));
    requires valid_c: \valid(c + (at .. at + WIDTH - 1));
    requires no_fault: fault == 0;
    assigns c[at .. at + WIDTH - 1];
    ensures nan_rule: \forall integer k; at <= k < at + WIDTH ==> sonnx_f16_nan_canonical(c[k]);
    ensures product: \forall integer k; at <= k < at + WIDTH ==>
        c[k] == sonnx_f16_mul_bits(\old(a[k]), \old(b[k]));
*/
static inline void mul_block(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t at,
                             int fault);

#ifndef __FRAMAC__
#define ROUND_NEAREST (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define ROUND_TRUNCATE (_MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)

/* One vector of float16 patterns (vec), of binary32 (wide), and its ops. */
#if defined(__AVX512F__)
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

static inline void mul_block(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t at,
                             int fault)
{
    const vec va = LOAD(a + at);
    const vec vb = LOAD(b + at);
    const vec magnitude = SET16(0x7FFF);
    const vec sign = ANDNOT(magnitude, XOR(va, vb));
    const wide p = MUL(WIDEN(AND(va, magnitude)), WIDEN(AND(vb, magnitude)));
    vec h;
    if (fault == 2) {
        h = NARROW(p, ROUND_TRUNCATE);
    } else {
        h = NARROW(p, ROUND_NEAREST);
    }
    const vec mh = AND(h, magnitude);
    if (fault == 1) {
        STORE(c + at, OR(mh, sign));
    } else {
        /* The NaN rule (as in the portable loop): a NaN product is the
         * canonical NaN 0x7E00; 16-bit signed compare, exact since
         * magnitudes are below 0x8000. */
        const vec nan = GT16(mh, SET16(0x7C00));
        STORE(c + at, BLEND(OR(mh, sign), SET16(0x7E00), nan));
    }
}
#endif

/* ---- the loop --------------------------------------------------------- */

/* @relation(F-FLOAT, scope=function) */
/*@ requires valid_a: \valid_read(a + (0 .. n - 1));
    requires valid_b: \valid_read(b + (0 .. n - 1));
    requires valid_c: \valid(c + (0 .. n - 1));
    requires alias_a: c == a || \separated(c + (0 .. n - 1), a + (0 .. n - 1));
    requires alias_b: c == b || \separated(c + (0 .. n - 1), b + (0 .. n - 1));
    requires no_fault: fault == 0;
    assigns c[0 .. n - 1];
    ensures nan_rule: \forall integer k; 0 <= k < n ==> sonnx_f16_nan_canonical(c[k]);
    ensures product: \forall integer k; 0 <= k < n ==> c[k] == sonnx_f16_mul_bits(\old(a[k]), \old(b[k]));
*/
static inline void loop(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n, const int fault)
{
    size_t i = 0U;
    /*@ loop invariant 0 <= i <= n;
        loop invariant done_nan: \forall integer k; 0 <= k < i ==> sonnx_f16_nan_canonical(c[k]);
        loop invariant done: \forall integer k; 0 <= k < i ==>
            c[k] == sonnx_f16_mul_bits(\at(a[k], Pre), \at(b[k], Pre));
        loop invariant todo: \forall integer k; i <= k < n ==>
            a[k] == \at(a[k], Pre) && b[k] == \at(b[k], Pre);
        loop assigns i, c[0 .. n - 1];
        loop variant n - i;
    */
    while ((n - i) >= WIDTH) {
        mul_block(a, b, c, i, fault);
        i += WIDTH;
    }
    if (i < n) {
        /* the last n - i < WIDTH elements through zero-padded copies: the
           vector reads and writes stay within the arrays */
        uint16_t ta[WIDTH];
        uint16_t tb[WIDTH];
        uint16_t tc[WIDTH];
        const size_t rest = n - i;
        size_t j;
        /*@ loop invariant 0 <= j <= WIDTH;
            loop invariant filled: \forall integer l; 0 <= l < j ==> l < rest ==>
                ta[l] == a[i + l] && tb[l] == b[i + l];
            loop assigns j, ta[0 .. WIDTH - 1], tb[0 .. WIDTH - 1];
            loop variant WIDTH - j;
        */
        for (j = 0U; j < WIDTH; j++) {
            uint16_t x = 0U;
            uint16_t y = 0U;
            if (j < rest) {
                x = a[i + j];
                y = b[i + j];
            }
            ta[j] = x;
            tb[j] = y;
        }
        mul_block(ta, tb, tc, 0U, fault);
        /*@ assert tail: \forall integer k; i <= k < n ==>
                tc[k - i] == sonnx_f16_mul_bits(\at(a[k], Pre), \at(b[k], Pre)); */
        /*@ assert tail_nan: \forall integer l; 0 <= l < rest ==> sonnx_f16_nan_canonical(tc[l]); */
        const size_t count = (fault == 3) ? (rest - 1U) : rest;
        /*@ loop invariant 0 <= j <= count;
            loop invariant kept_nan: \forall integer k; 0 <= k < i ==> sonnx_f16_nan_canonical(c[k]);
            loop invariant tail_nan: \forall integer l; 0 <= l < rest ==> sonnx_f16_nan_canonical(tc[l]);
            loop invariant copied_nan: \forall integer k; i <= k < i + j ==> sonnx_f16_nan_canonical(c[k]);
            loop invariant kept: \forall integer k; 0 <= k < i ==>
                c[k] == sonnx_f16_mul_bits(\at(a[k], Pre), \at(b[k], Pre));
            loop invariant tail: \forall integer k; i <= k < n ==>
                tc[k - i] == sonnx_f16_mul_bits(\at(a[k], Pre), \at(b[k], Pre));
            loop invariant copied: \forall integer k; i <= k < i + j ==>
                c[k] == sonnx_f16_mul_bits(\at(a[k], Pre), \at(b[k], Pre));
            loop assigns j, c[i .. n - 1];
            loop variant count - j;
        */
        for (j = 0U; j < count; j++) {
            c[i + j] = tc[j];
        }
    }
}

#ifndef SONNX_MUL_F16C_PLANTED_FAULTS
/* The entry point (named in full for the traceability scan: NAME() below
 * builds the planted faults' names); sonnx_mul_f16's contract. */
/* @relation(F-FLOAT, scope=function) */
/*@ requires valid_a: \valid_read(a + (0 .. n - 1));
    requires valid_b: \valid_read(b + (0 .. n - 1));
    requires valid_c: \valid(c + (0 .. n - 1));
    requires alias_a: c == a || \separated(c + (0 .. n - 1), a + (0 .. n - 1));
    requires alias_b: c == b || \separated(c + (0 .. n - 1), b + (0 .. n - 1));
    assigns c[0 .. n - 1];
    ensures nan_rule: \forall integer k; 0 <= k < n ==> sonnx_f16_nan_canonical(c[k]);
    ensures product: \forall integer k; 0 <= k < n ==> c[k] == sonnx_f16_mul_bits(\old(a[k]), \old(b[k]));
*/
#if !defined(__AVX512F__) /* the build WP analyses */
void sonnx_mul_f16c_f16(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n)
#else
void sonnx_mul_f16c512_f16(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n)
#endif
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

void NAME(f16_short_tail)(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n)
{
    loop(a, b, c, n, 3);
}
#endif
