/* portable.c -- a value-based test of the native kernel that runs on any
 * target (x86-64, i686 with SSE2, aarch64, armhf, riscv64; natively or under
 * qemu-user): the kernel's outputs against an oracle written in integer
 * arithmetic only (no float arithmetic, no libm, no intrinsics, no _Float16,
 * no __int128), so that the oracle computes the same bits on every target.
 *
 * What it checks
 *   float16, bfloat16, float32, float64: the ROWS are an edge set of the
 *   format (signed zeros, the smallest and largest subnormals, the smallest
 *   normal, 1, 1 + ulp, 2, 0.5, 3, the largest finite, infinities, quiet and
 *   signalling NaNs with zero and nonzero payloads, neighbours of sqrt(max)
 *   and of sqrt(min subnormal), operands of exact ties; both signs of the
 *   first ones) and 8 xorshift64 patterns.  The COLUMNS are the 65536
 *   16-bit patterns p mapped into the format: p itself for the 16-bit
 *   formats, else p in the top 16 bits and splitmix64(p) in the bits below.
 *   Each row is one kernel call with a = the row repeated and b = the
 *   columns, and one with a and b swapped.
 *   int8 ... uint64: every ordered pair of an edge set (0, 1, 2, max,
 *   max - 1, isqrt(max), isqrt(max) + 1, 2^(bits/2), 2^(bits/2 - 1), each
 *   also as -p and -p - 1 for the signed types, so min and min + 1 too; 4
 *   xorshift64 values) through wrap (one call on all pairs), and
 *   first_overflow and checked on all pairs in one call, on each pair alone
 *   (n = 1) and on the pairs whose product fits in one call.
 *   checked's output buffer starts as the complement of the product, so
 *   that "writes nothing" is seen.
 *
 * The oracle's contract (the SONNX semantics)
 *   Floats: IEEE 754 multiplication rounded to nearest, ties to even, with
 *   gradual underflow, overflow to infinity, the sign of a non-NaN result
 *   the exclusive or of the operands' signs, inf * 0 = NaN; every NaN result
 *   is the format's canonical quiet NaN (positive, quiet bit set, payload
 *   zero: 0x7E00, 0x7FC0, 0x7FC00000, 0x7FF8000000000000) whatever the NaN
 *   operands.  One routine for the four formats, parameterised by the
 *   exponent and fraction widths; float results are compared bit for bit.
 *   Integers: wrap is the exact product modulo 2^bits; first_overflow
 *   returns the first index whose exact product leaves the type's range,
 *   else n; checked returns the same index and writes nothing, or returns n
 *   and writes every product.  Exact products come from a 64 x 64 -> 128
 *   bit multiply written with 32-bit limbs (armhf and i686 have no
 *   __int128).
 *
 * Options
 *   --rows K     only the first K rows of each float edge set (default all)
 *   --stride S   every S-th column only (default 1)
 *   --full f16 | --full bf16   also every one of the 65536 patterns as a row
 *                (all 2^32 ordered pairs, one call order: each pair comes
 *                in both orders anyway), reported as "f16-full"/"bf16-full"
 *   --only TYPE  the default sample of one of f16 bf16 f32 f64 int only
 *
 * Output: one JSON line per type on stdout,
 *   {"type": "f32", "pairs": N, "mismatches": M, "hash": "<16 hex digits>",
 *    "first_mismatch": null | {"op": ..., "a": ..., "b": ..., "got": ...,
 *    "want": ...}, "seconds": S}
 * pairs counts operand pairs (a swapped call counts again); hash is 64-bit
 * FNV-1a over every kernel output in the order checked, each fed least
 * significant byte first in the type's width (returned indices in 8 bytes),
 * so that it does not depend on the target's endianness or word size;
 * seconds is processor time (clock(), which wraps after about 36 minutes
 * where clock_t has 32 bits: i686, armhf).  For a returned index, a and b are
 * the operands at the first index where kernel and oracle disagree.  The
 * first mismatches go to stderr.  Exit status 0 when nothing mismatched, 1
 * otherwise, 2 on bad arguments.
 *
 * Build and run: `make c-kernel KERNEL_CC=cc` (the kernel's pinned flags for
 * that compiler, native/flags.py; static and under qemu-user for a target
 * that is not the host); every target at once: `make check-targets`, with
 * the 2^32 pairs: `make verify-targets`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sonnx_mul_kernel.h"

#define COLUMNS 65536U     /* one column per 16-bit pattern */
#define MAX_ROWS 64U       /* room for the float edge rows (47) */
#define MAX_INT_EDGES 32U  /* room for the integer edge set (at most 31) */
#define MAX_PAIRS (MAX_INT_EDGES * MAX_INT_EDGES)
#define SHOWN 10U          /* mismatches printed to stderr per type */
#define SEED UINT64_C(0x9E3779B97F4A7C15)

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

