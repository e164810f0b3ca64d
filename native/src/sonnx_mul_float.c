/* sonnx_mul_float.c -- float32, float64 and float16 loops, and the exact
 * widenings / round-to-nearest-even narrowings between binary32 and the
 * two 16-bit formats, on bit patterns.  The bfloat16 product, integer code
 * only, is the unit sonnx_mul_bf16.c.
 *
 * The only float operations are the products of the float32, float64 and
 * float16 loops (binary32 and binary64 `*`; float16's binary32 product is
 * exact and never subnormal).  The float16 conversions are integer code
 * only.  Everything else is unsigned integer arithmetic on the bits,
 * branch-free (selects) so that gcc vectorises the loops.
 */
/* @relation(F-RTE, scope=file) */
#include "sonnx_mul_kernel.h"
#include "sonnx_mul_config.h"

/* The binary32 bits of a float and back.  C99 6.5.2.3p3 footnote 82 (TC3):
 * reading a union member other than the one last stored reinterprets the
 * bytes; float is IEEE binary32 (checked in sonnx_mul_config.h), as wide as
 * uint32_t, which has no trap representation.  MISRA C:2012 rule 19.2 deviation, recorded
 * in proofs/misra-deviations.json. */
typedef union {
    float f;
    uint32_t u;
} sonnx_f32_view;

/*@ assigns \nothing; */
/* @relation(F-FLOAT, scope=function) */
static inline uint32_t f32_bits(float x)
{
    sonnx_f32_view v;
    v.f = x;
    return v.u;
}

/*@ assigns \nothing; */
/* @relation(F-FLOAT, scope=function) */
static inline float f32_from_bits(uint32_t u)
{
    sonnx_f32_view v;
    v.u = u;
    return v.f;
}

/* The same views, with what they do to the bit pattern of the header's
 * axiomatic SonnxBits stated as admitted clauses (WP cannot read a union
 * member as another): the float32 and float16 loops'.  `make
 * verify-exhaustive` (views-f32) checks them on every binary32 pattern
 * through the float32 loop.  No clause speaks of a NaN pattern other than
 * the canonical one: WP's model has one NaN, whose bits SonnxBits calls
 * canonical, so such a clause would make every NaN written look canonical
 * (the float32 loop without its NaN rule would then be proved).  The
 * widenings call the views without these clauses, so that their goals do
 * not carry SonnxBits's float axioms (Debian's CVC4 has no floats); the
 * exported narrowings call them, as their contracts speak of sonnx_bits32. */
/*@ assigns \nothing;
    admit ensures number: !\is_NaN(x) ==> \result == sonnx_bits32(x);
    admit ensures nan: \is_NaN(x) ==> \result % 2147483648 > 2139095040;
*/
/* @relation(F-FLOAT, scope=function) */
static inline uint32_t f32_pattern(float x)
{
    return f32_bits(x);
}

/*@ assigns \nothing;
    admit ensures bits: u % 2147483648 <= 2139095040 || u == 2143289344 ==>
      sonnx_bits32(\result) == u;
*/
/* @relation(F-FLOAT, scope=function) */
static inline float f32_of_pattern(uint32_t u)
{
    return f32_from_bits(u);
}

/* The binary64 bits of a double and back, as for binary32 above. */
typedef union {
    double f;
    uint64_t u;
} sonnx_f64_view;

/*@ assigns \nothing; */
/* @relation(F-FLOAT, scope=function) */
static inline uint64_t f64_bits(double x)
{
    sonnx_f64_view v;
    v.f = x;
    return v.u;
}

/*@ assigns \nothing; */
/* @relation(F-FLOAT, scope=function) */
static inline double f64_from_bits(uint64_t u)
{
    sonnx_f64_view v;
    v.u = u;
    return v.f;
}

/* The views of the float64 loop only: admitted clauses as for f32_pattern
 * (views-f64 checks them on the binary64 edge patterns); nothing else calls
 * the plain float64 views above. */
