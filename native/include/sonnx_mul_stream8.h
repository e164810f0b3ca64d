/* sonnx_mul_stream8.h -- the int8/uint8 wrap loop with streaming stores
 * (x86-64 with AVX2, or AVX-512BW for the 64-byte stores):
 * native/hw/sonnx_mul_stream8.c.
 *
 * Its products are computed by the variant's WP-proved sonnx_mul_wrap_u8,
 * block by block into a buffer; the loop itself only moves the bytes with
 * streaming stores.  Frama-C WP proves the loop (the contract of
 * sonnx_mul_wrap_u8) from the proved loop's contract and the ADMITTED
 * contracts of its three machine operations (the block copy with streaming
 * stores, the length of the unaligned head, the fence): Frama-C has no
 * model of the instructions.  The compiled code is verified by EXHAUSTION
 * too, every one of the 2^16 (a, b)
 * pairs of int8 and of uint8 bit for bit against the proved portable loops
 * sonnx_mul_wrap_i8 / sonnx_mul_wrap_u8 through a buffer longer than the
 * threshold, and every length 1 .. 3 * WIDTH + 1 at every misalignment
 * 0..63 of the output (make verify-exhaustive; native/verify/exhaustive.c),
 * and checked at import (src/sonnx_mul/_native_variants.c).  Selected at run time,
 * in wrap mode only, only on a CPU that has AVX2 (AVX-512 F/BW/VL/DQ for the
 * 64-wide loop) and only when n >= SONNX_MUL_STREAM8_MIN_ELEMENTS; below
 * it the proved loop runs (docs/native-kernel.md).
 *
 * Same contract as sonnx_mul_wrap_u8 (sonnx_mul_kernel.h), and, reading the
 * bytes as int8, as sonnx_mul_wrap_i8: c[i] is a[i] * b[i] modulo 2^8;
 * c may be exactly a or b. */
#ifndef SONNX_MUL_STREAM8_H
#define SONNX_MUL_STREAM8_H

#include <stddef.h>
#include <stdint.h>

/* The streaming loop runs from this many elements up: 3 * 2^18 = 786432,
 * where the three arrays (2.25 MB) no longer fit a 2 MB L2.  Streaming
 * stores bypass the cache: a result that is read next, or arrays that fit
 * the L2 with ordinary stores, lose by them.  Measured 2026-11-24 (Xeon
 * with AVX-512, 2 MB L2, load ~2-3; C timing, median of 31, the same
 * arrays each call), microseconds, proved AVX2 / AVX-512 build against the
 * streaming 32- / 64-wide loop:
 *   n = 524288    22.7-31.0 / 28.8-38.0   against 33.5-33.7 / 33.1-33.7 (streaming loses)
 *   n = 655360    32.9-43.2 / 36.9-53.5   against 35.3-44.3 / 34.5-37.0 (about even)
 *   n = 786432    50.5-52.3 / 53.9-57.0   against 43.4-45.5 / 42.4-44.5 (streaming wins)
 *   n = 1000000   88.0-89.9 / 89.4-89.5   against 60.3-61.5 / 59.9-65.0
 * (docs/native-kernel.md). */
#define SONNX_MUL_STREAM8_MIN_ELEMENTS 786432U

/* Elements per block: the proved loop writes a block's products into a
 * buffer of this many bytes (2 KiB: it stays in the L1 cache beside the a
 * and b lines being read), which is then streamed to c.  A multiple of 64. */
#define SONNX_MUL_STREAM8_BLOCK 2048U

/* 32-byte streaming stores, the products by sonnx_mul_avx2_wrap_u8 (AVX2) */
void sonnx_mul_stream8_wrap8(const uint8_t *a, const uint8_t *b, uint8_t *c, size_t n);
/* 64-byte ones, the products by sonnx_mul_avx512_wrap_u8 (AVX-512BW; the
 * file compiled with SONNX_CFLAGS_AVX512) */
void sonnx_mul_stream8512_wrap8(const uint8_t *a, const uint8_t *b, uint8_t *c, size_t n);

#ifdef SONNX_MUL_STREAM8_PLANTED_FAULTS
/* The negative controls of the exhaustive harness only (a second build of
 * the file, never in the extension): each block's last vector not copied,
 * and the elements after the last whole block skipped. */
void sonnx_mul_stream8_wrap8_short_copy(const uint8_t *a, const uint8_t *b, uint8_t *c, size_t n);
void sonnx_mul_stream8_wrap8_no_tail(const uint8_t *a, const uint8_t *b, uint8_t *c, size_t n);
void sonnx_mul_stream8512_wrap8_short_copy(const uint8_t *a, const uint8_t *b, uint8_t *c,
                                           size_t n);
void sonnx_mul_stream8512_wrap8_no_tail(const uint8_t *a, const uint8_t *b, uint8_t *c, size_t n);
#endif

#endif /* SONNX_MUL_STREAM8_H */
