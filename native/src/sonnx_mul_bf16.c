/* sonnx_mul_bf16.c -- the bfloat16 product (sonnx_mul_bf16), computed
 * exactly and rounded once, on integers.
 *
 * A unit apart from sonnx_mul_float.c because it is integer code only: no
 * float operation, so no floating-point environment (rounding mode,
 * flush-to-zero, denormals-are-zero) reaches it, its WP goals carry no
 * float axioms, and no branch on the values: the `if`s are selects (one
 * assignment each) that gcc turns into blends, in 16-bit lanes because
 * every value fits.  Its specification is the header's integer logic,
 * sonnx_bf16_mul_bits and the functions it calls (sonnx_mul_kernel.h),
 * written once in native/bitspec.py, which also renders it for
 * why3/f16_bits.mlw, where bf16_mul_is_ieee proves the whole to be IEEE
 * 754's multiplication rounded to nearest even.
 *
 * Every step mirrors a function of the header: a finite magnitude h is
 * sig * 2^(exp - 141) with sig in [128, 256), a subnormal's significand
 * normalised by three selects -- only the smaller magnitude's, the larger
 * one being normal unless the product underflows; the product of the two
 * significands is exact in 16 bits; its exponent decides a right shift s
 * (0 for a normal result, up to 9 below 2^-126), done by one multiplier
 * 2^(8 - s): the product's high half holds the kept bits, its low half the
 * dropped ones, which round to nearest even by one comparison. */
/* @relation(F-RTE, scope=file) */
#include "sonnx_mul_kernel.h"
#include "sonnx_mul_config.h"

/*@ requires h <= 32767;
    assigns \nothing;
    ensures sig: \result == sonnx_bf16_sig(h);
    ensures range: \result <= 255;
*/
/* @relation(F-FLOAT, scope=function) */
static inline uint16_t bf16_sig(uint16_t h)
{
    const uint16_t m0 = (uint16_t)(h % 128U);
    uint16_t m1 = m0;
    if (m0 < 8U) {
        m1 = (uint16_t)(m0 * 16U);
    }
    uint16_t m2 = m1;
    if (m1 < 32U) {
        m2 = (uint16_t)(m1 * 4U);
    }
    uint16_t m3 = m2;
    if (m2 < 64U) {
        m3 = (uint16_t)(m2 * 2U);
    }
    uint16_t sig = (uint16_t)(m3 * 2U);
    if (h >= 128U) {
        sig = (uint16_t)(m0 + 128U);
    }
    return sig;
}

/*@ requires h <= 32767;
    assigns \nothing;
    ensures exp: \result == sonnx_bf16_exp(h);
    ensures range: \result <= 262;
*/
/* @relation(F-FLOAT, scope=function) */
static inline uint16_t bf16_exp(uint16_t h)
{
    const uint16_t m0 = (uint16_t)(h % 128U);
    uint16_t m1 = m0;
    uint16_t s1 = 0U;
    if (m0 < 8U) {
        m1 = (uint16_t)(m0 * 16U);
    }
    if (m0 < 8U) {
        s1 = 4U;
    }
    uint16_t m2 = m1;
    uint16_t s2 = s1;
    if (m1 < 32U) {
        m2 = (uint16_t)(m1 * 4U);
    }
    if (m1 < 32U) {
        s2 = (uint16_t)(s1 + 2U);
    }
    uint16_t s3 = s2;
    if (m2 < 64U) {
        s3 = (uint16_t)(s2 + 1U);
    }
    uint16_t e = (uint16_t)(7U - s3);
    if (h >= 128U) {
        e = (uint16_t)((h / 128U) + 7U);
    }
    return e;
}

/*@ requires s <= 15;
    assigns \nothing;
    ensures shr7: \result == sonnx_shr7(x, s);
*/
/* @relation(F-FLOAT, scope=function) */
static inline uint16_t shr7(uint16_t x, uint16_t s)
{
    const uint16_t x1 = (uint16_t)(x / 128U);
    uint16_t x2 = x1;
    if (((s / 8U) % 2U) == 1U) {
        x2 = (uint16_t)(x1 / 256U);
    }
    uint16_t x3 = x2;
    if (((s / 4U) % 2U) == 1U) {
        x3 = (uint16_t)(x2 / 16U);
    }
    uint16_t x4 = x3;
    if (((s / 2U) % 2U) == 1U) {
        x4 = (uint16_t)(x3 / 4U);
    }
    uint16_t x5 = x4;
    if ((s % 2U) == 1U) {
        x5 = (uint16_t)(x4 / 2U);
    }
    return x5;
}

