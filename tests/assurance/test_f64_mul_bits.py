"""f64_mul_bits (why3/f64_round.mlw's MulDefs), executed and compared bit for
bit with numpy's float64 product (NaN made the kernel's canonical NaN) and
with the kernel's (``sonnx_mul.mul``), on edge patterns and random pairs.

Why3 1.5.1 cannot execute a logic function; what runs is the Coq library's
``mul_bits`` (proofs/coq/SonnxF64Round.v), evaluated by coqc
(``vm_compute``), which the committed proof file of ``f64_mul_bits_finite``
proves equal to the Why3 definition on every pair
(``f64_mul_bits_computed``; the Coq check compiles that file): one
definition, proved equal, not a copy.  Negative controls: a planted wrong
NaN rule, a flushed subnormal operand and a wrong rounding in ``mul_bits``
each make the comparison fail.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import sonnx_mul
from sonnx_mul.dtypes import element_type
from sonnx_mul_assurance.why3 import coq
from support import float_edge_bits

pytestmark = [pytest.mark.provers, pytest.mark.needs_prover]

REPO = Path(__file__).resolve().parents[2]
FINITE_PROOF = coq.PROOF_DIR / "f64_round_MulBits_f64_mul_bits_finite.v"
EQUALITY = (
    "Lemma f64_mul_bits_computed : forall a b : Z,\n"
    "  f64_mul_bits a b = Sonnx.SonnxF64Round.mul_bits a b."
)
"""The helper lemma that makes the executed function the proved one."""
F64 = element_type(np.dtype(np.float64))


def patterns() -> list[tuple[int, int]]:
    """Every pair of edge patterns, and random pairs (uniform bits; products
    near the subnormal range and the overflow threshold)."""
    assert F64 is not None
    edges = float_edge_bits(F64)
    extra = [3, 5, 0x7FF0000000000001, 0x7FF4000000000000, 0xFFFFFFFFFFFFFFFF, 0x3CA0000000000000]
    edges += extra + [x ^ (1 << 63) for x in extra]
    pairs = [(a, b) for a in edges for b in edges]
    rng = np.random.default_rng(20261207)
    uniform = rng.integers(0, 2**64, size=(400, 2), dtype=np.uint64)
    pairs += [(int(a), int(b)) for a, b in uniform]
    for low, high in ((0, 1100), (900, 1200), (1900, 2047)):
        exps = rng.integers(low // 2, high // 2 + 1, size=(200, 2))
        fracs = rng.integers(0, 2**52, size=(200, 2), dtype=np.uint64)
        signs = rng.integers(0, 2, size=(200, 2))
        for (ea, eb), (fa, fb), (sa, sb) in zip(exps, fracs, signs, strict=True):
            a = (int(sa) << 63) | (int(ea) << 52) | int(fa)
            b = (int(sb) << 63) | (int(eb) << 52) | int(fb)
            pairs.append((a, b))
    return pairs


EXECUTED = ("rsig", "rbits", "sig_of", "ex_of", "mul_bits")
"""The library's definitions ``mul_bits`` rests on, in their order there."""


def definitions(library_text: str) -> str:
    """The text of :data:`EXECUTED` in ``library_text``, verbatim."""
    found = []
    for name in EXECUTED:
        match = re.search(
            rf"^Definition {name} .*?\.\n(?=\n|Definition )", library_text, re.M | re.S
        )
        assert match is not None, name
        found.append(match.group(0))
    return "".join(found)


def evaluate(library_text: str, pairs: list[tuple[int, int]], work: Path) -> list[int]:
    """``mul_bits a b`` for every pair, computed by coqc (``vm_compute``) from
    the library's definitions, parsed as the library parses them."""
    listed = "; ".join(f"({a}, {b})" for a, b in pairs)
    source = work / "evaluate.v"
    source.write_text(
        "Require Import ZArith Reals List.\nImport ListNotations.\nLocal Open Scope R_scope.\n"
        + definitions(library_text)
        + "Eval vm_compute in (List.map (fun ab => mul_bits (fst ab) (snd ab))"
        f" [{listed}]%Z).\n"
    )
    done = subprocess.run(
        ["coqc", "-q", source.name], cwd=work, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout.partition("=")[2].partition(":")[0]
    return [int(x) for x in re.findall(r"\d+", printed)]


def expected(pairs: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """numpy's product bits (NaN canonical) and the kernel's, per pair."""
    a = np.array([p[0] for p in pairs], dtype=np.uint64).view(np.float64)
    b = np.array([p[1] for p in pairs], dtype=np.uint64).view(np.float64)
    with np.errstate(all="ignore"):
        product = a * b
    bits = product.view(np.uint64).copy()
    bits[np.isnan(product)] = 0x7FF8000000000000
    kernel = sonnx_mul.mul(a, b).view(np.uint64)
    return [int(x) for x in bits], [int(x) for x in kernel]


def mismatches(library_text: str, work: Path) -> list[tuple[int, int, int, int]]:
    pairs = patterns()
    got = evaluate(library_text, pairs, work)
    numpy_bits, kernel_bits = expected(pairs)
    assert len(got) == len(pairs)
    assert numpy_bits == kernel_bits  # today's kernel is numpy's product with the NaN rule
    return [(a, b, g, n) for (a, b), g, n in zip(pairs, got, numpy_bits, strict=True) if g != n]


def test_the_executed_function_is_proved_equal_to_the_why3_one() -> None:
    assert EQUALITY in (REPO / FINITE_PROOF).read_text()


def test_f64_mul_bits_is_numpys_and_the_kernels_product(tmp_path: Path) -> None:
    assert mismatches((REPO / coq.LIBRARY).read_text(), tmp_path) == []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # a wrong NaN rule: the NaN takes the xor of the signs
        ("then (4095 * 2 ^ 51)%Z", "then (sgn + 4095 * 2 ^ 51)%Z"),
        # a lost subnormal: subnormal operands flushed to zero
        ("else if ((ma =? 0) || (mb =? 0))", "else if ((ma <? 2 ^ 52) || (mb <? 2 ^ 52))"),
        # a wrong rounding: ties away from zero
        (
            "if ((2 ^ (s - 1) <? r)%Z || ((r =? 2 ^ (s - 1))%Z && Z.odd q))%bool",
            "if ((2 ^ (s - 1) <=? r)%Z)%bool",
        ),
    ],
    ids=["nan-sign", "subnormal-flushed", "ties-away"],
)
def test_negative_control_a_planted_fault_is_found(tmp_path: Path, old: str, new: str) -> None:
    text = (REPO / coq.LIBRARY).read_text()
    assert text.count(old) == 1, old
    assert mismatches(text.replace(old, new), tmp_path) != []
