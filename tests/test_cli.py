"""The sonnx-mul command line, called in-process through main(argv)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T

from models import ir_xml, mul_model
from sonnx_mul.cli import COMMANDS, main


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
    assert json.loads(capsys.readouterr().out) == {
        "model": str(models["good"]),
        "conforms": True,
        "violations": [],
    }


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
