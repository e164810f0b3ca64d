/* float_tie.c -- a WP unit of lemmas only (proofs/wp-manifest.json, driver
 * proofs/drivers/sonnx_ieee.driver): the float32/float64 contracts of
 * native/include/sonnx_mul_kernel.h speak of C's product as WP models it
 * (sonnx_fmul32/64: Cfloat.mul_f32/mul_f64); these lemmas prove it is the
 * specification's product, why3/floats.mlw's Float32Mul/Float64Mul.mul_ieee
 * (sonnx_spec_mul32/64), so that the contracts are statements about the
 * specification.
 *
 * Apart from native/src/sonnx_mul_float.c because WP makes every lemma of a
 * file a hypothesis of every later goal of that file: these would bring
 * floats into the integer goals of the 16-bit code, which Debian's CVC4
 * (no floating point) then refuses. */
#include "sonnx_mul_kernel.h"

/*@ lemma tie32: \forall float x, y; sonnx_same32(sonnx_fmul32(x, y), sonnx_spec_mul32(x, y));
    lemma tie64: \forall double x, y; sonnx_same64(sonnx_fmul64(x, y), sonnx_spec_mul64(x, y));
*/
