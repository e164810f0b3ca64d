/* The kernel variants of sonnx_mul._native (_native_variants.c): which build
 * of the kernel runs each element kind, chosen once at import.
 *
 * The glue (_native.c) sees a variant only through `struct isa`: a table of
 * typed-pointer-free entry points per kind, so that it never names an
 * element type of the kernel itself. */
#ifndef SONNX_MUL_NATIVE_VARIANTS_H
#define SONNX_MUL_NATIVE_VARIANTS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>

#include "_native_kinds.h"

/* The entry points of one kind, called through adapters: the kernel
 * functions take typed pointers, and calling them through a pointer of
 * another function type would be undefined. */
typedef void (*mul_fn)(const void *, const void *, void *, size_t);
typedef size_t (*scan_fn)(const void *, const void *, size_t);
typedef size_t (*checked_fn)(const void *, const void *, void *, size_t);

/* One variant of the kernel: its loops, indexed by kind.  mul is the
 * unchecked product (integers wrap modulo 2^bits, floats round to nearest
 * even); scan finds the first overflow and checked writes only when there is
 * none; checked_fresh returns the same index in one pass, writing as it
 * scans, for a result the glue allocated and drops on an overflow (the
 * three NULL for the float kinds). */
struct isa {
    const char *name;
    mul_fn mul[K_COUNT];
    scan_fn scan[K_COUNT];
    checked_fn checked[K_COUNT];
    checked_fn checked_fresh[K_COUNT];
    /* The streaming int8/uint8 hardware loop itself (no threshold), for the
     * import check; NULL in the portable variant. */
    mul_fn stream8;
};

/* The variant in use: chosen once at import, read-only afterwards. */
extern const struct isa *sonnx_glue_isa_current;

/* Fills the variants' tables, records which ones this CPU runs and selects
 * one: SONNX_MUL_ISA, or the widest supported, after its hardware loops
 * agreed with the portable ones.  0, or -1 with ImportError set. */
int sonnx_glue_select_isa(void);

/* The variant called `name` (a str), or NULL (error set) when there is none
 * of that name or this CPU cannot run it. */
const struct isa *sonnx_glue_isa_named(PyObject *name);

/* A new tuple of the names of the variants this CPU can run, portable first;
 * NULL with an error set. */
PyObject *sonnx_glue_isa_names(void);

/* int8/uint8 wrap runs the streaming hardware loop from this many elements
 * up (sonnx_mul_stream8.h); 0 when the build has no such loop. */
extern const long sonnx_glue_stream8_min_elements;

#endif
