"""The mutation driver (make mutants): its mutants, its verdicts, its exit code."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from sonnx_mul_assurance.c import glue_build
from sonnx_mul_assurance.mutants import cli, runner, targets
from sonnx_mul_assurance.mutants.mutant import Mutant, Outcome, spread
from sonnx_mul_assurance.mutants.mutators import generate
from sonnx_mul_assurance.mutants.mutators.c import (
    c_code_mask,
    c_functions,
    c_mutants,
    spread_functions,
)
from sonnx_mul_assurance.mutants.mutators.python import python_mutants
from sonnx_mul_assurance.mutants.mutators.whyml import mlw_mutants
from sonnx_mul_assurance.mutants.report import OUT, report
from sonnx_mul_assurance.why3 import coq
from sonnx_mul_assurance.why3.config import COQ_REALIZATIONS
from sonnx_mul_assurance.why3.tables import GENERATED

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


def _changes(found: list[Mutant]) -> set[tuple[str, str]]:
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
    found = spread(mlw_mutants("m.mlw", MLW + MLW.replace("module M", "module N")), 100)
    keys = [m.key for m in found]
    assert len(keys) == len(set(keys))
    again = spread(mlw_mutants("m.mlw", "\n\n" + MLW + MLW.replace("module M", "module N")), 100)
    assert [m.key for m in again] == keys  # lines moved, keys kept


def _outcome(status: str) -> Outcome:
    return Outcome("k" + status, "f.py", 1, "<", "<=", "x < 1", status, 0.1)


def test_an_unexplained_survivor_fails_the_run(tmp_path: Path) -> None:
    assert report(tmp_path, [_outcome("killed"), _outcome("survived")], 1.0) == 1
    data = json.loads((tmp_path / OUT).read_text())
    assert data["kill_rate"] == 0.5 and data["survived"] == 1


def test_equivalent_survivors_do_not_count(tmp_path: Path) -> None:
    assert (
        report(tmp_path, [_outcome("killed"), _outcome("equivalent"), _outcome("timeout")], 1.0)
        == 0
    )
    data = json.loads((tmp_path / OUT).read_text())
    assert data["kill_rate"] == 1.0 and data["equivalent"] == 1


REPO = Path(__file__).resolve().parents[2]

TARGETS = targets.load(REPO)
GLUE = TARGETS.glue.file


def test_every_whyml_target_has_a_check_that_proves_its_goals() -> None:
    # a WhyML mutant is killed by the proof of its file: the Why3 manifest's
    # provers, or the Coq check for a theory whose goals are proved in Coq (a
    # theory in neither would be proved by no run, and every mutant survive);
    # the generated tables (no goal) by the tables check, which any change fails
    listed = {e["path"] for e in json.loads((REPO / "proofs/manifest.json").read_text())["files"]}
    in_coq = {t.as_posix() for t in coq.THEORIES}
    assert in_coq and not in_coq & listed
    for path in sorted(p.relative_to(REPO).as_posix() for p in (REPO / "why3").glob("*.mlw")):
        commands = [" ".join(argv) for argv, _ in runner.checks_for(path, None, TARGETS)]
        assert any("sonnx_mul_assurance.why3.tables check" in c for c in commands), path
        if path == GENERATED.as_posix():
            assert len(commands) == 1
        elif path in in_coq:
            assert any(c.endswith("-m sonnx_mul_assurance.why3.coq check") for c in commands)
        else:
            assert path in listed, f"{path}: no proof check would kill its mutants"
            assert any("run_check" in c and repr(path) in c for c in commands), commands


def test_a_copy_reads_the_coq_realizations_of_the_repository(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / COQ_REALIZATIONS).mkdir(parents=True)
    (root / COQ_REALIZATIONS / ".stamp").write_text("built\n")
    (root / "src/sonnx_mul").mkdir(parents=True)
    shutil.copytree(REPO / "src/sonnx_mul", root / "src/sonnx_mul", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    shutil.copytree(REPO / "assurance", root / "assurance",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))  # fmt: skip
    into = tmp_path / "copy"
    runner._make_copy(root, into)
    assert (into / COQ_REALIZATIONS / ".stamp").read_text() == "built\n"


# ---------------------------------------------------------------- the C glue's mutants
C = r"""/* a comment with < and 1 */
#define LIMIT (1 + \
               2)
#include <stdio.h>
static const char *MESSAGE = "a < b && 1";

