"""The sonnx-mul command line, called in-process through main(argv)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T

import sonnx_mul
from models import ir_xml, model, mul_model, vi
from sonnx_mul import ProfileError, cli
from sonnx_mul.cli import COMMANDS, EXIT_BROKEN_PIPE, main
from sonnx_mul.known_answers import SelfTestReport


@pytest.fixture
def models(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "good": tmp_path / "good.onnx",
        "bad": tmp_path / "bad.onnx",
        "int8_13": tmp_path / "int8_13.onnx",
        "garbage": tmp_path / "garbage.onnx",
        "good_ir": tmp_path / "good.xml",
        "bad_ir": tmp_path / "bad.xml",
        "evil_ir": tmp_path / "evil.xml",
    }
    onnx.save(mul_model(), paths["good"])
    onnx.save(mul_model((2, 3), (3,)), paths["bad"])
    onnx.save(mul_model((2,), (2,), T.INT8, opset=13), paths["int8_13"])
    paths["garbage"].write_bytes(b"\xff\xfe garbage \x00\x01")
    paths["good_ir"].write_bytes(ir_xml([2, 3], [2, 3]))
    paths["bad_ir"].write_bytes(ir_xml([2, 3], [3], broadcast="numpy"))
    paths["evil_ir"].write_bytes(ir_xml([2], [2], prolog='<!DOCTYPE net [<!ENTITY a "b">]>'))
    return paths


def test_check_conforming_model_exit_0(
    models: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(models["good"])]) == 0
    assert "conforms" in capsys.readouterr().out


def test_R1_R4_check_violating_model_exit_1(
    models: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(models["bad"])]) == 1
    out = capsys.readouterr().out
    assert "R1, R4 main/the_mul: A has shape (2, 3) and B (3,)" in out


def test_R3_OPSET_check_json_format(
    models: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(models["int8_13"]), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["model"] == str(models["int8_13"]) and doc["conforms"] is False
    assert {v["requirement"] for v in doc["violations"]} == {"R3", "R3-OPSET"}
    assert set(doc["violations"][0]) >= {"requirement", "node", "path", "message"}
    assert main(["check", str(models["good"]), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["model"] == str(models["good"]) and doc["conforms"] is True
    assert (
        doc["verdict"] == "conforms" and doc["violations"] == [] and doc["mul_nodes_checked"] == 1
    )


def test_check_unreadable_model_exit_2(
    models: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(models["garbage"])]) == 2
    err = capsys.readouterr().err
    assert "cannot read ONNX model" in err and "Traceback" not in err
    assert main(["check", str(models["garbage"].with_name("missing.onnx"))]) == 2


def test_check_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert main(["check"]) == 2
    assert main(["check", "m.onnx", "--format", "yaml"]) == 2
    assert main(["no-such-command"]) == 2


def test_R4_check_openvino_ir(models: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(models["good_ir"])]) == 0
    assert "conforms" in capsys.readouterr().out
    assert main(["check", str(models["bad_ir"]), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert {v["requirement"] for v in doc["violations"]} == {"R1", "R4"}
    assert main(["check", str(models["evil_ir"])]) == 2
    assert "DOCTYPE" in capsys.readouterr().err


def test_help_lists_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("check", "run"))
    assert {c.name for c in COMMANDS} >= {"check", "run", "selftest"}


def test_F_run_writes_npy_outputs(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    x = np.array([[1.5, -0.0, np.inf], [2.0, 3.0, -1.0]], np.float32)
    y = np.array([[2.0, 5.0, -1.0], [0.5, -3.0, 1e-45]], np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    out_dir = tmp_path / "out"
    argv = ["run", str(models["good"]), "--input", f"x={tmp_path / 'x.npy'}"]
    argv += ["--input", f"y={tmp_path / 'y.npy'}", "--out", str(out_dir)]
    assert main(argv) == 0
    z = np.load(out_dir / "z.npy")
    assert z.dtype == np.float32
    np.testing.assert_array_equal(z.view(np.uint32), (x * y).view(np.uint32))
    assert "z: shape (2, 3) dtype float32" in capsys.readouterr().out


def test_R1_R4_run_refused_model_exit_1(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.save(tmp_path / "x.npy", np.ones((2, 3), np.float32))
    np.save(tmp_path / "y.npy", np.ones(3, np.float32))
    argv = ["run", str(models["bad"]), "--input", f"x={tmp_path / 'x.npy'}"]
    argv += ["--input", f"y={tmp_path / 'y.npy'}", "--out", str(tmp_path)]
    assert main(argv) == 1
    assert "R4" in capsys.readouterr().err


def test_run_bad_inputs_exit_2(models: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "bad.npy").write_bytes(b"not npy")
    good = str(models["good"])
    assert main(["run", good, "--input", f"x={tmp_path / 'bad.npy'}"]) == 2
    assert main(["run", good, "--input", "x"]) == 2
    assert main(["run", good, "--input", f"x={tmp_path / 'missing.npy'}"]) == 2
    np.save(tmp_path / "x.npy", np.ones((2, 3), np.float32))
    assert main(["run", good, "--input", f"x={tmp_path / 'x.npy'}"]) == 2  # y missing
    assert main(["run", str(models["garbage"]), "--input", f"x={tmp_path / 'x.npy'}"]) == 2


def test_selftest_subcommand_passes_in_a_normal_process(capsys):
    assert main(["selftest"]) == 0
    assert "self-test passed" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("report", "code", "said"),
    [
        (
            SelfTestReport(5, ("int8: wrap: got 1, expected 0",), "native", "avx2", 12),
            1,
            "self-test FAILED (1 vectors): 5 known-answer vectors on the native kernel "
            "(avx2 build, 12 types bit for bit against the portable build)",
        ),
        (
            SelfTestReport(5, (), "native", "portable", 0),
            0,
            "self-test passed: 5 known-answer vectors on the native kernel (portable build)",
        ),
        (
            SelfTestReport(5, (), "numpy", "-", 0),
            0,
            "self-test passed: 5 known-answer vectors on the numpy kernel\n",
        ),
    ],
    ids=["a vector fails", "the portable build", "numpy's loops"],
)
def test_selftest_reports_each_failure_and_which_build_ran(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    report: SelfTestReport,
    code: int,
    said: str,
) -> None:
    """A failing vector is printed and exits 1 (the kernel in use gives a wrong answer);
    the build is named as it ran: its variant, with or without the comparison."""
    monkeypatch.setattr(cli, "selftest", lambda: report)
    assert main(["selftest"]) == code
    out = capsys.readouterr().out
    assert said in out
    assert [line for line in out.splitlines() if line.startswith("FAIL ")] == [
        f"FAIL {f}" for f in report.failures
    ]


# ---------------------------------------------------------------- error contract
def one_line_error(err: str) -> str:
    """The single stderr line of a failed call (never a traceback)."""
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_check_into_closed_pipe_is_quiet(models: dict[str, Path]) -> None:
    """`sonnx-mul check m | head`: the reader left; no BrokenPipeError traceback."""
    argv = [sys.executable, "-m", "sonnx_mul.cli", "check", str(models["bad"])]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the interpreter has even started: every write fails
    err = proc.stderr.read().decode()
    assert proc.wait() == EXIT_BROKEN_PIPE
    assert err == ""


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"sonnx-mul {sonnx_mul.__version__}"


def test_usage_error_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check"]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert line.startswith("sonnx-mul: error: ") and "model" in line


def test_json_format_errors_are_json(
    models: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(models["garbage"]), "--format", "json"]) == 2
    doc = json.loads(one_line_error(capsys.readouterr().err))
    assert doc["exit_code"] == 2 and "cannot read ONNX model" in doc["error"]
    assert main(["check", "--format=json"]) == 2  # argparse's own error
    doc = json.loads(one_line_error(capsys.readouterr().err))
    assert doc["exit_code"] == 2 and "model" in doc["error"]


@pytest.mark.parametrize("command", [["prove"], ["report", "--out", "rep", "--no-probe"]])
def test_prove_report_outside_a_checkout(
    command: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(command) == 2
    assert "not inside one" in one_line_error(capsys.readouterr().err)
    assert list(tmp_path.iterdir()) == []  # no ./proofs/out, no ./rep


def test_report_into_unwritable_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a directory")
    root = Path(__file__).resolve().parents[2]
    argv = ["report", "--root", str(root), "--out", str(blocker / "rep"), "--no-probe"]
    assert main(argv) == 2
    assert str(blocker) in one_line_error(capsys.readouterr().err)


# ---------------------------------------------------------------- run: bad calls, bad inputs
def save(tmp_path: Path, name: str, array: np.ndarray) -> str:
    np.save(tmp_path / f"{name}.npy", array)
    return str(tmp_path / f"{name}.npy")


def run_argv(model: Path, out: Path, **files: str) -> list[str]:
    argv = ["run", str(model), "--out", str(out)]
    for name, file in files.items():
        argv += ["--input", f"{name}={file}"]
    return argv


def test_run_into_unwritable_out(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a directory")
    x = save(tmp_path, "x", np.ones((2, 3), np.float32))
    assert main(run_argv(models["good"], blocker / "out", x=x, y=x)) == 2
    assert str(blocker) in one_line_error(capsys.readouterr().err)


def test_run_repeated_input_refused(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    x = save(tmp_path, "x", np.ones((2, 3), np.float32))
    argv = [*run_argv(models["good"], tmp_path / "out", x=x, y=x), "--input", f"x={x}"]
    assert main(argv) == 2
    assert "--input x= is given twice" in one_line_error(capsys.readouterr().err)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("array", "said"),
    [
        (np.ones((2, 3), np.float64), "holds double (float64), the model declares float (float32)"),
        (np.ones((3, 2), np.float32), "has shape (3, 2), the model declares (2, 3)"),
        (np.ones(6, np.float32), "has shape (6,), the model declares (2, 3)"),
    ],
)
def test_run_input_differing_from_declaration_is_a_bad_input(
    models: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    array: np.ndarray,
    said: str,
) -> None:
    x = save(tmp_path, "x", np.ones((2, 3), np.float32))
    y = save(tmp_path, "y", array)
    assert main(run_argv(models["good"], tmp_path / "out", x=x, y=y)) == 2
    line = one_line_error(capsys.readouterr().err)
    assert f"input 'y': {y} {said}" in line and "R1" not in line and "R3" not in line
    assert not (tmp_path / "out").exists()


def test_run_symbolic_dims_bound_consistently(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "sym.onnx"
    onnx.save(mul_model(("N",), ("N",)), path)
    x = save(tmp_path, "x", np.ones(2, np.float32))
    y = save(tmp_path, "y", np.ones(3, np.float32))
    assert main(run_argv(path, tmp_path / "out", x=x, y=y)) == 2
    assert "input 'y'" in one_line_error(capsys.readouterr().err)


def test_run_errors_name_the_node(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Different symbolic dims pass the static check; mul refuses at run time (R1)."""
    path = tmp_path / "sym.onnx"
    onnx.save(mul_model(("N",), ("M",)), path)
    x = save(tmp_path, "x", np.ones(2, np.float32))
    y = save(tmp_path, "y", np.ones(3, np.float32))
    assert main(run_argv(path, tmp_path / "out", x=x, y=y)) == 1
    line = one_line_error(capsys.readouterr().err)
    assert "node 'the_mul' (Mul" in line and "[R1" in line
    assert not (tmp_path / "out").exists()


