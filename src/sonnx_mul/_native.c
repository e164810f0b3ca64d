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
 * The Python module's definition (method table, constants, initialisation)
 * is _native_module.c; which build of the kernel runs each kind (the ISA
 * variants, the hardware loops, the checks at import) is _native_variants.c's
 * business; the element kinds and their tables come from _native_kinds.h,
 * generated from the registry of element types (src/sonnx_mul/dtypes.py).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#include <numpy/arrayobject.h>

#include <float.h>
#include <string.h>

#include "_native.h"
#include "_native_variants.h"
#include "sonnx_mul_fpenv.h"

/* The float kernels are IEEE binary32/binary64 operations only when C
 * evaluates float expressions in their own type (SSE2, not x87). */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "sonnx_mul needs FLT_EVAL_METHOD == 0 (build with -msse2 -mfpmath=sse on x86)"
#endif
#if defined(__FAST_MATH__)
#error "sonnx_mul must not be built with -ffast-math"
#endif

/* Each kind's row (generated from the registry): numpy's name, class of
 * type numbers, item size and built-in type number. */
static const struct kind_row KIND_ROWS[K_COUNT] = SONNX_MUL_KIND_ROWS;

/* Set once by the module's initialisation, read-only afterwards: the
 * native-order dtype of each kind's results, and ml_dtypes' bfloat16 type
 * number (a user dtype, numbered when ml_dtypes registers it). */
static PyArray_Descr *result_descr[K_COUNT];
static int bfloat16_typenum = -1;

/* Releases the GIL when `worth` (the loop is long enough); the state to give
 * to reacquire_gil, NULL when the GIL was kept. */
static PyThreadState *release_gil_if(int worth)
{
    return worth ? PyEval_SaveThread() : NULL;
}

static void reacquire_gil(PyThreadState *state)
{
    if (state != NULL) {
        PyEval_RestoreThread(state);
    }
}

/* The kind of a dtype (any byte order), K_NONE when the kernel has none:
 * integers by signedness and size (numpy's int, long and long long are one
 * kind when they have one size), built-in floats by type number. */
