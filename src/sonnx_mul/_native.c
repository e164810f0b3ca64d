/* sonnx_mul._native: the thin glue between numpy arrays and the proved C
 * kernel (native/include/sonnx_mul_kernel.h, native/src/).
 *
 * The kernel only ever sees contiguous, aligned, native-byte-order blocks:
 * either the arrays themselves (all of the same contiguous layout), or the
 * blocks of a buffered numpy iterator (NpyIter with NPY_ITER_CONTIG), which
 * handles strides, negative strides, Fortran order and byte swapping one
 * block at a time, never by a full-size copy.
 *
 * One call of `multiply` runs to its end without executing any Python code
 * and without checking for signals: a KeyboardInterrupt is seen by Python
 * either before the call starts or after it has finished (README,
 * SECURITY.md). The GIL is released around large loops; the kernel has no
 * global state, so concurrent calls are independent.
 *
 * Python validates the call against R1-R4 and C1-OUT first (validation.py);
 * this file re-checks what its own memory safety depends on (array types,
 * one element type, same shape, writeable out, out exactly A or B or
 * disjoint from both) and raises TypeError/ValueError otherwise, writing
 * nothing.
 *
 * ISA variants (x86-64; docs/native-kernel.md): besides the portable SSE2
 * build of the kernel, the same proved sources are compiled again with AVX2
 * and with AVX-512 flags (native/flags.mk; symbols sonnx_mul_avx2_* and
 * sonnx_mul_avx512_*), and float16 has an F16C hardware loop
 * (native/hw/sonnx_mul_f16c.c, verified exhaustively, not WP-proved); int8
 * and uint8 in wrap mode, from SONNX_MUL_STREAM8_MIN_ELEMENTS elements up,
 * run a loop with streaming stores (native/hw/sonnx_mul_stream8.c, verified
 * exhaustively, not WP-proved; below the threshold, and in checked mode,
 * the proved loop).  At
 * import the widest variant the CPU supports is selected (avx512: AVX-512
 * F/BW/VL, AVX2 and F16C; avx2: AVX2 and F16C; otherwise portable); the
 * environment variable SONNX_MUL_ISA=portable|avx2|avx512 selects one
 * instead (ImportError if the CPU lacks it).  multiply() takes the variant's
 * name as an optional fifth argument (the tests run the paths back to back).
 * Before a hardware variant is used, its float16 loop is compared at import
 * bit for bit with the portable one on every pair of a set of edge values,
 * and its streaming int8/uint8 loop (called directly, whatever the
 * threshold) on every pair of bytes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#include <numpy/arrayobject.h>

#include <float.h>
#include <string.h>

#include <stdlib.h>

#include "sonnx_mul_kernel.h"
#include "sonnx_mul_fpenv.h"

/* The float kernels are IEEE binary32/binary64 operations only when C
 * evaluates float expressions in their own type (SSE2, not x87). */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "sonnx_mul needs FLT_EVAL_METHOD == 0 (build with -msse2 -mfpmath=sse on x86)"
#endif
#if defined(__FAST_MATH__)
#error "sonnx_mul must not be built with -ffast-math"
#endif

#ifndef SONNX_MUL_BUILD_FLAGS
#error "setup.py defines SONNX_MUL_BUILD_FLAGS (the compile command of this module)"
#endif

#if defined(__clang__)
#define COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define COMPILER "gcc " __VERSION__
#else
#define COMPILER "unknown C compiler"
#endif

/* Element kinds, in the order of KIND_NAMES. */
enum kind {
    K_I8, K_U8, K_I16, K_U16, K_I32, K_U32, K_I64, K_U64,
    K_F16, K_BF16, K_F32, K_F64, K_COUNT, K_NONE = -1
};

static const char *const KIND_NAMES[K_COUNT] = {
    "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float16", "bfloat16", "float32", "float64",
};

/* Typed adapters: the kernel functions take typed pointers; calling them
 * through a pointer of another function type would be undefined. */
typedef void (*wrap_fn)(const void *, const void *, void *, size_t);
typedef size_t (*scan_fn)(const void *, const void *, size_t);
typedef size_t (*checked_fn)(const void *, const void *, void *, size_t);

#define INT_ADAPTERS(V, S, T)                                                     \
    static void wrap_##V##S(const void *a, const void *b, void *c, size_t n)      \
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
    }

