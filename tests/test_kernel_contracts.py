"""The kernel's contracts hold as plain Python, and the out= interval model matches numpy."""

from __future__ import annotations

import ast
import inspect
import itertools
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sonnx_mul import contracts, kernel, softfloat
from sonnx_mul.proof.crosshair import conditions

WIDTHS = st.sampled_from([8, 16, 32, 64])
INTS = st.integers(min_value=-(2**70), max_value=2**70)


def pairs(max_size: int = 12):
    return st.integers(0, max_size).flatmap(
        lambda n: st.tuples(
            st.lists(INTS, min_size=n, max_size=n), st.lists(INTS, min_size=n, max_size=n)
        )
    )


def holds(fn, *args):
    """Evaluate every pre:/post: docstring condition of a contracts.py function."""
    pre, post = conditions(fn)
    env = dict(vars(contracts))
    env.update(inspect.signature(fn).bind(*args).arguments)
    if not all(eval(p, env) for p in pre):
        return
    env["__return__"] = fn(*args)
    for p in post:
        assert eval(p, env), (fn.__name__, p, args)


def _wrap_spec(x: int, bits: int, signed: bool) -> int:
    if signed:
        return (x + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)
    return x % 2**bits


@given(pairs(), WIDTHS, st.booleans())
def test_F_WRAP_kernel_contract_holds_on_random_inputs(ab, bits, signed):
    a, b = ab
    exact = kernel.mul_exact(a, b)
    assert exact == [x * y for x, y in zip(a, b, strict=True)]
    wrapped = kernel.mul_wrap(a, b, bits, signed)
    assert wrapped == [_wrap_spec(x * y, bits, signed) for x, y in zip(a, b, strict=True)]
    lo, hi = contracts.int_range(bits, signed)
    assert all(lo <= c <= hi for c in wrapped)
    holds(contracts.mul_wrap_c, a[:4], b[:4], bits, signed)
    holds(contracts.mul_exact_c, a[:4], b[:4])


@given(pairs(), st.integers(-(2**20), 2**20), st.integers(0, 2**21))
def test_F_CHECKED_first_overflow_contract_holds_on_random_inputs(ab, lo, span):
    a, b = ab
    hi = lo + span
    r = kernel.first_overflow(a, b, lo, hi)
    inside = [lo <= x * y <= hi for x, y in zip(a, b, strict=True)]
    assert r == (inside.index(False) if False in inside else -1)
    holds(contracts.first_overflow_c, a[:4], b[:4], lo, hi)


@given(INTS, WIDTHS, st.booleans())
def test_F_WRAP_wrap_contract(x, bits, signed):
    assert kernel.wrap(x, bits, signed) == _wrap_spec(x, bits, signed)
    holds(contracts.wrap_c, x, bits, signed)


@given(st.lists(st.integers(0, 3), max_size=3), st.lists(st.integers(0, 3), max_size=3))
def test_R1_R4_shape_contracts(sa, sb):
    holds(contracts.shape_violations_c, sa, sb)
    holds(contracts.broadcastable_c, sa, sb)


@pytest.mark.parametrize("opset", range(1, 29))
def test_R3_OPSET_table_contract(opset):
    holds(contracts.opset_types_c, opset)
    holds(contracts.arguments_ok_c, opset, "wrap")


def test_kernel_file_stays_in_the_why3_python_subset():
    """No docstring, import or decorator: the file Why3 proves is the file CPython runs."""
    tree = ast.parse(Path(kernel.__file__).read_text())
    for node in ast.walk(tree):
        assert not isinstance(node, ast.Import | ast.ImportFrom)
        if isinstance(node, ast.FunctionDef):
            assert not node.decorator_list
            assert ast.get_docstring(node) is None
    assert ast.get_docstring(tree) is None
    assert "#@ ensures" in Path(kernel.__file__).read_text()


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
