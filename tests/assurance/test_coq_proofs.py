"""The Coq check of Why3 goals (sonnx_mul_assurance.why3.coq): the committed
proofs of why3/f64_round.mlw pass; planted faults in the rounding functions
(ties away from zero, truncation, subnormal results flushed to zero, a wrong
subnormal bound, a wrong overflow bound) make coqc refuse the committed proof
put under the faulty statement; a changed statement, a hole (``Admitted``),
an axiom in the proofs' library, a theory with an axiom and a theory without
goals fail the check.

The tests marked ``needs_prover`` run Why3 and coqc (make provers); when they
are missing the tests fail (they are never skipped).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sonnx_mul_assurance.why3 import config as prover_config
from sonnx_mul_assurance.why3 import coq

REPO = Path(__file__).resolve().parents[2]
THEORY = coq.THEORIES[0]
PROOF = coq.PROOF_DIR / "f64_round_RoundSig_round_sig_correct.v"
BOTH = ("round_bits_correct", "round_sig_correct")

needs_prover = pytest.mark.needs_prover


def tree(
    tmp_path: Path, theory: str | None = None, proof: str | None = None, library: str | None = None
) -> Path:
    """A copy of what the Coq check reads, with the theory, the round_sig
    proof or the library replaced."""
    root = tmp_path / "root"
    (root / "why3").mkdir(parents=True)
    (root / THEORY).write_text(theory if theory is not None else (REPO / THEORY).read_text())
    shutil.copytree(REPO / coq.PROOF_DIR, root / coq.PROOF_DIR)
    if proof is not None:
        (root / PROOF).write_text(proof)
    if library is not None:
        (root / coq.LIBRARY).write_text(library)
    shutil.copy(REPO / coq.BUILD_SCRIPT, root / coq.BUILD_SCRIPT)
    (root / "build").mkdir()
    (root / prover_config.COQ_REALIZATIONS).symlink_to(REPO / prover_config.COQ_REALIZATIONS)
    return root


def planted(old: str, new: str) -> str:
    text = (REPO / THEORY).read_text()
    assert text.count(old) == 1, old
    return text.replace(old, new)


def refused(goals: list[coq.Goal], names: tuple[str, ...]) -> None:
    """The goals ``names`` are refused by coqc alone; the others proved."""
    assert sorted(g.goal for g in goals) == list(BOTH)
    for goal in goals:
        if goal.goal in names:
            assert goal.errors, goal.goal
            assert all(e.startswith("coqc refused the proof") for e in goal.errors), goal.errors
        else:
            assert goal.proved, (goal.goal, goal.errors)


@needs_prover
def test_committed_proof_passes() -> None:
    goals = coq.check(REPO)
    assert sorted(g.goal for g in goals) == list(BOTH)
    assert all(g.proved for g in goals), [g.errors for g in goals]


@needs_prover
@pytest.mark.parametrize(
    ("old", "new", "names"),
    [
        # ties away from zero: a tie always rounds up
        ("(r = h && mod q 2 = 1)", "r = h", BOTH),
        # truncation: the dropped bits never round up
        ("then q + 1 else q", "then q else q", BOTH),
        # a lost subnormal: results below 2^-1022 flushed to zero
        (
            "    let s = shift e n in\n",
            "    let s = shift e n in\n    if n + e <= - 1022 then 0 else\n",
            BOTH,
        ),
        # a wrong subnormal bound: the quantum 2^-1075 (one bit too many)
        ("max (n - 53) (- 1074 - e)", "max (n - 53) (- 1075 - e)", BOTH),
        # a wrong overflow bound: +infinity from the top binade (2^1023) on
        (
            "    min ((e + shift e n + 1074) * pow2 52 + round_sig p e n) inf_bits\n",
            "    let b = (e + shift e n + 1074) * pow2 52 + round_sig p e n in\n"
            "    if b >= inf_bits - pow2 52 then inf_bits else b\n",
            ("round_bits_correct",),
        ),
    ],
    ids=["ties-away", "truncation", "flush-to-zero", "subnormal-bound", "overflow-bound"],
)
def test_planted_rounding_fault_is_refused(
    tmp_path: Path, old: str, new: str, names: tuple[str, ...]
) -> None:
    root = tree(tmp_path, theory=planted(old, new))
    # the statements changed: the plain check fails before coqc
    for goal in coq.check(root):
        if goal.goal in names:
            assert any("statement" in e or "declarations" in e for e in goal.errors), goal.errors
    # and coqc refuses the committed proofs under the faulty statements
    refused(coq.check(root, transplant=True), names)


@needs_prover
def test_changed_statement_fails(tmp_path: Path) -> None:
    old = "(e + shift e n)\nend"
    root = tree(tmp_path, theory=planted(old, "(e + shift e n + 0)\nend"))
    goals = {g.goal: g for g in coq.check(root)}
    assert "the committed proof's statement is not what Why3 prints today" in (
        goals["round_sig_correct"].errors
    )
    assert goals["round_bits_correct"].proved


@needs_prover
def test_admitted_proof_fails_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (REPO / PROOF).read_text()
    body = text[text.rindex("\nProof.\n") + 1 :]
    root = tree(tmp_path, proof=text.replace(body, "Proof.\nAdmitted.\n"))
    goals = {g.goal: g for g in coq.check(root)}
    assert "Admitted in the committed proof" in goals["round_sig_correct"].errors
    # Print Assumptions catches it too, without the token rule
    monkeypatch.setattr(coq, "FORBIDDEN", coq.re.compile(r"(?!x)x"))
    goals = {g.goal: g for g in coq.check(root)}
    assert goals["round_sig_correct"].errors == ("the proof rests on axioms: round_sig_correct",)


@needs_prover
def test_library_axiom_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    library = (REPO / coq.LIBRARY).read_text() + "\nAxiom cheat : False.\n"
    root = tree(tmp_path, library=library)
    for goal in coq.check(root):
        assert f"Axiom in {coq.LIBRARY}" in goal.errors
    # an unused axiom is no assumption of a goal; one the proof uses is
    text = (REPO / PROOF).read_text()
    proof = (
        text[: text.rindex("\nProof.\n")] + "\nProof.\ndestruct Sonnx.SonnxF64Round.cheat.\nQed.\n"
    )
    root = tree(tmp_path / "used", proof=proof, library=library)
    monkeypatch.setattr(coq, "FORBIDDEN", coq.re.compile(r"(?!x)x"))
    goals = {g.goal: g for g in coq.check(root)}
    assert goals["round_bits_correct"].proved
    (error,) = goals["round_sig_correct"].errors
    assert error.startswith("the proof rests on axioms: ") and error.endswith("cheat"), error


@needs_prover
def test_theory_with_an_axiom_is_refused(tmp_path: Path) -> None:
    root = tree(
        tmp_path, theory=planted("end\n\n(* binary64", "  axiom a: true\nend\n\n(* binary64")
    )
    (goal,) = coq.check(root)
    assert goal.errors == (f"{THEORY} declares 'axiom'",)


@needs_prover
def test_theory_using_a_project_theory_is_refused(tmp_path: Path) -> None:
    theory = planted("module Defs\n", "module Defs\n  use tensor.Shape\n")
    root = tree(tmp_path, theory=theory)
    (root / "why3" / "tensor.mlw").write_text("module Shape end\n")
    (goal,) = coq.check(root)
    assert goal.errors == (f"{THEORY} uses project theories: tensor",)


@needs_prover
def test_no_goal_fails(tmp_path: Path) -> None:
    text = (REPO / THEORY).read_text()
    without = (
        text[: text.index("(* binary64's round")] + "(* @relation(F-FLOAT, scope=range_end) *)\n"
    )
    root = tree(tmp_path, theory=without)
    assert coq.check(root) == []
    assert coq.main(["check", "--root", str(root)]) == 1


def test_assumptions_are_parsed() -> None:
    out = (
        "Axioms:\nClassical_Prop.classic : forall P : Prop, P \\/ ~ P\n"
        "scaled'def\n  : forall p e : int,\n    (0 <= e)%Z\nscaled : int -> int -> real\n"
    )
    assert coq.assumptions(out) == {"Classical_Prop.classic", "scaled'def", "scaled"}
    assert coq.assumptions("Closed under the global context\n") == set()
    with pytest.raises(ValueError):
        coq.assumptions("nothing printed")


def test_only_defined_parameters_are_definitions() -> None:
    printed = (
        "Parameter f: Z -> Z.\n\nAxiom f'def : forall x, f x = x.\n\n"
        "Parameter g: Z.\n\nAxiom g_pos : g > 0.\n"
    )
    assert coq.definitions(printed) == {"f", "f'def"}


def test_statement_and_declarations_must_be_verbatim() -> None:
    printed = "Require X.\n(* Why3 goal *)\nTheorem t :\n  True.\nProof.\n\nQed.\n"
    helpers = coq.HELPERS_MARK + " *)\nLemma h : True. Proof. exact I. Qed.\n"
    good = (
        "Require X.\n" + helpers + "(* Why3 goal *)\nTheorem t :\n  True.\nProof.\nexact I.\nQed.\n"
    )
    text, errors = coq.assemble(printed, good, transplant=False)
    assert errors == [] and text == good
    _, errors = coq.assemble(printed, good.replace("True.\nProof", "1 = 1.\nProof"), False)
    assert errors == ["the committed proof's statement is not what Why3 prints today"]
    _, errors = coq.assemble(printed, good.replace("Require X", "Require Y"), False)
    assert errors == ["the committed proof's declarations are not what Why3 prints today"]
    _, errors = coq.assemble(printed, good.replace("exact I.\nQed", "admit.\nQed"), False)
    assert errors == ["admit in the committed proof"]
