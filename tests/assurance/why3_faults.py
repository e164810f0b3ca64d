"""What the negative controls of the Why3 proofs (``test_why3_negative_*.py``) share:
a copy of the proof tree to plant a fault in, the planting, and the check of the
faulty copy, on the affected file only, with the real manifest: every goal by its
pinned prover within its pinned step limit, as ``make prove`` checks it.

A planted fault that makes known goals false is checked on those goals only
(:func:`refuted`): each must stay unproved, refused by its prover within its
steps, never for want of time (the verdict does not depend on the load).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from sonnx_mul_assurance.why3.driver import run_check

REPO = Path(__file__).resolve().parents[2]
FAST_PORTFOLIO = ("cvc5",)  # the provers run_check requires besides the pinned ones


def copy_proof_tree(tmp_path: Path) -> Path:
    """A copy under ``tmp_path`` of what the Why3 check reads: why3/, the manifest, the
    drivers and why3.conf.in, oracle/integers.py and native/bitspec.py; returns ``tmp_path``."""
    shutil.copytree(REPO / "why3", tmp_path / "why3")
    (tmp_path / "proofs").mkdir()
    shutil.copytree(REPO / "proofs" / "drivers", tmp_path / "proofs" / "drivers")
    for name in ("manifest.json", "why3.conf.in"):
        shutil.copy(REPO / "proofs" / name, tmp_path / "proofs" / name)
    (tmp_path / "src/sonnx_mul/oracle").mkdir(parents=True)
    shutil.copy(
        REPO / "src/sonnx_mul/oracle/integers.py", tmp_path / "src/sonnx_mul/oracle/integers.py"
    )
    (tmp_path / "native").mkdir()
    shutil.copy(REPO / "native/bitspec.py", tmp_path / "native/bitspec.py")
    return tmp_path


def plant(root: Path, file: str, old: str, new: str, after: str = "") -> None:
    """Replace the first ``old`` that follows ``after`` in why3/``file``."""
    path = root / "why3" / file
    text = path.read_text()
    start = text.index(after)
    assert old in text[start:], f"fault anchor not found in {file}: {old!r}"
    path.write_text(text[:start] + text[start:].replace(old, new, 1))


def check(root: Path, file: str, modules: list[str] | None = None) -> tuple[int, dict[str, Any]]:
    """The check of why3/``file`` (of ``modules`` only, when given) in the tree at ``root``:
    its exit code and its report (proofs/out/why3.json)."""
    rc = run_check(root, [f"why3/{file}"], portfolio=FAST_PORTFOLIO, modules=modules)
    report: dict[str, Any] = json.loads((root / "proofs/out/why3.json").read_text())
    return rc, report


def unproved(report: dict[str, Any]) -> set[tuple[str, str]]:
    """(module, goal) of every goal of ``report`` not proved."""
    return {(g["module"], g["goal"]) for g in report["goals"] if g["status"] != "Valid"}


def refuted(
    root: Path, file: str, module: str, goals: set[str], aborts: bool = False
) -> dict[str, Any]:
    """Check only ``goals`` of ``module`` (false after the planted fault): the
    check fails, every one of them is unproved; returns the report.  A
    timeout never counts, nor a prover's abort unless ``aborts`` says that
    this prover aborts on this goal whenever it is false (see its use)."""
    selected = frozenset((module, g) for g in goals)
    rc = run_check(root, [file if "/" in file else f"why3/{file}"], portfolio=(), goals=selected)
    report: dict[str, Any] = json.loads((root / "proofs/out/why3.json").read_text())
    assert rc != 0
    assert unproved(report) == set(selected), report["errors"]
    statuses = {g["status"] for g in report["goals"]}
    allowed = {"High failure"} if aborts else set()
    assert not {s for s in statuses - allowed if "Timeout" in s or "failure" in s}, statuses
    return report
