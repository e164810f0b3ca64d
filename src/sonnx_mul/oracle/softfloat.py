"""IEEE 754 binary multiplication on bit patterns, in integer arithmetic only.

The float half of the reference kernel: it never touches the host's
floating-point unit, so FTZ/DAZ modes, x87 double rounding or a faulty
libm cannot change its results. A format is given as in Why3's
``ieee_float``: ``eb`` exponent bits and ``sb`` significand bits including
the hidden bit (float32 is ``eb=8, sb=24``).
"""

from __future__ import annotations


def quiet_nan(eb: int, sb: int) -> int:
    """The canonical positive quiet NaN of the format: every NaN product (the product's
    NaN rule, which the native kernel and the numpy loops give too)."""
    return (((1 << eb) - 1) << (sb - 1)) | (1 << (sb - 2))


def mul_bits(x: int, y: int, eb: int, sb: int) -> int:
    """Bit pattern of ``x * y`` rounded to nearest, ties to even.

    Contract: ``x`` and ``y`` are bit patterns of the format (``0 <=
    x, y < 2**(eb+sb)``). NaN results are :func:`quiet_nan` (ONNX leaves
    the payload unspecified); every other result is the IEEE 754 one,
    subnormals and signed zeros included.
    """
    frac_bits = sb - 1
    exp_all_ones = (1 << eb) - 1
    frac_mask = (1 << frac_bits) - 1
    bias = (1 << (eb - 1)) - 1
    sign = ((x ^ y) >> (eb + frac_bits)) & 1
    sign_bit = sign << (eb + frac_bits)
    ex, fx = (x >> frac_bits) & exp_all_ones, x & frac_mask
    ey, fy = (y >> frac_bits) & exp_all_ones, y & frac_mask

    x_nan = ex == exp_all_ones and fx != 0
    y_nan = ey == exp_all_ones and fy != 0
    x_inf = ex == exp_all_ones and fx == 0
    y_inf = ey == exp_all_ones and fy == 0
    x_zero = ex == 0 and fx == 0
    y_zero = ey == 0 and fy == 0
    if x_nan or y_nan or (x_inf and y_zero) or (x_zero and y_inf):
        return quiet_nan(eb, sb)
    if x_inf or y_inf:
        return sign_bit | (exp_all_ones << frac_bits)
    if x_zero or y_zero:
        return sign_bit

    # value = significand * 2**exponent, exactly, for finite non-zero operands
    emin = 1 - bias
    mx, qx = (fx, emin - frac_bits) if ex == 0 else (fx | (1 << frac_bits), ex - bias - frac_bits)
    my, qy = (fy, emin - frac_bits) if ey == 0 else (fy | (1 << frac_bits), ey - bias - frac_bits)
    m, q = mx * my, qx + qy

    # exponent of the result's last place: sb bits kept, never below subnormals
    target_q = max(q + m.bit_length() - sb, emin - frac_bits)
    shift = target_q - q
    if shift > 0:
        kept, rest = m >> shift, m & ((1 << shift) - 1)
        half = 1 << (shift - 1)
        if rest > half or (rest == half and kept & 1):
            kept += 1
        m, q = kept, target_q
        if m == 1 << sb:  # rounding carried into a new binade
            m, q = m >> 1, q + 1
    else:
        m, q = m << -shift, target_q

    if m == 0:
        return sign_bit  # underflow to a signed zero
    if m < (1 << frac_bits):
        return sign_bit | m  # subnormal: biased exponent 0
    biased = q + frac_bits + bias
    if biased >= exp_all_ones:
        return sign_bit | (exp_all_ones << frac_bits)  # overflow to infinity
    return sign_bit | (biased << frac_bits) | (m & frac_mask)


def is_nan_bits(x: int, eb: int, sb: int) -> bool:
    """True when the bit pattern ``x`` is a NaN of the format."""
    exp_all_ones = (1 << eb) - 1
    return ((x >> (sb - 1)) & exp_all_ones) == exp_all_ones and (x & ((1 << (sb - 1)) - 1)) != 0
