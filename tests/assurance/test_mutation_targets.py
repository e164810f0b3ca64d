"""The targets of mutation testing (tests/mutation-targets.toml): every file and
every test they name exists, whole folders are covered, and a renamed test or a
malformed entry is caught before a run."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from sonnx_mul_assurance.c import glue_build
from sonnx_mul_assurance.mutants import cli, runner, targets
from sonnx_mul_assurance.mutants.mutators.python import python_mutants

REPO = Path(__file__).resolve().parents[2]
TARGETS = targets.load(REPO)
PACKAGE = "assurance/sonnx_mul_assurance"


def test_every_file_and_every_test_the_targets_name_exists() -> None:
    """Every target, every test file and every ``file::test`` exists (a renamed test
    would make pytest fail the baseline with "not found", or worse, select nothing)."""
    assert targets.missing(TARGETS, REPO) == []
    assert all(target.tests for target in TARGETS.python.values())


def test_report_targets_are_every_audit_module_against_tests_that_exist() -> None:
    """Every module of report/ (``__main__`` only calls ``main``) and the three it reads
    through are targets; the report set is every test file of tests/report."""
    modules = {
        f"{PACKAGE}/report/{p.name}"
        for p in (REPO / PACKAGE / "report").glob("*.py")
        if p.name != "__main__.py"
    }
    through = {f"{PACKAGE}/evidence/schema.py", f"{PACKAGE}/evidence/binding.py"}
    through.add(f"{PACKAGE}/why3/whyml.py")
    assert {t for t in TARGETS.python if t.startswith(f"{PACKAGE}/report/")} == modules
    assert through <= set(TARGETS.python)
    assert set(TARGETS.sets["report"]) == {
        p.relative_to(REPO).as_posix() for p in (REPO / "tests/report").glob("test_*.py")
    }


def test_models_and_conform_targets_are_every_module() -> None:
    """Every module of models/ and conform/ is a target (each ``__init__.py`` holds
    only re-exports: no mutant can be generated in it); a module added later must be
    added to the targets. 12 mutants each but the checker's core (25)."""
    core = {f"src/sonnx_mul/models/{m}.py" for m in ("checker", "rules", "shapes", "declared")}
    core.add("src/sonnx_mul/models/wire.py")
    for folder in ("src/sonnx_mul/models", f"{PACKAGE}/conform"):
        modules = {p.relative_to(REPO).as_posix() for p in (REPO / folder).glob("*.py")}
        init = f"{folder}/__init__.py"
        assert python_mutants(init, (REPO / init).read_text()) == []
        listed = {t for t in TARGETS.python if t.startswith(folder + "/")}
        assert listed == modules - {init}
        for target in listed:
            assert TARGETS.python[target].max == (25 if target in core else 12), target


def test_every_file_and_folder_a_makefile_target_names_has_targets() -> None:
    """The make mutants-* recipes select existing targets; mutants-hostile runs the
    verifier, the wire pre-pass and the evidence schema, hypothesis derandomized."""
    makefile = (REPO / "Makefile").read_text()
    recipes = re.findall(r"\n(mutants[\w-]*):[^\n]*\n((?:\t[^\n]*\n)+)", makefile)
    assert {name for name, _ in recipes} >= {"mutants", "mutants-glue", "mutants-hostile"}
    for _, recipe in recipes:
        for file in re.findall(r"--file (\S+)", recipe):
            assert file in TARGETS.python or file == TARGETS.glue.file, file
        for folder in re.findall(r"--under (\S+)", recipe):
            assert any(t.startswith(folder + "/") for t in TARGETS.python), folder
    hostile = dict(recipes)["mutants-hostile"]
    assert set(re.findall(r"--file (\S+)", hostile)) == {
        "src/sonnx_mul_verify.py",
        "src/sonnx_mul/models/wire.py",
        f"{PACKAGE}/evidence/schema.py",
    }
    assert "HYPOTHESIS_PROFILE=mutants" in hostile


def test_the_sets_expand_in_place() -> None:
    rules = TARGETS.sets["rules"]
    assert TARGETS.sets["inference"] == (*rules, "tests/checker/test_trusted_inference.py")
    assert TARGETS.python["src/sonnx_mul/models/facts.py"].tests == rules
    assert any("::" in t for t in TARGETS.python["src/sonnx_mul/models/wire.py"].tests)


def test_a_file_s_timeout_is_its_checks_limit() -> None:
    """A file's ``timeout`` is the limit its check runs under; without one, the default."""
    wire, dtypes = "src/sonnx_mul/models/wire.py", "src/sonnx_mul/dtypes.py"
    assert TARGETS.python[wire].timeout == 900
    assert runner.checks_for(wire, None, TARGETS)[0][1] == 900
    assert runner.checks_for(dtypes, None, TARGETS)[0][1] == targets.DEFAULT_PY_TIMEOUT


# ---------------------------------------------------------------- negative controls
TREE = {
    "src/a.py": "def f(x: int) -> bool:\n    return x < 2\n",
    glue_build.GLUE: "static int g(int x)\n{\n    return x + 1;\n}\n",
    "tests/test_a.py": "def test_old():\n    pass\n",
}
TOML = f"""
[sets.a]
tests = ["tests/test_a.py::test_old"]

[python."src/a.py"]
tests = ["@a"]
max = 3

[glue]
file = "{glue_build.GLUE}"
functions = ["g"]
tests = ["tests/test_a.py"]
max = 2
"""


def _tree(root: Path, toml: str = TOML) -> None:
    for name, text in {**TREE, str(targets.TARGETS): toml}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_negative_control_a_renamed_test_or_file_is_caught(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert targets.missing(targets.load(tmp_path), tmp_path) == []
    assert cli.main(["--root", str(tmp_path), "--list"]) == 0
    (tmp_path / "tests/test_a.py").write_text("def test_new():\n    pass\n")  # renamed
    assert targets.missing(targets.load(tmp_path), tmp_path) == [
        "src/a.py: tests/test_a.py::test_old"
    ]
    assert cli.main(["--root", str(tmp_path), "--list"]) == 2  # the run refuses to start
    (tmp_path / "tests/test_a.py").rename(tmp_path / "tests/test_b.py")
    (tmp_path / "src/a.py").unlink()
    assert targets.missing(targets.load(tmp_path), tmp_path) == [
        "src/a.py: no such file",
        "src/a.py: tests/test_a.py::test_old",
        f"{glue_build.GLUE}: tests/test_a.py",
    ]


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (("max = 3", "max = -1"), "max must be an integer of at least 0"),
        (("max = 3", "max = 3\ntimeout = 0"), "timeout must be an integer of at least 1"),
        (("max = 3", "limit = 3"), "unknown keys"),
        (('tests = ["@a"]', 'tests = ["@b"]'), "@b names no set"),
        (('tests = ["@a"]', "tests = []"), "no test"),
        (('tests = ["tests/test_a.py::test_old"]', 'tests = ["@a"]'), "@a names itself"),
        (('functions = ["g"]', "functions = [1]"), "a list of strings"),
        (('file = "src', 'file = "native'), "the glue the build knows"),
        (("[glue]", "[glue]\nextra = 1"), "unknown keys"),
    ],
)
def test_negative_control_a_malformed_entry_is_refused(change: tuple[str, str], error: str) -> None:
    toml = TOML.replace(*change)
    assert toml != TOML
    with pytest.raises(targets.TargetsError, match=error):
        targets.parse(tomllib.loads(toml))
