#define _POSIX_C_SOURCE 199309L
/* exhaustive.c -- every input of the compiled float16/bfloat16 code of the
 * native kernel against independent correctly rounded oracles.
 *
 *   narrow-f16   all 2^32 binary32 inputs of sonnx_mul_f32_to_f16_bits
 *                against the F16C hardware conversion (vcvtps2ph, RNE)
 *   narrow-bf16  all 2^32 binary32 inputs of sonnx_mul_f32_to_bf16_bits
 *                against ref_bf16() (integer RNE with branches), itself
 *                checked against rne_format() (value-based, libm rint) on
 *                every 257th input
 *   widen-f16 / widen-bf16   all 2^16 patterns against _Float16 / the
 *                value m * 2^e rebuilt with ldexp
 *   mul-f16      all 2^32 pairs of sonnx_mul_f16: the exact product in
 *                binary64, to binary32 (exact), rounded by F16C
 *   mul-bf16     all 2^32 pairs of sonnx_mul_bf16: the exact product in
 *                binary64, to binary32 (hardware RNE), rounded by ref_bf16();
 *                every 4099th pair of both also against rne_format() of the
 *                exact product
 *   views-f32    all 2^32 binary32 patterns x through sonnx_mul_f32 (x * 1):
 *                the bits written are x's for every number and 0x7FC00000
 *                for every NaN, and the value written is the pattern's
 *                IEEE value rebuilt with ldexp: what the admitted contracts
 *                of the union views (f32_bits, f32_from_bits) and the header's
 *                axiomatic SonnxBits claim, on the code that runs
 *   views-f64    the same for sonnx_mul_f64 on every binary64 exponent
 *                (both signs) with 64 fractions each (0, 1, the top bits,
 *                all ones, random): 262,144 patterns
 *
 * Built with -DSONNX_MUL_HW (x86-64; native_exhaustive.py links the objects
 * the extension is built from), the loops selected at run time:
 *   mul-f16-f16c, mul-f16-f16c512   all 2^32 pairs of the F16C hardware
 *                     loops sonnx_mul_f16c_f16 (8-wide) and
 *                     sonnx_mul_f16c512_f16 (16-wide; native/hw/, WP
 *                     proves the loop from its vector operation's admitted
 *                     contract, which this checks) BIT FOR
 *                     BIT against the proved portable sonnx_mul_f16 (NaN
 *                     payloads and signs included), every 4099th also
 *                     against the oracle; each row of 2^16 pairs in two
 *                     calls cut at 2^16 - (1..7), so that the loops' tails
 *                     (not a multiple of the vector width) are run too
 *   mul-f16-f16c-layouts, mul-f16-f16c512-layouts   every length
 *                     1 .. 3 * 16 + 1 at every output misalignment 0..15
 *                     elements, and in place (c == a), against
 *                     sonnx_mul_f16: the whole vectors and the zero-padded
 *                     tail; the bytes around the output must not change
 *                     (what the admitted contract of the loops' vector
 *                     operation, mul_block, claims it writes)
 *   mul-bf16-avx2 / mul-bf16-avx512   the same for the proved sources
 *                     compiled with the avx2 / avx512 flags (native/isa.toml)
 *                     (sonnx_mul_avx2_bf16 ...) against sonnx_mul_bf16
 *   wrap8-stream8, wrap8-stream8512   all 2^16 (a, b) pairs of int8 and of
 *                     uint8 through the streaming wrap loops
 *                     sonnx_mul_stream8_wrap8 (32-wide) and
 *                     sonnx_mul_stream8512_wrap8 (64-wide; native/hw/: the
 *                     products by the variants' proved loops, the streaming
 *                     copy by its admitted vector operation) BIT FOR BIT against the proved portable
 *                     sonnx_mul_wrap_i8 / sonnx_mul_wrap_u8, in one call on
 *                     a buffer of 64 * 2^16 + 37 elements (longer than
 *                     SONNX_MUL_STREAM8_MIN_ELEMENTS: every pair at each of
 *                     the 64 byte positions of a vector), inputs and output
 *                     misaligned, the bytes around the output unchanged
 *   wrap8-stream8-layouts, wrap8-stream8512-layouts   every length
 *                     1 .. 3 * 64 + 1, and those from 64 before to 3 * 64 + 1
 *                     after one and two whole SONNX_MUL_STREAM8_BLOCKs, at
 *                     every misalignment 0..63 of the
 *                     output (the inputs misaligned otherwise), and in place
 *                     (c == a): the unaligned head, the streamed blocks and the
 *                     rest; the output starts as the complement of the
 *                     expected bytes and the bytes around it must not change
 * and `selftest` also runs planted faults of the hardware loops (rounding
 * toward zero; the hardware's sign of a NaN product; the float16 loop's
 * tail copied one element short; the streaming loop
 * leaving a block's last vector uncopied; skipping its tail), which must
 * be caught.
 *
 * Comparisons are bit for bit.  The narrowings' NaNs too: the sign, the
 * quiet bit set and the leading payload bits (what the header states of
 * the conversions; F16C's vcvtps2ph does the same).  For the products any
 * NaN matches any NaN (the oracles' payloads are the hardware's; the NaN
 * rule is checked by the views and the tests).  The oracles
 * share no code with the kernel: no bit tricks, values computed with
 * binary64 arithmetic, ldexp/frexp/rint, which are exact here.
 *
 * Usage: exhaustive [CHECK ...]   (default: all); `exhaustive selftest`
 * runs the oracles against deliberately wrong narrowings (truncation, a
 * wrong mask, ties rounded to odd, the wrong quiet bit of a NaN) and a
 * float64 loop without the NaN rule, and must report
 * mismatches: the negative control.
 * Prints one line per check: name inputs mismatches wall-seconds
 * cpu-seconds (the machine may be shared: CPU time is the check's own cost).  Exit 0 when
 * every check has zero mismatches (selftest: when every planted fault is
 * caught), 1 otherwise.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sonnx_mul_kernel.h"

/* The harness's parts, by job (native/verify/exhaustive/: what every part
 * uses, the oracles, the checks of the portable code and of the hardware
 * loops, the negative control), each included here only: the harness is
 * this one translation unit. */
