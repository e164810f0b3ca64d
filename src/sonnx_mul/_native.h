/* What the glue (_native.c: numpy arrays to calls of the proved kernel)
 * gives the Python module's definition (_native_module.c). */
#ifndef SONNX_MUL_NATIVE_H
#define SONNX_MUL_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Below this many elements the GIL is kept: releasing and taking it back
 * costs more than the loop. */
#define GIL_RELEASE_MIN_ELEMENTS 16384

/* Imports numpy's C API, makes the element kinds' result dtypes (ml_dtypes'
 * bfloat16 among them) and the plain lane's mode strings; once, at import.
 * 0, or -1 with an error set. */
int sonnx_glue_init(void);

/* multiply(a, b, out, checked[, isa]), plain(a, b, out, opset, overflow,
 * default_opset) and kind(dtype): the module's functions on arrays and dtypes
 * (their contracts are their doc strings, in _native_module.c). */
PyObject *sonnx_glue_multiply(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *sonnx_glue_plain(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *sonnx_glue_kind(PyObject *self, PyObject *arg);

#endif
