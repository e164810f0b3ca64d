"""The Coq check of Why3 goals (sonnx_mul_assurance.why3.coq): the committed
proofs of why3/f64_round.mlw pass; planted faults in the rounding functions
(ties away from zero, truncation, subnormal results flushed to zero, a wrong
subnormal bound, a wrong overflow bound) and in the normalised product (a
wrong scaling, the bit lengths 105 and 106 swapped, a short normalisation,
a bit length off by one) make coqc refuse the committed proof put under the
faulty statement; a changed statement, a hole (``Admitted``),
an axiom in the proofs' library, a theory with an axiom and a theory without
goals fail the check.

The verdicts are coqc's (child processes) and the module imports nothing of
the product: it is marked ``external_provers`` (make test-debian-python
leaves it out; make test and make prove run it).  Why3 and coqc come from
make provers; when they are missing the tests fail (they are never skipped).
The cost is kept down without losing a verdict: the proofs' library is
compiled once per session and reused while its text is unchanged
(``coq.compile_library``), a planted fault's statement change is checked
without coqc, and coqc compiles only the goals the fault must break.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sonnx_mul_assurance.why3 import config as prover_config
from sonnx_mul_assurance.why3 import coq

AT = "@"  # a marker spelt by concatenation: this file holds none (tests/ is scanned)

REPO = Path(__file__).resolve().parents[2]
THEORY = coq.THEORIES[0]
PROOF = coq.PROOF_DIR / "f64_round_RoundSig_round_sig_correct.v"
BOTH = ("round_bits_correct", "round_sig_correct")
ROUNDING = (*BOTH, "f64_mul_bits_finite")
"""The goals a fault of the rounding step breaks (the whole product rounds with it)."""
SCALING = ("bitlen_range", "round_sig_scaled", "round_bits_scaled", "f64_mul_bits_normalised")
"""The normalised product's goals (module Scaling)."""
ALL = (*ROUNDING, "bitlen'vc", "f64_mul_bits_inf", "f64_mul_bits_nan", *SCALING)

