/* sonnx_mul._native: the kernel variants and their selection at import
 * (docs/native-kernel.md, "ISA variants and run-time dispatch").
 *
 * Besides the portable SSE2 build of the kernel, the same proved sources are
 * compiled again with AVX2 and with AVX-512 flags (native/flags.mk; symbols
 * sonnx_mul_avx2_* and sonnx_mul_avx512_*, sonnx_mul_rename.h), and float16
 * has an F16C hardware loop (native/hw/sonnx_mul_f16c.c); int8 and uint8
 * in wrap mode, from SONNX_MUL_STREAM8_MIN_ELEMENTS elements up, copy the
 * proved loop's products to the result with streaming stores
 * (native/hw/sonnx_mul_stream8.c; below the threshold, and in checked mode,
 * the proved loop writes the result itself).  WP proves each of the two
 * loops under the contract of the proved loop it stands in for, from the
 * admitted contract of its one vector operation; that operation and the
 * loops' values are verified exhaustively against the proved loops.
 * At import the widest variant the CPU supports is selected (the variants,
 * their flags, CPU features and hardware loops are native/isa.toml's table;
 * _native_isas.h and _native_isa_builds.h are generated from it);
 * SONNX_MUL_ISA=<name> selects one instead (ImportError if the CPU lacks it).  Before a hardware variant is used, its float16 loop is
 * compared bit for bit with the portable one on every pair of a set of edge
 * values, and its streaming int8/uint8 loop (called directly, whatever the
 * threshold) on every pair of bytes.
 *
 * The per-kind tables come from _native_kinds.h, generated from the
 * registry of element types: no list of the types is written here. */
#include "_native_variants.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_native_isas.h"
#include "sonnx_mul_kernel.h"

/* TAGGED(M, S, T, K) is M(V, S, T, K) with V the current VARIANT_TAG: an
 * argument is expanded before it is substituted, so M receives the tag
 * itself (portable_, avx2_, ...) and can paste it into names.  The X-macro
 * lists of _native_kinds.h call the 3-argument forms below. */
#define TAGGED(M, S, T, K) TAGGED_(M, VARIANT_TAG, S, T, K)
#define TAGGED_(M, V, S, T, K) M(V, S, T, K)

/* The typed adapters of one kind in variant V (the sonnx_mul_* names inside
 * expand to the variant's renamed functions after sonnx_mul_rename.h). */
#define INT_ADAPTERS_OF(V, S, T, K)                                               \
    static void mul_##V##S(const void *a, const void *b, void *c, size_t n)       \
    {                                                                             \
        sonnx_mul_wrap_##S((const T *)a, (const T *)b, (T *)c, n);                \
    }                                                                             \
    static size_t scan_##V##S(const void *a, const void *b, size_t n)             \
    {                                                                             \
        return sonnx_mul_first_overflow_##S((const T *)a, (const T *)b, n);       \
    }                                                                             \
    static size_t checked_##V##S(const void *a, const void *b, void *c, size_t n) \
    {                                                                             \
        return sonnx_mul_checked_##S((const T *)a, (const T *)b, (T *)c, n);      \
    }                                                                             \
    static size_t checked_fresh_##V##S(const void *a, const void *b, void *c,     \
                                       size_t n)                                  \
    {                                                                             \
        return sonnx_mul_checked_fresh_##S((const T *)a, (const T *)b, (T *)c, n); \
    }
#define FLOAT_ADAPTER_OF(V, S, T, K)                                              \
    static void mul_##V##S(const void *a, const void *b, void *c, size_t n)       \
    {                                                                             \
        sonnx_mul_##S((const T *)a, (const T *)b, (T *)c, n);                     \
    }

/* Statements filling `isa`'s entries of one kind with variant V's adapters. */
#define SET_INT_OF(V, S, T, K)                                                    \
    isa->mul[K] = mul_##V##S;                                                     \
    isa->scan[K] = scan_##V##S;                                                   \
    isa->checked[K] = checked_##V##S;                                             \
    isa->checked_fresh[K] = checked_fresh_##V##S;
#define SET_FLOAT_OF(V, S, T, K) isa->mul[K] = mul_##V##S;

#define INT_ADAPTERS(S, T, K) TAGGED(INT_ADAPTERS_OF, S, T, K)
#define FLOAT_ADAPTER(S, T, K) TAGGED(FLOAT_ADAPTER_OF, S, T, K)
#define SET_INT(S, T, K) TAGGED(SET_INT_OF, S, T, K)
#define SET_FLOAT(S, T, K) TAGGED(SET_FLOAT_OF, S, T, K)

/* Every adapter of the variant VARIANT_TAG, and the function that fills a
 * table with them (named fill_<tag>). */
