/* sonnx_mul_float.c -- float32, float64, float16 and bfloat16 loops, and the
 * exact widenings / round-to-nearest-even narrowings between binary32 and
 * the two 16-bit formats, on bit patterns.
 *
 * The only float operations are the products (binary32 and binary64 `*`);
 * in the float16 conversions, one exact binary32 subtraction (widening a
 * subnormal) and one binary32 addition whose IEEE rounding performs the
 * subnormal narrowing (Giesen's "magic" constant; RNE because the default
 * rounding mode is never changed); and in the bfloat16 loop, the exact
 * widenings to binary64, one binary64 addition that rounds the product
 * (the same "magic" constant trick), exact binary64 subtractions and exact
 * conversions back to binary32.  Everything else is unsigned integer
 * arithmetic on the bits, branch-free (selects) so that gcc vectorises the
 * loops.
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
 * member as another): the float32 loop's.  `make verify-exhaustive`
 * (views-f32) checks them on every binary32 pattern through that loop.
 * The 16-bit code calls the views without these clauses, so that its goals
 * do not carry SonnxBits's float axioms (Debian's CVC4 has no floats). */
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
 * (views-f64 checks them on the binary64 edge patterns).  The bfloat16 loop
 * calls the plain views above, for the reason given at f32_pattern. */
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
 * masks) so that WP proves it against its specification on the bits. */
/*@ logic integer sonnx_bf16_rne(integer u) = (u + 32767 + (u / 65536) % 2) / 65536;
    logic integer sonnx_bf16_quiet(integer u) =
        ((u / 65536) % 128 >= 64) ? u / 65536 : u / 65536 + 64;
    predicate sonnx_f32_bits_nan(integer u) = u % 2147483648 > 2139095040;
*/
/*@ assigns \nothing;
    ensures nan: sonnx_f32_bits_nan(u) ==> \result == sonnx_bf16_quiet(u);
    ensures rne: !sonnx_f32_bits_nan(u) ==> \result == sonnx_bf16_rne(u);
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

/* ---- float16 <-> binary32 ------------------------------------------- */

/* Exact widening of a float16 magnitude (Giesen's half_to_float_fast4
 * without the table; the sign bit of h is ignored): the exponent is rebiased
 * on the bits; a subnormal (or zero) is rebuilt as the normal
 * 2^-14 * (1 + m/1024) and 2^-14 subtracted, exactly. */
/*@ assigns \nothing; */
/* @relation(F-FLOAT, scope=function) */
static inline uint32_t f16_mag_to_f32_bits(uint16_t h)
{
    const uint32_t shifted_exp = 0x0F800000U;   /* 0x7C00 << 13 */
    const uint32_t magnitude = ((uint32_t)h & 0x7FFFU) << 13U;
    const uint32_t exp = magnitude & shifted_exp;
    const uint32_t rebiased = magnitude + 0x38000000U; /* (127 - 15) << 23 */
    const uint32_t special = rebiased + 0x38000000U;   /* inf/NaN: exponent 255 */
    const uint32_t sub_bits = rebiased + 0x00800000U;  /* 2^-14 * (1 + m/1024) */
    const float sub = f32_from_bits(sub_bits) - 6.103515625e-05F; /* - 2^-14, exact */
    const uint32_t sub_u = f32_bits(sub);
    uint32_t mag_bits = rebiased;
    if (exp == shifted_exp) {
        mag_bits = special;
    }
    if (exp == 0U) {
        mag_bits = sub_u;
    }
    return mag_bits;
}

/* The exact widening of a float16 pattern: its magnitude and its sign. */
/*@ assigns \nothing; */
/* @relation(F-FLOAT, scope=function) */
static inline float f16_to_f32(uint16_t h)
{
    const uint32_t sign = ((uint32_t)h & 0x8000U) << 16U;
    return f32_from_bits(f16_mag_to_f32_bits(h) | sign);
}

/* Round to nearest even (Giesen's float_to_half_fast3_rtne): |x| >= 2^16
 * (and inf) to infinity, a NaN to a quiet NaN; |x| < 2^-14 by the binary32
 * addition of 0.5 (its ulp is 2^-24, the float16 subnormal step, so the
 * IEEE RNE addition rounds the mantissa into the low bits); otherwise the
 * exponent is rebiased and 13 bits rounded off by integer RNE, the carry
 * going into the exponent (up to infinity from 65520 on). */
/* The float16 pattern of the binary32 pattern u rounded, with the sign
 * bit `sign` (0 or 0x8000) in place of u's own. */
/*@ assigns \nothing; */
/* @relation(F-FLOAT, scope=function) */
static inline uint16_t f32_bits_to_f16(uint32_t u, uint32_t sign)
{
    const uint32_t abs_u = u & 0x7FFFFFFFU;
    const uint32_t lsb = (abs_u >> 13U) & 1U;
    const uint32_t normal = (abs_u + 0xC8000FFFU + lsb) >> 13U; /* - (112 << 23) + 0xFFF, mod 2^32 */
    const float magic = 0.5F;                                     /* 0x3F000000 */
    const uint32_t sub = f32_bits(f32_from_bits(abs_u) + magic) - 0x3F000000U;
    const uint32_t nan = 0x7E00U | ((abs_u >> 13U) & 0x03FFU);
    uint32_t h = normal;
    if (abs_u < 0x38800000U) {  /* below 2^-14: float16 subnormal or zero */
        h = sub;
    }
    if (abs_u >= 0x47800000U) { /* 2^16 and up: infinity */
        h = 0x7C00U;
    }
    if (abs_u > 0x7F800000U) {
        h = nan;
    }
    return (uint16_t)(h | sign);
}

