"""What ``make check`` leaves out: exactly the tests marked ``needs_prover``, and every
test that starts an external prover or toolchain is marked (``tests/prover_audit.py``
fails it otherwise, in every run).

Negative controls: a planted test that starts a tool (a stand-in executable named
``why3``, by path) without the marker fails, in its body or in a fixture; marked, it
passes; a stand-in named ``gcc`` needs no marker.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from prover_audit import MARKER, tool_of

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"


@pytest.mark.parametrize(
    ("args", "tool"),
    [
        (["why3", "prove"], "why3"), ("/usr/bin/frama-c -wp", "frama-c"),
        ([Path("/usr/bin/cppcheck"), "--version"], "cppcheck"), (["clang-14", "-c"], "clang-14"),
        (["aarch64-linux-gnu-gcc", "-dumpmachine"], "aarch64-linux-gnu-gcc"),
        (["arm-linux-gnueabihf-gcc"], "arm-linux-gnueabihf-gcc"),
        (["qemu-riscv64", "x"], "qemu-riscv64"),
        (["cvc5"], "cvc5"), (["z3", "-in"], "z3"), (["gcc", "-c"], None), ([sys.executable], None),
        ("python3 -c pass", None), ([], None), (b"why3 --version", "why3"), (None, None),
    ],
)  # fmt: skip
def test_the_tools_are_told_by_the_name_they_are_started_by(args: object, tool: str | None) -> None:
    assert tool_of(args) == tool


PLANTED = """
import subprocess
import pytest

TOOL = {tool!r}
GCC = {gcc!r}


@pytest.fixture()
def started_at_set_up():
    subprocess.run([TOOL], check=True)


def test_unmarked():
    subprocess.run([TOOL, "--version"], check=True)


@pytest.mark.{marker}
def test_marked():
    subprocess.run([TOOL, "--version"], check=True)


def test_unmarked_in_a_fixture(started_at_set_up):
    pass


def test_gcc_needs_no_mark():
    subprocess.run([GCC], check=True)
"""


def outcomes(tmp_path: Path) -> tuple[dict[str, str], str]:
    """(test name -> PASSED/FAILED, output) of the planted tests under the audit plugin."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("why3", "gcc"):  # stand-ins: the real tools need not be installed
        (bin_dir / name).write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / name).chmod(0o755)
    planted = tmp_path / "test_planted.py"
    planted.write_text(
        PLANTED.format(tool=str(bin_dir / "why3"), gcc=str(bin_dir / "gcc"), marker=MARKER)
    )
    (tmp_path / "pytest.ini").write_text(f"[pytest]\nmarkers =\n    {MARKER}: planted\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "prover_audit", "-p", "no:cacheprovider",
         "-p", "no:xdist", "-rA", "-q", "--rootdir", str(tmp_path), "-c",
         str(tmp_path / "pytest.ini"), str(planted)],
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(TESTS)},
    )  # fmt: skip
    found = dict(
        (name, verdict)
        for verdict, name in re.findall(r"^(PASSED|FAILED|ERROR) \S+::(\w+)", done.stdout, re.M)
    )
    return found, done.stdout + done.stderr


def test_negative_control_a_tool_started_unmarked_fails_the_test(tmp_path: Path) -> None:
    found, output = outcomes(tmp_path)
    assert found == {
        "test_unmarked": "FAILED",
        "test_marked": "PASSED",
        "test_unmarked_in_a_fixture": "FAILED",
        "test_gcc_needs_no_mark": "PASSED",
    }, output
    assert f"test_unmarked started why3 but is not marked {MARKER}" in output


def test_make_check_deselects_the_marked_tests_and_runs_lint() -> None:
    """``make check``: lint, then pytest with ``-m "not needs_prover"``; no other rule
    uses that selection (``make test`` runs every test)."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    rule = re.search(r"^check: (.*)\n((?:\t.*\n)+)", makefile, re.M)
    assert rule, "no check rule in the Makefile"
    assert "lint" in rule.group(1).split()
    select = re.search(r"^CHECK_SELECT\s*:=\s*(.+)$", makefile, re.M)
    assert select and select.group(1).strip() == f'-m "not {MARKER}"'
    assert "-m pytest" in rule.group(2) and "$(CHECK_SELECT)" in rule.group(2)
    recipes = [line for line in makefile.splitlines() if line.startswith("\t")]
    uses = [line for line in recipes if "CHECK_SELECT)" in line or MARKER in line]
    assert uses == [line for line in rule.group(2).splitlines() if "CHECK_SELECT)" in line]