#include "exhaustive/common.h"
#include "exhaustive/oracles.h"
#include "exhaustive/checks.h"
#include "exhaustive/hw.h"
#include "exhaustive/selftest.h"

static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu0;

static int report(const char *name, unsigned long long inputs, unsigned long long bad, double t0)
{
    const double c = cpu();
    printf("%s %llu %llu %.2f %.2f\n", name, inputs, bad, now() - t0, c - cpu0);
    cpu0 = c;
    fflush(stdout);
    return bad == 0ULL ? 0 : 1;
}

static int selected(int argc, char **argv, const char *name)
{
    if (argc <= 1) {
        return 1;
    }
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], name) == 0) {
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    int failed = 0;
    double t0;
    const unsigned long long all = 4294967296ULL;
    cpu0 = cpu();
    if (argc == 2 && strcmp(argv[1], "selftest") == 0) {
        return selftest();
    }
    if (selected(argc, argv, "widen-f16")) {
        t0 = now();
        failed |= report("widen-f16", 65536ULL, check_widen(0), t0);
    }
    if (selected(argc, argv, "widen-bf16")) {
        t0 = now();
        failed |= report("widen-bf16", 65536ULL, check_widen(1), t0);
    }
    if (selected(argc, argv, "narrow-f16")) {
        t0 = now();
        failed |= report("narrow-f16", all, check_narrow_f16(sonnx_mul_f32_to_f16_bits, 1U), t0);
    }
    if (selected(argc, argv, "narrow-bf16")) {
        t0 = now();
        failed |= report("narrow-bf16", all, check_narrow_bf16(sonnx_mul_f32_to_bf16_bits, 1U), t0);
    }
    if (selected(argc, argv, "views-f32")) {
        t0 = now();
        failed |= report("views-f32", all, check_views_f32(), t0);
    }
    if (selected(argc, argv, "views-f64")) {
        unsigned long long inputs;
        t0 = now();
        const unsigned long long bad = check_views_f64(sonnx_mul_f64, &inputs);
        failed |= report("views-f64", inputs, bad, t0);
    }
    if (selected(argc, argv, "mul-f16")) {
        t0 = now();
        failed |= report("mul-f16", all, check_mul(0), t0);
    }
    if (selected(argc, argv, "mul-bf16")) {
        t0 = now();
        failed |= report("mul-bf16", all, check_mul(1), t0);
    }
#if defined(SONNX_MUL_HW)
    if (selected(argc, argv, "mul-f16-f16c")) {
        t0 = now();
        failed |= report("mul-f16-f16c", all,
                         check_same("mul-f16-f16c", sonnx_mul_f16c_f16, sonnx_mul_f16, 0, 1U), t0);
    }
    if (selected(argc, argv, "mul-f16-f16c512")) {
        t0 = now();
        failed |= report(
            "mul-f16-f16c512", all,
            check_same("mul-f16-f16c512", sonnx_mul_f16c512_f16, sonnx_mul_f16, 0, 1U), t0);
    }
    static const struct {
        const char *name;
        loop16_fn fn;
    } f16c_layouts[] = {
        {"mul-f16-f16c-layouts", sonnx_mul_f16c_f16},
        {"mul-f16-f16c512-layouts", sonnx_mul_f16c512_f16},
    };
    for (size_t v = 0; v < sizeof f16c_layouts / sizeof f16c_layouts[0]; v++) {
        if (selected(argc, argv, f16c_layouts[v].name)) {
            unsigned long long cases;
            t0 = now();
            const unsigned long long bad =
                check_f16c_layouts(f16c_layouts[v].name, f16c_layouts[v].fn, &cases);
            failed |= report(f16c_layouts[v].name, cases, bad, t0);
        }
    }
    if (selected(argc, argv, "mul-bf16-avx2")) {
        t0 = now();
        failed |= report("mul-bf16-avx2", all,
                         check_same("mul-bf16-avx2", sonnx_mul_avx2_bf16, sonnx_mul_bf16, 1, 1U), t0);
    }
    if (selected(argc, argv, "mul-bf16-avx512")) {
        t0 = now();
        failed |= report(
            "mul-bf16-avx512", all,
            check_same("mul-bf16-avx512", sonnx_mul_avx512_bf16, sonnx_mul_bf16, 1, 1U), t0);
    }
    static const struct {
        const char *name;
        const char *layouts;
        loop8_fn fn;
    } stream8[] = {
        {"wrap8-stream8", "wrap8-stream8-layouts", sonnx_mul_stream8_wrap8},
        {"wrap8-stream8512", "wrap8-stream8512-layouts", sonnx_mul_stream8512_wrap8},
    };
    for (size_t v = 0; v < sizeof stream8 / sizeof stream8[0]; v++) {
        if (selected(argc, argv, stream8[v].name)) {
            t0 = now();
            /* inputs: the 2^16 pairs, once as int8 and once as uint8 */
            failed |= report(stream8[v].name, 2ULL * PAIRS8,
                             check_stream8_pairs(stream8[v].name, stream8[v].fn), t0);
        }
        if (selected(argc, argv, stream8[v].layouts)) {
            unsigned long long cases;
            t0 = now();
            const unsigned long long bad =
                check_stream8_layouts(stream8[v].layouts, stream8[v].fn, &cases);
            failed |= report(stream8[v].layouts, cases, bad, t0);
        }
    }
#endif
    return failed;
}
