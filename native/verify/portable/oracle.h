/* oracle.h -- the portable harness's oracle, in integer arithmetic only
 * (no float arithmetic, no libm, no intrinsics, no _Float16, no __int128),
 * so that it computes the same bits on every target: the SONNX product of
 * two float patterns of any binary interchange format, and the exact
 * product of two integers (its contract: the head of portable.c).
 *
 * A part of the portable harness native/verify/portable.c, which is one
 * translation unit: every build compiles that file alone, and it includes
 * each part once (a part includes the parts it uses).
 */
#ifndef PORTABLE_ORACLE_H
#define PORTABLE_ORACLE_H

#include <stdint.h>

/* ---- 128-bit unsigned integers as two 64-bit halves ------------------- */

typedef struct {
    uint64_t hi, lo;
} u128;

static uint64_t low_mask(unsigned bits)
{
    return bits >= 64U ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1U;
}

/* x * y exactly, from four 32 x 32 -> 64 bit products. */
static u128 mul_64x64(uint64_t x, uint64_t y)
{
    const uint64_t m = 0xFFFFFFFFU;
    const uint64_t p00 = (x & m) * (y & m);
    const uint64_t p01 = (x & m) * (y >> 32);
    const uint64_t p10 = (x >> 32) * (y & m);
    const uint64_t p11 = (x >> 32) * (y >> 32);
    const uint64_t mid = (p00 >> 32) + (p01 & m) + (p10 & m); /* < 3 * 2^32 */
    u128 r;
    r.lo = (mid << 32) | (p00 & m);
    r.hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    return r;
}

/* The low 64 bits of p >> s, for s < 128. */
static uint64_t shr_128(u128 p, unsigned s)
{
    if (s == 0U) {
        return p.lo;
    }
    if (s >= 64U) {
        return p.hi >> (s - 64U);
    }
    return (p.lo >> s) | (p.hi << (64U - s));
}

/* Whether a bit below bit s of p is set (the sticky bit), for s < 128. */
static int any_below(u128 p, unsigned s)
{
    if (s > 64U) {
        return p.lo != 0U || (p.hi & low_mask(s - 64U)) != 0U;
    }
    return (p.lo & low_mask(s)) != 0U;
}

/* ---- the float oracle ------------------------------------------------- */

/* A binary interchange format: a sign bit, ebits exponent bits, fbits
 * fraction bits. */
typedef struct {
    unsigned ebits, fbits;
} format;

static unsigned width_of(format f)
{
    return 1U + f.ebits + f.fbits;
}

static uint64_t inf_bits(format f)
{
    return low_mask(f.ebits) << f.fbits;
}

static uint64_t canonical_nan(format f)
{
    return inf_bits(f) | ((uint64_t)1 << (f.fbits - 1U));
}

/* The significand of a finite nonzero magnitude, normalised so that its
 * leading one is bit fbits even for a subnormal (whose biased exponent, in
 * *e, then goes below 1): the product needs no special case for them. */
static uint64_t unpack(format f, uint64_t mag, int *e)
{
    const uint64_t hidden = (uint64_t)1 << f.fbits;
    uint64_t m = mag & (hidden - 1U);
    int ex = (int)(mag >> f.fbits);
    if (ex != 0) {
        *e = ex;
        return m | hidden;
    }
    ex = 1;
    while (m < hidden) {
        m <<= 1;
        ex--;
    }
    *e = ex;
    return m;
}

/* The magnitude bits of p * 2^(e - 2 bias - 2 fbits) rounded to nearest
 * even: p is the exact product of two normalised significands, in
 * [2^(2 fbits), 2^(2 fbits + 2)), e the sum of their biased exponents. */
static uint64_t round_pack(format f, u128 p, int e)
{
    const int bias = (int)low_mask(f.ebits - 1U);
    const unsigned carry = shr_128(p, 2U * f.fbits + 1U) != 0U ? 1U : 0U;
    unsigned shift = f.fbits + carry; /* keeps fbits + 1 significant bits */
    int ex = e - bias + (int)carry;
    uint64_t q;
    if (ex < 1) { /* gradual underflow: fewer bits kept, at exponent 1 */
        shift += (unsigned)(1 - ex);
        ex = 1;
    }
    if (shift > 127U) { /* p < 2^106: beyond this, all of it is sticky */
        shift = 127U;
    }
    q = shr_128(p, shift);
    if ((shr_128(p, shift - 1U) & 1U) != 0U && (any_below(p, shift - 1U) || (q & 1U) != 0U)) {
        q++;
    }
    if ((q >> (f.fbits + 1U)) != 0U) { /* rounding carried out of the significand */
        q >>= 1;
        ex++;
    }
    if (ex >= (int)low_mask(f.ebits)) {
        return inf_bits(f);
    }
    /* A subnormal result has no hidden bit: exponent field 0 (rounding it
       up to 2^fbits yields the smallest normal, field 1). */
    return ((q >> f.fbits) != 0U ? (uint64_t)ex << f.fbits : 0U) | (q & low_mask(f.fbits));
}

/* The SONNX product of the patterns x and y of format f. */
static uint64_t oracle_mul(format f, uint64_t x, uint64_t y)
{
    const unsigned w = f.ebits + f.fbits;
    const uint64_t sign = (((x ^ y) >> w) & 1U) << w;
    const uint64_t mx = x & low_mask(w);
    const uint64_t my = y & low_mask(w);
    const uint64_t inf = inf_bits(f);
    int ex;
    int ey;
    if (mx > inf || my > inf) {
        return canonical_nan(f);
    }
    if (mx == inf || my == inf) {
        return (mx == 0U || my == 0U) ? canonical_nan(f) : (sign | inf);
    }
    if (mx == 0U || my == 0U) {
        return sign;
    }
    {
        const uint64_t sx = unpack(f, mx, &ex);
        const uint64_t sy = unpack(f, my, &ey);
        return sign | round_pack(f, mul_64x64(sx, sy), ex + ey);
    }
}

/* ---- the integer oracle ----------------------------------------------- */

/* Integer values travel as uint64_t patterns: sign-extended for the signed
 * types, zero-extended for the unsigned ones. */
static uint64_t extend(uint64_t u, unsigned bits, int is_signed)
{
    const uint64_t m = low_mask(bits);
    if (is_signed && ((u >> (bits - 1U)) & 1U) != 0U) {
        return u | ~m;
    }
    return u & m;
}

/* The signed value of a sign-extended pattern, without the
 * implementation-defined conversion of an out-of-range unsigned. */
static int64_t to_i64(uint64_t u)
{
    return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

typedef struct {
    uint64_t wrap; /* the product modulo 2^bits, as a pattern */
    int fits;      /* the exact product is in the type's range */
} int_product;

/* The exact product of two patterns, by magnitudes and sign. */
static int_product oracle_int(unsigned bits, int is_signed, uint64_t x, uint64_t y)
{
    const int nx = is_signed && (x >> 63) != 0U;
    const int ny = is_signed && (y >> 63) != 0U;
    const u128 p = mul_64x64(nx ? 0U - x : x, ny ? 0U - y : y);
    const int neg = nx != ny;
    const uint64_t limit = is_signed ? low_mask(bits - 1U) + (uint64_t)neg : low_mask(bits);
    int_product r;
    r.fits = p.hi == 0U && p.lo <= limit;
    r.wrap = extend(neg ? 0U - p.lo : p.lo, bits, is_signed);
    return r;
}

#endif /* PORTABLE_ORACLE_H */