/*@ assigns \nothing;
    admit ensures number: !\is_NaN(x) ==> \result == sonnx_bits64(x);
    admit ensures nan: \is_NaN(x) ==> \result % 9223372036854775808 > 9218868437227405312;
*/
/* @relation(F-FLOAT, scope=function) */
static inline uint64_t f64_pattern(double x)
{
    return f64_bits(x);
}

/*@ assigns \nothing;
    admit ensures bits: u % 9223372036854775808 <= 9218868437227405312 ||
      u == 9221120237041090560 ==> sonnx_bits64(\result) == u;
*/
/* @relation(F-FLOAT, scope=function) */
static inline double f64_of_pattern(uint64_t u)
{
    return f64_from_bits(u);
}

/* ---- bfloat16 <-> binary32: pure integer operations on the bits -------- */

/*@ assigns \nothing; */
/* @relation(F-FLOAT, scope=function) */
static inline uint32_t bf16_to_f32_bits(uint16_t h)
{
    return (uint32_t)h << 16U;
}

/* Round to nearest even at bit 16 of the binary32 pattern.  Both formats
 * have 8 exponent bits, so the truncated pattern u/2^16 is the bfloat16
 * just below |x| (same sign) and adding the rounding increment carries into
 * the exponent (up to infinity) exactly as value rounding does.  A NaN is
 * quieted (bit 6) keeping its sign and leading payload bits.  Written with
 * unsigned `/` and `%` by powers of two (gcc emits the same shifts and
 * masks) so that WP proves it against its specification on the bits,
 * sonnx_bf16_narrow of the header (native/bitspec.py). */
/*@ assigns \nothing;
    ensures narrow: \result == sonnx_bf16_narrow(u);
*/
/* @relation(F-FLOAT, scope=function) */
static inline uint16_t f32_bits_to_bf16(uint32_t u)
{
    const uint32_t abs_u = u % 2147483648U;        /* u without its sign bit */
    const uint32_t hi = u / 65536U;                /* the truncated bfloat16 */
    const uint32_t lsb = hi % 2U;
    const uint32_t bit6 = (hi / 64U) % 2U;         /* the quiet bit */
    /*@ assert bit6: bit6 == 1 <==> (hi % 128) >= 64; */
    const uint32_t quiet = (hi + 64U) - (bit6 * 64U); /* sets the quiet bit */
    uint32_t h = quiet;
    if (abs_u <= 2139095040U) {                    /* not a NaN: no wrap-around below */
        h = (u + 32767U + lsb) / 65536U;
    }
    return (uint16_t)h;
}

/* ---- float16 <-> binary32: pure integer operations on the bits -------- */

/* Exact widening of a float16 magnitude (the sign bit of h is ignored): a
 * normal or special pattern is rebiased on the bits (13 more significand
 * bits, exponent + 112, or 255 for infinity and NaN); a subnormal m * 2^-24
 * is normalised by four selects that shift m left by s (8, 4, 2, 1) until
 * its leading bit is bit 10, which gives the binary32 exponent 113 - s and
 * the significand m * 2^s.  Every operation is unsigned integer arithmetic
 * (no float operation, so no floating-point environment reaches it), `/`,
 * `%` and `*` by powers of two as in f32_bits_to_bf16 (gcc emits shifts and
 * masks), mirroring the specification sonnx_f16_widen of the header. */
