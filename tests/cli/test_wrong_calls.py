"""Issue 29, item 3: one error contract for every subcommand and every way to call it.

The matrix is generated from the argparse parsers' own actions (product
subcommands through ``sonnx_mul.cli.build_parser``; ``verify-install`` through
the console script, the launcher ``scripts/sonnx-mul``): for every option and
positional, the faults that fit its kind (value missing, a value outside its
choices or range, a malformed spec, given twice or contradicting itself, a
positional missing or extra) must give ONE line on stderr and exit 2. A new
option is covered when it is added: its valid values must be listed in
``VALID`` (the test fails until they are), and every fault of its kind is
then generated. Environment faults (``SONNX_MUL_ISA``, ``SONNX_MUL_KERNEL``)
and a SIGINT at start-up (at the import of each heavy module) and at exit
run the real console script in a child process: exit 2 (130), one line.

The code before issue 29 failed this matrix: ``--dim batch=4 --dim batch=1``
kept the last binding (exit 0), ``--dim batch=2**70`` was "internal error:
ValueError" (exit 1), ``--format`` given twice kept the last, a bad
``SONNX_MUL_ISA`` or a SIGINT during the imports gave a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import sonnx_mul_verify
from sonnx_mul.cli import COMMANDS, build_parser
from sonnx_mul.models import ShapeBindingError, check_model
from support import LAUNCHER, launcher

# Valid values of every option, by (subcommand, dest): two different ones each,
# so that a repeat can contradict itself. An option missing here fails
# test_every_option_has_valid_values: a new option must be added to the matrix.
VALID: dict[tuple[str, str], tuple[str, str]] = {
    ("check", "format"): ("text", "json"),
    ("check", "dim"): ("batch=1", "batch=2"),
    ("check", "input_shape"): ("x=1,3", "x=2,3"),
    ("check", "undecided_exit"): ("3", "4"),
    ("run", "input"): ("x={x}", "x={y}"),
    ("run", "out"): ("{out}", "{out2}"),
    ("run", "engine"): ("onnxruntime", "reference"),
    ("verify-install", "allow_hook"): ("0" * 64, "1" * 64),
    ("verify-install", "format"): ("text", "json"),
}
# Repeatable by design: the same value twice means the same thing (a set of hashes).
REPEATABLE = {("verify-install", "allow_hook")}
# Malformed values per kind of option (what argparse alone would accept).
MALFORMED_SPECS = ["noequals", "=1", "batch=", "batch=-1", f"batch={2**63}", f"batch={2**70}",
                   "batch=1e3", "batch=٣"]  # fmt: skip
MALFORMED_INTS = ["abc", "-1", "0", "2", "126", str(2**63), str(2**70), "1.5"]


@dataclass
class Fixture:
    model: Path
    x: Path
    y: Path
    out: Path
    out2: Path

    def fill(self, text: str) -> str:
        return text.format(x=self.x, y=self.y, out=self.out, out2=self.out2)


@pytest.fixture
def files(tmp_path: Path) -> Fixture:
    vi = h.make_tensor_value_info
    graph = h.make_graph(
        [h.make_node("Mul", ["x", "y"], ["z"], name="m")], "g",
        [vi("x", T.FLOAT, ["batch", 3]), vi("y", T.FLOAT, ["batch", 3])],
        [vi("z", T.FLOAT, ["batch", 3])],
    )  # fmt: skip
    model = tmp_path / "m.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 14)]), model)
    x, y = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(x, np.ones((1, 3), np.float32))
    np.save(y, np.ones((1, 3), np.float32))
    return Fixture(model, x, y, tmp_path / "out", tmp_path / "out2")


def baseline(command: str, f: Fixture) -> list[str]:
    """A valid call of ``command`` (exit 0), the faults are added to."""
    return {
        "check": [command, str(f.model)],
        "run": [command, str(f.model), "--input", f"x={f.x}", "--input", f"y={f.y}",
                "--out", str(f.out)],
        "selftest": [command],
        "verify-install": [command, str(f.model)],  # not a report: exit 2 already (see below)
    }[command]  # fmt: skip


def subparsers() -> dict[str, argparse.ArgumentParser]:
    """Every product subcommand's parser, and verify-install's (the verifier's own)."""
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found = {c.name: action.choices[c.name] for c in COMMANDS}
    found["verify-install"] = sonnx_mul_verify.parser()
    return found


def faults(command: str, p: argparse.ArgumentParser, f: Fixture) -> list[tuple[str, list[str]]]:
    """(label, argv) of every wrong call the actions of ``p`` allow (module doc)."""
    base = baseline(command, f)
    out: list[tuple[str, list[str]]] = [
        ("unknown option", [*base, "--no-such-option"]),
        ("unknown option=value", [*base, "--no-such-option=1"]),
    ]
    positionals = [a for a in p._actions if not a.option_strings]
    if positionals:
        out.append(("positional missing", base[:1]))
    out.append(("extra positional", [*base, "extra-argument"]))
    for action in p._actions:
        if isinstance(action, argparse._HelpAction) or not action.option_strings:
            continue
        opt, key = action.option_strings[-1], (command, action.dest)
        one, two = (f.fill(v) for v in VALID[key])
        out.append((f"{opt} without a value", [*base, opt]))
        if action.choices is not None:
            out.append((f"{opt} outside its choices", [*base, opt, "not-a-choice"]))
        if action.type is int:
            out += [(f"{opt} {v}", [*base, opt, v]) for v in MALFORMED_INTS]
        if isinstance(action, argparse._AppendAction):
            if "=" in one:
                out += [(f"{opt} {v}", [*base, opt, v]) for v in MALFORMED_SPECS]
            if key not in REPEATABLE:
                out.append((f"{opt} twice, contradicting", [*base, opt, one, opt, two]))
                out.append((f"{opt} twice, repeated", [*base, opt, one, opt, one]))
        else:
            out.append((f"{opt} twice", [*base, opt, one, opt, two]))
            out.append((f"{opt}= twice", [*base, f"{opt}={one}", f"{opt}={one}"]))
    return out


def test_every_option_has_valid_values() -> None:
    """A new option joins the matrix: its valid values must be listed in VALID."""
    for command, p in subparsers().items():
        for action in p._actions:
            if action.option_strings and not isinstance(action, argparse._HelpAction):
                assert (command, action.dest) in VALID, (command, action.option_strings)


def one_error_line(err: str) -> str:
    """The one line: ``sonnx-mul: error: ...``, or its JSON form under ``--format json``."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    if lines[0].startswith("{"):
        doc = json.loads(lines[0])
        assert set(doc) == {"error", "exit_code"}, err
        return str(doc["error"])
    assert lines[0].startswith("sonnx-mul: error: "), err
    return lines[0]


@pytest.mark.parametrize("command", [c.name for c in COMMANDS])
def test_every_wrong_call_is_one_line_exit_2(
    command: str, files: Fixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through the console script's launcher (``scripts/sonnx-mul``), in-process."""
    main = launcher().main
    if command != "verify-install":  # the baseline is a right call: exit 0
        assert main(baseline(command, files), sonnx_mul_verify) == 0, capsys.readouterr()
    capsys.readouterr()
    generated = faults(command, subparsers()[command], files)
    assert len(generated) >= 3  # unknown options and an extra positional, at least
    for label, argv in generated:
        code = main(argv, sonnx_mul_verify)
        captured = capsys.readouterr()
        assert code == 2, (label, argv, captured)
        one_error_line(captured.err)


def test_negative_control_a_lenient_parser_fails_the_matrix(
    files: Fixture, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With argparse's own store action (last value wins), a repeated ``--format``
    is accepted: the matrix above would fail."""
    monkeypatch.setattr(sonnx_mul_verify, "StoreOnce", argparse._StoreAction)
    argv = [*baseline("check", files), "--format", "text", "--format", "json"]
    assert launcher().main(argv, sonnx_mul_verify) == 0
    capsys.readouterr()


def test_dim_bindings_out_of_range_raise_the_binding_error(files: Fixture) -> None:
    """The API: a binding outside int64 or not an integer is a ShapeBindingError
    (a ValueError), never a plain ValueError from protobuf."""
    for dims in ({"batch": 2**70}, {"batch": 2**63}, {"batch": -1}, {"batch": "4"},
                 {"batch": 1.0}, {"batch": True}):  # fmt: skip
        with pytest.raises(ShapeBindingError):
            check_model(files.model, dims=dims)  # type: ignore[arg-type]
    for shapes in ({"x": (2**64, 3)}, {"x": 5}, {"x": "13"}):
        with pytest.raises(ShapeBindingError):
            check_model(files.model, input_shapes=shapes)  # type: ignore[arg-type]
    assert check_model(files.model, dims={"batch": 2**63 - 1}) == []  # the largest int64


# ---------------------------------------------------------------- child processes
def console(argv: list[str], env: dict[str, str], prelude: str = "") -> subprocess.CompletedProcess:
    """The console script (the launcher, run from its source), after ``prelude``."""
    launch = f"runpy.run_path({str(LAUNCHER)!r}, run_name='__main__')"
    code = f"import sys\n{prelude}\nimport runpy\n{launch}\n"
    return subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=300,
        env={**os.environ, **env},
    )  # fmt: skip


ENV_FAULTS = [
    {"SONNX_MUL_ISA": "AVX2"}, {"SONNX_MUL_ISA": "Portable"}, {"SONNX_MUL_ISA": "sse9"},
    {"SONNX_MUL_KERNEL": "Native"},
]  # fmt: skip


@pytest.mark.parametrize("env", ENV_FAULTS, ids=lambda e: "=".join(next(iter(e.items()))))
@pytest.mark.parametrize("command", [c.name for c in COMMANDS if c.name != "verify-install"])
def test_bad_environment_is_one_line_exit_2(
    command: str, env: dict[str, str], files: Fixture
) -> None:
    """Every product subcommand that imports the package (verify-install never does: a
    bad variable is a finding there, exit 1, by its own contract)."""
    done = console(baseline(command, files), env)
    assert done.returncode == 2, done
    line = one_error_line(done.stderr)
    assert next(iter(env)) in line and "rebuild" not in line.lower()


# SIGINT as Python's start-up sets it when the parent does not ignore it: a
# job started in the background by a non-interactive shell (nohup make prove
# &) inherits SIGINT ignored, and the interrupt would then never arrive.
DEFAULT_SIGINT = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"

# A real SIGINT raised while the given module is being imported (start-up).
INTERRUPT_AT = (
    DEFAULT_SIGINT
    + """
import importlib.abc, signal
class Interrupt(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == {module!r}:
            signal.raise_signal(signal.SIGINT)
        return None
sys.meta_path.insert(0, Interrupt())
"""
)
STARTUP_MODULES = ["numpy", "onnx", "sonnx_mul.kernel", "sonnx_mul.models.checker",
                   "sonnx_mul.cli.files"]  # fmt: skip


@pytest.mark.parametrize("module", STARTUP_MODULES)
def test_sigint_during_start_up_is_one_line_exit_130(module: str, files: Fixture) -> None:
    done = console(baseline("check", files), {}, INTERRUPT_AT.format(module=module))
    assert done.returncode == 130, done
    assert one_error_line(done.stderr).endswith("interrupted")


def test_sigint_at_exit_keeps_the_exit_code(files: Fixture) -> None:
    """A SIGINT after the command is done (an atexit hook) changes nothing."""
    prelude = DEFAULT_SIGINT + "import atexit\natexit.register(signal.raise_signal, signal.SIGINT)"
    done = console(baseline("check", files), {}, prelude)
    assert done.returncode == 0 and done.stderr == "", done


def test_negative_control_sigint_outside_the_dispatcher_is_a_traceback(files: Fixture) -> None:
    """The same interrupt before the launcher's dispatch runs (Python's own handling): a
    traceback and a signal exit, what the tests above would see without the fix."""
    prelude = INTERRUPT_AT.format(module="numpy") + "\nimport numpy"
    done = console(baseline("check", files), {}, prelude)
    assert done.returncode in (-signal.SIGINT, 130) and "Traceback" in done.stderr, done
