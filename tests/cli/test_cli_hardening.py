"""The command line against hostile files, a closed stdout and broken plugins (issue 19).

Every file a user names (model, ``.npy`` input, external data, IR, report)
goes through :func:`sonnx_mul.regular.open_regular`: a FIFO, a device or a
directory is one line on stderr and exit 2, promptly. A closed stdout is one
line and exit 2, not a traceback. Plugin subcommands are imported only when
invoked, and one that cannot be loaded is one line and exit 2.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from models import external_initializer, mul_model, vi
from sonnx_mul import cli
from sonnx_mul.cli import main

EXIT_USAGE = 2


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def one_line_exit_2(argv: list[str], needle: str) -> None:
    code, out, err = run_cli(argv)
    assert code == EXIT_USAGE and out == "", (code, out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("sonnx-mul: error: "), err
    assert needle in lines[0], err


def within(seconds: float, action: Callable[[], None]) -> None:
    """Run ``action`` in a thread; fail with "blocked" if it is still running after ``seconds``."""
    done = threading.Event()
    errors: list[BaseException] = []

    def go() -> None:
        try:
            action()
        except BaseException as exc:  # re-raised below
            errors.append(exc)
        finally:
            done.set()

    threading.Thread(target=go, daemon=True).start()
    assert done.wait(seconds), "blocked"
    if errors:
        raise errors[0]


@contextlib.contextmanager
def fifo(path: Path) -> Iterator[Path]:
    """A FIFO without a writer; on exit, a reader still blocked in open() is released."""
    os.mkfifo(path)
    try:
        yield path
    finally:
        with contextlib.suppress(OSError):  # ENXIO: no reader is waiting, nothing to release
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


@pytest.fixture()
def good_model(tmp_path: Path) -> Path:
    path = tmp_path / "good.onnx"
    onnx.save(mul_model(), path)
    return path


def npy(path: Path, shape: tuple[int, ...] = (2, 3)) -> str:
    np.save(path, np.ones(shape, np.float32), allow_pickle=False)
    return str(path)


# ---------------------------------------------------------------- files of `run`
@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_run_refuses_a_non_regular_input_promptly(
    good_model: Path, tmp_path: Path, kind: str
) -> None:
    y = npy(tmp_path / "y.npy")
    out = str(tmp_path / "out")
    with fifo(tmp_path / "x.npy") as pipe:
        target = {"fifo": str(pipe), "device": "/dev/zero", "directory": str(tmp_path)}[kind]
        argv = ["run", str(good_model), "--input", f"x={target}", "--input", f"y={y}", "--out", out]
        expected = {"fifo": "a FIFO", "device": "a character device", "directory": "a directory"}
        within(30, lambda: one_line_exit_2(argv, f"is {expected[kind]}, not a regular file"))
    assert not (tmp_path / "out").exists()


def test_negative_control_a_plain_open_of_the_input_blocks(
    good_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the helper replaced by a plain open(), the same call hangs: the test above can fail."""
    from sonnx_mul.cli import files

    monkeypatch.setattr(files, "open_regular", lambda path: open(path, "rb"))  # noqa: SIM115
    y = npy(tmp_path / "y.npy")
    model = onnx.load(good_model)
    with fifo(tmp_path / "x.npy") as pipe, pytest.raises(AssertionError, match="blocked"):
        within(2, lambda: files.read_inputs(model, {"x": str(pipe), "y": y}) and None)


def test_run_refuses_external_data_that_is_a_fifo(tmp_path: Path) -> None:
    node = h.make_node("Mul", ["x", "w"], ["z"], name="the_mul")
    graph = h.make_graph(
        [node], "g", [vi("x", T.FLOAT, (2, 3))], [vi("z", T.FLOAT, (2, 3))],
        initializer=[external_initializer("w.bin")],
    )  # fmt: skip
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 14)])
    m.ir_version = 10
    path = tmp_path / "ext.onnx"
    path.write_bytes(m.SerializeToString())
    x = npy(tmp_path / "x.npy")
    with fifo(tmp_path / "w.bin"):
        argv = ["run", str(path), "--input", f"x={x}", "--out", str(tmp_path / "out")]
        within(30, lambda: one_line_exit_2(argv, "is a FIFO, not a regular file"))


@pytest.mark.parametrize("suffix", [".onnx", ".xml"])
def test_run_and_check_refuse_a_fifo_model(tmp_path: Path, suffix: str) -> None:
    with fifo(tmp_path / f"m{suffix}") as pipe:
        within(30, lambda: one_line_exit_2(["check", str(pipe)], "is a FIFO"))
        if suffix == ".onnx":
            within(30, lambda: one_line_exit_2(["run", str(pipe)], "is a FIFO"))


def test_verify_install_refuses_a_fifo_report(tmp_path: Path) -> None:
    with fifo(tmp_path / "report.json") as pipe:
        within(30, lambda: one_line_exit_2(["verify-install", str(pipe)], "is a FIFO"))


# ---------------------------------------------------------------- closed stdout
def sonnx_mul(argv: list[str], close: tuple[int, ...] = (1,)) -> subprocess.CompletedProcess[str]:
    """``sonnx-mul ARGV`` in a subprocess started with the file descriptors ``close`` closed."""
    code = "import sys; from sonnx_mul.cli import main; sys.exit(main(sys.argv[1:]))"

    def closing() -> None:
        for fd in close:
            os.close(fd)

    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        stdout=subprocess.PIPE if 1 not in close else None,
        stderr=subprocess.PIPE if 2 not in close else None,
        text=True, timeout=120, check=False, preexec_fn=closing,
    )  # fmt: skip