#define FLOAT_ADAPTER(V, S, T)                                                    \
    static void wrap_##V##S(const void *a, const void *b, void *c, size_t n)      \
    {                                                                             \
        sonnx_mul_##S((const T *)a, (const T *)b, (T *)c, n);                     \
    }

/* The adapters of one variant, V its tag (the sonnx_mul_* names inside the
 * macros expand to the variant's renamed functions after sonnx_mul_rename.h). */
#define ADAPTERS(V)                                                               \
    INT_ADAPTERS(V, i8, int8_t)                                                   \
    INT_ADAPTERS(V, u8, uint8_t)                                                  \
    INT_ADAPTERS(V, i16, int16_t)                                                 \
    INT_ADAPTERS(V, u16, uint16_t)                                                \
    INT_ADAPTERS(V, i32, int32_t)                                                 \
    INT_ADAPTERS(V, u32, uint32_t)                                                \
    INT_ADAPTERS(V, i64, int64_t)                                                 \
    INT_ADAPTERS(V, u64, uint64_t)                                                \
    FLOAT_ADAPTER(V, f16, uint16_t)                                               \
    FLOAT_ADAPTER(V, bf16, uint16_t)                                              \
    FLOAT_ADAPTER(V, f32, float)                                                  \
    FLOAT_ADAPTER(V, f64, double)

/* One variant of the kernel: its loops, indexed by kind. */
struct isa {
    const char *name;
    wrap_fn wrap[K_COUNT];
    scan_fn scan[K_COUNT];
    checked_fn checked[K_COUNT];
    /* The streaming int8/uint8 hardware loop itself (no threshold), for the
     * import check; NULL in the portable variant. */
    wrap_fn stream8;
};

#define ISA_TABLE(NAME, V, F16, W8, STREAM8)                                      \
    {                                                                             \
        NAME,                                                                     \
        {W8##i8, W8##u8, wrap_##V##i16, wrap_##V##u16, wrap_##V##i32,             \
         wrap_##V##u32, wrap_##V##i64, wrap_##V##u64, F16, wrap_##V##bf16,        \
         wrap_##V##f32, wrap_##V##f64},                                           \
        {scan_##V##i8, scan_##V##u8, scan_##V##i16, scan_##V##u16, scan_##V##i32,   \
         scan_##V##u32, scan_##V##i64, scan_##V##u64, NULL, NULL, NULL, NULL},    \
        {checked_##V##i8, checked_##V##u8, checked_##V##i16, checked_##V##u16,    \
         checked_##V##i32, checked_##V##u32, checked_##V##i64, checked_##V##u64,  \
         NULL, NULL, NULL, NULL},                                                 \
        STREAM8,                                                                  \
    }

ADAPTERS(portable_)

#if defined(SONNX_MUL_X86_VARIANTS)
#include "sonnx_mul_f16c.h"

/* The float16 hardware loops (F16C, 8- and 16-wide; verified exhaustively,
 * not WP-proved). */
static void wrap_f16c_f16(const void *a, const void *b, void *c, size_t n)
{
    sonnx_mul_f16c_f16((const uint16_t *)a, (const uint16_t *)b, (uint16_t *)c, n);
}

static void wrap_f16c512_f16(const void *a, const void *b, void *c, size_t n)
{
    sonnx_mul_f16c512_f16((const uint16_t *)a, (const uint16_t *)b, (uint16_t *)c, n);
}

#include "sonnx_mul_stream8.h"

/* The int8/uint8 wrap loops with streaming stores (32- and 64-wide; verified
 * exhaustively, not WP-proved), called directly by the import check. */
static void wrap_stream8_8(const void *a, const void *b, void *c, size_t n)
{
    sonnx_mul_stream8_wrap8((const uint8_t *)a, (const uint8_t *)b, (uint8_t *)c, n);
}

static void wrap_stream8512_8(const void *a, const void *b, void *c, size_t n)
{
    sonnx_mul_stream8512_wrap8((const uint8_t *)a, (const uint8_t *)b, (uint8_t *)c, n);
}

/* The renamed declarations of the variants: sonnx_mul_kernel.h read again
 * under the renaming of sonnx_mul_rename.h, once per variant prefix. */
#define SONNX_MUL_VARIANT sonnx_mul_avx2
#include "sonnx_mul_rename.h"
#undef SONNX_MUL_KERNEL_H
#include "sonnx_mul_kernel.h"
ADAPTERS(avx2_)
#undef SONNX_MUL_VARIANT
#define SONNX_MUL_VARIANT sonnx_mul_avx512
#undef SONNX_MUL_KERNEL_H
#include "sonnx_mul_kernel.h"
ADAPTERS(avx512_)
#undef SONNX_MUL_VARIANT

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
            wrap_##V##S(a, b, c, n);                                              \
        }                                                                         \
    }
