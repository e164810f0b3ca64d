"""widen.mlw mixes two models of ieee_float's `round`: Gappa's (unbounded,
as Why3 states it) and the native SMT-LIB one of the cvc5/Z3 drivers, where
an overflowing rounding is an infinity whose real value is unspecified (so
`F16.round RNE 1e6 = F16.round RNE 2e6` proves there, measured with cvc5
1.0.3 and Z3 4.8/5.4).  A lemma proved in the native model and used as a
hypothesis next to Gappa's lemmas could make the context inconsistent.  So
in widen.mlw only the integer modules (no floats) and the witness modules
(goals, never hypotheses) may name a native-float prover in the manifest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.provers  # runs Why3 or CrossHair and the provers

REPO = Path(__file__).resolve().parents[2]
WIDEN = "why3/widen.mlw"
NATIVE_FLOATS = {"z3", "z3-debian", "cvc5"}
INTEGER_MODULES = {"Representable", "Float16InFloat32", "BFloat16InFloat32", "Float32InFloat64"}


def native_float_lemmas(manifest: dict[str, Any]) -> list[str]:
    """Goals of widen.mlw outside the integer and witness modules that a
    native-float prover proves: each one is a defect."""
    (entry,) = [e for e in manifest["files"] if e["path"] == WIDEN]
    return [
        f"{g['module']}.{g['goal']} ({g['prover']})"
        for g in entry["goals"]
        if g["module"] not in INTEGER_MODULES
        and not g["module"].endswith("Witnesses")
        and g["prover"] in NATIVE_FLOATS
    ]


def load() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REPO / "proofs/manifest.json").read_text())
    return data


def test_widen_float_lemmas_avoid_native_float_provers() -> None:
    manifest = load()
    (entry,) = [e for e in manifest["files"] if e["path"] == WIDEN]
    assert any(g["prover"] == "gappa" for g in entry["goals"])
    assert native_float_lemmas(manifest) == []


def test_widen_native_float_lemma_is_flagged() -> None:
    # Negative control: the same manifest with one Gappa lemma moved to cvc5.
    manifest = load()
    (entry,) = [e for e in manifest["files"] if e["path"] == WIDEN]
    goal = next(g for g in entry["goals"] if g["module"] == "ExactProducts")
    goal["prover"] = "cvc5"
    assert native_float_lemmas(manifest) == [f"ExactProducts.{goal['goal']} (cvc5)"]


def test_widen_fallback_provers_avoid_native_floats() -> None:
    (entry,) = [e for e in load()["files"] if e["path"] == WIDEN]
    assert entry["fallback"] and not set(entry["fallback"]) & NATIVE_FLOATS


def fail_all(tried: dict[str, set[str]]):  # type: ignore[no-untyped-def]
    """A run_why3 that records (module -> provers) and proves nothing."""
    from sonnx_mul_assurance.why3 import driver as why3

    def run(root, conf, entry_, module, prover, limit, goals=()):  # type: ignore[no-untyped-def]
        tried.setdefault(module, set()).add(prover)
        names = set(goals)
        return [
            (g["goal"], why3.Result(prover, "Unknown", 0.1, 10))
            for g in entry_["goals"]
            if g["module"] == module and (not names or why3.base_name(g["goal"]) in names)
        ]

    return run


def provers_tried(entry: dict[str, Any], monkeypatch: Any) -> dict[str, set[str]]:
    """Module -> provers the check runs when every attempt fails."""
    from sonnx_mul_assurance.why3 import driver as why3

    tried: dict[str, set[str]] = {}
    monkeypatch.setattr(why3, "run_why3", fail_all(tried))
    monkeypatch.setattr(why3, "file_statements", lambda root, entry_, order: {})
    why3.prove_file(REPO, REPO, entry, why3.Report())
    return tried


def provers_searched(entry: dict[str, Any], monkeypatch: Any) -> dict[str, set[str]]:
    """Module -> provers update-manifest's search runs when every attempt fails."""
    from sonnx_mul_assurance.why3 import driver as why3

    tried: dict[str, set[str]] = {}
    monkeypatch.setattr(why3, "run_why3", fail_all(tried))
    monkeypatch.setattr(why3, "modules_of", lambda root, entry_: ["ExactProducts"])
    why3.prove_goals(REPO, REPO, entry, why3.PORTFOLIO, 1, {})
    return tried


def test_the_check_tries_only_the_pinned_provers(monkeypatch: Any) -> None:
    # no fallback at all: a goal is decided by its pinned prover and steps
    (entry,) = [e for e in load()["files"] if e["path"] == WIDEN]
    tried = provers_tried(entry, monkeypatch)
    assert tried["ExactProducts"] <= {"gappa", "cvc5-axioms"}, tried["ExactProducts"]
    for module, provers in tried.items():
        named = {g["prover"] for g in entry["goals"] if g["module"] == module}
        assert provers <= named, (module, provers)


def test_widen_search_never_falls_back_to_native_floats(monkeypatch: Any) -> None:
    (entry,) = [e for e in load()["files"] if e["path"] == WIDEN]
    assert not provers_searched(entry, monkeypatch)["ExactProducts"] & NATIVE_FLOATS


def test_negative_control_without_the_fallback_list_native_floats_are_tried(
    monkeypatch: Any,
) -> None:
    (entry,) = [e for e in load()["files"] if e["path"] == WIDEN]
    del entry["fallback"]
    assert "z3" in provers_searched(entry, monkeypatch)["ExactProducts"]