static int clamp(const int *v, int n)
{
    int sizes[3] = {4, 5, 6};
    int total = 0;
    if (n < 0) {
        return -1;
    }
    for (int i = 0; i < n && total >= 0; i++) {
        if (v[i] == '<') { /* never > */
            break;
        }
        total += v[i]; // counted with -
    }
    return total + sizes[0];
}

static int other(int x)
{
    return x + 1;
}
"""


def test_c_mask_blanks_comments_strings_and_preprocessor_lines_keeping_offsets() -> None:
    code = c_code_mask(C)
    assert len(code) == len(C) and code.count("\n") == C.count("\n")
    assert "comment" not in code and "LIMIT" not in code and "2)" not in code  # continued
    assert "stdio" not in code and "a < b" not in code and "'<'" not in code
    assert "counted" not in code and "never" not in code
    assert "static int clamp(const int *v, int n)" in code
    assert set(c_functions(code)) == {"clamp", "other"}


def test_c_mask_reads_literals_and_comments_as_the_compiler_does() -> None:
    """What the lexer must get right: an escaped quote inside a string, comment
    markers inside a string or a character, a string inside a comment, a directive
    after a comment, a multi-line comment."""
    text = (
        "int a = f(\"x \\\" /* y\", '\"', '\\'');  // \"z\n"
        '/* "w" */ # define N 1\n'
        "/* v\n   u */ int b = c < d;\n"
    )
    code = c_code_mask(text)
    lines = code.split("\n")
    assert len(code) == len(text) and len(lines) == len(text.split("\n")) == 5
    assert lines[0].split() == ["int", "a", "=", "f(", ",", ",", ");"]
    assert lines[1].strip() == lines[2].strip() == ""  # a directive after a comment
    assert lines[3].split() == ["int", "b", "=", "c", "<", "d;"]


def test_c_mutants_cover_the_operators_in_the_named_functions_only() -> None:
    found = c_mutants("g.c", C, ("clamp",))
    changes = _changes(found)
    assert {("<", "<="), (">=", ">"), ("==", "!="), ("&&", "||"), ("+=", "-=")} <= changes
    assert {("+", "-"), ("-", "+"), ("0", "1"), ("4", "5")} <= changes  # `-1`'s sign too
    deleted = {m.original for m in found if m.replacement == ";"}
    assert deleted == {"return -1;", "break;", "total += v[i];"}  # early return, break, effect
    # never the last return (falls off the end), a declaration, the array's declared size,
    # the comments, the string, the character literal, the preprocessor lines, `other`
    assert ("3", "4") not in changes
    lines = C.splitlines()
    for m in found:
        assert m.function == "clamp"
        assert 8 <= m.line <= 21, m  # clamp's body
        assert m.line != 10 or m.original == "0", m  # `int total = 0;`: its 0, not deleted
        assert lines[m.line - 1].strip() == m.context
        mutated = m.apply(C)
        assert mutated != C and c_code_mask(mutated).count("'") == 0
    with pytest.raises(ValueError, match="no definition of missing"):
        c_mutants("g.c", C, ("clamp", "missing"))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc")
def test_every_c_mutant_of_the_snippet_compiles(tmp_path: Path) -> None:
    for i, m in enumerate(c_mutants("g.c", C, ("clamp",))):
        source = tmp_path / f"m{i}.c"
        source.write_text(m.apply(C) + "int use(void) { return clamp(0, 0) + other(0); }\n")
        proc = subprocess.run(
            ["gcc", "-fsyntax-only", "-std=c99", "-Wall", "-Werror", str(source)],
            capture_output=True, text=True,
        )  # fmt: skip
        assert proc.returncode == 0, (m, proc.stderr)


def test_c_mutants_are_shared_evenly_among_the_functions() -> None:
    text = C + "static int many(int x)\n{\n" + "    x = x + 1 - 2;\n" * 10 + "    return x;\n}\n"
    found = c_mutants("g.c", text, ("other", "many"))
    per = {f: sum(m.function == f for m in found) for f in ("other", "many")}
    assert per == {"other": 2, "many": 50}  # `+`, `1`; per line `+`, `1`, `-`, `2`, deletion
    chosen = spread_functions(found, 10)
    assert [m.function for m in chosen].count("other") == 2  # all it has; the rest to many
    assert len(chosen) == 10 and len({m.key for m in chosen}) == 10
    lines = {m.line for m in chosen if m.function == "many"}
    assert len(lines) >= 7  # spread over its lines, not its first ones


def test_the_glue_functions_exist_and_have_mutants_and_the_tests_exist() -> None:
    glue = TARGETS.glue
    found = c_mutants(GLUE, (REPO / GLUE).read_text(), glue.functions)
    assert {m.function for m in found} == set(glue.functions)
    assert all((REPO / t).is_file() for t in glue.tests)
    assert "tests/operator/test_glue_boundaries.py" in glue.tests
    generated = generate(REPO, TARGETS, 0, 0, [GLUE])
    assert len(generated) == glue.max < len(found)
    check = runner.checks_for(GLUE, None, TARGETS)[0][0]
    assert check[-len(glue.tests) :] == list(glue.tests)


def test_the_glue_build_finds_the_glue_compile_and_the_link() -> None:
    commands = [
        ["gcc", "-c", "native/src/sonnx_mul_int.c", "-o", "b/int.o"],
        ["gcc", "-DX", "-c", glue_build.GLUE, "-o", "b/glue.o", "-O2"],
        ["gcc", "-shared", "b/glue.o", "b/int.o", "-o", "lib/_native.so"],
    ]
    assert glue_build.glue_commands(commands, "lib/_native.so") == (commands[1], commands[2])
    with pytest.raises(glue_build.GlueBuildError, match="found 1 and 0"):
        glue_build.glue_commands(commands, "lib/other.so")


class FakeGlueBuild:
    """Stands for the copy's extension build: 'compiles' the glue with gcc -fsyntax-only."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.rebuilt = self.restored = 0

    def rebuild(self) -> tuple[bool, str]:
        self.rebuilt += 1
        text = (self.root / glue_build.GLUE).read_text()
        return ("broken" not in text), "error: broken"

    def restore(self) -> None:
        self.restored += 1


