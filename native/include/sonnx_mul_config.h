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

/* No flag that changes float semantics.  The compiler reveals them, not the
 * flags: gcc and clang define these macros for -ffast-math/-Ofast
 * (__FAST_MATH__), -funsafe-math-optimizations and its parts
 * -fno-signed-zeros, -freciprocal-math, -fassociative-math, and
 * -ffinite-math-only (defined to 1; it is always defined, to 0 by default).
 * Checking __FAST_MATH__ alone let -funsafe-math-optimizations through, with
 * which gcc vectorises float32 on ARMv7 NEON, which flushes subnormals.  gcc
 * also says whether it keeps to IEEE 754 (Annex F): __GCC_IEC_559 is 0 once
 * any such flag is on. */
#if defined(__FAST_MATH__)
#error "sonnx_mul must not be built with -ffast-math or -Ofast"
#endif
#if defined(__NO_SIGNED_ZEROS__)
#error "sonnx_mul must not be built with -fno-signed-zeros (or -funsafe-math-optimizations)"
#endif
#if defined(__RECIPROCAL_MATH__)
#error "sonnx_mul must not be built with -freciprocal-math (or -funsafe-math-optimizations)"
#endif
#if defined(__ASSOCIATIVE_MATH__)
#error "sonnx_mul must not be built with -fassociative-math (or -funsafe-math-optimizations)"
#endif
#if defined(__FINITE_MATH_ONLY__) && (__FINITE_MATH_ONLY__ != 0)
#error "sonnx_mul must not be built with -ffinite-math-only"
#endif
#if defined(__GCC_IEC_559) && (__GCC_IEC_559 == 0)
#error "sonnx_mul needs IEEE 754 arithmetic: the compiler says a flag gave it up (__GCC_IEC_559 == 0)"
#endif

/* int is at least 32 bits wide: the 8- and 16-bit loops compute in
 * uint32_t/int32_t and rely on no promotion to a narrower int. */
#if (INT_MAX < 2147483647)
#error "sonnx_mul needs an int of at least 32 bits"
#endif

/* SONNX_WIDE(p): the binary64 value p, kept binary64.  gcc folds
 * (float)((double)x * (double)y) into the binary32 product x * y (the same
 * value: the binary64 product of two binary32 is exact, so one rounding
 * either way), which brings back the microcode assist an Intel CPU takes
 * for a subnormal operand or result of a binary32 multiply.  gcc 12's
 * __builtin_assoc_barrier stops the fold and still vectorises; elsewhere
 * (clang 14, Frama-C) it is the identity, and the value is the same. */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__FRAMAC__) && (__GNUC__ >= 12)
#define SONNX_WIDE(p) __builtin_assoc_barrier(p)
#else
#define SONNX_WIDE(p) (p)
#endif

#endif /* SONNX_MUL_CONFIG_H */
