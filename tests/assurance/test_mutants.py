"""The mutation driver (make mutants): its mutants, its verdicts, its exit code."""

from __future__ import annotations

import json
from pathlib import Path

from sonnx_mul_assurance import mutants
from sonnx_mul_assurance.mutants import Outcome, mlw_mutants, python_mutants, report

PY = '''
from __future__ import annotations


def f(x: int | None, y: list[int]) -> bool:
    """Docstring with < and 1."""
    if x is None or x < 3:  # comment with == 2
        raise ValueError("no")
    return x in y and True
'''

MLW = """
module M
  (* a comment with <= and 7 *)
  let f (x : int) : int
    requires { x >= 0 }
    ensures  { result <= x + 1 }
  = if x < 0 then raise E; x + 1
  type t = < float 5 11 >
end
"""


def _changes(found: list[mutants.Mutant]) -> set[tuple[str, str]]:
    return {(m.original, m.replacement) for m in found}


def test_python_mutants_cover_the_operators_and_skip_annotations_docstrings_comments() -> None:
    found = python_mutants("f.py", PY)
    changes = _changes(found)
    assert {("is", "is not"), ("or", "and"), ("<", "<="), ("3", "4"), ("in", "not in")} <= changes
    assert ("and", "or") in changes and ("True", "False") in changes
    assert any(m.replacement == "pass" and m.original.startswith("raise") for m in found)
    lines = {m.line for m in found}
    assert 5 not in lines and 6 not in lines  # the signature's annotations, the docstring
    assert not any(m.original == "|" for m in found)  # int | None is an annotation
    for m in found:
        compile(m.apply(PY), "<mutant>", "exec")


def test_mlw_mutants_weaken_contracts_and_skip_comments_and_formats() -> None:
    found = mlw_mutants("m.mlw", MLW)
    changes = _changes(found)
    assert ("requires { x >= 0 }", "requires { true }") in changes
    assert ("ensures  { result <= x + 1 }", "ensures { true }") in changes
    assert any(m.replacement == "if false then raise" for m in found)
    assert (">=", ">") in changes and ("<=", "<") in changes and ("+", "-") not in changes
    assert all(m.line != 3 for m in found)  # the comment
    assert all("float" not in m.context for m in found)  # formats: the tables check


def test_keys_are_stable_and_distinct() -> None:
    found = mutants.spread(mlw_mutants("m.mlw", MLW + MLW.replace("module M", "module N")), 100)
    keys = [m.key for m in found]
    assert len(keys) == len(set(keys))
    again = mutants.spread(
        mlw_mutants("m.mlw", "\n\n" + MLW + MLW.replace("module M", "module N")), 100
    )
    assert [m.key for m in again] == keys  # lines moved, keys kept


def _outcome(status: str) -> Outcome:
    return Outcome("k" + status, "f.py", 1, "<", "<=", "x < 1", status, 0.1)


def test_an_unexplained_survivor_fails_the_run(tmp_path: Path) -> None:
    assert report(tmp_path, [_outcome("killed"), _outcome("survived")], 1.0) == 1
    data = json.loads((tmp_path / mutants.OUT).read_text())
    assert data["kill_rate"] == 0.5 and data["survived"] == 1


def test_equivalent_survivors_do_not_count(tmp_path: Path) -> None:
    assert (
        report(tmp_path, [_outcome("killed"), _outcome("equivalent"), _outcome("timeout")], 1.0)
        == 0
    )
    data = json.loads((tmp_path / mutants.OUT).read_text())
    assert data["kill_rate"] == 1.0 and data["equivalent"] == 1


REPO = Path(__file__).resolve().parents[2]


def test_report_targets_are_the_audit_modules_that_exist_with_existing_tests() -> None:
    """Every module of report/ (``__main__`` only calls ``main``) and the two it reads
    through are mutation targets; every target and every test named exists."""
    package = "assurance/sonnx_mul_assurance"
    modules = {
        f"{package}/report/{p.name}"
        for p in (REPO / package / "report").glob("*.py")
        if p.name != "__main__.py"
    }
    expected = modules | {f"{package}/evidence/schema.py", f"{package}/why3/whyml.py"}
    assert set(mutants.REPORT_TARGETS) == expected
    for target, tests in mutants.REPORT_TARGETS.items():
        assert tests and mutants.PY_TESTS[target] == tests, target
        assert (REPO / target).is_file(), target
        missing = [t for t in tests if not (REPO / t).is_file()]
        assert missing == [], (target, missing)
    assert set(mutants.REPORT_TESTS) == {
        p.relative_to(REPO).as_posix() for p in (REPO / "tests/report").glob("test_*.py")
    }


def test_models_and_conform_targets_are_every_module_with_existing_tests() -> None:
    """Issue 29: every module of models/ and conform/ is a mutation target (each
    ``__init__.py`` holds only re-exports: no mutant can be generated in it), with
    tests that exist; a module added later must be added to the table."""
    for folder in ("src/sonnx_mul/models", "assurance/sonnx_mul_assurance/conform"):
        modules = {p.relative_to(REPO).as_posix() for p in (REPO / folder).glob("*.py")}
        init = f"{folder}/__init__.py"
        assert python_mutants(init, (REPO / init).read_text()) == []
        assert {t for t in mutants.PY_TESTS if t.startswith(folder + "/")} == modules - {init}
    for target in (*mutants.MODELS_TARGETS, *mutants.CONFORM_TARGETS):
        tests = mutants.PY_TESTS[target]
        assert tests and all((REPO / t).is_file() for t in tests), target
        assert mutants.MAX_PY_OF[target] == 12