/*@ assigns \nothing;
    ensures widen: \result == sonnx_f16_widen(h % 32768);
    ensures range: \result < 2147483648;
*/
/* @relation(F-FLOAT, scope=function) */
static inline uint32_t f16_mag_to_f32_bits(uint16_t h)
{
    const uint32_t mag = (uint32_t)h % 32768U;
    const uint32_t exp = mag / 1024U;
    /* the subnormal significand m0 normalised to m4 by the left shift s4
     * (one assignment per `if`: gcc turns each into a select) */
    const uint32_t m0 = mag % 1024U;
    uint32_t m1 = m0;
    uint32_t s1 = 0U;
    if (m0 < 8U) {
        m1 = m0 * 256U;
    }
    if (m0 < 8U) {
        s1 = 8U;
    }
    uint32_t m2 = m1;
    uint32_t s2 = s1;
    if (m1 < 128U) {
        m2 = m1 * 16U;
    }
    if (m1 < 128U) {
        s2 = s1 + 4U;
    }
    uint32_t m3 = m2;
    uint32_t s3 = s2;
    if (m2 < 512U) {
        m3 = m2 * 4U;
    }
    if (m2 < 512U) {
        s3 = s2 + 2U;
    }
    uint32_t m4 = m3;
    uint32_t s4 = s3;
    if (m3 < 1024U) {
        m4 = m3 * 2U;
    }
    if (m3 < 1024U) {
        s4 = s3 + 1U;
    }
    uint32_t bits = (mag * 8192U) + 939524096U;          /* exponent + 112 */
    if (exp == 31U) {
        bits = (mag * 8192U) + 1879048192U;              /* exponent 255 */
    }
    if (exp == 0U) {
        bits = (m4 * 8192U) + ((112U - s4) * 8388608U);  /* normalised subnormal */
    }
    if (mag == 0U) {
        bits = 0U;
    }
    return bits;
}

/* The exact widening of a float16 pattern: its magnitude and its sign. */
/*@ assigns \nothing; */
/* @relation(F-FLOAT, scope=function) */
static inline float f16_to_f32(uint16_t h)
{
    const uint32_t sign = ((uint32_t)h & 0x8000U) << 16U;
    return f32_from_bits(f16_mag_to_f32_bits(h) | sign);
}

/* x / 2^(13 + j) for 0 <= j < 16: the right shift by a variable count as
 * four selects between shifts by constants (8, 4, 2, 1), because WP's model
 * of a variable shift bounds nothing (Cbits' lsr has no order axiom), and
 * constant divisions are linear arithmetic to the provers. */
/*@ assigns \nothing;
    ensures shifted: \result == sonnx_shr13(x, j);
*/
/* @relation(F-FLOAT, scope=function) */
static inline uint32_t shift_right_13_plus(uint32_t x, uint32_t j)
{
    const uint32_t x1 = x / 8192U;
    uint32_t x2 = x1;
    if (((j / 8U) % 2U) == 1U) {
        x2 = x1 / 256U;
    }
    uint32_t x3 = x2;
    if (((j / 4U) % 2U) == 1U) {
        x3 = x2 / 16U;
    }
    uint32_t x4 = x3;
    if (((j / 2U) % 2U) == 1U) {
        x4 = x3 / 4U;
    }
    uint32_t x5 = x4;
    if ((j % 2U) == 1U) {
        x5 = x4 / 2U;
    }
    return x5;
}

/* Round to nearest even, on the bits of the binary32 magnitude mag, all of
 * it unsigned integer arithmetic: a NaN to a quiet NaN (leading payload
 * bits kept), 2^16 and up (infinity included) to infinity; from 2^-14 the
 * exponent is rebiased and 13 bits rounded off (the carry going into the
 * exponent, up to infinity from 65520 on); in [2^-25, 2^-14) the
 * significand sig (24 bits) is divided by 2^(s+1), s = 125 - exponent
 * (13..23), rounding to nearest even with two truncating shifts by s:
 *   z = sig >> s;  q = z / 2;  t = (sig + q % 2 - 1) >> s;  RNE = t / 2 + t % 2
 * (for q even, sig - 1 keeps an exact half below the rounding point; for q
 * odd, sig itself puts it on it); below 2^-25 (half the least subnormal;
 * 2^-25 itself is a tie to 0) to zero.  The float16 pattern of the
 * binary32 pattern u rounded, with the sign bit `sign` (0 or 0x8000) in
 * place of u's own. */