def test_run_colliding_output_names_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = [
        onnx.helper.make_node("Mul", ["x", "x"], ["a/b"], name="m1"),
        onnx.helper.make_node("Mul", ["x", "x"], ["a_b"], name="m2"),
    ]
    path = tmp_path / "two.onnx"
    onnx.save(model(nodes, [vi("x", T.FLOAT, (2,))], ["a/b", "a_b"]), path)
    x = save(tmp_path, "x", np.ones(2, np.float32))
    assert main(run_argv(path, tmp_path / "out", x=x)) == 2
    assert "would both be written to" in one_line_error(capsys.readouterr().err)
    assert not (tmp_path / "out").exists()


def test_run_npz_is_a_usage_error(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    x = save(tmp_path, "x", np.ones((2, 3), np.float32))
    np.savez(tmp_path / "y.npz", y=np.ones((2, 3), np.float32))
    assert main(run_argv(models["good"], tmp_path / "out", x=x, y=str(tmp_path / "y.npz"))) == 2
    assert ".npz archive" in one_line_error(capsys.readouterr().err)


def test_run_huge_header_refused_before_allocation(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    x = save(tmp_path, "x", np.ones((2, 3), np.float32))
    huge = tmp_path / "huge.npy"
    with huge.open("wb") as f:  # a header claiming 2**60 floats, and no data
        np.lib.format.write_array_header_1_0(
            f, {"descr": "<f4", "fortran_order": False, "shape": (2**30, 2**30)}
        )
    assert main(run_argv(models["good"], tmp_path / "out", x=x, y=str(huge))) == 2
    line = one_line_error(capsys.readouterr().err)
    assert "claims shape (1073741824, 1073741824)" in line and "MemoryError" not in line


def _npy_with_version(path: Path, major: int) -> str:
    """A float32 (2, 3) .npy file whose header says format version ``major``.0."""
    with path.open("wb") as f:
        np.lib.format.write_array(f, np.ones((2, 3), np.float32), version=(min(major, 2), 0))
    data = bytearray(path.read_bytes())
    data[6] = major  # the version byte after the magic string
    path.write_bytes(bytes(data))
    return str(path)


def test_run_reads_npy_format_2_and_refuses_other_versions(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    x = save(tmp_path, "x", np.ones((2, 3), np.float32))
    y2 = _npy_with_version(tmp_path / "y2.npy", 2)
    assert main(run_argv(models["good"], tmp_path / "out", x=x, y=y2)) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "z.npy"), np.ones((2, 3)))
    capsys.readouterr()
    y3 = _npy_with_version(tmp_path / "y3.npy", 3)
    assert main(run_argv(models["good"], tmp_path / "out3", x=x, y=y3)) == 2
    line = one_line_error(capsys.readouterr().err)
    assert "not a readable .npy file: unsupported .npy format version (3, 0)" in line
    assert not (tmp_path / "out3").exists()


def test_run_file_that_is_not_npy_is_a_usage_error(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    x = save(tmp_path, "x", np.ones((2, 3), np.float32))
    fake = tmp_path / "y.npy"
    fake.write_bytes(b"\x93NUMPX" + bytes(120))
    assert main(run_argv(models["good"], tmp_path / "out", x=x, y=str(fake))) == 2
    line = one_line_error(capsys.readouterr().err)
    assert "is not a readable .npy file: the magic string is not correct" in line


def test_run_object_array_is_never_loaded(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    x = save(tmp_path, "x", np.ones((2, 3), np.float32))
    objects = tmp_path / "y.npy"
    np.save(objects, np.array([[1, "a", None]] * 2, dtype=object), allow_pickle=True)
    assert main(run_argv(models["good"], tmp_path / "out", x=x, y=str(objects))) == 2
    assert "holds Python objects, which are never loaded" in one_line_error(capsys.readouterr().err)


def test_R3_run_file_of_a_type_outside_the_profile_is_named_by_its_onnx_name(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    x = save(tmp_path, "x", np.ones((2, 3), np.float32))
    y = save(tmp_path, "y", np.ones((2, 3), bool))
    assert main(run_argv(models["good"], tmp_path / "out", x=x, y=y)) == 2
    line = one_line_error(capsys.readouterr().err)
    assert "y.npy holds bool, the model declares float (float32)" in line


def _one_input_model(path: Path, *inputs: onnx.ValueInfoProto) -> Path:
    """z = x * x, with the graph inputs given (x first)."""
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Mul", ["x", "x"], ["z"], name="m")],
        "g",
        list(inputs),
        [onnx.helper.make_tensor_value_info("z", T.FLOAT, None)],
    )
    onnx.save(onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 14)]), path)
    return path


