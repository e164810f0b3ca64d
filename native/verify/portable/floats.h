/* floats.h -- the portable harness's float types: the kernel's four
 * float loops behind one signature on patterns, each type's edge rows and
 * columns, and the run of one type against the oracle.
 *
 * A part of the portable harness native/verify/portable.c, which is one
 * translation unit: every build compiles that file alone, and it includes
 * each part once (a part includes the parts it uses).
 */
#ifndef PORTABLE_FLOATS_H
#define PORTABLE_FLOATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sonnx_mul_kernel.h"

#include "oracle.h"
#include "sample.h"
#include "tally.h"

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

#endif /* PORTABLE_FLOATS_H */