/*@ requires sign: sign == 0 || sign == 32768;
    assigns \nothing;
    ensures narrow: \result == sonnx_f16_narrow(u % 2147483648) + sign;
*/
/* @relation(F-FLOAT, scope=function) */
static inline uint16_t f32_bits_to_f16(uint32_t u, uint32_t sign)
{
    const uint32_t mag = u % 2147483648U;
    const uint32_t lsb = (mag / 8192U) % 2U;
    const uint32_t normal = ((mag - 939524096U) + 4095U + lsb) / 8192U;
    const uint32_t sig = (mag % 8388608U) + 8388608U;
    const uint32_t j = 112U - (mag / 8388608U);   /* s - 13 */
    const uint32_t z = shift_right_13_plus(sig, j);
    const uint32_t t = shift_right_13_plus((sig + ((z / 2U) % 2U)) - 1U, j);
    const uint32_t sub = (t / 2U) + (t % 2U);
    /* each range's value stated in the terms of sonnx_f16_narrow: a wrong
       step fails its own goal, cheaply, and not only `narrow` */
    /*@ assert normal_range: 947912704 <= mag < 1199570944 ==>
            normal == (mag - 939524096 + 4095 + (mag / 8192) % 2) / 8192; */
    /*@ assert subnormal_range: 855638016 <= mag < 947912704 ==>
            sig == mag % 8388608 + 8388608 && j == 112 - mag / 8388608 &&
            t == sonnx_shr13(sig + (sonnx_shr13(sig, j) / 2) % 2 - 1, j) &&
            sub == t / 2 + t % 2; */
    const uint32_t nan = 32256U + ((mag / 8192U) % 512U);
    uint32_t h = normal;
    if (mag < 947912704U) {     /* below 2^-14: float16 subnormal */
        h = sub;
    }
    if (mag < 855638016U) {     /* below 2^-25: zero */
        h = 0U;
    }
    if (mag >= 1199570944U) {   /* 2^16 and up: infinity */
        h = 31744U;
    }
    if (mag > 2139095040U) {    /* NaN */
        h = nan;
    }
    /*@ assert chosen: h == (mag > 2139095040 ? nan : mag >= 1199570944 ? 31744 :
            mag >= 947912704 ? normal : mag >= 855638016 ? sub : 0); */
    return (uint16_t)(h + sign);
}

/* The pattern through the view with SonnxBits's clauses (the exported
 * narrowing's contract speaks of sonnx_bits32); the sign bit moved to
 * float16's place by a division and a product by powers of two (gcc emits
 * the shift and mask), which the provers read as linear arithmetic. */
/*@ assigns \nothing;
    ensures rne: !\is_NaN(x) ==> \result ==
      sonnx_f16_narrow(sonnx_bits32(x) % 2147483648) + (sonnx_bits32(x) / 2147483648) * 32768;
    ensures nan: \is_NaN(x) ==> \result % 32768 > 31744 && (\result / 512) % 2 == 1;
*/
/* @relation(F-FLOAT, scope=function) */
static inline uint16_t f32_to_f16(float x)
{
    const uint32_t u = f32_pattern(x);
    return f32_bits_to_f16(u, (u / 2147483648U) * 32768U);
}

/* ---- the loops -------------------------------------------------------- */

/* The NaN rule of every product (docs/native-kernel.md): a NaN result is the
 * format's canonical quiet NaN -- sign 0, quiet bit set, payload 0 --
 * whatever the operands' signs and payloads.  The hardware's NaN differs by
 * target and compiler (x86 keeps an operand's payload and gives 0 * inf a
 * negative NaN, ARM's default-NaN mode and RISC-V give the canonical one,
 * clang's vector loop swaps operands), so the loops replace it with integer
 * selects, and every target gives the same bits.  Unsigned `%` by a power
 * of two (gcc emits the mask), as in f32_bits_to_bf16, for WP. */