STREAM8_ADAPTER(avx2_, i8, wrap_stream8_8)
STREAM8_ADAPTER(avx2_, u8, wrap_stream8_8)
STREAM8_ADAPTER(avx512_, i8, wrap_stream8512_8)
STREAM8_ADAPTER(avx512_, u8, wrap_stream8512_8)

enum { ISA_COUNT = 3 };
#else
enum { ISA_COUNT = 1 };
#endif

/* In order of preference from the last: portable first. */
static const struct isa ISAS[ISA_COUNT] = {
    ISA_TABLE("portable", portable_, wrap_portable_f16, wrap_portable_, NULL),
#if defined(SONNX_MUL_X86_VARIANTS)
    ISA_TABLE("avx2", avx2_, wrap_f16c_f16, stream_avx2_, wrap_stream8_8),
    ISA_TABLE("avx512", avx512_, wrap_f16c512_f16, stream_avx512_, wrap_stream8512_8),
#endif
};

/* Which variants this CPU can run (set at import). */
static int isa_supported[ISA_COUNT];

/* The variant in use: chosen once at import, read-only afterwards. */
static const struct isa *isa_current = &ISAS[0];

/* Set once by the module's initialisation, read-only afterwards: the
 * native-order dtype of each kind's results, and ml_dtypes' bfloat16 type
 * number (a user dtype, numbered when ml_dtypes registers it). */
static PyArray_Descr *result_descr[K_COUNT];
static int bfloat16_typenum = -1;

/* int8/uint8 wrap runs the streaming hardware loop from this many elements
 * up (sonnx_mul_stream8.h; 0: this build has no such loop). */
#if defined(SONNX_MUL_X86_VARIANTS)
#define STREAM8_MIN_ELEMENTS ((long)SONNX_MUL_STREAM8_MIN_ELEMENTS)
#else
#define STREAM8_MIN_ELEMENTS 0L
#endif

/* Below this many elements the GIL is kept: releasing and taking it back
 * costs more than the loop. */
#define THREADS_MIN_ELEMENTS 16384

static enum kind kind_of(const PyArray_Descr *descr)
{
    int num = descr->type_num;
    size_t size = (size_t)PyDataType_ELSIZE(descr);
    if (num == bfloat16_typenum) {
        return size == 2 ? K_BF16 : K_NONE;
    }
    switch (num) {
    case NPY_BYTE: case NPY_SHORT: case NPY_INT: case NPY_LONG: case NPY_LONGLONG:
        return size == 1 ? K_I8 : size == 2 ? K_I16 : size == 4 ? K_I32 : size == 8 ? K_I64
                                                                                     : K_NONE;
    case NPY_UBYTE: case NPY_USHORT: case NPY_UINT: case NPY_ULONG: case NPY_ULONGLONG:
        return size == 1 ? K_U8 : size == 2 ? K_U16 : size == 4 ? K_U32 : size == 8 ? K_U64
                                                                                     : K_NONE;
    case NPY_HALF:
        return K_F16;
    case NPY_FLOAT:
        return size == 4 ? K_F32 : K_NONE;
    case NPY_DOUBLE:
        return size == 8 ? K_F64 : K_NONE;
    default:
        return K_NONE;
    }
}

/* The byte range [lo, hi) that an array's elements may touch. */
static void extent(PyArrayObject *x, char **lo, char **hi)
{
    char *start = PyArray_BYTES(x), *end = start;
    int nd = PyArray_NDIM(x);
    npy_intp *dims = PyArray_DIMS(x), *strides = PyArray_STRIDES(x);
    for (int k = 0; k < nd; k++) {
        if (dims[k] == 0) {
            *lo = *hi = start;
            return;
        }
        npy_intp span = strides[k] * (dims[k] - 1);
        if (span < 0) {
            start += span;
        } else {
            end += span;
        }
    }
    *lo = start;
    *hi = end + PyArray_ITEMSIZE(x);
}

/* The same elements in the same order and read the same way: the same data, dims,
 * strides and element type in the same byte order (validation.same_view compares
 * numpy dtypes; a byte-swapped A seen in native order by out is not A: issue 29). */