/* ---- pseudo-random patterns ------------------------------------------- */

static uint64_t xorshift64(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}

static uint64_t splitmix64(uint64_t x)
{
    uint64_t z = x + SEED;
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* ---- tallies: counts, hash, the first mismatch ------------------------ */

typedef struct {
    char type[16];
    unsigned long long pairs, mismatches;
    uint64_t hash;
    unsigned digits;        /* hex digits of an operand */
    char op[32];            /* the first mismatch */
    uint64_t a, b, got, want;
    unsigned result_digits; /* of got and want */
    clock_t start;
} tally;

static tally tally_start(const char *type, unsigned bits)
{
    tally t;
    memset(&t, 0, sizeof t);
    (void)snprintf(t.type, sizeof t.type, "%s", type);
    t.hash = UINT64_C(0xCBF29CE484222325); /* FNV-1a offset basis */
    t.digits = bits / 4U;
    t.start = clock();
    return t;
}

/* FNV-1a of the low `bytes` bytes of v, least significant first. */
static void hash_feed(tally *t, uint64_t v, unsigned bytes)
{
    unsigned i;
    for (i = 0U; i < bytes; i++) {
        t->hash ^= (v >> (8U * i)) & 0xFFU;
        t->hash *= UINT64_C(0x100000001B3);
    }
}

/* Hashes a kernel output (bytes wide: an element or, in 8 bytes, an index)
 * and counts it if it is not want.  Shown in their widths: the operands in
 * the type's (a signed pattern without its sign extension), the results in
 * bytes. */
static void check(tally *t, const char *op, uint64_t a, uint64_t b, uint64_t got, uint64_t want,
                  unsigned bytes)
{
    const int d = (int)t->digits;
    const int r = (int)(2U * bytes);
    hash_feed(t, got, bytes);
    if (got == want) {
        return;
    }
    a &= low_mask(4U * t->digits);
    b &= low_mask(4U * t->digits);
    got &= low_mask(8U * bytes);
    want &= low_mask(8U * bytes);
    if (t->mismatches == 0U) {
        (void)snprintf(t->op, sizeof t->op, "%s", op);
        t->a = a;
        t->b = b;
        t->got = got;
        t->want = want;
        t->result_digits = 2U * bytes;
    }
    if (t->mismatches < SHOWN) {
        fprintf(stderr, "%s %s: a=0x%0*llx b=0x%0*llx got=0x%0*llx want=0x%0*llx\n", t->type, op,
                d, (unsigned long long)a, d, (unsigned long long)b, r, (unsigned long long)got, r,
                (unsigned long long)want);
    }
    t->mismatches++;
}

static unsigned long long tally_print(const tally *t)
{
    const int d = (int)t->digits;
    const int r = (int)t->result_digits;
    printf("{\"type\": \"%s\", \"pairs\": %llu, \"mismatches\": %llu, \"hash\": \"%016llx\", "
           "\"first_mismatch\": ",
           t->type, t->pairs, t->mismatches, (unsigned long long)t->hash);
    if (t->mismatches == 0U) {
        printf("null");
    } else {
        printf("{\"op\": \"%s\", \"a\": \"0x%0*llx\", \"b\": \"0x%0*llx\", \"got\": \"0x%0*llx\", "
               "\"want\": \"0x%0*llx\"}",
               t->op, d, (unsigned long long)t->a, d, (unsigned long long)t->b, r,
               (unsigned long long)t->got, r, (unsigned long long)t->want);
    }
    printf(", \"seconds\": %.2f}\n", (double)(clock() - t->start) / (double)CLOCKS_PER_SEC);
    fflush(stdout);
    return t->mismatches;
}

/* ---- the float kernels behind one signature, on patterns -------------- */

/* Floats only ever move by memcpy: the harness loads no float value into a
 * register (on i686 an x87 load would quiet a signalling NaN). */
static uint16_t h_a[COLUMNS], h_b[COLUMNS], h_c[COLUMNS];
static float f_a[COLUMNS], f_b[COLUMNS], f_c[COLUMNS];
static double d_a[COLUMNS], d_b[COLUMNS], d_c[COLUMNS];

static void to_u16(const uint64_t *src, uint16_t *dst, size_t n)
{
    size_t i;
    for (i = 0U; i < n; i++) {
        dst[i] = (uint16_t)src[i];
    }
}

static void kernel_f16(const uint64_t *a, const uint64_t *b, uint64_t *c, size_t n)
{
    size_t i;
    to_u16(a, h_a, n);
    to_u16(b, h_b, n);
    sonnx_mul_f16(h_a, h_b, h_c, n);
    for (i = 0U; i < n; i++) {
        c[i] = h_c[i];
    }
}

static void kernel_bf16(const uint64_t *a, const uint64_t *b, uint64_t *c, size_t n)
{
    size_t i;
    to_u16(a, h_a, n);
    to_u16(b, h_b, n);
    sonnx_mul_bf16(h_a, h_b, h_c, n);
    for (i = 0U; i < n; i++) {
        c[i] = h_c[i];
    }
}

static void to_f32(const uint64_t *src, float *dst, size_t n)
{
    size_t i;
    for (i = 0U; i < n; i++) {
        const uint32_t u = (uint32_t)src[i];
        memcpy(&dst[i], &u, sizeof u);
    }
}

static void kernel_f32(const uint64_t *a, const uint64_t *b, uint64_t *c, size_t n)
{
    size_t i;
    to_f32(a, f_a, n);
    to_f32(b, f_b, n);
    sonnx_mul_f32(f_a, f_b, f_c, n);
    for (i = 0U; i < n; i++) {
        uint32_t u;
        memcpy(&u, &f_c[i], sizeof u);
        c[i] = u;
    }
}

static void kernel_f64(const uint64_t *a, const uint64_t *b, uint64_t *c, size_t n)
{
    memcpy(d_a, a, n * sizeof d_a[0]);
    memcpy(d_b, b, n * sizeof d_b[0]);
    sonnx_mul_f64(d_a, d_b, d_c, n);
    memcpy(c, d_c, n * sizeof c[0]);
}

typedef void (*float_kernel)(const uint64_t *a, const uint64_t *b, uint64_t *c, size_t n);

typedef struct {
    const char *name;
    format f;
    float_kernel kernel;
} float_type;

static const float_type FLOATS[] = {
    {"f16", {5U, 10U}, kernel_f16},
    {"bf16", {8U, 7U}, kernel_bf16},
    {"f32", {8U, 23U}, kernel_f32},
    {"f64", {11U, 52U}, kernel_f64},
};

/* ---- the float samples ------------------------------------------------ */

/* Column p: p in the top 16 bits of the format, splitmix64(p) below. */
static uint64_t column(format f, uint64_t p)
{
    const unsigned low = width_of(f) - 16U;
    return (p << low) | (splitmix64(p) & low_mask(low));
}

static uint64_t pack(format f, uint64_t field, uint64_t fraction)
{
    return (field << f.fbits) | fraction;
}

/* The float edge rows, the most telling first (--rows keeps a prefix). */
static size_t float_rows(format f, uint64_t *rows)
{
    const uint64_t fm = low_mask(f.fbits);
    const uint64_t quiet = (uint64_t)1 << (f.fbits - 1U);
    const uint64_t inf = inf_bits(f);
    const uint64_t bias = low_mask(f.ebits - 1U);
    const uint64_t big = (bias + 1U) / 2U;           /* 2^big ~ sqrt(max finite) */
    const uint64_t tiny = (bias + f.fbits - 1U) / 2U; /* 2^-tiny ~ sqrt(min subnormal) */
    const uint64_t both_signs[] = {
        0U, 1U, fm, pack(f, 1U, 0U),                            /* 0, subnormals, min normal */
        pack(f, bias, 0U), pack(f, bias, 1U), pack(f, bias + 1U, 0U), /* 1, 1 + ulp, 2 */
        pack(f, bias - 1U, 0U), pack(f, bias + 1U, quiet),       /* 0.5, 3 */
        pack(f, low_mask(f.ebits) - 1U, fm), inf,               /* max finite, inf */
        inf | quiet, inf | quiet | 1U, inf | 1U, inf | (quiet - 1U), /* qNaNs, sNaNs */
    };
    const uint64_t positive[] = {
        pack(f, bias + big, 0U), pack(f, bias + big - 1U, fm), pack(f, bias + big - 1U, quiet),
        pack(f, bias - tiny, 0U), pack(f, bias - tiny - 1U, 0U), pack(f, bias - tiny - 1U, quiet),
        /* 1.5 + ulp, 2 - ulp, 1 + 2^-ceil(fbits/2): exact ties against the
           columns, and (for odd fbits) squared */
        pack(f, bias, quiet | 1U), pack(f, bias, fm),
        pack(f, bias, (uint64_t)1 << (f.fbits - (f.fbits + 1U) / 2U)),
    };
    const uint64_t sign = (uint64_t)1 << (width_of(f) - 1U);
    uint64_t state = SEED;
    size_t k = 0U;
    size_t i;
    for (i = 0U; i < sizeof both_signs / sizeof both_signs[0]; i++) {
        rows[k++] = both_signs[i];
        rows[k++] = both_signs[i] | sign;
    }
    for (i = 0U; i < sizeof positive / sizeof positive[0]; i++) {
        rows[k++] = positive[i];
    }
    for (i = 0U; i < 8U; i++) {
        rows[k++] = xorshift64(&state) & low_mask(width_of(f));
    }
    return k;
}

static uint64_t fill[COLUMNS], want_c[COLUMNS], got_c[COLUMNS];

/* One row against the columns: a = row, b = columns, and the swapped call. */
static void float_row(tally *t, const float_type *ft, uint64_t row, const uint64_t *cols, size_t n,
                      int swapped)
{
    const unsigned bytes = width_of(ft->f) / 8U;
    size_t j;
    for (j = 0U; j < n; j++) {
        fill[j] = row;
        want_c[j] = oracle_mul(ft->f, row, cols[j]);
    }
    ft->kernel(fill, cols, got_c, n);
    for (j = 0U; j < n; j++) {
        check(t, "mul", row, cols[j], got_c[j], want_c[j], bytes);
    }
    t->pairs += n;
    if (!swapped) {
        return;
    }
    ft->kernel(cols, fill, got_c, n);
    for (j = 0U; j < n; j++) {
        check(t, "mul", cols[j], row, got_c[j], want_c[j], bytes);
    }
    t->pairs += n;
}

/* The default sample of one float type, or with full every pattern as a
 * row (a 16-bit format). */
static unsigned long long run_float(const float_type *ft, size_t max_rows, size_t stride, int full)
{
    static uint64_t cols[COLUMNS];
    uint64_t rows[MAX_ROWS];
    char name[16];
    size_t n = 0U;
    size_t nrows;
    size_t i;
    tally t;
    (void)snprintf(name, sizeof name, "%s%s", ft->name, full ? "-full" : "");
    t = tally_start(name, width_of(ft->f));
    for (i = 0U; i < COLUMNS; i += stride) {
        cols[n++] = column(ft->f, i);
    }
    if (full) {
        for (i = 0U; i < COLUMNS; i++) {
            float_row(&t, ft, column(ft->f, i), cols, n, 0);
        }
        return tally_print(&t);
    }
    nrows = float_rows(ft->f, rows);
    nrows = nrows < max_rows ? nrows : max_rows;
    for (i = 0U; i < nrows; i++) {
        float_row(&t, ft, rows[i], cols, n, 1);
    }
    return tally_print(&t);
}

/* ---- the integer kernels behind one signature, on patterns ------------ */

typedef enum { OP_WRAP, OP_FIRST, OP_CHECKED } int_op;

/* Runs one kernel function of type T on n pattern pairs; c is its output
 * buffer (in and out) and the result is first_overflow's or checked's. */
#define INT_RUNNER(T, S)                                                                   \
    static size_t run_##S(int_op op, const uint64_t *a, const uint64_t *b, uint64_t *c,    \
                          size_t n)                                                        \
    {                                                                                      \
        static T x[MAX_PAIRS], y[MAX_PAIRS], z[MAX_PAIRS];                                 \
        size_t i;                                                                          \
        size_t r = n;                                                                      \
        for (i = 0U; i < n; i++) {                                                         \
            x[i] = (T)to_i64(a[i]);                                                        \
            y[i] = (T)to_i64(b[i]);                                                        \
            z[i] = (T)to_i64(c[i]);                                                        \
        }                                                                                  \
        if (op == OP_WRAP) {                                                               \
            sonnx_mul_wrap_##S(x, y, z, n);                                                \
        } else if (op == OP_FIRST) {                                                       \
            r = sonnx_mul_first_overflow_##S(x, y, n);                                     \
        } else {                                                                           \
            r = sonnx_mul_checked_##S(x, y, z, n);                                         \
        }                                                                                  \
        for (i = 0U; i < n; i++) {                                                         \
            c[i] = (uint64_t)z[i];                                                         \
        }                                                                                  \
        return r;                                                                          \
    }