/*@ assigns \nothing;
    ensures nan: u % 2147483648 > 2139095040 ==> \result == 2143289344;
    ensures other: u % 2147483648 <= 2139095040 ==> \result == u;
*/
/* @relation(F-FLOAT, scope=function) */
static inline uint32_t f32_canonical(uint32_t u)
{
    uint32_t r = u;
    if ((u % 2147483648U) > 2139095040U) {     /* |u| above infinity's */
        r = 0x7FC00000U;
    }
    return r;
}

/*@ assigns \nothing;
    ensures nan: u % 9223372036854775808 > 9218868437227405312 ==> \result == 9221120237041090560;
    ensures other: u % 9223372036854775808 <= 9218868437227405312 ==> \result == u;
*/
/* @relation(F-FLOAT, scope=function) */
static inline uint64_t f64_canonical(uint64_t u)
{
    uint64_t r = u;
    if ((u % 9223372036854775808U) > 9218868437227405312U) {
        r = 0x7FF8000000000000U;
    }
    return r;
}

/*@ assigns \nothing;
    ensures nan: h % 32768 > 31744 ==> \result == 32256;
    ensures other: h % 32768 <= 31744 ==> \result == h;
*/
/* @relation(F-FLOAT, scope=function) */
static inline uint16_t f16_canonical(uint16_t h)
{
    uint16_t r = h;
    if (((uint32_t)h % 32768U) > 31744U) {
        r = 0x7E00U;
    }
    return r;
}

/* @relation(F-FLOAT, scope=function) */
void sonnx_mul_f32(const float *a, const float *b, float *c, size_t n)
{
    size_t i;
    /*@ loop invariant 0 <= i <= n;
        loop invariant done: \forall integer k; 0 <= k < i ==>
            sonnx_f32_product(c[k], \at(a[k], Pre), \at(b[k], Pre));
        loop invariant todo: \forall integer k; i <= k < n ==>
            sonnx_same32(a[k], \at(a[k], Pre)) && sonnx_same32(b[k], \at(b[k], Pre));
        loop assigns i, c[0 .. n - 1];
        loop variant n - i;
    */
    for (i = 0U; i < n; i++) {
        c[i] = f32_of_pattern(f32_canonical(f32_pattern((float)SONNX_WIDE((double)a[i] * (double)b[i]))));
    }
}

/* @relation(F-FLOAT, scope=function) */
void sonnx_mul_f64(const double *a, const double *b, double *c, size_t n)
{
    size_t i;
    /*@ loop invariant 0 <= i <= n;
        loop invariant done: \forall integer k; 0 <= k < i ==>
            sonnx_f64_product(c[k], \at(a[k], Pre), \at(b[k], Pre));
        loop invariant todo: \forall integer k; i <= k < n ==>
            sonnx_same64(a[k], \at(a[k], Pre)) && sonnx_same64(b[k], \at(b[k], Pre));
        loop assigns i, c[0 .. n - 1];
        loop variant n - i;
    */
    for (i = 0U; i < n; i++) {
        c[i] = f64_of_pattern(f64_canonical(f64_pattern(a[i] * b[i])));
    }
}

/* One float16 product.  The sign of a product that is not a NaN is the
 * exclusive or of the operands' signs (IEEE 754 6.3), so the magnitudes are
 * multiplied and the sign put back once; a NaN product becomes the
 * canonical NaN, whatever the operands' payloads and signs.  The one float
 * operation is the binary32 product of the widened magnitudes: exact (11 x
 * 11 significand bits) and normal or zero (at least 2^-48), so no rounding
 * mode, flush-to-zero or denormals-are-zero changes it. */
