"""The verifier's rules as a command: which calls of ``sonnx-mul`` reach it (every
spelling of ``verify-install``, and no other call), its errors (one line, or one JSON
object when JSON is asked for in any spelling), its exit codes and caps, and the
launcher it is reached through (the console script, the installed command).

Fails when the rule is broken by hand: a spelling of ``verify-install`` handed to
the package.

Part of the verifier's rules pinned one by one in this process (the
``test_verify_rules_*.py`` files: the mutants of ``sonnx_mul_verify`` run
against them first); each test names the rule it holds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import sonnx_mul_verify as v
from sonnx_mul.cli import COMMANDS
from support import LAUNCHER, launcher

REPORT = "r.json"


@pytest.mark.parametrize(
    ("argv", "verifier_args"),
    [
        (["verify-install", REPORT], [REPORT]),
        (["--", "verify-install", REPORT], [REPORT]),
        (["verify", REPORT], [REPORT]),
        (["v", REPORT], [REPORT]),
        (["verify-i", REPORT, "--allow-hook", "ab"], [REPORT, "--allow-hook", "ab"]),
        (["--format", "json", "verify-install", REPORT], ["--format", "json", REPORT]),
        (["--format=json", "--", "verify-install", REPORT], ["--format=json", REPORT]),
        (["--bogus", "verify-install", "v"], ["--bogus", "v"]),
        (["verify-install"], []),
    ],
)
def test_every_spelling_of_verify_install_reaches_the_verifier(
    argv: list[str], verifier_args: list[str]
) -> None:
    assert v.verify_install_arguments(argv) == verifier_args


@pytest.mark.parametrize(
    "argv",
    [
        [], ["--help"], ["--version"], ["check", "v"], ["run", "m.onnx", "--out", "verify"],
        ["selftest"], ["--format", "json", "check", "m.onnx"], ["bogus"], ["report", "--out", "v"],
    ],
)  # fmt: skip
def test_other_calls_go_to_the_package(argv: list[str]) -> None:
    assert v.verify_install_arguments(argv) is None


def test_the_dispatcher_knows_the_products_commands() -> None:
    assert set(v.PRODUCT_COMMANDS) == {c.name for c in COMMANDS} - {v.COMMAND}
    assert "report" in v._other_commands()  # a plugin, from its metadata


@pytest.mark.parametrize(
    ("argv", "wanted"),
    [
        (["--format", "json"], True), (["--format=json"], True), (["--form", "json"], True),
        (["--f=json"], True), (["x", "--format", "text"], False), (["--format"], False),
        (["--fox", "json"], False), (["-f", "json"], False), (["json"], False),
    ],
)  # fmt: skip
def test_json_is_requested_in_every_spelling(argv: list[str], wanted: bool) -> None:
    assert v.json_requested(argv) is wanted


def test_errors_are_one_line_or_one_json_object() -> None:
    assert v.error_text("cannot\n read", 2, False) == "sonnx-mul: error: cannot read"
    assert json.loads(v.error_text("cannot\n read", 2, True)) == {
        "error": "cannot read",
        "exit_code": 2,
    }


def test_verify_install_errors_honour_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main = launcher().main
    assert main(["--format", "json", "verify-install", str(tmp_path / "none.json")], v) == 2
    out, err = capsys.readouterr()
    doc = json.loads(err)
    assert out == "" and doc["exit_code"] == 2 and "cannot read" in doc["error"]
    assert main(["verify-install", "--format", "json"], v) == 2  # no REPORT: a wrong call
    assert json.loads(capsys.readouterr().err)["exit_code"] == 2
    assert main(["verify-install", str(tmp_path / "none.json")], v) == 2
    assert capsys.readouterr().err.startswith("sonnx-mul: error: cannot read")


def test_the_exit_codes_are_the_documented_ones() -> None:
    codes = (v.EXIT_OK, v.EXIT_MISMATCH, v.EXIT_UNREADABLE, v.EXIT_GATE_FAILED)
    assert codes == (0, 1, 2, 3)
    assert (v.EXIT_INTERRUPTED, v.EXIT_BROKEN_PIPE) == (130, 141)


def test_the_caps_are_the_documented_ones() -> None:
    """A report is refused over 256 MiB, a cache or a hook file over 64 MiB."""
    assert (v.MAX_REPORT_BYTES, v.MAX_CACHE_BYTES) == (256 * 2**20, 64 * 2**20)


@pytest.mark.parametrize(
    ("error", "code", "line"),
    [
        (KeyboardInterrupt(), 130, "sonnx-mul: error: interrupted"),
        (MemoryError(), 1, "sonnx-mul: error: not enough memory"),
        (RuntimeError("boom"), 1, "sonnx-mul: error: internal error: RuntimeError: boom"),
    ],
)
def test_every_failure_of_the_verifier_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: BaseException,
    code: int,
    line: str,
) -> None:
    def fail(*args: object, **kwargs: object) -> int:
        raise error

    monkeypatch.setattr(v, "verify", fail)
    assert v.verify_install_main(["r.json"]) == code
    out, err = capsys.readouterr()
    assert (out, err) == ("", line + "\n")
    assert v.verify_install_main(["r.json", "--format", "json"]) == code
    assert json.loads(capsys.readouterr().err)["exit_code"] == code


def test_help_and_a_closed_stdout(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert v.verify_install_main(["--help"]) == 0
    assert "REPORT.json" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdout", None)
    assert v.verify_install_main(["r.json"]) == 2
    assert "standard output is closed" in capsys.readouterr().err


def test_an_interrupt_at_start_up_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(args: list[str], verifier: ModuleType) -> int:
        raise KeyboardInterrupt

    launched = launcher()
    monkeypatch.setattr(launched, "product", interrupted)
    assert launched.main(["check", "--format", "json", "m.onnx"], v) == 130
    assert json.loads(capsys.readouterr().err) == {"error": "interrupted", "exit_code": 130}


def test_other_subcommands_go_to_the_package(capsys: pytest.CaptureFixture[str]) -> None:
    assert launcher().main(["--version"], v) == 0
    assert capsys.readouterr().out.startswith("sonnx-mul ")


def test_the_console_script_reads_its_arguments_and_keeps_its_exit_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``run()`` reads ``sys.argv[1:]`` and, as the process's last act, ignores SIGINT
    (the decided code must not become a traceback); ``main(argv, v)`` leaves SIGINT alone."""
    launched = launcher()
    handlers: list[object] = []
    monkeypatch.setattr(launched.signal, "signal", lambda sig, handler: handlers.append(handler))
    monkeypatch.setattr(launched, "verifier", lambda: v)
    monkeypatch.setattr(sys, "argv", ["sonnx-mul", "--version"])
    assert launched.run() == 0
    assert capsys.readouterr().out.startswith("sonnx-mul ")
    assert handlers == [launched.signal.SIG_IGN]
    handlers.clear()
    assert launched.main(["--version"], v) == 0
    assert handlers == []


def test_the_file_runs_as_the_hardened_verifier() -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(v.__file__), "--help"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m sonnx_mul_verify [-h]")


def test_the_installed_command_is_the_launcher() -> None:
    """The command the attack tests run (``bin/sonnx-mul``) is the launcher's source but
    for the shebang pip writes: make install reinstalls when it changes."""
    installed = Path(sys.executable).parent / "sonnx-mul"

    def body(path: Path) -> str:
        return path.read_text(encoding="utf-8").partition("\n")[2]

    assert body(installed) == body(LAUNCHER)
    assert body(installed) != body(LAUNCHER) + "\n"  # control: a change is seen
