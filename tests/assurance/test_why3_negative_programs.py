"""Negative controls of the Why3 proofs of the programs: faults planted in the
refinement (a wrong element, the R1 check removed), the wrapping integers, the API
(out= written before its checks, a sparse tensor accepted), the kernel's product
and the overflow scan's arithmetic must leave the goals they falsify unproved,
each refused by its pinned prover within its steps (``refuted``).

These tests run Why3 and the provers; when they are missing the tests fail
(they are never skipped). The negative controls of the Why3 proofs are the
``test_why3_negative_*.py`` files; what they share is in
tests/assurance/why3_faults.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from why3_faults import REPO, copy_proof_tree, plant, refuted, unproved

from sonnx_mul_assurance.why3.driver import run_check, update_manifest

# runs Why3 and the provers
pytestmark = [pytest.mark.provers, pytest.mark.external_provers, pytest.mark.needs_prover]


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of the proof tree to plant a fault in (why3_faults.copy_proof_tree)."""
    return copy_proof_tree(tmp_path)


def test_wrong_element_fails(copy: Path) -> None:
    plant(copy, "refine.mlw", "c[i] <- a.value[i] * b.value[i]", "c[i] <- a.value[i] * b.value[0]")
    report = refuted(copy, "refine.mlw", "Refine", {"mul_loop'vc#0"})
    assert any("goal not proved" in e and "mul_loop'vc" in e for e in report["errors"])


def test_r1_check_removed_fails(copy: Path) -> None:
    plant(
        copy,
        "refine.mlw",
        "if not (eq_shape a.shape b.shape) then raise ShapeError;",
        "if false then raise ShapeError;",  # the check is gone
    )
    refuted(copy, "refine.mlw", "Refine", {"validate'vc#0"})


def test_wrap_saturates_fails(copy: Path) -> None:
    plant(
        copy,
        "wrap.mlw",
        "  let function mul_wrap (x y : B.t) : B.t = B.mul x y\n\n"
        "  let constant tag : dtype = UInt8\n",
        "  let function mul_wrap (x y : B.t) : B.t =\n"
        "    if B.to_uint x * B.to_uint y > 255 then B.ones else B.mul x y\n\n"
        "  let constant tag : dtype = UInt8\n",
        after="module WrapUInt8",
    )
    refuted(copy, "wrap.mlw", "WrapUInt8", {"f_wrap#0"})


# api.mlw (R2, R2-DENSE, C1-OUT, F-NOLOSS): each control checks one module.

_OUT_LOOP = (
    "    for i = 0 to length out - 1 do\n"
    "      invariant { forall j. 0 <= j < i -> out.elts[j] = a.value[j] * b.value[j] }\n"
    "      out[i] <- a.value[i] * b.value[i]\n"
)


def test_api_out_written_before_out_check_fails(copy: Path) -> None:
    # F-NOLOSS: the out= shape check moved after the loop, so OutError is
    # raised with out already written.
    check_out = "    if length out <> size a.shape then raise OutError"
    plant(
        copy,
        "api.mlw",
        f"{check_out};\n{_OUT_LOOP}    done\n",
        f"{_OUT_LOOP}    done;\n{check_out}\n",
        after="let mul_into",
    )
    refuted(copy, "api.mlw", "Api", {"mul_into'vc#0"})


def test_api_checked_written_before_overflow_scan_fails(copy: Path) -> None:
    # F-NOLOSS: the overflow scan after the loop, so IntegerOverflow is
    # raised with out already written.
    scan = (
        "    let k = first_overflow a b (length out) in\n"
        "    if k >= 0 then raise IntegerOverflow k;\n"
    )
    loop = f"{_OUT_LOOP}    done;\n"
    plant(copy, "api.mlw", scan + loop, loop + scan, after="let mul_checked_into")
    refuted(copy, "api.mlw", "ApiChecked", {"mul_checked_into'vc#0"})


def test_api_sparse_accepted_fails(copy: Path) -> None:
    # R2: check_dense lets a sparse tensor through (the check is gone; an
    # exception the body never raises may not be listed in Why3).
    plant(
        copy,
        "api.mlw",
        "| Sparse -> raise SparseError",
        "| Sparse -> if false then raise SparseError",
    )
    refuted(copy, "api.mlw", "ApiChecks", {"check_dense'vc#0"})


def test_kernel_wrong_prod_fails(copy: Path) -> None:
    # The kernel's postconditions are stated on the mathematical product
    # x * y: a wrong `prod` is rejected by the provers alone, even with its
    # statements re-pinned (as an update-manifest run would).
    kernel = copy / "src/sonnx_mul/oracle/integers.py"
    text = kernel.read_text()
    assert text.count("    return x * y\n") == 1
    kernel.write_text(text.replace("    return x * y\n", "    return x * y + 1\n"))
    path = "src/sonnx_mul/oracle/integers.py"
    assert update_manifest(copy, files=[path], statements_only=True) == 0
    rc = run_check(copy, [path], portfolio=())
    report = json.loads((copy / "proofs/out/why3.json").read_text())
    assert rc != 0
    # main'vc#28: mul_exact's postcondition result[i] == a[i] * b[i]
    assert ("Integers", "main'vc#28") in unproved(report)
    assert all(
        e.startswith("goal not proved: src/sonnx_mul/oracle/integers.py") for e in report["errors"]
    )


# The arithmetic facts of the production overflow scan (why3/overflow.mlw).

OVERFLOW_CODE = (
    "corners = (lo_a * lo_b, lo_a * hi_b, hi_a * lo_b, hi_a * hi_b)",
    "return etype.lo <= min(corners) and max(corners) <= etype.hi",
    "mag_a = np.abs(a).astype(np.uint64)",
    "negative = np.signbit(a) != np.signbit(b)",
    "limit = np.where(negative, np.uint64(2**63), np.uint64(2**63 - 1))",
    "overflow = mag_b > limit // np.maximum(mag_a, np.uint64(1))",
    "overflow = b > np.uint64(2**64 - 1) // np.maximum(ua, np.uint64(1))",
)


def test_overflow_facts_quote_the_code_they_justify() -> None:
    # The lemmas are stated on these expressions: a change on either side
    # (the code or the quoted statement) must be looked at again.
    code = (REPO / "src/sonnx_mul/numpy_loops.py").read_text()
    proof = (REPO / "why3/overflow.mlw").read_text()
    for line in OVERFLOW_CODE:
        assert line in code, line
        assert line in proof, line


def test_overflow_symmetric_int64_limit_fails(copy: Path) -> None:
    # 2**63 - 1 as the limit of negative products too: -2**63 would be
    # reported as an overflow; the magnitude lemmas no longer hold.
    plant(
        copy,
        "overflow.mlw",
        "then 0x8000000000000000 else 0x7FFFFFFFFFFFFFFF",
        "then 0x7FFFFFFFFFFFFFFF else 0x7FFFFFFFFFFFFFFF",
    )
    assert update_manifest(copy, files=["why3/overflow.mlw"], statements_only=True) == 0
    refuted(copy, "overflow.mlw", "DivisionTest", {"fits_iff_magnitude#0"})
