/* tally.h -- one type's tally in the portable harness: the pairs
 * checked, the mismatches, the FNV-1a hash of every kernel output, the
 * first mismatch; printed as the JSON line portable.c's head describes.
 *
 * A part of the portable harness native/verify/portable.c, which is one
 * translation unit: every build compiles that file alone, and it includes
 * each part once (a part includes the parts it uses).
 */
#ifndef PORTABLE_TALLY_H
#define PORTABLE_TALLY_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "oracle.h"

#define SHOWN 10U          /* mismatches printed to stderr per type */

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

#endif /* PORTABLE_TALLY_H */
