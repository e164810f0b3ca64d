/* Loading this library switches the FPU of the whole process to
   flush-to-zero and denormals-are-zero, as code built with -ffast-math does
   (GCC links crtfastmath.o into it); the constructor makes sure of it on
   x86-64 and AArch64 whatever the compiler does with -ffast-math. */
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
__attribute__((constructor)) static void sonnx_test_set_ftz(void) {
    _mm_setcsr(_mm_getcsr() | 0x8040); /* FTZ (bit 15) and DAZ (bit 6) */
}
#elif defined(__aarch64__)
__attribute__((constructor)) static void sonnx_test_set_ftz(void) {
    unsigned long fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    __asm__ volatile("msr fpcr, %0" : : "r"(fpcr | (1UL << 24)));
}
#endif
int sonnx_test_loaded(void) { return 1; }