static int same_view(PyArrayObject *x, PyArrayObject *y)
{
    int nd = PyArray_NDIM(x);
    return PyArray_BYTES(x) == PyArray_BYTES(y) && nd == PyArray_NDIM(y) &&
           PyArray_EquivTypes(PyArray_DESCR(x), PyArray_DESCR(y)) &&
           memcmp(PyArray_DIMS(x), PyArray_DIMS(y), (size_t)nd * sizeof(npy_intp)) == 0 &&
           memcmp(PyArray_STRIDES(x), PyArray_STRIDES(y), (size_t)nd * sizeof(npy_intp)) == 0;
}

/* out may be exactly x (same elements, same order) or share no byte with it. */
static int aliasing_allowed(PyArrayObject *out, PyArrayObject *x)
{
    char *olo, *ohi, *xlo, *xhi;
    if (out == x || same_view(out, x)) {
        return 1;
    }
    extent(out, &olo, &ohi);
    extent(x, &xlo, &xhi);
    return ohi <= xlo || xhi <= olo;
}

/* Native byte order, aligned, and contiguous in the given order. */
static int plain(PyArrayObject *x, int fortran)
{
    int flags = PyArray_FLAGS(x);
    int contiguous = fortran ? (flags & NPY_ARRAY_F_CONTIGUOUS) : (flags & NPY_ARRAY_C_CONTIGUOUS);
    return contiguous && (flags & NPY_ARRAY_ALIGNED) && PyArray_ISNBO(PyArray_DESCR(x)->byteorder);
}

#define IN_FLAGS (NPY_ITER_READONLY | NPY_ITER_NBO | NPY_ITER_ALIGNED | NPY_ITER_CONTIG)
#define OUT_FLAGS (NPY_ITER_WRITEONLY | NPY_ITER_NBO | NPY_ITER_ALIGNED | NPY_ITER_CONTIG)
#define ITER_FLAGS (NPY_ITER_EXTERNAL_LOOP | NPY_ITER_BUFFERED | NPY_ITER_GROWINNER)

/* A buffered iterator over nop operands whose inner loops are contiguous
 * native blocks of the kind's dtype (byte-swapped inputs are swapped into
 * the buffers, an "equivalent" cast). */
static NpyIter *block_iter(int nop, PyArrayObject **ops, enum kind k, NPY_ORDER order)
{
    npy_uint32 op_flags[3] = {IN_FLAGS, IN_FLAGS, OUT_FLAGS};
    PyArray_Descr *dtypes[3] = {result_descr[k], result_descr[k], result_descr[k]};
    return NpyIter_MultiNew(nop, ops, ITER_FLAGS, order, NPY_EQUIV_CASTING, op_flags, dtypes);
}

/* The kernel requires contiguous blocks: what NPY_ITER_CONTIG promises, checked
 * on every block (strides may change between buffered and direct stretches;
 * a block of one element may report any stride). */
static int contiguous_block(const npy_intp *strides, int nop, npy_intp itemsize, npy_intp size)
{
    if (size <= 1) {
        return 1;
    }
    for (int i = 0; i < nop; i++) {
        if (strides[i] != itemsize) {
            return 0;
        }
    }
    return 1;
}

static const char NOT_CONTIGUOUS[] = "sonnx_mul._native: numpy gave a non-contiguous block";

/* Runs the wrap/float kernel over every block of a, b -> c. 0 or -1 (error set). */
static int wrap_blocks(PyArrayObject *a, PyArrayObject *b, PyArrayObject *c, enum kind k,
                       const struct isa *isa)
{
    PyArrayObject *ops[3] = {a, b, c};
    NpyIter *iter = block_iter(3, ops, k, NPY_KEEPORDER);
    if (iter == NULL) {
        return -1;
    }
    npy_intp itemsize = PyDataType_ELSIZE(result_descr[k]);
    NpyIter_IterNextFunc *next = NpyIter_GetIterNext(iter, NULL);
    if (next == NULL) {
        NpyIter_Deallocate(iter);
        return -1;
    }
    char **data = NpyIter_GetDataPtrArray(iter);
    npy_intp *size = NpyIter_GetInnerLoopSizePtr(iter);
    npy_intp *strides = NpyIter_GetInnerStrideArray(iter);
    wrap_fn fn = isa->wrap[k];
    int contiguous = 1;
    int threads = !NpyIter_IterationNeedsAPI(iter) && PyArray_SIZE(a) >= THREADS_MIN_ELEMENTS;
    PyThreadState *state = threads ? PyEval_SaveThread() : NULL;
    do {
        contiguous = contiguous_block(strides, 3, itemsize, *size);
        if (!contiguous) {
            break;
        }
        fn(data[0], data[1], data[2], (size_t)*size);
    } while (next(iter));
    if (state != NULL) {
        PyEval_RestoreThread(state);
    }
    if (NpyIter_Deallocate(iter) != NPY_SUCCEED || PyErr_Occurred()) {
        return -1;
    }
    if (!contiguous) {
        PyErr_SetString(PyExc_RuntimeError, NOT_CONTIGUOUS);
        return -1;
    }
    return 0;
}

