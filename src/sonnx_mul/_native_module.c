/* sonnx_mul._native, the Python module: its functions' doc strings, its
 * method table, its constants and its initialisation.
 *
 * The functions on arrays are the glue's (_native.c: numpy arrays to calls
 * of the proved kernel); which build of the kernel runs is
 * _native_variants.c's.  This file uses no numpy API.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <float.h>

#include "_native.h"
#include "_native_variants.h"

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


PyDoc_STRVAR(multiply_doc,
"multiply(a, b, out, checked, isa=<the variant in use>, /)\n--\n\n"
"C = A * B by the proved kernel into out, or into a new C-ordered native array\n"
"when out is None; returns that array.  With checked true on an integer type,\n"
"when a product does not fit, returns instead the first overflowing flat index\n"
"in C order (an int) and has written nothing.  Floats ignore checked.\n"
"TypeError/ValueError (nothing written) when a precondition of the kernel fails.\n"
"isa ('portable', 'avx2', 'avx512') runs that variant of the kernel instead of\n"
"the one selected at import (ValueError if this CPU cannot run it).");

PyDoc_STRVAR(plain_doc,
"plain(a, b, out, opset, overflow, default_opset, /)\n--\n\n"
"mul's plain lane in one native call: when a, b (and out, unless None) are\n"
"exactly numpy.ndarray, out C-contiguous, opset exactly an int equal to\n"
"default_opset and overflow exactly the str 'wrap' or 'error' (compared by\n"
"value), multiply(a, b, out, overflow == 'error') on the variant in use and\n"
"return what it returns; None, having written nothing, when any of these does\n"
"not hold or when multiply refuses the arrays (TypeError/ValueError): the\n"
"caller then runs the full checks.");

PyDoc_STRVAR(kind_doc,
"kind(dtype, /)\n--\n\n"
"The kernel's name for a dtype's element type ('int8', ..., 'bfloat16',\n"
"'float64'), or None when the kernel has no loop for it.");

PyDoc_STRVAR(isa_doc,
"isa()\n--\n\n"
"The name of the kernel variant that multiply() runs: 'portable' (SSE2, the\n"
"proved sources as such), 'avx2' (the same sources compiled for AVX2, float16\n"
"by F16C) or 'avx512' (for AVX-512 F/BW/VL/DQ, float16 by F16C); chosen at import.");

static PyObject *isa_name(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyUnicode_FromString(sonnx_glue_isa_current->name);
}

PyDoc_STRVAR(isas_doc,
"isas()\n--\n\n"
"The variants this build has and this CPU can run, portable first.");

static PyObject *isas(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return sonnx_glue_isa_names();
}

static PyMethodDef methods[] = {
    {"multiply", (PyCFunction)(void (*)(void))sonnx_glue_multiply, METH_FASTCALL, multiply_doc},
    {"plain", (PyCFunction)(void (*)(void))sonnx_glue_plain, METH_FASTCALL, plain_doc},
    {"kind", sonnx_glue_kind, METH_O, kind_doc},
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

PyMODINIT_FUNC PyInit__native(void)
{
    if (sonnx_glue_init() < 0 || sonnx_glue_select_isa() < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddStringConstant(m, "BUILD_FLAGS", SONNX_MUL_BUILD_FLAGS) < 0 ||
        PyModule_AddStringConstant(m, "COMPILER", COMPILER) < 0 ||
        PyModule_AddIntConstant(m, "FLT_EVAL_METHOD", FLT_EVAL_METHOD) < 0 ||
        PyModule_AddIntConstant(m, "GIL_RELEASE_MIN_ELEMENTS", GIL_RELEASE_MIN_ELEMENTS) < 0 ||
        PyModule_AddIntConstant(m, "STREAM8_MIN_ELEMENTS", sonnx_glue_stream8_min_elements) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
