/* ints.h -- the portable harness's integer types: the kernel's wrap,
 * first_overflow and checked of each type behind one signature on
 * patterns, each type's edge set, and the run of one type against the
 * oracle.
 *
 * A part of the portable harness native/verify/portable.c, which is one
 * translation unit: every build compiles that file alone, and it includes
 * each part once (a part includes the parts it uses).
 */
#ifndef PORTABLE_INTS_H
#define PORTABLE_INTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sonnx_mul_kernel.h"

#include "oracle.h"
#include "sample.h"
#include "tally.h"

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

#endif /* PORTABLE_INTS_H */
