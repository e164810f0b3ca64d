/* sonnx_mul_fpenv.h -- the floating-point environment the kernel assumes,
 * established around a call and the caller's restored afterwards.
 *
 * The kernel's float loops compute with the FPU, so their results depend
 * on the environment: under flush-to-zero, denormals-are-zero or a directed
 * rounding mode (set by any library in the process, e.g. one built with
 * -ffast-math through crtfastmath.o) subnormal and rounded products change.
 * The kernel itself neither reads nor sets the environment (no library
 * calls, docs/native-kernel.md); a caller that cannot vouch for its
 * environment brackets the calls:
 *
 *     sonnx_mul_fpenv saved = sonnx_mul_fpenv_enter();
 *     sonnx_mul_f32(a, b, c, n);
 *     sonnx_mul_fpenv_leave(&saved);
 *
 * The Python binding does so around every call.  x86 (SSE2): MXCSR is set
 * to 0x1F80 (every exception masked, round to nearest even, FTZ and DAZ
 * clear) and restored whole, status flags included.  Elsewhere: C99
 * <fenv.h>, FE_DFL_ENV (glibc: FPCR/FPSCR 0 on ARM -- FZ, DN clear, round
 * to nearest; frm = RNE on RISC-V), which links libm. */
#ifndef SONNX_MUL_FPENV_H
#define SONNX_MUL_FPENV_H

#if defined(__SSE2__)
#include <xmmintrin.h>

typedef struct {
    unsigned int mxcsr;
} sonnx_mul_fpenv;

#define SONNX_MUL_MXCSR_DEFAULT 0x1F80U

static inline sonnx_mul_fpenv sonnx_mul_fpenv_enter(void)
{
    sonnx_mul_fpenv saved;
    saved.mxcsr = _mm_getcsr();
    _mm_setcsr(SONNX_MUL_MXCSR_DEFAULT);
    return saved;
}

static inline void sonnx_mul_fpenv_leave(const sonnx_mul_fpenv *saved)
{
    _mm_setcsr(saved->mxcsr);
}
#else
#include <fenv.h>

typedef struct {
    fenv_t env;
} sonnx_mul_fpenv;

static inline sonnx_mul_fpenv sonnx_mul_fpenv_enter(void)
{
    sonnx_mul_fpenv saved;
    (void)fegetenv(&saved.env);
    (void)fesetenv(FE_DFL_ENV);
    return saved;
}

static inline void sonnx_mul_fpenv_leave(const sonnx_mul_fpenv *saved)
{
    (void)fesetenv(&saved->env);
}
#endif

#endif /* SONNX_MUL_FPENV_H */