#define VARIANT_ADAPTERS                                                          \
    SONNX_MUL_INT_KINDS(INT_ADAPTERS)                                             \
    SONNX_MUL_FLOAT_KINDS(FLOAT_ADAPTER)
#define FILL_FN(V) FILL_FN_(V)
#define FILL_FN_(V) fill_##V
#define VARIANT_FILL                                                              \
    static void FILL_FN(VARIANT_TAG)(struct isa *isa, const char *name)           \
    {                                                                             \
        isa->name = name;                                                         \
        SONNX_MUL_INT_KINDS(SET_INT)                                              \
        SONNX_MUL_FLOAT_KINDS(SET_FLOAT)                                          \
    }

#define VARIANT_TAG ISA_REFERENCE_TAG
VARIANT_ADAPTERS
VARIANT_FILL
#undef VARIANT_TAG

#if defined(SONNX_MUL_X86_VARIANTS)
#include "sonnx_mul_f16c.h"
#include "sonnx_mul_stream8.h"

/* The float16 hardware loops (F16C, 8- and 16-wide; WP-proved from the
 * admitted contract of their vector operation, verified exhaustively). */
static void mul_f16c_f16(const void *a, const void *b, void *c, size_t n)
{
    sonnx_mul_f16c_f16((const uint16_t *)a, (const uint16_t *)b, (uint16_t *)c, n);
}

static void mul_f16c512_f16(const void *a, const void *b, void *c, size_t n)
{
    sonnx_mul_f16c512_f16((const uint16_t *)a, (const uint16_t *)b, (uint16_t *)c, n);
}

/* The int8/uint8 wrap loops with streaming stores (32- and 64-byte; the
 * products by the variant's proved loop; WP proves the loop from the
 * admitted contract of its copy, which is verified exhaustively: its unit in
 * proofs/wp-manifest.json), called directly by the import check. */
static void wrap_stream8_8(const void *a, const void *b, void *c, size_t n)
{
    sonnx_mul_stream8_wrap8((const uint8_t *)a, (const uint8_t *)b, (uint8_t *)c, n);
}

static void wrap_stream8512_8(const void *a, const void *b, void *c, size_t n)
{
    sonnx_mul_stream8512_wrap8((const uint8_t *)a, (const uint8_t *)b, (uint8_t *)c, n);
}

/* The hardware variants' renamed declarations, adapters and fill functions. */
#include "_native_isa_builds.h"

/* A variant's int8/uint8 wrap: the streaming loop from
 * SONNX_MUL_STREAM8_MIN_ELEMENTS elements up (arrays beyond the L2, see
 * sonnx_mul_stream8.h), the variant's proved loop below.  The path depends
 * on n only: the same shape always takes the same path. */
#define STREAM8_ADAPTER(V, S, HW)                                                 \
    static void stream_##V##S(const void *a, const void *b, void *c, size_t n)    \
    {                                                                             \
        if (n >= SONNX_MUL_STREAM8_MIN_ELEMENTS) {                                \
            HW(a, b, c, n);                                                       \
        } else {                                                                  \
            mul_##V##S(a, b, c, n);                                               \
        }                                                                         \
    }