INT_RUNNER(int8_t, i8)
INT_RUNNER(uint8_t, u8)
INT_RUNNER(int16_t, i16)
INT_RUNNER(uint16_t, u16)
INT_RUNNER(int32_t, i32)
INT_RUNNER(uint32_t, u32)
INT_RUNNER(int64_t, i64)
INT_RUNNER(uint64_t, u64)

typedef size_t (*int_runner)(int_op op, const uint64_t *a, const uint64_t *b, uint64_t *c,
                             size_t n);

typedef struct {
    const char *name;
    unsigned bits;
    int is_signed;
    int_runner run;
} int_type;

static const int_type INTS[] = {
    {"int8", 8U, 1, run_i8},    {"uint8", 8U, 0, run_u8},   {"int16", 16U, 1, run_i16},
    {"uint16", 16U, 0, run_u16}, {"int32", 32U, 1, run_i32}, {"uint32", 32U, 0, run_u32},
    {"int64", 64U, 1, run_i64}, {"uint64", 64U, 0, run_u64},
};

/* ---- the integer samples ---------------------------------------------- */

static uint64_t isqrt(uint64_t x)
{
    uint64_t r = 0U;
    uint64_t bit;
    for (bit = (uint64_t)1 << 31; bit != 0U; bit >>= 1) {
        if ((r + bit) * (r + bit) <= x) { /* r + bit < 2^32: no overflow */
            r += bit;
        }
    }
    return r;
}