def test_run_input_the_model_declares_a_sequence_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _one_input_model(
        tmp_path / "seq.onnx",
        vi("x", T.FLOAT, (2, 3)),
        onnx.helper.make_tensor_sequence_value_info("s", T.FLOAT, None),
    )
    x = save(tmp_path, "x", np.ones((2, 3), np.float32))
    assert main(run_argv(path, tmp_path / "out", x=x, s=x)) == 2
    line = one_line_error(capsys.readouterr().err)
    assert line.endswith("input 's' is a sequence_type, not a tensor; a .npy file cannot give it")


@pytest.mark.parametrize(
    "declared",
    [onnx.ValueInfoProto(name="x"), onnx.helper.make_tensor_value_info("x", T.FLOAT, None)],
    ids=["no type", "no shape"],
)
def test_run_input_without_a_declared_type_or_shape_takes_the_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], declared: onnx.ValueInfoProto
) -> None:
    """What the model leaves unsaid is not checked against the file; the run goes on."""
    path = _one_input_model(tmp_path / "m.onnx", declared)
    x = save(tmp_path, "x", np.full((2, 3), 3, np.float32))
    assert main(run_argv(path, tmp_path / "out", x=x)) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "z.npy"), np.full((2, 3), 9))
    assert "z: shape (2, 3) dtype float32" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("raised", "code", "said"),
    [
        (KeyboardInterrupt(), 130, "interrupted"),
        (MemoryError(), 2, "not enough memory"),
        (PermissionError(13, "Permission denied", "/nowhere/x.npy"), 2, "Permission denied"),
        (RuntimeError("a defect\nover two lines"), 2, "internal error: RuntimeError: a defect"),
        (ProfileError("A has shape (2,) and B (3,)", ("R1", "R4")), 1, "[R1, R4] A has shape"),
    ],
    ids=["interrupt", "memory", "os error", "defect", "a refusal"],
)
def test_unexpected_failures_are_one_line_without_traceback(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    raised: BaseException,
    code: int,
    said: str,
) -> None:
    def explode(args: object) -> int:
        raise raised

    patched = tuple(
        dataclasses.replace(c, run=explode) if c.name == "selftest" else c for c in COMMANDS
    )
    monkeypatch.setattr(cli, "COMMANDS", patched)
    assert main(["selftest"]) == code
    assert said in one_line_error(capsys.readouterr().err)