/* First overflowing element of a * b: -1 when none, else its flat index
 * in the order of the iteration (C order when order is NPY_CORDER);
 * -2 on error (set). Writes nothing. */
static npy_intp scan_blocks(PyArrayObject *a, PyArrayObject *b, enum kind k, NPY_ORDER order,
                            const struct isa *isa)
{
    PyArrayObject *ops[2] = {a, b};
    NpyIter *iter = block_iter(2, ops, k, order);
    if (iter == NULL) {
        return -2;
    }
    npy_intp itemsize = PyDataType_ELSIZE(result_descr[k]);
    NpyIter_IterNextFunc *next = NpyIter_GetIterNext(iter, NULL);
    if (next == NULL) {
        NpyIter_Deallocate(iter);
        return -2;
    }
    char **data = NpyIter_GetDataPtrArray(iter);
    npy_intp *size = NpyIter_GetInnerLoopSizePtr(iter);
    npy_intp *strides = NpyIter_GetInnerStrideArray(iter);
    scan_fn fn = isa->scan[k];
    npy_intp start = 0, found = -1;
    int contiguous = 1;
    int threads = !NpyIter_IterationNeedsAPI(iter) && PyArray_SIZE(a) >= THREADS_MIN_ELEMENTS;
    PyThreadState *state = threads ? PyEval_SaveThread() : NULL;
    do {
        contiguous = contiguous_block(strides, 2, itemsize, *size);
        if (!contiguous) {
            break;
        }
        size_t n = (size_t)*size, i = fn(data[0], data[1], n);
        if (i < n) {
            found = start + (npy_intp)i;
            break;
        }
        start += *size;
    } while (next(iter));
    if (state != NULL) {
        PyEval_RestoreThread(state);
    }
    if (NpyIter_Deallocate(iter) != NPY_SUCCEED || PyErr_Occurred()) {
        return -2;
    }
    if (!contiguous) {
        PyErr_SetString(PyExc_RuntimeError, NOT_CONTIGUOUS);
        return -2;
    }
    return found;
}

/* The C-order flat index of the first overflow, -1 when none, -2 on error.
 * A first pass in the arrays' own memory order says whether there is one
 * at all (the common case: no); only then a C-order pass finds the first. */
static npy_intp first_overflow(PyArrayObject *a, PyArrayObject *b, enum kind k,
                               const struct isa *isa)
{
    npy_intp any = scan_blocks(a, b, k, NPY_KEEPORDER, isa);
    if (any < 0) {
        return any;
    }
    return scan_blocks(a, b, k, NPY_CORDER, isa);
}

static int check_operand(PyObject *x, const char *name)
{
    if (!PyArray_Check(x)) {
        PyErr_Format(PyExc_TypeError, "sonnx_mul._native: %s must be a numpy.ndarray", name);
        return -1;
    }
    return 0;
}

static int same_shape(PyArrayObject *x, PyArrayObject *y)
{
    int nd = PyArray_NDIM(x);
    return nd == PyArray_NDIM(y) &&
           memcmp(PyArray_DIMS(x), PyArray_DIMS(y), (size_t)nd * sizeof(npy_intp)) == 0;
}