/*@ assigns \nothing; */
/* @relation(F-FLOAT, scope=function) */
static inline uint16_t f32_to_f16(float x)
{
    const uint32_t u = f32_bits(x);
    return f32_bits_to_f16(u, (u >> 16U) & 0x8000U);
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

/*@ assigns \nothing;
    ensures nan: h % 32768 > 32640 ==> \result == 32704;
    ensures other: h % 32768 <= 32640 ==> \result == h;
*/
/* @relation(F-FLOAT, scope=function) */
static inline uint16_t bf16_canonical(uint16_t h)
{
    uint16_t r = h;
    if (((uint32_t)h % 32768U) > 32640U) {
        r = 0x7FC0U;
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
        c[i] = f32_of_pattern(f32_canonical(f32_pattern(a[i] * b[i])));
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

/* @relation(F-FLOAT, scope=function) */
void sonnx_mul_f16(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n)
{
    size_t i;
    /*@ loop invariant 0 <= i <= n;
        loop invariant nan_rule: \forall integer k; 0 <= k < i ==> sonnx_f16_nan_canonical(c[k]);
        loop assigns i, c[0 .. n - 1];
        loop variant n - i;
    */
    for (i = 0U; i < n; i++) {
        /* The sign of a product that is not a NaN is the exclusive or of
           the operands' signs (IEEE 754 6.3), so the magnitudes are
           multiplied and the sign put back once; a NaN product becomes the
           canonical NaN, whatever the operands' payloads and signs. */
        const uint16_t ha = a[i];
        const uint16_t hb = b[i];
        const uint32_t sign = ((uint32_t)ha ^ (uint32_t)hb) & 0x8000U;
        const float p = f32_from_bits(f16_mag_to_f32_bits(ha)) * f32_from_bits(f16_mag_to_f32_bits(hb));
        const uint16_t r = f16_canonical(f32_bits_to_f16(f32_bits(p), sign));
        /*@ assert nan_rule: sonnx_f16_nan_canonical(r); */
        c[i] = r;
    }
}

/* The bfloat16 product without a subnormal intermediate.  Multiplied in
 * binary32, two bfloat16 give a binary32 subnormal whenever the product is
 * below 2^-126, and x86 FPUs take a microcode assist for every subnormal
 * result (2.7-3.9x the time of a normal one, docs/native-kernel.md "Time
 * by value class").  In binary64 the product p of two bfloat16 magnitudes
 * is exact (8 x 8 significand bits) and normal (at least 2^-266 when not
 * 0), so it is rounded once, to bfloat16, by the "magic" addition, every
 * value on the way normal:
 *
 *   big = 2^(e+45) for p in [2^e, 2^(e+1)): the ulp of p + big is 2^(e-7),
 *         bfloat16's ulp there, so (p + big) - big is p rounded to nearest
 *         even (the subtraction is exact).  The exponent field is added to
 *         on the bits: for infinity and NaN it wraps into the sign bit
 *         (big is then a tiny negative normal; inf + big - big = inf).
 *   p < 2^-126 (bfloat16 subnormal or zero): big = 2^-81 rounds to
 *         bfloat16's subnormal step 2^-133, and `less` keeps 2^-126 of it:
 *         t = result + 2^-126, in binary32's least normal binade, whose bits
 *         are those of 2^-126 plus the subnormal's own bits shifted by 16;
 *         subtracting the bits of big - less = 2^-126 leaves them.
 *   otherwise t is the result: 8 significant bits, so its binary32
 *         conversion is exact, or infinity from 2^128 on (RNE overflow), and
 *         the top 16 bits of the binary32 pattern are the bfloat16.
 *
 * The single rounding gives the bits of the earlier binary32 product
 * narrowed by f32_bits_to_bf16 (that double rounding is innocuous,
 * why3/widen.mlw bfloat16_double_rounding); all 2^32 pairs were compared.
 * The magnitudes are multiplied and the sign put back (the exclusive or of
 * the operands' signs, IEEE 754 6.3, as in the float16 loop); a NaN
 * product becomes the canonical NaN through bf16_canonical.  The `if`s are
 * selects, which gcc turns into blends. */
/* @relation(F-FLOAT, scope=function) */
void sonnx_mul_bf16(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n)
{
    size_t i;
    /*@ loop invariant 0 <= i <= n;
        loop invariant nan_rule: \forall integer k; 0 <= k < i ==> sonnx_bf16_nan_canonical(c[k]);
        loop assigns i, c[0 .. n - 1];
        loop variant n - i;
    */
    for (i = 0U; i < n; i++) {
        const uint16_t ha = a[i];
        const uint16_t hb = b[i];
        const uint32_t sign = ((uint32_t)ha ^ (uint32_t)hb) & 0x8000U;
        const double p = (double)f32_from_bits(bf16_to_f32_bits((uint16_t)(ha & 0x7FFFU))) *
                         (double)f32_from_bits(bf16_to_f32_bits((uint16_t)(hb & 0x7FFFU)));
        /* p's exponent field plus 45 (0x2D): big = 2^(e+45) */
        double big = f64_from_bits((f64_bits(p) & 0x7FF0000000000000U) + 0x02D0000000000000U);
        double less = big;
        if (p < 0x1p-126) {
            big = 0x1p-81;              /* 2^-133 * 2^52 */
            less = 0x1p-81 - 0x1p-126;  /* exact: 45 significant bits */
        }
        const double t = (p + big) - less;
        const double offset = big - less; /* 2^-126 below it, else 0 */
        const uint32_t u = f32_bits((float)t) - f32_bits((float)offset);
        const uint16_t r = bf16_canonical((uint16_t)((u >> 16U) | sign));
        /*@ assert nan_rule: sonnx_bf16_nan_canonical(r); */
        c[i] = r;
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
    return f32_bits_to_bf16(f32_bits(x));
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