static enum kind kind_of(const PyArray_Descr *descr)
{
    const int num = descr->type_num;
    const int size = (int)PyDataType_ELSIZE(descr);
    for (int k = 0; k < K_COUNT; k++) {
        const struct kind_row *row = &KIND_ROWS[k];
        int match = 0;
        switch (row->class_) {
        case KC_SIGNED:
            match = PyTypeNum_ISSIGNED(num) && size == row->itemsize;
            break;
        case KC_UNSIGNED:
            match = PyTypeNum_ISUNSIGNED(num) && size == row->itemsize;
            break;
        case KC_FLOAT:
            match = num == row->typenum;
            break;
        case KC_BFLOAT16:
            match = num == bfloat16_typenum && size == row->itemsize;
            break;
        }
        if (match) {
            return (enum kind)k;
        }
    }
    return K_NONE;
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

/* A walk over the blocks of a buffered iterator: each inner loop is one
 * kernel call on native blocks.  The GIL is released for the whole walk when
 * the arrays are long enough and numpy needs no Python API to iterate. */
struct blocks {
    NpyIter *iter;
    NpyIter_IterNextFunc *next;
    char **data;       /* the block of each operand */
    npy_intp *size;    /* its element count */
    npy_intp *strides; /* its stride of each operand */
    npy_intp itemsize;
    int nop;
    PyThreadState *gil; /* NULL while the GIL is held */
};

/* Starts a walk over ops (nop of them; ops[0] has the size of all) in `order`.
 * 0, or -1 with an error set and nothing left to end. */
static int blocks_start(struct blocks *w, int nop, PyArrayObject **ops, enum kind k,
                        NPY_ORDER order)
{
    w->iter = block_iter(nop, ops, k, order);
    if (w->iter == NULL) {
        return -1;
    }
    w->next = NpyIter_GetIterNext(w->iter, NULL);
    if (w->next == NULL) {
        NpyIter_Deallocate(w->iter);
        return -1;
    }
    w->data = NpyIter_GetDataPtrArray(w->iter);
    w->size = NpyIter_GetInnerLoopSizePtr(w->iter);
    w->strides = NpyIter_GetInnerStrideArray(w->iter);
    w->itemsize = PyDataType_ELSIZE(result_descr[k]);
    w->nop = nop;
    w->gil = release_gil_if(!NpyIter_IterationNeedsAPI(w->iter) &&
                            PyArray_SIZE(ops[0]) >= GIL_RELEASE_MIN_ELEMENTS);
    return 0;
}

/* The kernel requires contiguous blocks: what NPY_ITER_CONTIG promises, checked
 * on every block (strides may change between buffered and direct stretches;
 * a block of one element may report any stride). */
static int block_contiguous(const struct blocks *w)
{
    if (*w->size <= 1) {
        return 1;
    }
    for (int i = 0; i < w->nop; i++) {
        if (w->strides[i] != w->itemsize) {
            return 0;
        }
    }
    return 1;
}

/* Ends a walk: the GIL taken back, the iterator freed.  0, or -1 with an
 * error set: numpy's, or a block that was not contiguous (`contiguous` 0). */
static int blocks_end(struct blocks *w, int contiguous)
{
    reacquire_gil(w->gil);
    if (NpyIter_Deallocate(w->iter) != NPY_SUCCEED || PyErr_Occurred()) {
        return -1;
    }
    if (!contiguous) {
        PyErr_SetString(PyExc_RuntimeError,
                        "sonnx_mul._native: numpy gave a non-contiguous block");
        return -1;
    }
    return 0;
}

/* The unchecked product (integers wrap, floats round) over every block of
 * a, b -> c. 0 or -1 (error set). */
static int mul_blocks(PyArrayObject *a, PyArrayObject *b, PyArrayObject *c, enum kind k,
                      const struct isa *isa)
{
    PyArrayObject *ops[3] = {a, b, c};
    struct blocks w;
    if (blocks_start(&w, 3, ops, k, NPY_KEEPORDER) < 0) {
        return -1;
    }
    mul_fn fn = isa->mul[k];
    int contiguous = 1;
    do {
        contiguous = block_contiguous(&w);
        if (!contiguous) {
            break;
        }
        fn(w.data[0], w.data[1], w.data[2], (size_t)*w.size);
    } while (w.next(w.iter));
    return blocks_end(&w, contiguous);
}

/* First overflowing element of a * b: -1 when none, else its flat index
 * in the order of the iteration (C order when order is NPY_CORDER);
 * -2 on error (set). Writes nothing. */
static npy_intp scan_blocks(PyArrayObject *a, PyArrayObject *b, enum kind k, NPY_ORDER order,
                            const struct isa *isa)
{
    PyArrayObject *ops[3] = {a, b, NULL}; /* a count past 2 meets NULL: numpy refuses it */
    struct blocks w;
    if (blocks_start(&w, 2, ops, k, order) < 0) {
        return -2;
    }
    scan_fn fn = isa->scan[k];
    npy_intp start = 0, found = -1;
    int contiguous = 1;
    do {
        contiguous = block_contiguous(&w);
        if (!contiguous) {
            break;
        }
        size_t n = (size_t)*w.size, i = fn(w.data[0], w.data[1], n);
        if (i < n) {
            found = start + (npy_intp)i;
            break;
        }
        start += *w.size;
    } while (w.next(w.iter));
    return blocks_end(&w, contiguous) < 0 ? -2 : found;
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

/* The product of the arrays a and b (out NULL: a new result) on the variant
 * isa, in the environment the kernel assumes (the caller brackets it). */
static PyObject *run(PyArrayObject *a, PyArrayObject *b, PyArrayObject *out, int checked,
                     const struct isa *isa)
{
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
        PyThreadState *gil = release_gil_if(n >= GIL_RELEASE_MIN_ELEMENTS);
        if (checked) {
            /* A fresh result (C order here) is dropped on an overflow: the
             * one-pass call may write before it finds one. */
            checked_fn fn = out == NULL ? isa->checked_fresh[k] : isa->checked[k];
            done = fn(PyArray_DATA(a), PyArray_DATA(b), PyArray_DATA(c), (size_t)n);
        } else {
            isa->mul[k](PyArray_DATA(a), PyArray_DATA(b), PyArray_DATA(c), (size_t)n);
        }
        reacquire_gil(gil);
        if (done < (size_t)n) { /* nothing was written to out; a fresh c is dropped */
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
    if (mul_blocks(a, b, c, k, isa) < 0) {
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
static PyObject *run_in_env(PyArrayObject *a, PyArrayObject *b, PyArrayObject *out, int checked,
                            const struct isa *isa)
{
    sonnx_mul_fpenv saved = sonnx_mul_fpenv_enter();
    PyObject *result = run(a, b, out, checked, isa);
    sonnx_mul_fpenv_leave(&saved);
    return result;
}

PyObject *sonnx_glue_multiply(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 4 && nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "multiply(a, b, out, checked[, isa]) takes 4 or 5 arguments");
        return NULL;
    }
    const struct isa *isa = nargs == 5 ? sonnx_glue_isa_named(args[4]) : sonnx_glue_isa_current;
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
    return run_in_env((PyArrayObject *)args[0], (PyArrayObject *)args[1],
                      args[2] == Py_None ? NULL : (PyArrayObject *)args[2], checked, isa);
}

/* The mode strings of the plain lane, interned at import (read-only after). */
static PyObject *mode_wrap, *mode_error;

/* 1 when x is exactly an int (not a bool or another subclass) equal to the
 * int y, 0 when not, -1 on error. */
static int exact_int_equal(PyObject *x, PyObject *y)
{
    return PyLong_CheckExact(x) ? PyObject_RichCompareBool(x, y, Py_EQ) : 0;
}

/* 1 when x is exactly a str (not a subclass) equal to the str y, 0 when not, -1 on error. */
static int exact_str_equal(PyObject *x, PyObject *y)
{
    return PyUnicode_CheckExact(x) ? PyObject_RichCompareBool(x, y, Py_EQ) : 0;
}

PyObject *sonnx_glue_plain(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError,
                        "plain(a, b, out, opset, overflow, default_opset) takes 6 arguments");
        return NULL;
    }
    PyObject *out = args[2];
    if (!PyArray_CheckExact(args[0]) || !PyArray_CheckExact(args[1]) ||
        (out != Py_None &&
         (!PyArray_CheckExact(out) || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)out)))) {
        Py_RETURN_NONE;
    }
    int lane = exact_int_equal(args[3], args[5]);
    int wrap = lane > 0 ? exact_str_equal(args[4], mode_wrap) : 0;
    int error = lane > 0 && wrap == 0 ? exact_str_equal(args[4], mode_error) : 0;
    if (lane < 0 || wrap < 0 || error < 0) {
        return NULL;
    }
    if (lane == 0 || (wrap == 0 && error == 0)) {
        Py_RETURN_NONE;
    }
    PyObject *result = run_in_env((PyArrayObject *)args[0], (PyArrayObject *)args[1],
                                  out == Py_None ? NULL : (PyArrayObject *)out, error,
                                  sonnx_glue_isa_current);
    if (result == NULL &&
        (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_ValueError))) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return result;
}