/* The kernel's preconditions on the arrays; the kind of their elements or K_NONE (error set). */
static enum kind preconditions(PyArrayObject *a, PyArrayObject *b, PyArrayObject *out)
{
    enum kind k = kind_of(PyArray_DESCR(a));
    if (k == K_NONE || kind_of(PyArray_DESCR(b)) != k) {
        PyErr_SetString(PyExc_TypeError,
                        "sonnx_mul._native: A and B must have one element type of the profile");
        return K_NONE;
    }
    if (!same_shape(a, b) || PyArray_SIZE(a) == 0) {
        PyErr_SetString(PyExc_ValueError,
                        "sonnx_mul._native: A and B must have the same non-empty shape");
        return K_NONE;
    }
    if (out == NULL) {
        return k;
    }
    if (kind_of(PyArray_DESCR(out)) != k || !PyArray_ISNBO(PyArray_DESCR(out)->byteorder)) {
        PyErr_SetString(PyExc_TypeError,
                        "sonnx_mul._native: out must have the element type of A in native order");
        return K_NONE;
    }
    if (!same_shape(out, a)) {
        PyErr_SetString(PyExc_ValueError, "sonnx_mul._native: out must have the shape of A");
        return K_NONE;
    }
    if (!PyArray_ISWRITEABLE(out)) {
        PyErr_SetString(PyExc_ValueError, "sonnx_mul._native: out is read-only");
        return K_NONE;
    }
    if (!aliasing_allowed(out, a) || !aliasing_allowed(out, b)) {
        PyErr_SetString(PyExc_ValueError,
                        "sonnx_mul._native: out must be exactly A or B, or share no memory with "
                        "them");
        return K_NONE;
    }
    return k;
}

static PyArrayObject *new_result(PyArrayObject *a, enum kind k)
{
    Py_INCREF(result_descr[k]); /* stolen by the constructor */
    return (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, result_descr[k], PyArray_NDIM(a),
                                                 PyArray_DIMS(a), NULL, NULL, 0, NULL);
}

PyDoc_STRVAR(multiply_doc,
"multiply(a, b, out, checked, isa=<the variant in use>, /)\n--\n\n"
"C = A * B by the proved kernel into out, or into a new C-ordered native array\n"
"when out is None; returns that array.  With checked true on an integer type,\n"
"when a product does not fit, returns instead the first overflowing flat index\n"
"in C order (an int) and has written nothing.  Floats ignore checked.\n"
"TypeError/ValueError (nothing written) when a precondition of the kernel fails.\n"
"isa ('portable', 'avx2', 'avx512') runs that variant of the kernel instead of\n"
"the one selected at import (ValueError if this CPU cannot run it).");

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

/* The variant named by a str, or NULL (error set) when there is none of that
 * name or this CPU cannot run it. */
static const struct isa *isa_named(PyObject *name)
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

static PyObject *multiply_in_env(PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 && nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "multiply(a, b, out, checked[, isa]) takes 4 or 5 arguments");
        return NULL;
    }
    const struct isa *isa = nargs == 5 ? isa_named(args[4]) : isa_current;
    if (isa == NULL) {
        return NULL;
    }
    if (check_operand(args[0], "a") < 0 || check_operand(args[1], "b") < 0 ||
        (args[2] != Py_None && check_operand(args[2], "out") < 0)) {
        return NULL;
    }
    int checked = PyObject_IsTrue(args[3]);
    if (checked < 0) {
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)args[0], *b = (PyArrayObject *)args[1];
    PyArrayObject *out = args[2] == Py_None ? NULL : (PyArrayObject *)args[2];
    enum kind k = preconditions(a, b, out);
    if (k == K_NONE) {
        return NULL;
    }
    checked = checked && isa->scan[k] != NULL;
    npy_intp n = PyArray_SIZE(a);

    /* Every operand contiguous in one order, aligned, native: the kernel
     * runs on the arrays themselves, in one call. */
    int fortran = !PyArray_IS_C_CONTIGUOUS(a);
    if (plain(a, fortran) && plain(b, fortran) && (out == NULL ? !fortran : plain(out, fortran))) {
        if (checked && fortran) {
            /* Fortran memory order: the first overflow in C order needs the iterator. */
            npy_intp first = first_overflow(a, b, k, isa);
            if (first != -1) {
                return first == -2 ? NULL : PyLong_FromSsize_t(first);
            }
            checked = 0;
        }
        PyArrayObject *c = out != NULL ? out : new_result(a, k);
        if (c == NULL) {
            return NULL;
        }
        size_t done = (size_t)n;
        int threads = n >= THREADS_MIN_ELEMENTS;
        PyThreadState *state = threads ? PyEval_SaveThread() : NULL;
        if (checked) {
            done = isa->checked[k](PyArray_DATA(a), PyArray_DATA(b), PyArray_DATA(c), (size_t)n);
        } else {
            isa->wrap[k](PyArray_DATA(a), PyArray_DATA(b), PyArray_DATA(c), (size_t)n);
        }
        if (state != NULL) {
            PyEval_RestoreThread(state);
        }
        if (done < (size_t)n) { /* nothing was written */
            if (out == NULL) {
                Py_DECREF(c);
            }
            return PyLong_FromSize_t(done);
        }
        if (out != NULL) {
            Py_INCREF(out);
        }
        return (PyObject *)c;
    }

    /* Any other layout or byte order: blocks of a buffered iterator. */
    if (checked) {
        npy_intp first = first_overflow(a, b, k, isa);
        if (first != -1) {
            return first == -2 ? NULL : PyLong_FromSsize_t(first);
        }
    }
    PyArrayObject *c = out != NULL ? out : new_result(a, k);
    if (c == NULL) {
        return NULL;
    }
    if (wrap_blocks(a, b, c, k, isa) < 0) {
        if (out == NULL) {
            Py_DECREF(c);
        }
        return NULL;
    }
    if (out != NULL) {
        Py_INCREF(out);
    }
    return (PyObject *)c;
}

