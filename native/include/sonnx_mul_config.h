/* sonnx_mul_config.h -- compile-time checks of the IEEE arithmetic the kernel
 * relies on (the flags that give it are pinned in native/flags.mk).  An
 * internal header: included by the kernel's .c files only. */
#ifndef SONNX_MUL_CONFIG_H
#define SONNX_MUL_CONFIG_H

#include <float.h>
#include <limits.h>

/* Float expressions are evaluated in their own type (no x87 extended
 * precision, no double rounding): C99 5.2.4.2.2p7. */
#if !defined(FLT_EVAL_METHOD) || (FLT_EVAL_METHOD != 0)
#error "sonnx_mul needs FLT_EVAL_METHOD == 0 (SSE2 arithmetic: -msse2 -mfpmath=sse, -fexcess-precision=standard)"
#endif

/* binary32 and binary64 with round to nearest (FLT_ROUNDS 1 is the
 * default mode; the kernel never changes it). */
#if (FLT_RADIX != 2) || (FLT_MANT_DIG != 24) || (DBL_MANT_DIG != 53) || \
    (FLT_MAX_EXP != 128) || (DBL_MAX_EXP != 1024)
#error "sonnx_mul needs IEEE 754 binary32 float and binary64 double"
#endif

#if defined(__FAST_MATH__)
#error "sonnx_mul must not be built with -ffast-math"
#endif

/* int is at least 32 bits wide: the 8- and 16-bit loops compute in
 * uint32_t/int32_t and rely on no promotion to a narrower int. */
#if (INT_MAX < 2147483647)
#error "sonnx_mul needs an int of at least 32 bits"
#endif

#endif /* SONNX_MUL_CONFIG_H */