static size_t add_unique(uint64_t *v, size_t k, uint64_t x)
{
    size_t i;
    for (i = 0U; i < k; i++) {
        if (v[i] == x) {
            return k;
        }
    }
    v[k] = x;
    return k + 1U;
}

/* The integer edge set: the range's ends, and the factors around sqrt(max)
 * and 2^(bits/2) whose products land on either side of the range's ends. */
static size_t int_edges(const int_type *it, uint64_t *v)
{
    const uint64_t max = low_mask(it->is_signed ? it->bits - 1U : it->bits);
    const uint64_t r = isqrt(max);
    const uint64_t h = (uint64_t)1 << (it->bits / 2U);
    const uint64_t positive[] = {0U, 1U, 2U, max, max - 1U, r, r + 1U, h, h / 2U};
    uint64_t state = SEED;
    size_t k = 0U;
    size_t i;
    for (i = 0U; i < sizeof positive / sizeof positive[0]; i++) {
        k = add_unique(v, k, positive[i]);
        if (it->is_signed) { /* the negation; -max - 1 is min */
            k = add_unique(v, k, 0U - positive[i]);
            k = add_unique(v, k, 0U - positive[i] - 1U);
        }
    }
    for (i = 0U; i < 4U; i++) {
        k = add_unique(v, k, extend(xorshift64(&state), it->bits, it->is_signed));
    }
    return k;
}