/* The kernel runs in the environment it assumes (sonnx_mul_fpenv.h: round
 * to nearest even, no FTZ/DAZ), whatever another library in the process
 * left in MXCSR; the caller's is restored, status flags included.  Two
 * register writes per call, cheaper than integer-exact float loops. */
static PyObject *multiply(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    sonnx_mul_fpenv saved = sonnx_mul_fpenv_enter();
    PyObject *result = multiply_in_env(args, nargs);
    sonnx_mul_fpenv_leave(&saved);
    return result;
}

PyDoc_STRVAR(kind_doc,
"kind(dtype, /)\n--\n\n"
"The kernel's name for a dtype's element type ('int8', ..., 'bfloat16',\n"
"'float64'), or None when the kernel has no loop for it.");

static PyObject *kind(PyObject *self, PyObject *arg)
{
    (void)self;
    if (!PyArray_DescrCheck(arg)) {
        PyErr_SetString(PyExc_TypeError, "kind() takes a numpy.dtype");
        return NULL;
    }
    enum kind k = kind_of((PyArray_Descr *)arg);
    if (k == K_NONE) {
        Py_RETURN_NONE;
    }
    return PyUnicode_FromString(KIND_NAMES[k]);
}

PyDoc_STRVAR(isa_doc,
"isa()\n--\n\n"
"The name of the kernel variant that multiply() runs: 'portable' (SSE2, the\n"
"proved sources as such), 'avx2' (the same sources compiled for AVX2, float16\n"
"by F16C) or 'avx512' (for AVX-512 F/BW/VL, float16 by F16C); chosen at import.");

static PyObject *isa_name(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyUnicode_FromString(isa_current->name);
}

PyDoc_STRVAR(isas_doc,
"isas()\n--\n\n"
"The variants this build has and this CPU can run, portable first.");