/*@ assigns \nothing;
    ensures value: \result == sonnx_bf16_mul_bits(a, b);
    ensures nan_rule: sonnx_bf16_nan_canonical(\result);
*/
/* @relation(F-FLOAT, scope=function) */
static inline uint16_t mul1_bf16(uint16_t a, uint16_t b)
{
    const uint16_t sign = (uint16_t)((((a / 32768U) + (b / 32768U)) % 2U) * 32768U);
    const uint16_t ha = (uint16_t)(a % 32768U);
    const uint16_t hb = (uint16_t)(b % 32768U);
    /* only the smaller magnitude is normalised: when the larger is
       subnormal too, the product underflows whatever its significand */
    uint16_t lo = ha;
    if (hb < ha) {
        lo = hb;
    }
    uint16_t hi = hb;
    if (hb < ha) {
        hi = ha;
    }
    /* hi's fraction and exponent field named before they widen (MISRA 10.8) */
    const uint16_t hi_frac = (uint16_t)(hi % 128U);
    const uint16_t hi_exp = (uint16_t)(hi / 128U);
    const uint16_t p = (uint16_t)((uint32_t)bf16_sig(lo) * ((uint32_t)hi_frac + 128U));
    const uint16_t t0 = (uint16_t)((uint32_t)bf16_exp(lo) + (uint32_t)hi_exp + 7U);
    /* each step stated in the terms of sonnx_bf16_mul_bits: a wrong step
       fails its own goal (a second of CVC4), not only `value` (a minute) */
    /*@ assert operands: lo == (hb < ha ? hb : ha) && hi == (hb < ha ? ha : hb) &&
            p == sonnx_bf16_sig(lo) * (hi % 128 + 128) &&
            t0 == sonnx_bf16_exp(lo) + hi / 128 + 7; */
    /* p in [2^14, 2^16) unless lo is 0 (then p is 0) */
    uint16_t q = (uint16_t)(p * 2U);
    if (p >= 32768U) {
        q = p;
    }
    uint16_t t = t0;
    if (p >= 32768U) {
        t = (uint16_t)(t0 + 1U);
    }
    uint16_t s = 0U;
    if (t < 142U) {
        s = (uint16_t)(142U - t);
    }
    if (t < 134U) {
        s = 9U;
    }
    /* w = 2^(8 - s), 0 for s = 9: q * w has q's kept bits in its high
       half and the dropped ones in its low half (one multiply each) */
    const uint16_t w = shr7(32768U, s);
    /*@ assert scaled: q == (p >= 32768 ? p : p * 2) &&
            t == (p >= 32768 ? t0 + 1 : t0) &&
            s == (t < 134 ? 9 : t < 142 ? 142 - t : 0) && w == sonnx_shr7(32768, s) &&
            w <= 256; */
    const uint16_t keep = (uint16_t)(((uint32_t)q * (uint32_t)w) / 65536U);
    const uint16_t rest = (uint16_t)(((uint32_t)q * (uint32_t)w) % 65536U);
    uint16_t u = keep;
    if (rest > (uint16_t)(32768U - (keep % 2U))) {
        u = (uint16_t)(keep + 1U);
    }
    uint16_t r = u;
    if (t >= 142U) {
        r = (uint16_t)(((t - 142U) * 128U) + u);
    }
    /*@ assert rounded: keep == (q * w) / 65536 && rest == (q * w) % 65536 &&
            u == (rest > 32768 - keep % 2 ? keep + 1 : keep) &&
            r == (t >= 142 ? (t - 142) * 128 + u : u); */
    if (r > 32640U) {
        r = 32640U;             /* overflow: infinity */
    }
    if (lo == 0U) {
        r = 0U;
    }
    if (hi == 32640U) {
        r = 32640U;
    }
    uint16_t res = (uint16_t)(r + sign);
    if ((hi > 32640U) || ((hi == 32640U) && (lo == 0U))) {
        res = 32704U;           /* the canonical NaN */
    }
    return res;
}

/* @relation(F-FLOAT, scope=function) */
void sonnx_mul_bf16(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n)
{
    size_t i;
    /*@ loop invariant 0 <= i <= n;
        loop invariant done: \forall integer k; 0 <= k < i ==>
            c[k] == sonnx_bf16_mul_bits(\at(a[k], Pre), \at(b[k], Pre));
        loop invariant nan_rule: \forall integer k; 0 <= k < i ==> sonnx_bf16_nan_canonical(c[k]);
        loop invariant todo: \forall integer k; i <= k < n ==>
            a[k] == \at(a[k], Pre) && b[k] == \at(b[k], Pre);
        loop assigns i, c[0 .. n - 1];
        loop variant n - i;
    */
    for (i = 0U; i < n; i++) {
        c[i] = mul1_bf16(a[i], b[i]);
    }
}