/* The native-order result dtype of each kind. 0, or -1 with an error set. */
static int init_descrs(void)
{
    for (int k = 0; k < K_COUNT; k++) {
        if (KIND_ROWS[k].class_ == KC_BFLOAT16) {
            continue;
        }
        result_descr[k] = PyArray_DescrFromType(KIND_ROWS[k].typenum);
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
    if (PyDataType_ELSIZE(bf) != KIND_ROWS[K_BF16].itemsize || !PyArray_ISNBO(bf->byteorder)) {
        Py_DECREF(bf);
        PyErr_SetString(PyExc_ImportError, "sonnx_mul._native: unexpected ml_dtypes.bfloat16");
        return -1;
    }
    bfloat16_typenum = bf->type_num;
    result_descr[K_BF16] = bf;
    return 0;
}

int sonnx_glue_init(void)
{
    import_array1(-1);
    if (init_descrs() < 0) {
        return -1;
    }
    mode_wrap = PyUnicode_InternFromString("wrap");
    mode_error = PyUnicode_InternFromString("error");
    return mode_wrap == NULL || mode_error == NULL ? -1 : 0;
}

PyObject *sonnx_glue_kind(PyObject *self, PyObject *arg)
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
    return PyUnicode_FromString(KIND_ROWS[k].name);
}