@pytest.mark.parametrize("which", ["good", "bad", "json"])
def test_check_with_stdout_closed_is_one_line_exit_2(tmp_path: Path, which: str) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(mul_model() if which != "bad" else mul_model((2, 3), (3,)), path)
    argv = ["check", str(path), *(["--format", "json"] if which == "json" else [])]
    done = sonnx_mul(argv)
    assert done.returncode == EXIT_USAGE, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "standard output is closed" in lines[0], done.stderr
    assert lines[0].startswith('{"error"' if which == "json" else "sonnx-mul: error: ")


def test_negative_control_stdout_open_the_same_check_conforms(good_model: Path) -> None:
    done = sonnx_mul(["check", str(good_model)], close=())
    assert done.returncode == 0 and "conforms" in done.stdout and done.stderr == ""


def test_stdout_and_stderr_closed_leave_only_the_exit_code(good_model: Path) -> None:
    done = sonnx_mul(["check", str(good_model)], close=(1, 2))
    assert done.returncode == EXIT_USAGE


# ---------------------------------------------------------------- plugins
LOADED = (
    "import sys; from sonnx_mul.cli import main; code = main(sys.argv[1:]); "
    "print('LOADED', sorted(m for m in sys.modules if m.startswith('sonnx_mul_assurance')), "
    "file=sys.stderr); sys.exit(code)"
)


def loaded_tooling(argv: list[str]) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-c", LOADED, *argv],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def test_check_and_help_do_not_import_the_tooling(good_model: Path) -> None:
    code, out, err = loaded_tooling(["check", str(good_model)])
    assert code == 0 and "LOADED []" in err, err
    code, out, err = loaded_tooling(["--help"])
    assert code == 0 and "LOADED []" in err, err
    assert "prove" in out and "report" in out and "sonnx-mul-assurance" in out


def test_negative_control_invoking_a_plugin_imports_it() -> None:
    """The probe above sees an import: invoking the plugin does load the tooling."""
    code, out, err = loaded_tooling(["report", "--help"])
    assert code == 0 and "'sonnx_mul_assurance.commands'" in err, err
    assert "--out" in out


def broken(monkeypatch: pytest.MonkeyPatch, *entries: tuple[str, str]) -> None:
    found = [EntryPoint(name, value, cli.PLUGIN_GROUP) for name, value in entries]
    monkeypatch.setattr(
        cli, "entry_points", lambda group: found if group == cli.PLUGIN_GROUP else []
    )


def test_a_plugin_that_fails_to_load_is_one_line_exit_2(
    monkeypatch: pytest.MonkeyPatch, good_model: Path
) -> None:
    broken(
        monkeypatch,
        ("conform", "no_such_module_sonnx:COMMAND"),
        ("fake", "sonnx_mul.errors:ProfileError"),
    )
    one_line_exit_2(["conform", "--help"], "cannot load subcommand 'conform'")
    one_line_exit_2(["fake"], "is not a sonnx_mul.cli.errors.Command named 'fake'")
    code, out, _ = run_cli(["check", str(good_model)])  # the others still work
    assert code == 0 and "conforms" in out
    code, out, _ = run_cli(["--help"])
    assert code == 0 and "conform" in out


def test_a_plugin_cannot_take_a_product_command_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    broken(monkeypatch, ("verify-install", "no_such_module_sonnx:COMMAND"))
    assert [p.name for p in cli.plugin_commands()] == []
    code, _, err = run_cli(["verify-install", str(tmp_path / "missing.json")])
    assert code == EXIT_USAGE and "cannot read" in err and "cannot load" not in err


# ---------------------------------------------------------------- the error contract at start-up
SCRIPT = Path(sys.executable).parent / "sonnx-mul"


@pytest.mark.parametrize(
    ("variable", "argv"),
    [
        ("SONNX_MUL_ISA", ["check", "m.onnx", "--format", "json"]),
        ("SONNX_MUL_KERNEL", ["check", "--format=json", "m.onnx"]),
        ("SONNX_MUL_ISA", ["selftest", "--format", "json"]),
        ("SONNX_MUL_KERNEL", ["--format", "json", "run", "m.onnx"]),
        ("SONNX_MUL_ISA", ["check", "m.onnx", "--form", "json"]),
    ],
)
def test_a_start_up_error_honours_json(variable: str, argv: list[str]) -> None:
    """A package that refuses to import (a wrong variable) is the JSON error object
    when the call asks for JSON, one line on stderr, exit 2."""
    env = {k: x for k, x in os.environ.items() if not k.startswith("SONNX_MUL_")}
    done = subprocess.run(
        [str(SCRIPT), *argv], capture_output=True, text=True, timeout=120, check=False,
        env={**env, variable: "bogus"}, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == EXIT_USAGE and done.stdout == "", done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    doc = json.loads(lines[0])
    # the variable and its value named (the kernel's check quotes it, the glue's not)
    assert doc["exit_code"] == EXIT_USAGE and re.search(f"{variable}='?bogus", doc["error"])
    text = subprocess.run(
        [str(SCRIPT), "check", "m.onnx"], capture_output=True, text=True, timeout=120,
        check=False, env={**env, variable: "bogus"}, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert text.stderr.startswith("sonnx-mul: error: cannot start: ")  # control: text by default
