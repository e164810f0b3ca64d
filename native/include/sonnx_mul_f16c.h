/* sonnx_mul_f16c.h -- the float16 hardware loop (x86-64 with F16C and AVX2):
 * native/hw/sonnx_mul_f16c.c.
 *
 * Frama-C WP proves the loop against sonnx_mul_f16's contract (the same
 * text; `make prove` compares them) from the ADMITTED contract of its one
 * machine operation, the products of one vector (the F16C conversion
 * instructions are outside its model).  The compiled code is verified by
 * EXHAUSTION too, every one of the 2^32 pairs of float16 patterns bit for
 * bit against the proved portable loop sonnx_mul_f16 and against the
 * oracle, and every length up to 49 at every misalignment with the bytes
 * around the result unchanged (make verify-exhaustive;
 * native/verify/exhaustive.c), and checked at import
 * (src/sonnx_mul/_native_variants.c) and by the self-test.  Selected at run time
 * only on a CPU that has AVX2 and F16C (and AVX-512 F/BW/VL/DQ for the 16-wide
 * loop; docs/native-kernel.md).
 *
 * Same contract as sonnx_mul_f16 (sonnx_mul_kernel.h): c[i] is the float16
 * pattern of a[i] * b[i], each operand widened exactly to binary32, one
 * binary32 product, round to nearest even; c may be exactly a or b. */
#ifndef SONNX_MUL_F16C_H
#define SONNX_MUL_F16C_H

#include <stddef.h>
#include <stdint.h>

/* 8 elements at a time (AVX2 + F16C) */
void sonnx_mul_f16c_f16(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n);
/* 16 at a time (AVX-512F forms; the file compiled with SONNX_CFLAGS_AVX512 too) */
void sonnx_mul_f16c512_f16(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n);

#ifdef SONNX_MUL_F16C_PLANTED_FAULTS
/* The negative controls of the exhaustive harness only (a second build of
 * the file, never in the extension): the same loop rounding toward zero,
 * and one that keeps the hardware's sign of a NaN product instead of the
 * operands' exclusive or. */
void sonnx_mul_f16c_f16_truncating(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n);
void sonnx_mul_f16c_f16_nan_sign(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n);
void sonnx_mul_f16c512_f16_truncating(const uint16_t *a, const uint16_t *b, uint16_t *c,
                                      size_t n);
void sonnx_mul_f16c512_f16_nan_sign(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n);
void sonnx_mul_f16c_f16_short_tail(const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n);
void sonnx_mul_f16c512_f16_short_tail(const uint16_t *a, const uint16_t *b, uint16_t *c,
                                      size_t n);
#endif

#endif /* SONNX_MUL_F16C_H */
