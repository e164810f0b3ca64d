"""int64's checked test by binary64 arithmetic, as C with its ACSL: a part
of native/src/sonnx_mul_int.c (``int_scans.py`` places it after int64's
division-free test, ``excess_i64``).

With w the wrapped product x * y mod 2^64 read as int64,

    fits  <=>  |fl(fl(x) * fl(y)) - fl(w)| < 2^20.

If the product fits, w is the product and the three roundings leave a gap
below 2^14; if not, they differ by a non-zero multiple of 2^64 and the gap
stays above 2^62.  Every value is an integer, so no subnormal occurs and the
bounds are those of every rounding mode: no floating-point environment
changes the verdict.  With AVX-512DQ (vcvtqq2pd, vpmullq) its block scan
takes 0.9x the time of the division-free one on the Intel VM, 0.48x on the
Zen 4 (docs/native-kernel.md, "int64's checked scan by a binary64 test");
the other builds keep that one.

The proof's parts: ``excess_f64_i64`` proves the congruence
x * y - w = carry64(...) * 2^64 (integers only, the unsigned operands and
their product through the admitted clauses of ``u64_of_i64`` and
``u64_mul``); ``far_f64`` the binary64 bounds in a context without modular
arithmetic (there, the rounding goals time out);
the ghost ``prod_err_at`` the product's relative error from the three
roundings (real arithmetic, Z3 with the floats opaque).
"""

from __future__ import annotations

_TWO64 = 18446744073709551616
GAP_LIMIT = "1048576"
"""2^20, between the gap of a fitting product (< 2^14) and that of an
overflowing one (>= 2^62); tests plant other values in a copy."""


_BOTH = "defined(__FRAMAC__) || defined(SONNX_MUL_I64_BOTH_SCANS)"
F64_GUARD = f"#if defined(__AVX512DQ__) || {_BOTH}\n"
"""Compiles this test where it runs (the avx512 build), for WP (Frama-C's
preprocessor defines __FRAMAC__), and where both scans are wanted (the MISRA
run and benchmarks/int64_scan.c define SONNX_MUL_I64_BOTH_SCANS): elsewhere
it would be unused, a warning (clang warns of an unused static inline
function too), an error under -Werror."""
HALVES_GUARD = f"#if !defined(__AVX512DQ__) || {_BOTH}\n"
"""The same for the halves test's block scan, which every other build runs."""


_WRAPPED_STEPS = f"""    const uint64_t ux = (uint64_t)x;
    /*@ ghost u64_of_i64(x); */
    const uint64_t uy = (uint64_t)y;
    /*@ ghost u64_of_i64(y); */
    /*@ assert ux_def: ux == ((x < 0) ? x + {_TWO64} : x); */
    /*@ assert uy_def: uy == ((y < 0) ? y + {_TWO64} : y); */
    const uint64_t r = ux * uy;
    /*@ ghost u64_mul(ux, uy); */
    /*@ assert r_def: r == ux * uy - (ux * uy / {_TWO64}) * {_TWO64}; */
    const int64_t w = twos_i64(r);
    /*@ assert twos: w == ((r > 9223372036854775807) ? r - {_TWO64} : r); */
    /*@ assert pe_pp: x >= 0 && y >= 0 ==> ux * uy == x * y; */
    /*@ assert pe_np: x < 0 && y >= 0 ==> ux * uy == (x + {_TWO64}) * y; */
    /*@ assert pe_pn: x >= 0 && y < 0 ==> ux * uy == x * (y + {_TWO64}); */
    /*@ assert pe_nn: x < 0 && y < 0 ==> ux * uy == (x + {_TWO64}) * (y + {_TWO64}); */
    /*@ assert prod_expand: ux * uy == x * y + (((x < 0) ? y : 0) + ((y < 0) ? x : 0)
           + ((x < 0 && y < 0) ? {_TWO64} : 0)) * {_TWO64}; */
    /*@ assert congruent: x * y - w ==
          carry64(ux * uy / {_TWO64}, (w < 0) ? 1 : 0, x, y) * {_TWO64}; */
    /*@ assert fits_exact: sonnx_fits_i64(x * y) ==> w == x * y; */
"""
"""The wrapped product w of x * y (int64: the uint64_t product of the
operands' images read back by twos_i64) and the proof that it is the exact
product when that fits: shared by the binary64 test (excess_f64_i64) and the
fused checked pass's store (wrapped_i64), one text."""


def wrapped_helper(marker: str) -> str:
    """int64's one-element wrapped product for the fused checked pass, with
    the contract its callers use: the exact product whenever it fits.  The
    modular sentences it rests on are the admitted clauses of u64_of_i64 and
    u64_mul (ghost: compiled in no build, seen by WP); compiled in every
    build, since both fused passes call it."""
    return f"""{marker}/*@ assigns \\nothing;
    ensures exact: sonnx_fits_i64(x * y) ==> \\result == x * y;
*/
static inline int64_t wrapped_i64(int64_t x, int64_t y)
{{
{_WRAPPED_STEPS}    return w;
}}
"""


