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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The harness's parts, by job (native/verify/portable/: the oracle, the
 * samples' sizes and patterns, the tallies, the float and integer types),
 * each included here only: the harness is this one translation unit. */
#include "portable/oracle.h"
#include "portable/sample.h"
#include "portable/tally.h"
#include "portable/floats.h"
#include "portable/ints.h"

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
