"""The kernel's contracts hold as plain Python, and the out= interval model matches numpy."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sonnx_mul.oracle import integers as kernel
from sonnx_mul_assurance.python import contracts
from support import holds

WIDTHS = st.sampled_from([8, 16, 32, 64])
INTS = st.integers(min_value=-(2**70), max_value=2**70)


def pairs(max_size: int = 12):
    return st.integers(0, max_size).flatmap(
        lambda n: st.tuples(
            st.lists(INTS, min_size=n, max_size=n), st.lists(INTS, min_size=n, max_size=n)
        )
    )


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


@pytest.mark.parametrize("n", range(1, 7))
def test_F_CHECKED_first_overflow_finds_a_single_overflow_at_every_index(n):
    # Random inputs overflow at index 0 almost always; this reaches every index.
    for position in range(n):
        a, b = [1] * n, [1] * n
        a[position] = 100
        assert kernel.first_overflow(a, b, -128, 127) == -1
        b[position] = 2
        assert kernel.first_overflow(a, b, -128, 127) == position
        assert kernel.first_overflow(b, a, -128, 127) == position