static PyObject *isas(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
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

static PyMethodDef methods[] = {
    {"multiply", (PyCFunction)(void (*)(void))multiply, METH_FASTCALL, multiply_doc},
    {"kind", kind, METH_O, kind_doc},
    {"isa", isa_name, METH_NOARGS, isa_doc},
    {"isas", isas, METH_NOARGS, isas_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "sonnx_mul._native",
    "The proved C kernel of sonnx_mul.mul behind a thin numpy glue (see _native.pyi).",
    -1,
    methods,
    NULL, NULL, NULL, NULL,
};

static int init_descrs(void)
{
    static const int builtin[K_COUNT] = {
        NPY_INT8, NPY_UINT8, NPY_INT16, NPY_UINT16, NPY_INT32, NPY_UINT32, NPY_INT64, NPY_UINT64,
        NPY_HALF, -1, NPY_FLOAT32, NPY_FLOAT64,
    };
    for (int k = 0; k < K_COUNT; k++) {
        if (k == K_BF16) {
            continue;
        }
        result_descr[k] = PyArray_DescrFromType(builtin[k]);
        if (result_descr[k] == NULL) {
            return -1;
        }
    }
    /* bfloat16 is ml_dtypes' user dtype (a dependency of the package). */
    PyObject *ml = PyImport_ImportModule("ml_dtypes");
    if (ml == NULL) {
        return -1;
    }
    PyObject *scalar = PyObject_GetAttrString(ml, "bfloat16");
    Py_DECREF(ml);
    if (scalar == NULL) {
        return -1;
    }
    PyArray_Descr *bf = NULL;
    int ok = PyArray_DescrConverter(scalar, &bf);
    Py_DECREF(scalar);
    if (!ok || bf == NULL) {
        return -1;
    }
    if (PyDataType_ELSIZE(bf) != 2 || !PyArray_ISNBO(bf->byteorder)) {
        Py_DECREF(bf);
        PyErr_SetString(PyExc_ImportError, "sonnx_mul._native: unexpected ml_dtypes.bfloat16");
        return -1;
    }
    bfloat16_typenum = bf->type_num;
    result_descr[K_BF16] = bf;
    return 0;
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
    ISAS[0].wrap[K_F16](a, b, want, n);
    isa->wrap[K_F16](a, b, got, n);
    return memcmp(want, got, n * sizeof(uint16_t)) != 0;
}

/* The variant's streaming int8/uint8 loop, called directly (below the
 * threshold too: the check must run it), against the portable int8 and
 * uint8 wrap loops on every one of the 2^16 byte pairs, the output one byte
 * past a 64-byte boundary and the length 2^16 - 3 (the unaligned head, the
 * streamed body and the padded tail all run).  0 when they agree bit for
 * bit (or the variant has no such loop). */
#define PAIRS8 65536U
static int stream8_pairs_disagree(const struct isa *isa)
{
    static uint8_t a[PAIRS8], b[PAIRS8], want[PAIRS8], buffer[PAIRS8 + 128U];
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
    for (enum kind k = K_I8; k <= K_U8; k++) {
        memset(got, 0xA5, PAIRS8);
        ISAS[0].wrap[k](a, b, want, n);
        isa->stream8(a, b, got + 1, n);
        if (memcmp(want, got + 1, n) != 0 || got[0] != 0xA5U || got[n + 1U] != 0xA5U) {
            return 1;
        }
    }
    return 0;
}

/* Which variants the CPU runs, and the one to use: SONNX_MUL_ISA, or the
 * widest supported.  0, or -1 with ImportError set. */
static int select_isa(void)
{
    isa_supported[0] = 1;
#if defined(SONNX_MUL_X86_VARIANTS)
    __builtin_cpu_init();
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
    isa_supported[1] = avx2;
    isa_supported[2] = avx2 && __builtin_cpu_supports("avx512f") &&
                       __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
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
                         "sonnx_mul._native: SONNX_MUL_ISA=%s: expected auto, portable%s",
                         asked, ISA_COUNT > 1 ? ", avx2 or avx512" : " (this build has no other)");
            return -1;
        }
        if (!isa_supported[chosen]) {
            PyErr_Format(PyExc_ImportError,
                         "sonnx_mul._native: SONNX_MUL_ISA=%s: this CPU cannot run it", asked);
            return -1;
        }
    }
    if (chosen > 0 && f16_edges_disagree(&ISAS[chosen])) {
        PyErr_Format(PyExc_ImportError,
                     "sonnx_mul._native: the %s variant's float16 loop disagrees with the "
                     "proved portable loop on this machine (F16C hardware or floating-point "
                     "mode); set SONNX_MUL_ISA=portable",
                     ISAS[chosen].name);
        return -1;
    }
    if (chosen > 0 && stream8_pairs_disagree(&ISAS[chosen])) {
        PyErr_Format(PyExc_ImportError,
                     "sonnx_mul._native: the %s variant's streaming int8/uint8 loop disagrees "
                     "with the proved portable loop on this machine; set SONNX_MUL_ISA=portable",
                     ISAS[chosen].name);
        return -1;
    }
    isa_current = &ISAS[chosen];
    return 0;
}

PyMODINIT_FUNC PyInit__native(void)
{
    import_array();
    if (init_descrs() < 0 || select_isa() < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddStringConstant(m, "BUILD_FLAGS", SONNX_MUL_BUILD_FLAGS) < 0 ||
        PyModule_AddStringConstant(m, "COMPILER", COMPILER) < 0 ||
        PyModule_AddIntConstant(m, "FLT_EVAL_METHOD", FLT_EVAL_METHOD) < 0 ||
        PyModule_AddIntConstant(m, "THREADS_MIN_ELEMENTS", THREADS_MIN_ELEMENTS) < 0 ||
        PyModule_AddIntConstant(m, "STREAM8_MIN_ELEMENTS", STREAM8_MIN_ELEMENTS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
