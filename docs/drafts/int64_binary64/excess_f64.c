/* A DRAFT, not part of `make prove` nor of the product: int64's checked test
 * by binary64 arithmetic, with the ACSL that WP proves of it so far
 * (docs/native-kernel.md, "int64's checked scan by a binary64 test";
 * the timing probe is benchmarks/int64_scan.c).  `sh run.sh` in this
 * directory runs WP on it.
 *
 * The test: with w the wrapped product x * y mod 2^64 read as int64,
 *     fits  <=>  |fl(fl(x) * fl(y)) - fl(w)| < 2^20.
 * excess_f64_i64 computes w (the kernel's two-branch conversion of
 * sonnx_mul_wrap_i64) and proves the congruence x * y - w = carry * 2^64
 * (its integer part); far_f64 proves that the binary64 gap is below 2^20
 * when w == x * y and at least 2^20 when |x * y - w| >= 2^64.
 *
 * Status (2026-12-02, Frama-C 25, the idle 2-core Intel VM, `sh run.sh`
 * with its 60 s wall-clock limit, not step pins): 59/59 goals proved; the
 * costliest, typed_prod_err_at_ensures_prod (the product's error bound
 * from the three roundings), by Z3 with the floats opaque in 52.5M rlimit,
 * 33 s.  A limit of 2^65 leaves `ensures far` unproved, a limit of 1
 * `ensures near` (docs/native-kernel.md).
 * Trusted here: the axiom to_u64_modular (C99 6.2.5p9, unsigned arithmetic
 * is modulo 2^64, which WP's Cint model states only in range; the same
 * axiom proofs/wp/spec_clients.c assumes). */
#include <stdint.h>
#include "sonnx_mul_kernel.h"

/*@ axiomatic Modular64 {
      axiom to_u64_modular: \forall integer x;
          (uint64_t)x == ((x % 18446744073709551616) + 18446744073709551616) % 18446744073709551616;
    }
*/

/*@ lemma prod_err: \forall real x, y, u, v, p;
      \abs(u - x) <= 0x1p-52 * \abs(x) && \abs(v - y) <= 0x1p-52 * \abs(y) &&
      \abs(p - u * v) <= 0x1p-52 * \abs(u * v) + 0x1p-1074 ==>
      \abs(p - x * y) <= 0x1p-50 * \abs(x * y) + 0x1p-1074;
*/

/*@ logic integer carry64(integer q, integer t, integer x, integer y) =
      q + t - ((x < 0) ? y : 0) - ((y < 0) ? x : 0) - ((x < 0 && y < 0) ? 18446744073709551616 : 0);
*/

/*@ ghost
  /@ requires eu: \abs(u - x) <= 0x1p-52 * \abs(x);
     requires ev: \abs(v - y) <= 0x1p-52 * \abs(y);
     requires ep: \abs(p - u * v) <= 0x1p-52 * \abs(u * v) + 0x1p-1074;
     assigns \nothing;
     ensures prod: \abs(p - (real)x * (real)y) <= 0x1p-50 * \abs((real)x * (real)y) + 0x1p-1074;
  @/
  void prod_err_at(int64_t x, int64_t y, double u, double v, double p) { }
*/