pytestmark = [pytest.mark.provers, pytest.mark.external_provers, pytest.mark.needs_prover]


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the committed library is compiled once (reused while unchanged)."""
    return tmp_path_factory.mktemp("coq-library")


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
    """The goals ``names`` (the only ones checked) are each refused by coqc alone."""
    assert sorted(g.goal for g in goals) == sorted(names)
    for goal in goals:
        assert goal.errors, goal.goal
        assert all(e.startswith("coqc refused the proof") for e in goal.errors), goal.errors


def statement_errors(root: Path, out: Path) -> dict[str, list[str]]:
    """Per printed goal of ``root``'s theory, what the plain check finds wrong
    with its committed proof before coqc (:func:`coq.assemble`)."""
    out.mkdir()
    found = {}
    for name, printed in coq.print_goals(root, THEORY, out).items():
        committed = (root / coq.PROOF_DIR / name).read_text()
        _, errors = coq.assemble(printed, committed, transplant=False)
        found[coq.goal_name(coq.split_goal(printed)[1])] = errors
    return found


def test_committed_proof_passes(library: Path) -> None:
    goals = coq.check(REPO, library=library)
    assert sorted(g.goal for g in goals) == sorted(ALL)
    assert all(g.proved for g in goals), [g.errors for g in goals]


@pytest.mark.parametrize(
    ("old", "new", "names"),
    [
        # ties away from zero: a tie always rounds up
        ("(r = h && mod q 2 = 1)", "r = h", ROUNDING),
        # truncation: the dropped bits never round up
        ("then q + 1 else q", "then q else q", ROUNDING),
        # a lost subnormal: results below 2^-1022 flushed to zero
        (
            "    let s = shift e n in\n",
            "    let s = shift e n in\n    if n + e <= - 1022 then 0 else\n",
            ROUNDING,
        ),
        # a wrong subnormal bound: the quantum 2^-1075 (one bit too many)
        ("max (n - 53) (- 1074 - e)", "max (n - 53) (- 1075 - e)", ROUNDING),
        # a wrong overflow bound: +infinity from the top binade (2^1023) on
        (
            "    min ((e + shift e n + 1074) * pow2 52 + round_sig p e n) inf_bits\n",
            "    let b = (e + shift e n + 1074) * pow2 52 + round_sig p e n in\n"
            "    if b >= inf_bits - pow2 52 then inf_bits else b\n",
            ("round_bits_correct", "f64_mul_bits_finite"),
        ),
        # the whole product, a wrong NaN rule: the NaN takes the xor of the signs
        (
            "       || (mag a = 0 && mag b = inf_bits) then 0x7FF8000000000000\n",
            "       || (mag a = 0 && mag b = inf_bits) then sign_of a b + 0x7FF8000000000000\n",
            ("f64_mul_bits_nan",),
        ),
        # the whole product, a wrong NaN rule: a NaN operand's payload kept
        (
            "       || (mag a = 0 && mag b = inf_bits) then 0x7FF8000000000000\n",
            "       || (mag a = 0 && mag b = inf_bits) then\n"
            "      if mag a > inf_bits then max a 0x7FF8000000000000 else 0x7FF8000000000000\n",
            ("f64_mul_bits_nan",),
        ),
        # the whole product, a lost subnormal: subnormal operands flushed to zero
        (
            "    else if mag a = 0 || mag b = 0 then sign_of a b\n",
            "    else if mag a < pow2 52 || mag b < pow2 52 then sign_of a b\n",
            ("f64_mul_bits_finite",),
        ),
        # the whole product, a wrong rounding: the exponent of the product off by one
        (
            "round_bits p (ex a + ex b) (bitlen p)",
            "round_bits p (ex a + ex b + 1) (bitlen p)",
            ("f64_mul_bits_finite",),
        ),
        # the whole product, a wrong sign: the sign of a alone
        (
            "int =\n    mod (div a 0x8000000000000000 + div b 0x8000000000000000) 2"
            " * 0x8000000000000000\n",
            "int =\n    div a 0x8000000000000000 * 0x8000000000000000\n",
            ("f64_mul_bits_finite", "f64_mul_bits_inf"),
        ),
        # the normalised product, a wrong scaling: the exponent up by k, not down
        (
            "round_sig (p * pow2 k) (e - k) (n + k)",
            "round_sig (p * pow2 k) (e + k) (n + k)",
            ("round_sig_scaled",),
        ),
        (
            "round_bits (p * pow2 k) (e - k) (n + k)",
            "round_bits (p * pow2 k) (e + k) (n + k)",
            ("round_bits_scaled",),
        ),
        # the normalised product, the bit lengths 105 and 106 swapped
        (
            "- ka - kb) 105) /\\\n    (pow2 105 <= p ->\n"
            "       f64_mul_bits a b = sign_of a b + round_bits p (ex a + ex b - ka - kb) 106)",
            "- ka - kb) 106) /\\\n    (pow2 105 <= p ->\n"
            "       f64_mul_bits a b = sign_of a b + round_bits p (ex a + ex b - ka - kb) 105)",
            ("f64_mul_bits_normalised",),
        ),
        # the normalised product, a significand normalised one bit short (from 2^51)
        (
            "pow2 52 <= sig a * pow2 ka",
            "pow2 51 <= sig a * pow2 ka",
            ("f64_mul_bits_normalised",),
        ),
        # the bit length from the range, off by one
        (
            "pow2 (n - 1) <= p < pow2 n -> bitlen p = n\n",
            "pow2 (n - 1) <= p < pow2 n -> bitlen p = n - 1\n",
            ("bitlen_range",),
        ),
    ],
    ids=[
        "ties-away",
        "truncation",
        "flush-to-zero",
        "subnormal-bound",
        "overflow-bound",
        "nan-sign-kept",
        "nan-payload-kept",
        "subnormal-operand-flushed",
        "product-exponent",
        "sign-of-a",
        "sig-scaled-exponent",
        "bits-scaled-exponent",
        "normalised-length-swapped",
        "normalised-from-2^51",
        "bitlen-range-off-by-one",
    ],
)
def test_planted_rounding_fault_is_refused(
    tmp_path: Path, library: Path, old: str, new: str, names: tuple[str, ...]
) -> None:
    root = tree(tmp_path, theory=planted(old, new))
    # the statements changed: the plain check fails before coqc
    for goal, errors in statement_errors(root, tmp_path / "printed").items():
        if goal in names:
            assert any("statement" in e or "declarations" in e for e in errors), errors
    # and coqc refuses the committed proofs under the faulty statements
    refused(coq.check(root, transplant=True, only=frozenset(names), library=library), names)


def test_changed_statement_fails(tmp_path: Path, library: Path) -> None:
    old = "(e + shift e n)\nend"
    root = tree(tmp_path, theory=planted(old, "(e + shift e n + 0)\nend"))
    goals = {g.goal: g for g in coq.check(root, only=frozenset(BOTH), library=library)}
    assert "the committed proof's statement is not what Why3 prints today" in (
        goals["round_sig_correct"].errors
    )
    assert goals["round_bits_correct"].proved


def test_admitted_proof_fails_twice(
    tmp_path: Path, library: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (REPO / PROOF).read_text()
    body = text[text.rindex("\nProof.\n") + 1 :]
    root = tree(tmp_path, proof=text.replace(body, "Proof.\nAdmitted.\n"))
    only = frozenset({"round_sig_correct"})
    goals = {g.goal: g for g in coq.check(root, only=only, library=library)}
    assert "Admitted in the committed proof" in goals["round_sig_correct"].errors
    # Print Assumptions catches it too, without the token rule
    monkeypatch.setattr(coq, "FORBIDDEN", coq.re.compile(r"(?!x)x"))
    goals = {g.goal: g for g in coq.check(root, only=only, library=library)}
    assert goals["round_sig_correct"].errors == ("the proof rests on axioms: round_sig_correct",)


def test_library_axiom_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    library = (REPO / coq.LIBRARY).read_text() + "\nAxiom cheat : False.\n"
    root = tree(tmp_path, library=library)
    compiled = tmp_path / "compiled"  # the library with the axiom, compiled once for both checks
    for goal in coq.check(root, only=frozenset(BOTH), library=compiled):
        assert f"Axiom in {coq.LIBRARY}" in goal.errors
    # an unused axiom is no assumption of a goal; one the proof uses is
    text = (REPO / PROOF).read_text()
    proof = (
        text[: text.rindex("\nProof.\n")] + "\nProof.\ndestruct Sonnx.SonnxF64Round.cheat.\nQed.\n"
    )
    root = tree(tmp_path / "used", proof=proof, library=library)
    monkeypatch.setattr(coq, "FORBIDDEN", coq.re.compile(r"(?!x)x"))
    goals = {g.goal: g for g in coq.check(root, only=frozenset(BOTH), library=compiled)}
    assert goals["round_bits_correct"].proved
    (error,) = goals["round_sig_correct"].errors
    assert error.startswith("the proof rests on axioms: ") and error.endswith("cheat"), error


def test_theory_with_an_axiom_is_refused(tmp_path: Path, library: Path) -> None:
    root = tree(
        tmp_path, theory=planted("end\n\n(* binary64", "  axiom a: true\nend\n\n(* binary64")
    )
    (goal,) = coq.check(root, library=library)
    assert goal.errors == (f"{THEORY} declares 'axiom'",)


def test_theory_using_a_project_theory_is_refused(tmp_path: Path, library: Path) -> None:
    theory = planted("module Defs\n", "module Defs\n  use tensor.Shape\n")
    root = tree(tmp_path, theory=theory)
    (root / "why3" / "tensor.mlw").write_text("module Shape end\n")
    (goal,) = coq.check(root, library=library)
    assert goal.errors == (f"{THEORY} uses project theories: tensor",)


def test_no_goal_fails(tmp_path: Path, library: Path) -> None:
    text = (REPO / THEORY).read_text()
    without = (
        text[: text.index("(* the whole binary64 product")]
        + "(* "
        + AT
        + "relation(F-FLOAT, scope=range_end) *)\n"
    )
    root = tree(tmp_path, theory=without)
    assert coq.check(root, library=library) == []
    assert coq.main(["check", "--root", str(root)]) == 1


def test_a_committed_proof_of_no_printed_goal_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A proof whose goal the theory no longer has (renamed, removed) fails the
    check, as the report refuses a record without it (coq.expected_proofs)."""
    root = tree(tmp_path)
    printed = sorted(coq.expected_proofs(root))
    goals = [coq.Goal(name, name, (), THEORY.as_posix(), "M") for name in printed]
    monkeypatch.setattr(coq, "check", lambda root: goals)  # every printed goal proved
    monkeypatch.setattr(coq, "tool_versions", lambda root: {})
    assert coq.main(["check", "--root", str(root)]) == 0  # the negative control
    stale = coq.PROOF_DIR / "f64_round_RoundSig_gone.v"
    shutil.copyfile(root / PROOF, root / stale)
    assert coq.main(["check", "--root", str(root)]) == 1
    assert f"coq: FAILED: {stale.as_posix()} proves no goal Why3 prints" in capsys.readouterr().out


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