/* The complement of the product: what checked's buffer holds before the
 * call, and must still hold when checked writes nothing. */
static uint64_t untouched(const int_type *it, const int_product *p)
{
    return extend(~p->wrap, it->bits, it->is_signed);
}

/* Hashes and checks an index returned for n pairs; a and b are those at the
 * first index where the kernel and the oracle disagree. */
static void check_index(tally *t, const char *op, const uint64_t *a, const uint64_t *b, size_t n,
                        size_t got, size_t want)
{
    size_t k = got < want ? got : want;
    k = k < n ? k : n - 1U;
    check(t, op, a[k], b[k], (uint64_t)got, (uint64_t)want, 8U);
}

/* first_overflow and checked on n pairs in one call each. */
static void check_set(tally *t, const int_type *it, const char *label, const uint64_t *a,
                      const uint64_t *b, const int_product *want, size_t n)
{
    static uint64_t c[MAX_PAIRS];
    char op[32];
    size_t first = 0U;
    size_t k;
    while (first < n && want[first].fits) {
        first++;
    }
    for (k = 0U; k < n; k++) {
        c[k] = untouched(it, &want[k]);
    }
    (void)snprintf(op, sizeof op, "first_overflow%s", label);
    check_index(t, op, a, b, n, it->run(OP_FIRST, a, b, c, n), first);
    (void)snprintf(op, sizeof op, "checked%s", label);
    check_index(t, op, a, b, n, it->run(OP_CHECKED, a, b, c, n), first);
    for (k = 0U; k < n; k++) {
        const uint64_t w = first == n ? want[k].wrap : untouched(it, &want[k]);
        check(t, op, a[k], b[k], c[k], w, it->bits / 8U);
    }
}