/*@ assigns \nothing;
    ensures value: \result == sonnx_f16_mul_bits(ha, hb);
*/
/* @relation(F-FLOAT, scope=function) */
static inline uint16_t mul1_f16(uint16_t ha, uint16_t hb)
{
    const uint32_t sign = ((((uint32_t)ha / 32768U) + ((uint32_t)hb / 32768U)) % 2U) * 32768U;
    /* the canonical binary32 NaN (the pattern of WP's one NaN) finishes as
       the canonical float16 NaN */
    /*@ assert nan_finish: sonnx_f16_finish(2143289344, sign) == 32256; */
    const uint32_t wa = f16_mag_to_f32_bits(ha);
    const uint32_t wb = f16_mag_to_f32_bits(hb);
    /* a NaN operand as the canonical NaN: the one NaN pattern whose float
       the views' contracts give (arithmetic, not a select: gcc merges a
       select here with the widening's into a PHI it cannot vectorise) */
    const uint32_t nan_a = (((uint32_t)ha % 32768U) + 1023U) / 32768U;  /* 1 iff a NaN */
    const uint32_t nan_b = (((uint32_t)hb % 32768U) + 1023U) / 32768U;
    const uint32_t ca = ((1U - nan_a) * wa) + (nan_a * 0x7FC00000U);
    const uint32_t cb = ((1U - nan_b) * wb) + (nan_b * 0x7FC00000U);
    /*@ assert nan_pattern: (nan_a == 1 <==> wa > 2139095040) && (nan_b == 1 <==> wb > 2139095040); */
    /* both selectors are 0 or 1: Z3 then proves `canonical` in seconds, not a minute */
    /*@ assert nan_bits: nan_a <= 1 && nan_b <= 1; */
    /*@ assert canonical: ca == (wa > 2139095040 ? 2143289344 : wa) &&
                          cb == (wb > 2139095040 ? 2143289344 : wb); */
    const float fa = f32_of_pattern(ca);
    const float fb = f32_of_pattern(cb);
    /*@ assert operands: sonnx_same32(fa, sonnx_f32_of_bits(wa)) &&
                         sonnx_same32(fb, sonnx_f32_of_bits(wb)); */
    const float p = fa * fb;
    const uint32_t pu = f32_pattern(p);
    /*@ assert pattern: pu % 2147483648 > 2139095040 || pu == sonnx_f16_product32(ha, hb); */
    /* so does every NaN pattern, whatever its payload: the payload of a
       NaN product, which WP's model does not give, does not matter */
    /*@ assert nan_payload: pu % 2147483648 > 2139095040 ==> sonnx_f16_finish(pu, sign) == 32256; */
    const uint16_t r = f16_canonical(f32_bits_to_f16(pu, sign));
    /*@ assert finish: r == sonnx_f16_finish(pu, sign); */
    return r;
}

/* @relation(F-FLOAT, scope=function) */
void sonnx_mul_f16(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n)
{
    size_t i;
    /*@ loop invariant 0 <= i <= n;
        loop invariant done: \forall integer k; 0 <= k < i ==>
            c[k] == sonnx_f16_mul_bits(\at(a[k], Pre), \at(b[k], Pre));
        loop invariant todo: \forall integer k; i <= k < n ==>
            a[k] == \at(a[k], Pre) && b[k] == \at(b[k], Pre);
        loop assigns i, c[0 .. n - 1];
        loop variant n - i;
    */
    for (i = 0U; i < n; i++) {
        c[i] = mul1_f16(a[i], b[i]);
    }
}

/* @relation(F-FLOAT, scope=function) */
uint16_t sonnx_mul_f32_to_f16_bits(float x)
{
    return f32_to_f16(x);
}

/* @relation(F-FLOAT, scope=function) */
uint16_t sonnx_mul_f32_to_bf16_bits(float x)
{
    return f32_bits_to_bf16(f32_pattern(x));
}

/* @relation(F-FLOAT, scope=function) */
float sonnx_mul_f16_bits_to_f32(uint16_t h)
{
    return f16_to_f32(h);
}

/* @relation(F-FLOAT, scope=function) */
float sonnx_mul_bf16_bits_to_f32(uint16_t h)
{
    return f32_from_bits(bf16_to_f32_bits(h));
}
