"""The contracts on the real validators and softfloat hold as plain Python.

CrossHair explores them symbolically (``make prove``); here they are
evaluated on whole finite domains (element types, dense kinds) or on many
small layouts and operands.
"""

from __future__ import annotations

import itertools

import pytest

from sonnx_mul.oracle import softfloat
from sonnx_mul_assurance.python import contracts
from support import holds

# The contracts on the real validators and softfloat, evaluated as plain
# Python on whole finite domains (CrossHair explores them symbolically).


def test_R3_check_element_types_contract_holds_everywhere():
    for ia in range(contracts.N_CANDIDATES):
        for ib in range(contracts.N_CANDIDATES):
            for opset in (1, 5, 6, 7, 12, 13, 14, 28):
                for swap_a, swap_b in ((False, False), (True, False), (False, True)):
                    holds(contracts.check_element_types_c, ia, ib, opset, swap_a, swap_b)


def test_R2_check_dense_contract_holds_everywhere():
    for kind in range(contracts.DENSE_KINDS):
        holds(contracts.check_dense_c, kind, False)
        holds(contracts.check_dense_c, kind, True)


@pytest.mark.parametrize("kind", range(6))
def test_C1_OUT_check_out_contract_holds_on_small_layouts(kind):
    steps = (-2, -1, 1, 2)
    for n in (1, 3):
        for a0, sa, o0, so in itertools.product((0, 4, 9), steps, range(0, 16, 2), steps):
            for on in {n, 2}:
                for b0, shared in ((0, True), (5, True), (0, False)):
                    holds(contracts.check_out_c, n, a0, sa, b0, shared, kind, o0, so, on)


def test_F_FLOAT_mul_bits_contracts_hold_near_every_start_pair():
    for k in range(6):
        for u in range(0, 40, 3):
            for v in range(0, 40, 7):
                holds(contracts.mul_bits_rne_c, 0, k, u, v)
                holds(contracts.mul_bits_rne_c, 1, k, u, v)


def test_F_FLOAT_rne_specification_rejects_every_neighbour():
    """is_rne_product accepts softfloat's result and refuses the patterns next to it."""
    for eb, sb in ((5, 11), (8, 8)):
        for k in range(6):
            for u in range(0, 300, 11):
                x = contracts.pattern(eb, sb, k, 0, u)
                y = contracts.pattern(eb, sb, k, 1, 2 * u)
                r = softfloat.mul_bits(x, y, eb, sb)
                assert contracts.is_rne_product(x, y, r, eb, sb)
                if not softfloat.is_nan_bits(r, eb, sb):
                    for wrong in (r - 1, r + 1, r ^ (1 << (eb + sb - 1))):
                        assert not contracts.is_rne_product(x, y, wrong, eb, sb), (x, y, wrong)


def test_F_FLOAT_quiet_nan_is_the_canonical_positive_quiet_nan():
    # softfloat's NaN results: exponent all ones, the quiet bit, sign 0 (known answers).
    assert softfloat.quiet_nan(5, 11) == 0x7E00
    assert softfloat.quiet_nan(8, 8) == 0x7FC0
    assert softfloat.quiet_nan(8, 24) == 0x7FC00000
    assert softfloat.quiet_nan(11, 53) == 0x7FF8000000000000
    assert softfloat.mul_bits(0x7C00, 0x0000, 5, 11) == 0x7E00  # inf * 0


def test_F_FLOAT_is_nan_bits_known_answers():
    for eb, sb in ((5, 11), (8, 8), (8, 24), (11, 53)):
        inf = ((1 << eb) - 1) << (sb - 1)
        sign = 1 << (eb + sb - 1)
        assert not softfloat.is_nan_bits(inf, eb, sb) and not softfloat.is_nan_bits(
            sign | inf, eb, sb
        )
        assert softfloat.is_nan_bits(inf | 1, eb, sb) and softfloat.is_nan_bits(
            sign | inf | 1, eb, sb
        )
        assert softfloat.is_nan_bits(softfloat.quiet_nan(eb, sb), eb, sb)
        assert not softfloat.is_nan_bits(inf - 1, eb, sb)  # the largest finite
        assert not softfloat.is_nan_bits(0, eb, sb)


@pytest.mark.parametrize(("eb", "sb"), [(5, 11), (8, 8)])
def test_F_FLOAT_mul_bits_is_nearest_even_on_a_sweep(eb, sb):
    """softfloat against the independent specification: a sweep of all magnitudes,
    and operands near sqrt(2) and 1, whose products carry into the next binade."""
    one = ((1 << (eb - 1)) - 1) << (sb - 1)
    root2 = one | int(0.41421356 * (1 << (sb - 1)))
    near = [*range(root2 - 6, root2 + 7), *range(one, one + 6), *range(2 * one - 6, 2 * one)]
    sweep = list(range(0, 1 << 16, 509))
    pairs = [(x, y) for x in near for y in near] + [(x, y) for x in sweep for y in sweep[::3]]
    for x, y in pairs:
        r = softfloat.mul_bits(x, y, eb, sb)
        assert contracts.is_rne_product(x, y, r, eb, sb), (hex(x), hex(y), hex(r))