/* Every ordered pair of the edge set through wrap, first_overflow and
 * checked: all pairs at once, each pair alone, the fitting pairs at once. */
static unsigned long long run_int(const int_type *it)
{
    static uint64_t a[MAX_PAIRS], b[MAX_PAIRS], c[MAX_PAIRS], fa[MAX_PAIRS], fb[MAX_PAIRS];
    static int_product want[MAX_PAIRS], fwant[MAX_PAIRS];
    uint64_t v[MAX_INT_EDGES];
    const size_t e = int_edges(it, v);
    size_t n = 0U;
    size_t m = 0U;
    size_t k;
    tally t = tally_start(it->name, it->bits);
    for (k = 0U; k < e * e; k++) {
        a[n] = v[k / e];
        b[n] = v[k % e];
        want[n] = oracle_int(it->bits, it->is_signed, a[n], b[n]);
        c[n] = untouched(it, &want[n]);
        n++;
    }
    t.pairs = n;
    it->run(OP_WRAP, a, b, c, n);
    for (k = 0U; k < n; k++) {
        check(&t, "wrap", a[k], b[k], c[k], want[k].wrap, it->bits / 8U);
    }
    check_set(&t, it, "[all]", a, b, want, n);
    for (k = 0U; k < n; k++) {
        check_set(&t, it, "", a + k, b + k, want + k, 1U);
        if (want[k].fits) {
            fa[m] = a[k];
            fb[m] = b[k];
            fwant[m++] = want[k];
        }
    }
    check_set(&t, it, "[fitting]", fa, fb, fwant, m);
    return tally_print(&t);
}

/* ---- options ---------------------------------------------------------- */

typedef struct {
    size_t rows, stride;
    int full[2]; /* f16, bf16 */
    const char *only;
} options;

static int parse_count(const char *s, size_t max, size_t *out)
{
    char *end;
    const unsigned long v = strtoul(s, &end, 10);
    if (*s < '0' || *s > '9' || *end != '\0' || v == 0UL || v > max) {
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

static int parse_one(options *o, const char *flag, const char *arg)
{
    if (strcmp(flag, "--rows") == 0) {
        return parse_count(arg, COLUMNS, &o->rows);
    }
    if (strcmp(flag, "--stride") == 0) {
        return parse_count(arg, COLUMNS, &o->stride);
    }
    if (strcmp(flag, "--full") == 0 && (strcmp(arg, "f16") == 0 || strcmp(arg, "bf16") == 0)) {
        o->full[arg[0] == 'b'] = 1;
        return 0;
    }
    if (strcmp(flag, "--only") == 0) {
        const char *names[] = {"f16", "bf16", "f32", "f64", "int"};
        size_t i;
        for (i = 0U; i < 5U; i++) {
            if (strcmp(arg, names[i]) == 0) {
                o->only = names[i];
                return 0;
            }
        }
    }
    return -1;
}

static int parse_args(int argc, char **argv, options *o)
{
    int i;
    o->rows = MAX_ROWS;
    o->stride = 1U;
    o->full[0] = o->full[1] = 0;
    o->only = NULL;
    for (i = 1; i < argc; i += 2) {
        if (i + 1 >= argc || parse_one(o, argv[i], argv[i + 1]) != 0) {
            return -1;
        }
    }
    return 0;
}

static int selected(const options *o, const char *name)
{
    return o->only == NULL || strcmp(o->only, name) == 0;
}

int main(int argc, char **argv)
{
    options o;
    unsigned long long bad = 0U;
    size_t i;
    if (parse_args(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: %s [--rows K] [--stride S] [--full f16|bf16] "
                        "[--only f16|bf16|f32|f64|int]\n", argv[0]);
        return 2;
    }
    for (i = 0U; i < sizeof FLOATS / sizeof FLOATS[0]; i++) {
        if (selected(&o, FLOATS[i].name)) {
            bad += run_float(&FLOATS[i], o.rows, o.stride, 0);
        }
    }
    for (i = 0U; selected(&o, "int") && i < sizeof INTS / sizeof INTS[0]; i++) {
        bad += run_int(&INTS[i]);
    }
    for (i = 0U; i < 2U; i++) {
        if (o.full[i]) {
            bad += run_float(&FLOATS[i], o.rows, o.stride, 1);
        }
    }
    return bad != 0U ? 1 : 0;
}
