"""Negative controls of the Why3 proofs: planted faults must make the proof
driver fail, naming the goals it could not prove.

These tests run Why3 and the provers; when they are missing the tests fail
(they are never skipped).  Each faulty copy is checked on the affected file
only, with the real manifest, and with the manifest's prover plus cvc5 as the
only fallback, to keep the module fast.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from sonnx_mul.proof.why3 import run_check

REPO = Path(__file__).resolve().parents[1]
FAST_PORTFOLIO = ("cvc5",)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "why3", tmp_path / "why3")
    (tmp_path / "proofs").mkdir()
    shutil.copytree(REPO / "proofs" / "drivers", tmp_path / "proofs" / "drivers")
    for name in ("manifest.json", "why3.conf.in"):
        shutil.copy(REPO / "proofs" / name, tmp_path / "proofs" / name)
    return tmp_path


def plant(root: Path, file: str, old: str, new: str, after: str = "") -> None:
    """Replace the first ``old`` that follows ``after`` in why3/``file``."""
    path = root / "why3" / file
    text = path.read_text()
    start = text.index(after)
    assert old in text[start:], f"fault anchor not found in {file}: {old!r}"
    path.write_text(text[:start] + text[start:].replace(old, new, 1))


def check(root: Path, file: str, modules: list[str] | None = None) -> tuple[int, dict[str, Any]]:
    rc = run_check(root, [f"why3/{file}"], portfolio=FAST_PORTFOLIO, modules=modules)
    report: dict[str, Any] = json.loads((root / "proofs/out/why3.json").read_text())
    return rc, report


def unproved(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {(g["module"], g["goal"]) for g in report["goals"] if g["status"] != "Valid"}


def test_real_files_pass(copy: Path) -> None:
    rc, report = check(copy, "refine.mlw")
    assert rc == 0, report["errors"]
    assert report["goals"] and not unproved(report)


def test_wrong_element_fails(copy: Path) -> None:
    plant(copy, "refine.mlw", "c[i] <- a.value[i] * b.value[i]", "c[i] <- a.value[i] * b.value[0]")
    rc, report = check(copy, "refine.mlw")
    assert rc != 0
    assert ("Refine", "mul_loop'vc#0") in unproved(report)
    assert any("goal not proved" in e and "mul_loop'vc" in e for e in report["errors"])


def test_r1_check_removed_fails(copy: Path) -> None:
    plant(
        copy,
        "refine.mlw",
        "if not (eq_shape a.shape b.shape) then raise ShapeError;",
        "if false then raise ShapeError;",  # the check is gone
    )
    rc, report = check(copy, "refine.mlw")
    assert rc != 0
    assert ("Refine", "validate'vc#0") in unproved(report)


def test_float_rtz_fails(copy: Path) -> None:
    plant(
        copy,
        "floats.mlw",
        "(x y : F.t) : F.t = F.mul F.RNE x y",
        "(x y : F.t) : F.t = F.mul F.RTZ x y",
        after="module Float32Mul",
    )
    rc, report = check(copy, "floats.mlw", ["Float32Mul"])
    assert rc != 0
    bad = unproved(report)
    assert ("Float32Mul", "f_float#0") in bad
    # The rounding lemma is stated before f_float: a lemma is a hypothesis
    # of every later goal, so after f_float it would follow from f_float
    # itself, proved or not. Before it, it must fail on its own.
    assert ("Float32Mul", "rounding#0") in bad


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
    rc, report = check(copy, "wrap.mlw", ["WrapUInt8"])
    assert rc != 0
    assert ("WrapUInt8", "f_wrap#0") in unproved(report)


def test_zero_goal_file_fails(copy: Path) -> None:
    (copy / "why3" / "empty.mlw").write_text("module Empty\n  type t\nend\n")
    manifest = json.loads((copy / "proofs/manifest.json").read_text())
    manifest["files"].append(
        {"path": "why3/empty.mlw", "loadpath": ["why3"], "split_vc": [], "goals": []}
    )
    (copy / "proofs/manifest.json").write_text(json.dumps(manifest))
    rc, report = check(copy, "empty.mlw")
    assert rc != 0
    assert any("zero goals" in e for e in report["errors"])


def test_new_goal_missing_from_manifest_fails(copy: Path) -> None:
    plant(
        copy,
        "utils.mlw",
        "  lemma same_refl:",
        "  lemma planted_extra: forall s. same s s = s\n  lemma same_refl:",
    )
    rc, report = check(copy, "utils.mlw")
    assert rc != 0
    assert any("new goal" in e and "planted_extra" in e for e in report["errors"])


def test_disappeared_goal_fails(copy: Path) -> None:
    plant(copy, "utils.mlw", "  lemma same_refl: forall s. same s s = s\n", "")
    rc, report = check(copy, "utils.mlw")
    assert rc != 0
    assert any("no longer exists" in e and "same_refl" in e for e in report["errors"])


def test_missing_prover_fails(copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(copy))  # neither why3 nor any prover
    rc, report = check(copy, "utils.mlw")
    assert rc != 0
    assert any("prover missing" in e for e in report["errors"])


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
    rc, report = check(copy, "api.mlw", ["Api"])
    assert rc != 0
    assert unproved(report) == {("Api", "mul_into'vc#0")}


def test_api_checked_written_before_overflow_scan_fails(copy: Path) -> None:
    # F-NOLOSS: the overflow scan after the loop, so IntegerOverflow is
    # raised with out already written.
    scan = (
        "    let k = first_overflow a b (length out) in\n"
        "    if k >= 0 then raise IntegerOverflow k;\n"
    )
    loop = f"{_OUT_LOOP}    done;\n"
    plant(copy, "api.mlw", scan + loop, loop + scan, after="let mul_checked_into")
    rc, report = check(copy, "api.mlw", ["ApiChecked"])
    assert rc != 0
    assert unproved(report) == {("ApiChecked", "mul_checked_into'vc#0")}


def test_api_sparse_accepted_fails(copy: Path) -> None:
    # R2: check_dense lets a sparse tensor through (the check is gone; an
    # exception the body never raises may not be listed in Why3).
    plant(
        copy,
        "api.mlw",
        "| Sparse -> raise SparseError",
        "| Sparse -> if false then raise SparseError",
    )
    rc, report = check(copy, "api.mlw", ["ApiChecks"])
    assert rc != 0
    assert ("ApiChecks", "check_dense'vc#0") in unproved(report)
