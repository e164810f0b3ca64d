"""make test's recorded run and make prove's reuse of it (``sonnx_mul_assurance.suite``).

A whole, passing run of an unchanged tree is recorded and its JUnit taken by
make prove without running the tests again; the report names that run.
Negative controls: a changed file, an untracked file, an untracked failing
test that git ignores (``.gitignore`` or ``.git/info/exclude``), an ignored
module a test imports, a changed environment variable the suite reads, a
tampered JUnit, a narrowed run and a failing run each leave make prove to
run the suite itself; a directory that is not a git work tree's top has no
fingerprint.  The trees here are
small git repositories with one test file that counts its runs in a file
outside the tree.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sonnx_mul_assurance import suite
from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.report import protocol

TEST_FILE = """\
import os, pathlib

def test_counts():
    log = pathlib.Path(os.environ["SUITE_REUSE_LOG"])
    log.write_text(log.read_text() + "x" if log.exists() else "x")
    assert not pathlib.Path(os.environ["SUITE_REUSE_LOG"] + ".fail").exists()
"""


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "tree"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_counted.py").write_text(TEST_FILE)
    (root / ".gitignore").write_text("proofs/out/\n__pycache__/\n.pytest_cache/\n")
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "."], cwd=root, check=True)
    monkeypatch.setenv("SUITE_REUSE_LOG", str(tmp_path / "runs.log"))
    monkeypatch.delenv("SONNX_MUL_ISA", raising=False)
    # one process: two xdist workers for one test would only add their start-up
    monkeypatch.setattr(suite, "PYTEST_ARGS", ("-m", "pytest", "-q", "-p", "no:cacheprovider"))
    return root


def runs(root: Path) -> int:
    log = root.parent / "runs.log"
    return len(log.read_text()) if log.exists() else 0


def prove(root: Path) -> Path:
    junit = root / "proofs" / "out" / "pytest.xml"
    assert suite.prove_step(root, junit) == 0
    return junit


def test_a_whole_passing_run_is_recorded_and_taken_by_make_prove(tree: Path) -> None:
    assert suite.run_suite(tree) == 0 and runs(tree) == 1
    run = schema.load(schema.SuiteRun, tree / suite.RECORD)
    assert run.fingerprint == suite.fingerprint(tree)
    junit = prove(tree)
    assert runs(tree) == 1  # not run again
    assert junit.read_bytes() == (tree / suite.JUNIT).read_bytes()
    origin = schema.load(schema.SuiteRun, junit.parent / suite.ORIGIN)
    assert origin == run
    context = protocol.Context(tree, junit.parent, [], frozenset())
    shown = protocol.BY_KEY["pytest"].read(junit, context).origin
    assert shown is not None and run.finished in shown and run.fingerprint[:16] in shown


@pytest.mark.parametrize("change", ["tracked file", "untracked file", "environment"])
def test_a_changed_tree_or_environment_is_run_again(
    tree: Path, change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert suite.run_suite(tree) == 0
    before = suite.fingerprint(tree)
    if change == "tracked file":
        with (tree / "tests" / "test_counted.py").open("a") as f:
            f.write("# edited\n")
    elif change == "untracked file":
        (tree / "notes.txt").write_text("new\n")
    else:
        monkeypatch.setenv("SONNX_MUL_ISA", "portable")
    assert suite.fingerprint(tree) != before
    junit = prove(tree)
    assert runs(tree) == 2  # make prove ran the suite itself
    assert junit.is_file() and not (junit.parent / suite.ORIGIN).exists()


FAILING_TEST = "def test_fails():\n    assert False\n"


@pytest.mark.parametrize("how", [".gitignore", ".git/info/exclude"])
def test_an_ignored_failing_test_is_run_by_make_prove(tree: Path, how: str) -> None:
    # pytest collects a test file the tree ignores (test_mine.py below) whatever git says of it: the
    # suite make test passed is not the suite of this tree
    with (tree / how).open("a") as f:
        f.write("tests/local/\n")
    assert suite.run_suite(tree) == 0
    before = suite.fingerprint(tree)
    assert suite.reusable(tree)[0] is not None  # the negative control: taken as it is
    (tree / "tests" / "local").mkdir()
    (tree / "tests" / "local" / "test_mine.py").write_text(FAILING_TEST)
    listed = subprocess.run(["git", "status", "--porcelain"], cwd=tree, capture_output=True)
    assert b"local" not in listed.stdout  # git does not list it
    assert suite.fingerprint(tree) != before
    run, why = suite.reusable(tree)
    assert run is None and "changed" in why
    junit = tree / "proofs" / "out" / "pytest.xml"
    assert suite.prove_step(tree, junit) != 0  # make prove ran the suite: it fails
    assert runs(tree) == 2 and "test_fails" in junit.read_text()


def test_an_ignored_module_a_test_imports_changes_the_fingerprint(tree: Path) -> None:
    # a module at the top of the tree, importable by `python -m pytest`, ignored by git
    (tree / ".gitignore").write_text((tree / ".gitignore").read_text() + "helper.py\n")
    (tree / "helper.py").write_text("VALUE = 1\n")
    assert suite.run_suite(tree) == 0
    before = suite.fingerprint(tree)
    (tree / "helper.py").write_text("VALUE = 2\n")
    assert suite.fingerprint(tree) != before
    prove(tree)
    assert runs(tree) == 2


def test_ignored_files_pytest_cannot_reach_leave_the_fingerprint(tree: Path) -> None:
    # the rule's other side: files no test collects or imports (a folder
    # whose name is no identifier, a non-module outside the tests, caches)
    (tree / ".gitignore").write_text((tree / ".gitignore").read_text() + "build/\nnotes.txt\n")
    assert suite.run_suite(tree) == 0
    (tree / "build" / "copy-of-tree" / "tests").mkdir(parents=True)
    (tree / "build" / "copy-of-tree" / "tests" / "test_x.py").write_text(FAILING_TEST)
    (tree / "notes.txt").write_text("n\n")
    (tree / "tests" / "__pycache__").mkdir(exist_ok=True)
    (tree / "tests" / "__pycache__" / "x.pyc").write_bytes(b"0")
    # what the probe tests build during a run, from sources the fingerprint covers
    (tree / "build" / "bench").mkdir(parents=True)
    (tree / "build" / "bench" / "libprobe.so").write_bytes(b"\x7fELF")
    prove(tree)
    assert runs(tree) == 1  # taken, not run again


def test_what_pytest_reaches() -> None:
    tests = ("tests",)
    assert suite.reached("tests/local/test_a.py", tests)
    assert suite.reached("tests/data/table.csv", tests)  # the tests read it
    assert suite.reached("conftest.py", tests) and suite.reached("pytest.ini", tests)
    assert suite.reached("assurance/pkg/mod.py", tests)
    assert suite.reached("src/sonnx_mul/_native.cpython-311-x86_64-linux-gnu.so", tests)
    assert not suite.reached("tests/__pycache__/a.cpython-311.pyc", tests)
    assert not suite.reached("build/debian-python/src/x.py", tests)
    assert not suite.reached("build/bench/libf32_exact_avx2.so", tests)  # built by a test
    assert suite.reached("tools/bench/helper.so", tests)  # the same name elsewhere is reached
    assert not suite.reached(".venv/lib/site.py", tests)
    assert not suite.reached("proofs/out/report.html", tests)


def test_a_tampered_junit_is_not_taken(tree: Path) -> None:
    assert suite.run_suite(tree) == 0
    with (tree / suite.JUNIT).open("a") as f:
        f.write("<!-- edited -->\n")
    run, why = suite.reusable(tree)
    assert run is None and "JUnit" in why
    prove(tree)
    assert runs(tree) == 2


def test_a_narrowed_or_failing_run_leaves_no_record(tree: Path) -> None:
    assert suite.run_suite(tree, ["-k", "counts"]) == 0
    assert not (tree / suite.RECORD).exists()
    assert suite.run_suite(tree) == 0 and (tree / suite.RECORD).exists()
    (tree.parent / "runs.log.fail").write_text("")
    assert suite.run_suite(tree) != 0
    assert not (tree / suite.RECORD).exists()  # nor does the earlier record survive
    (tree.parent / "runs.log.fail").unlink()
    prove(tree)
    assert runs(tree) == 4


def test_no_fingerprint_outside_the_top_of_a_git_work_tree(tree: Path, tmp_path: Path) -> None:
    assert suite.fingerprint(tree / "tests") is None
    bare = tmp_path / "bare"
    bare.mkdir()
    assert suite.fingerprint(bare) is None
