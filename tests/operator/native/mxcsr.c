/* The x86 MXCSR from Python (ctypes): the FP environment another library
   may leave behind, set and read by tests/operator/test_fp_environment.py. */
#include <xmmintrin.h>
unsigned int sonnx_test_get_mxcsr(void) { return _mm_getcsr(); }
void sonnx_test_set_mxcsr(unsigned int value) { _mm_setcsr(value); }