/*@ requires w_range: sonnx_fits_i64(w);
    assigns \nothing;
    ensures near: x * y == w ==> \result == 0;
    ensures far: \abs(x * y - w) >= 18446744073709551616 ==> \result == 1;
*/
static uint64_t far_f64(int64_t x, int64_t y, int64_t w)
{
    const double fx = (double)x;
    /*@ assert fx_err: \is_finite(fx) && \abs(fx - x) <= 0x1p-52 * \abs(x); */
    const double fy = (double)y;
    /*@ assert fy_err: \is_finite(fy) && \abs(fy - y) <= 0x1p-52 * \abs(y); */
    const double fw = (double)w;
    /*@ assert fw_err: \is_finite(fw) && \abs(fw - w) <= 0x1p-52 * \abs(w); */
    /*@ assert fx_bound: \abs(fx) <= 0x1.0000000000001p63; */
    /*@ assert fy_bound: \abs(fy) <= 0x1.0000000000001p63; */
    /*@ assert fxfy_bound: \abs(fx * fy) <= 0x1p127; */
    const double p = fx * fy;
    /*@ assert p_err: \is_finite(p) && \abs(p - fx * fy) <= 0x1p-52 * \abs(fx * fy) + 0x1p-1074; */
    /*@ ghost prod_err_at(x, y, fx, fy, p); */
    /*@ assert p_total_r: \abs(p - (real)x * (real)y) <= 0x1p-50 * \abs((real)x * (real)y) + 0x1p-1074; */
    /*@ assert p_total: \abs(p - x * y) <= 0x1p-50 * \abs(x * y) + 0x1p-1074; */
    /*@ assert diff_bound: \abs(p - fw) <= 0x1p128; */
    const double gap = p - fw;
    /*@ assert gap_err: \is_finite(gap) && \abs(gap - (p - fw)) <= 0x1p-52 * \abs(p - fw) + 0x1p-1074; */
    /*@ assert fits_small: x * y == w ==> \abs(gap) < 1048576; */
    /*@ assert over_big: \abs(x * y - w) >= 18446744073709551616 ==> \abs(gap) >= 1048576; */
    const double size = (gap < 0.0) ? -gap : gap;
    /*@ assert size_abs: size == \abs(gap); */
    return (size >= 1048576.0) ? 1U : 0U;
}

/*@ assigns \nothing;
    ensures excess: \result == 0 <==> sonnx_fits_i64(x * y);
*/
uint64_t excess_f64_i64(int64_t x, int64_t y)
{
    const uint64_t ux = (uint64_t)x;
    const uint64_t uy = (uint64_t)y;
    /*@ assert ux_def: ux == ((x < 0) ? x + 18446744073709551616 : x); */
    /*@ assert uy_def: uy == ((y < 0) ? y + 18446744073709551616 : y); */
    const uint64_t r = ux * uy;
    /*@ assert r_def: r == ux * uy - (ux * uy / 18446744073709551616) * 18446744073709551616; */
    int64_t w;
    if (r > 9223372036854775807ULL) {
        const uint64_t nr = 18446744073709551615ULL - r;
        /*@ assert nr_range: nr <= 9223372036854775807; */
        const int64_t snr = (int64_t)nr;
        /*@ assert nr_same: snr == nr; */
        w = -snr - 1LL;
        /*@ assert twos_neg: w == r - 18446744073709551616; */
    } else {
        const uint64_t uhalf = r / 2U;
        const uint64_t uodd = r % 2U;
        const int64_t half = (int64_t)uhalf;
        const int64_t odd = (int64_t)uodd;
        w = (half * 2LL) + odd;
        /*@ assert twos_pos: w == r; */
    }
    /*@ assert pe_pp: x >= 0 && y >= 0 ==> ux * uy == x * y; */
    /*@ assert pe_np: x < 0 && y >= 0 ==> ux * uy == (x + 18446744073709551616) * y; */
    /*@ assert pe_pn: x >= 0 && y < 0 ==> ux * uy == x * (y + 18446744073709551616); */
    /*@ assert pe_nn: x < 0 && y < 0 ==> ux * uy == (x + 18446744073709551616) * (y + 18446744073709551616); */
    /*@ assert prod_expand: ux * uy == x * y + (((x < 0) ? y : 0) + ((y < 0) ? x : 0)
           + ((x < 0 && y < 0) ? 18446744073709551616 : 0)) * 18446744073709551616; */
    /*@ assert congruent: x * y - w ==
          carry64(ux * uy / 18446744073709551616, (w < 0) ? 1 : 0, x, y) * 18446744073709551616; */
    /*@ assert fits_exact: sonnx_fits_i64(x * y) ==> w == x * y; */
    /*@ assert over_far: !sonnx_fits_i64(x * y) ==> \abs(x * y - w) >= 18446744073709551616; */
    return far_f64(x, y, w);
}