def test_a_glue_mutant_that_does_not_compile_is_invalid_and_the_copy_restored(
    tmp_path: Path,
) -> None:
    glue = tmp_path / glue_build.GLUE
    glue.parent.mkdir(parents=True)
    glue.write_text(C)
    build = FakeGlueBuild(tmp_path)
    m = Mutant(glue_build.GLUE, 9, C.index("4,"), C.index("4,") + 1, "4", "broken", "", 0)
    outcome = runner.run_mutant(tmp_path, m, {}, TARGETS, build)  # type: ignore[arg-type]
    assert (outcome.status, outcome.detail) == ("invalid", "error: broken")
    assert glue.read_text() == C and (build.rebuilt, build.restored) == (1, 1)


FAKE_TARGETS = f"""
[python]

[glue]
file = "{glue_build.GLUE}"
functions = ["clamp"]
tests = ["tests/test_glue.py"]
max = 1
"""


def _fake_repository(root: Path, test_body: str) -> None:
    """A tree the driver can run on: the glue, stand-ins for the packages its copy probe
    imports (the extension as a plain module), one test for the glue and the targets:
    the glue's function ``clamp``, against that test."""
    files = {
        glue_build.GLUE: C,
        "src/sonnx_mul/__init__.py": "",
        "src/sonnx_mul/_native.py": "",
        "assurance/sonnx_mul_assurance/__init__.py": "",
        "assurance/sonnx_mul_assurance/report/__init__.py": "",
        "tests/test_glue.py": test_body,
        str(targets.TARGETS): FAKE_TARGETS,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_negative_control_a_surviving_glue_mutant_not_listed_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver end to end on a planted survivor (the glue's test checks nothing):
    the run fails until the mutant is listed as equivalent; a test that sees the
    change kills it. No extension is built (the build is a stand-in)."""
    monkeypatch.setattr(glue_build, "prepare", FakeGlueBuild)
    root = tmp_path / "repo"
    _fake_repository(root, "def test_nothing():\n    pass\n")
    args = ["--root", str(root), "--file", glue_build.GLUE, "--max-c", "1", "--jobs", "1"]
    args += ["--out", "out.json"]
    assert cli.main(args) == 1
    data = json.loads((root / "out.json").read_text())
    assert (data["mutants"], data["survived"], data["killed"], data["invalid"]) == (1, 1, 0, 0)
    key = data["outcomes"][0]["key"]
    (root / cli.EQUIVALENT).parent.mkdir(parents=True)
    (root / cli.EQUIVALENT).write_text(json.dumps({key: {"reason": "planted"}}))
    assert cli.main(args) == 0
    assert json.loads((root / "out.json").read_text())["equivalent"] == 1
    (root / cli.EQUIVALENT).unlink()
    _fake_repository(  # the test now compares the glue with the original: the mutant dies
        root,
        "from pathlib import Path\n\ndef test_glue():\n"
        f"    assert Path({glue_build.GLUE!r}).read_text() == {C!r}\n",
    )
    assert cli.main(args) == 0
    assert json.loads((root / "out.json").read_text())["killed"] == 1


# ---------------------------------------------------------------- timeouts
def test_a_timeout_counts_only_against_a_baseline_within_half_the_limit() -> None:
    """A mutant's timeout is a kill only when the unmutated check took at most half the
    limit: a slower baseline, a failing one or one that timed out refuses the run."""
    limit = targets.DEFAULT_PY_TIMEOUT
    assert runner.baseline_refusal("pass", "", limit / 2, limit) is None
    slow = runner.baseline_refusal("pass", "", limit / 2 + 1, limit)
    assert slow is not None and "would not show a hang" in slow
    timed_out = runner.baseline_refusal("timeout", "", limit, limit)
    assert timed_out is not None and "timed out" in timed_out
    failed = runner.baseline_refusal("fail", "1 failed", 1.0, limit)
    assert failed is not None and "1 failed" in failed


def test_the_summary_counts_timeouts_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert report(tmp_path, [_outcome("killed"), _outcome("timeout")], 1.0) == 0
    assert "killed 2 (1 by timeout)" in capsys.readouterr().out


def test_a_timeout_is_a_kill_only_if_the_unmutated_check_is_still_fast() -> None:
    """After a mutant's timeout the unmutated check runs again: within half the limit,
    the timeout stands (the mutant was more than twice as slow); slower, the load grew
    and the mutant is a survivor, never a kill."""
    limit = targets.DEFAULT_PY_TIMEOUT
    assert runner.timeout_verdict("pass", "", limit / 4, limit)[0] == "timeout"
    status, detail = runner.timeout_verdict("pass", "", limit * 0.9, limit)
    assert status == "survived" and "not a kill" in detail
    assert runner.timeout_verdict("timeout", "", limit, limit)[0] == "survived"


def test_run_mutant_judges_a_timeout_on_the_restored_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run_mutant re-runs the timed-out check on the unmutated file (restored first)."""
    target = "src/sonnx_mul/models/wire.py"
    (tmp_path / "src/sonnx_mul/models").mkdir(parents=True)
    (tmp_path / target).write_text("LIMIT = 1 << 16\n")
    mutant = next(m for m in python_mutants(target, "LIMIT = 1 << 16\n") if m.original == "<<")
    seen: list[str] = []

    def fake_run(argv: list[str], cwd: Path, env: dict[str, str], timeout: int) -> tuple[str, str]:
        seen.append((cwd / target).read_text())
        return ("timeout", "") if len(seen) == 1 else ("pass", "")

    monkeypatch.setattr(runner, "_run", fake_run)
    slow = 0.9 * TARGETS.python[target].timeout  # past half the file's limit
    clock = iter([0.0, 0.0, slow])  # the mutant's start, the re-run's start and end
    monkeypatch.setattr(runner.time, "monotonic", lambda: next(clock, slow))
    outcome = runner.run_mutant(tmp_path, mutant, {}, TARGETS)
    assert seen == ["LIMIT = 1 >> 16\n", "LIMIT = 1 << 16\n"]
    assert outcome.status == "survived" and "not a kill" in outcome.detail


@pytest.mark.parametrize("profile", ["ci", "long", "mutants"])
def test_no_hypothesis_profile_lets_the_clock_decide(profile: str) -> None:
    """No deadline and no "too slow" health check in any profile (tests/conftest.py):
    the same test passes with four busy loops beside it; a test's own @settings
    inherit both. The mutants profile replays the same examples and stops at the first
    failing one."""
    from hypothesis import HealthCheck, Phase, settings

    chosen = settings.get_profile(profile)
    assert chosen.deadline is None
    assert HealthCheck.too_slow in chosen.suppress_health_check
    if profile == "mutants":
        assert chosen.derandomize and chosen.database is None
        assert Phase.shrink not in chosen.phases
    inherited = settings(chosen, max_examples=3)
    assert inherited.deadline is None
    assert HealthCheck.too_slow in inherited.suppress_health_check