#define STREAM8_ADAPTERS(V, I, NAME, F16, S8)                                     \
    STREAM8_ADAPTER(V, i8, wrap_##S8##_8)                                         \
    STREAM8_ADAPTER(V, u8, wrap_##S8##_8)
SONNX_MUL_HW_VARIANTS(STREAM8_ADAPTERS)

enum { ISA_COUNT = ISA_ALL };
const long sonnx_glue_stream8_min_elements = (long)SONNX_MUL_STREAM8_MIN_ELEMENTS;
#else
enum { ISA_COUNT = 1 };
const long sonnx_glue_stream8_min_elements = 0L;
#endif

/* In order of preference from the last: the reference first.  Filled once at
 * import (fill_variants), read-only afterwards. */
static struct isa ISAS[ISA_COUNT];

/* Which variants this CPU can run (set at import). */
static int isa_supported[ISA_COUNT];

const struct isa *sonnx_glue_isa_current = &ISAS[ISA_REFERENCE];

#if defined(SONNX_MUL_X86_VARIANTS)
/* A hardware variant's loops that stand in for its portable ones (WP proves
 * each under the portable loop's contract): float16 by F16C,
 * int8/uint8 wrap through the streaming loop (`i8`, `u8`: with the
 * threshold; `stream8`: the loop itself, for the import check). */
static void use_hardware_loops(struct isa *isa, mul_fn f16, mul_fn i8, mul_fn u8,
                               mul_fn stream8)
{
    isa->mul[K_F16] = f16;
    isa->mul[K_I8] = i8;
    isa->mul[K_U8] = u8;
    isa->stream8 = stream8;
}

/* A variant's checked mode (the scan, and the checked call that scans and
 * writes; not the fused pass of a fresh result, faster in the variant's own
 * build) for some kinds is another variant's build (native/isa.toml,
 * `checked_from`): in 512-bit vectors gcc 12 does not recognise the widening
 * product of int16, uint16 and uint32 (it sign-extends 16-bit operands and
 * multiplies with vpmulld, and computes a full 64-bit product for 32-bit
 * ones, where the 256-bit build uses vpmulhw/vpmullw and one vpmuludq), and
 * its scan took 1.1-1.4x the time at 10^6 elements on an AMD Zen 4
 * (docs/native-kernel.md, "ISA variants"); int32's scan (one vpmullq per
 * product with AVX-512DQ) takes the same time in both and keeps its own.
 * Both builds are of the same proved source. */
#define CHECKED_FROM(I, FROM, K)                                                  \
    ISAS[I].scan[K] = ISAS[FROM].scan[K];                                         \
    ISAS[I].checked[K] = ISAS[FROM].checked[K];

/* Fill a hardware variant: its build's adapters, then its hardware loops. */
#define FILL_HW(V, I, NAME, F16, S8)                                              \
    FILL_FN(V)(&ISAS[I], NAME);                                                   \
    use_hardware_loops(&ISAS[I], mul_##F16##_f16, stream_##V##i8, stream_##V##u8, \
                       wrap_##S8##_8);
#endif

static void fill_variants(void)
{
    FILL_FN(ISA_REFERENCE_TAG)(&ISAS[ISA_REFERENCE], ISA_REFERENCE_NAME);
#if defined(SONNX_MUL_X86_VARIANTS)
    SONNX_MUL_HW_VARIANTS(FILL_HW)
    SONNX_MUL_CHECKED_FROM(CHECKED_FROM)
#endif
}

/* The index in ISAS of the variant called `text`, -1 when there is none. */
static int isa_index(const char *text)
{
    for (int v = 0; v < ISA_COUNT; v++) {
        if (strcmp(text, ISAS[v].name) == 0) {
            return v;
        }
    }
    return -1;
}

const struct isa *sonnx_glue_isa_named(PyObject *name)
{
    const char *text = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (text == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "sonnx_mul._native: the ISA must be a str");
        }
        return NULL;
    }
    const int v = isa_index(text);
    if (v < 0) {
        PyErr_Format(PyExc_ValueError, "sonnx_mul._native: no ISA variant %R", name);
        return NULL;
    }
    if (!isa_supported[v]) {
        PyErr_Format(PyExc_ValueError, "sonnx_mul._native: this CPU cannot run the %s variant",
                     text);
        return NULL;
    }
    return &ISAS[v];
}

PyObject *sonnx_glue_isa_names(void)
{
    PyObject *names = PyList_New(0);
    if (names == NULL) {
        return NULL;
    }
    for (int v = 0; v < ISA_COUNT; v++) {
        if (!isa_supported[v]) {
            continue;
        }
        PyObject *name = PyUnicode_FromString(ISAS[v].name);
        if (name == NULL || PyList_Append(names, name) < 0) {
            Py_XDECREF(name);
            Py_DECREF(names);
            return NULL;
        }
        Py_DECREF(name);
    }
    PyObject *result = PyList_AsTuple(names);
    Py_DECREF(names);
    return result;
}

/* float16 patterns whose products cover every case of the narrowing: zeros,
 * subnormals, the normal range's ends, halfway and near-halfway products,
 * overflow, infinities, quiet and signalling NaNs with payloads, both signs. */
static const uint16_t F16_EDGES[] = {
    0x0000, 0x0001, 0x0002, 0x0003, 0x01FF, 0x0200, 0x03FF, 0x0400, 0x0401, 0x07FF,
    0x0C00, 0x1400, 0x1C00, 0x2400, 0x3400, 0x3555, 0x37FF, 0x3800, 0x3BFF, 0x3C00,
    0x3C01, 0x3C03, 0x3DFF, 0x3E00, 0x3E01, 0x4000, 0x4001, 0x4A00, 0x5800, 0x5BFF,
    0x7800, 0x7BFE, 0x7BFF, 0x7C00, 0x7C01, 0x7D55, 0x7DFF, 0x7E00, 0x7E01, 0x7FFF,
};

#define F16_EDGE_COUNT (sizeof F16_EDGES / sizeof F16_EDGES[0])
#define F16_EDGE_PAIRS (4U * F16_EDGE_COUNT * F16_EDGE_COUNT)

/* The variant's float16 loop against the portable one on every ordered pair of
 * F16_EDGES with both signs, all but the last 3 (a length that is not a
 * multiple of the vector width: the tail is run too).  0 when they agree bit for bit. */
static int f16_edges_disagree(const struct isa *isa)
{
    static uint16_t a[F16_EDGE_PAIRS], b[F16_EDGE_PAIRS], want[F16_EDGE_PAIRS],
        got[F16_EDGE_PAIRS];
    size_t n = 0;
    for (size_t i = 0; i < F16_EDGE_COUNT; i++) {
        for (size_t j = 0; j < F16_EDGE_COUNT; j++) {
            for (unsigned s = 0; s < 4U; s++) {
                a[n] = (uint16_t)(F16_EDGES[i] | ((s & 1U) ? 0x8000U : 0U));
                b[n] = (uint16_t)(F16_EDGES[j] | ((s & 2U) ? 0x8000U : 0U));
                n++;
            }
        }
    }
    n -= 3U;
    ISAS[ISA_REFERENCE].mul[K_F16](a, b, want, n);
    isa->mul[K_F16](a, b, got, n);
    return memcmp(want, got, n * sizeof(uint16_t)) != 0;
}

/* The variant's streaming int8/uint8 loop, called directly (below the
 * threshold too: the check must run it), against the portable int8 and
 * uint8 wrap loops on every one of the 2^16 byte pairs, the output one byte
 * past a 64-byte boundary and the length 2^16 - 3 (the unaligned head, the
 * streamed blocks and the rest all run).  0 when they agree bit for
 * bit (or the variant has no such loop). */
#define PAIRS8 65536U
static int stream8_pairs_disagree(const struct isa *isa)
{
    static uint8_t a[PAIRS8], b[PAIRS8], want[PAIRS8], buffer[PAIRS8 + 128U];
    static const enum kind bytes[] = {K_I8, K_U8};
    if (isa->stream8 == NULL) {
        return 0;
    }
    /* got[1] is one byte past a 64-byte boundary; got[0] and got[n + 1] are guards */
    uint8_t *got = buffer + (64U - (uintptr_t)(void *)buffer % 64U);
    for (size_t i = 0; i < PAIRS8; i++) {
        a[i] = (uint8_t)(i >> 8);
        b[i] = (uint8_t)i;
    }
    const size_t n = PAIRS8 - 3U;
    for (size_t k = 0; k < sizeof bytes / sizeof bytes[0]; k++) {
        memset(got, 0xA5, PAIRS8);
        ISAS[ISA_REFERENCE].mul[bytes[k]](a, b, want, n);
        isa->stream8(a, b, got + 1, n);
        if (memcmp(want, got + 1, n) != 0 || got[0] != 0xA5U || got[n + 1U] != 0xA5U) {
            return 1;
        }
    }
    return 0;
}

int sonnx_glue_select_isa(void)
{
    fill_variants();
    isa_supported[ISA_REFERENCE] = 1;
#if defined(SONNX_MUL_X86_VARIANTS)
    __builtin_cpu_init();
#define CPU_RUNS(V, I, NAME, F16, S8) isa_supported[I] = I##_CPU;
    SONNX_MUL_HW_VARIANTS(CPU_RUNS)
#undef CPU_RUNS
#endif
    const char *asked = getenv("SONNX_MUL_ISA");
    int chosen = -1;
    if (asked == NULL || asked[0] == '\0' || strcmp(asked, "auto") == 0) {
        for (int v = 0; v < ISA_COUNT; v++) {
            if (isa_supported[v]) {
                chosen = v;
            }
        }
    } else {
        chosen = isa_index(asked);
        if (chosen < 0) {
            PyErr_Format(PyExc_ImportError,
                         "sonnx_mul._native: SONNX_MUL_ISA=%s: expected %s", asked,
                         ISA_COUNT > 1 ? ISA_EXPECTED : ISA_EXPECTED_REFERENCE);
            return -1;
        }
        if (!isa_supported[chosen]) {
            PyErr_Format(PyExc_ImportError,
                         "sonnx_mul._native: SONNX_MUL_ISA=%s: this CPU cannot run it", asked);
            return -1;
        }
    }
    if (chosen != ISA_REFERENCE && f16_edges_disagree(&ISAS[chosen])) {
        PyErr_Format(PyExc_ImportError,
                     "sonnx_mul._native: the %s variant's float16 loop disagrees with the "
                     "proved portable loop on this machine (F16C hardware or floating-point "
                     "mode); set SONNX_MUL_ISA=portable",
                     ISAS[chosen].name);
        return -1;
    }
    if (chosen != ISA_REFERENCE && stream8_pairs_disagree(&ISAS[chosen])) {
        PyErr_Format(PyExc_ImportError,
                     "sonnx_mul._native: the %s variant's streaming int8/uint8 loop disagrees "
                     "with the proved portable loop on this machine; set SONNX_MUL_ISA=portable",
                     ISAS[chosen].name);
        return -1;
    }
    sonnx_glue_isa_current = &ISAS[chosen];
    return 0;
}