def render(marker: str, block: str) -> str:
    """The test's C text (``marker``: the requirement marker of each function;
    ``block``: its block scan, generated with the halves one's contract)."""
    return f"""/* (uint64_t)x for an int64 x and the uint64_t product a * b: C99 defines
   both modulo 2^64 (6.3.1.3p2, 6.2.5p9), and WP's model (Cint) states the
   conversion only in range.  The admitted clauses are those sentences of
   the standard, stated at the calls that need them (proofs/wp/spec_clients.c
   assumes the same as an axiom). */
{marker}/*@ ghost
  /@ assigns \\nothing;
     admit ensures modular: (uint64_t)x == ((x % {_TWO64}) + {_TWO64}) % {_TWO64};
  @/
  void u64_of_i64(int64_t x) {{ }}
*/
{marker}/*@ ghost
  /@ assigns \\nothing;
     admit ensures modular: (uint64_t)(a * b) == (a * b) % {_TWO64};
  @/
  void u64_mul(uint64_t a, uint64_t b) {{ }}
*/

/*@ logic integer carry64(integer q, integer t, integer x, integer y) =
      q + t - ((x < 0) ? y : 0) - ((y < 0) ? x : 0) - ((x < 0 && y < 0) ? {_TWO64} : 0);
*/

/* The product's error from the three roundings, stated at its one use. */
{marker}/*@ ghost
  /@ requires eu: \\abs(u - x) <= 0x1p-52 * \\abs(x);
     requires ev: \\abs(v - y) <= 0x1p-52 * \\abs(y);
     requires ep: \\abs(p - u * v) <= 0x1p-52 * \\abs(u * v) + 0x1p-1074;
     assigns \\nothing;
     ensures prod: \\abs(p - (real)x * (real)y) <= 0x1p-50 * \\abs((real)x * (real)y) + 0x1p-1074;
  @/
  void prod_err_at(int64_t x, int64_t y, double u, double v, double p) {{ }}
*/

{F64_GUARD}{marker}/*@ requires w_range: sonnx_fits_i64(w);
    assigns \\nothing;
    ensures near: x * y == w ==> \\result == 0;
    ensures far: \\abs(x * y - w) >= {_TWO64} ==> \\result == 1;
*/
static inline uint64_t far_f64(int64_t x, int64_t y, int64_t w)
{{
    const double fx = (double)x;
    /*@ assert fx_err: \\is_finite(fx) && \\abs(fx - x) <= 0x1p-52 * \\abs(x); */
    const double fy = (double)y;
    /*@ assert fy_err: \\is_finite(fy) && \\abs(fy - y) <= 0x1p-52 * \\abs(y); */
    const double fw = (double)w;
    /*@ assert fw_err: \\is_finite(fw) && \\abs(fw - w) <= 0x1p-52 * \\abs(w); */
    /*@ assert fx_bound: \\abs(fx) <= 0x1.0000000000001p63; */
    /*@ assert fy_bound: \\abs(fy) <= 0x1.0000000000001p63; */
    /*@ assert fxfy_bound: \\abs(fx * fy) <= 0x1p127; */
    const double p = fx * fy;
    /*@ assert p_err: \\is_finite(p) && \\abs(p - fx * fy) <= 0x1p-52 * \\abs(fx * fy) + 0x1p-1074; */
    /*@ ghost prod_err_at(x, y, fx, fy, p); */
    /*@ assert p_total_r: \\abs(p - (real)x * (real)y) <= 0x1p-50 * \\abs((real)x * (real)y) + 0x1p-1074; */
    /*@ assert p_total: \\abs(p - x * y) <= 0x1p-50 * \\abs(x * y) + 0x1p-1074; */
    /*@ assert diff_bound: \\abs(p - fw) <= 0x1p128; */
    const double gap = p - fw;
    /*@ assert gap_err: \\is_finite(gap) && \\abs(gap - (p - fw)) <= 0x1p-52 * \\abs(p - fw) + 0x1p-1074; */
    /*@ assert fits_small: x * y == w ==> \\abs(gap) < {GAP_LIMIT}; */
    /*@ assert over_big: \\abs(x * y - w) >= {_TWO64} ==> \\abs(gap) >= {GAP_LIMIT}; */
    const double size = (gap < 0.0) ? -gap : gap;
    /*@ assert size_abs: size == \\abs(gap); */
    return (size >= {GAP_LIMIT}.0) ? 1U : 0U;
}}

{marker}/*@ assigns \\nothing;
    ensures excess: \\result == 0 <==> sonnx_fits_i64(x * y);
*/
static inline uint64_t excess_f64_i64(int64_t x, int64_t y)
{{
{_WRAPPED_STEPS}    /*@ assert over_far: !sonnx_fits_i64(x * y) ==> \\abs(x * y - w) >= {_TWO64}; */
    return far_f64(x, y, w);
}}

{block}#endif
"""