@pytest.mark.parametrize("raised", [RecursionError, MemoryError])
def test_check_of_a_model_that_exhausts_the_checker_is_one_line_exit_2(
    models: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    raised: type[Exception],
) -> None:
    """A hostile model the checker cannot finish (its recursion or the memory exhausted
    past the checker's own bounds) is refused in one line, exit 2, never a traceback or
    an internal error; for an ONNX model and for an OpenVINO IR alike."""

    def exhausted(*args: object, **kwargs: object) -> None:
        raise raised()

    monkeypatch.setattr(cli, "check_report", exhausted)
    monkeypatch.setattr(cli, "check_ir_report", exhausted)
    for model_path in (models["good"], models["good_ir"]):
        assert main(["check", str(model_path)]) == 2
        line = one_line_error(capsys.readouterr().err)
        assert line == f"sonnx-mul: error: cannot check the model: {raised.__name__}"


def test_run_failure_of_another_operator_names_its_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shape = onnx.helper.make_tensor("shape", T.INT64, [1], [4])
    nodes = [onnx.helper.make_node("Reshape", ["x", "shape"], ["z"], name="bad_reshape")]
    path = tmp_path / "reshape.onnx"
    onnx.save(model(nodes, [vi("x", T.FLOAT, (6,))], initializers=[shape]), path)
    x = save(tmp_path, "x", np.ones(6, np.float32))
    # the default engine (onnxruntime where installed) and the reference engine, which
    # names the node from the frame of the operator that raised
    for engine in ([], ["--engine", "reference"]):
        assert main([*run_argv(path, tmp_path / "out", x=x), *engine]) == 1
        line = one_line_error(capsys.readouterr().err)
        assert "the model could not be run: node 'bad_reshape' (Reshape" in line
        assert not (tmp_path / "out").exists()
