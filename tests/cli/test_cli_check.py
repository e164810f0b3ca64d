"""`sonnx-mul check`: bindings, reporting, exit codes, and the README's transcript."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import sys
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from models import ir_xml, model, mul_model, vi
from sonnx_mul.cli import main

ROOT = Path(__file__).resolve().parents[2]


def cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def readme_check_commands() -> list[tuple[str, list[str]]]:
    """Each `$ sonnx-mul check ...` of the README with the lines it prints."""
    lines = (ROOT / "README.md").read_text().splitlines()
    found: list[tuple[str, list[str]]] = []
    for i, line in enumerate(lines):
        if line.startswith("$ sonnx-mul check "):
            expected = []
            for nxt in lines[i + 1 :]:
                if nxt.startswith("$ ") or nxt.startswith("```"):
                    break
                expected.append(nxt)
            found.append((line[2:], expected))
    return found


def test_readme_check_transcript_is_true(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import make_models
    finally:
        sys.path.pop(0)
    make_models.main(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    commands = readme_check_commands()
    assert len(commands) >= 5
    for command, expected in commands:
        text = command.split("#")[0].replace('; echo "exit $?"', "")
        code, out, err = cli(shlex.split(text)[1:])
        got = out.splitlines() + ([f"exit {code}"] if "echo" in command else [])
        assert got == expected, command
        assert err == ""


@pytest.fixture
def rowscale(tmp_path: Path) -> Path:
    path = tmp_path / "rowscale.onnx"
    onnx.save(mul_model(("batch", 3), (1, 3)), path)
    return path


def test_R1_undecided_only_exit_codes(rowscale: Path) -> None:
    assert cli(["check", str(rowscale)])[0] == 1
    assert cli(["check", str(rowscale), "--undecided-exit", "3"])[0] == 3
    code, out, _ = cli(["check", str(rowscale), "--format", "json", "--undecided-exit", "3"])
    doc = json.loads(out)
    assert code == 3 and doc["verdict"] == "undecided" and doc["definite"] == []
    assert [v["requirement"] for v in doc["undecided"]] == ["R1"]
    assert doc["nodes_with_undecided_findings_only"] == 1


def test_R1_R4_definite_keeps_exit_1_with_undecided_exit(rowscale: Path) -> None:
    code, out, _ = cli(["check", str(rowscale), "--dim", "batch=4", "--undecided-exit", "3"])
    assert code == 1 and "R1, R4 main/the_mul" in out
    code, out, _ = cli(["check", str(rowscale), "--input-shape", "x=1,3", "--format", "json"])
    assert code == 0 and json.loads(out)["verdict"] == "conforms"


def test_R1_input_shapes_bind_inputs_declared_without_a_shape(tmp_path: Path) -> None:
    """An input whose shape the model leaves out takes the --input-shape given: equal
    bound shapes conform, different ones violate (R1, R4)."""
    path = tmp_path / "shapeless.onnx"
    inputs = [vi(name, T.FLOAT, None) for name in "xy"]
    onnx.save(model([h.make_node("Mul", ["x", "y"], ["z"], name="m")], inputs), path)
    assert cli(["check", str(path)])[0] == 1  # undecided without a binding
    code, out, err = cli(["check", str(path), "--input-shape", "x=2,3", "--input-shape", "y=2,3"])
    assert (code, err) == (0, "") and "conforms" in out
    code, out, _ = cli(["check", str(path), "--input-shape", "x=2,3", "--input-shape", "y=3"])
    assert code == 1 and "R1, R4 main/m: A has shape (2, 3) and B (3,)" in out


def test_bindings_on_an_openvino_ir_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "net.xml"
    path.write_bytes(ir_xml([2], [2]))
    for args in (["--dim", "n=2"], ["--input-shape", "x=2"]):
        code, out, err = cli(["check", str(path), *args])
        assert (code, out) == (2, "")
        assert err == "sonnx-mul: error: --dim and --input-shape apply to ONNX models only\n"


@pytest.mark.parametrize(
    "args",
    [
        ["--dim", "batch"],
        ["--dim", "batch=-1"],
        ["--dim", "nope=1"],
        ["--input-shape", "x=1,a"],
        ["--input-shape", "y=1"],
        ["--undecided-exit", "0"],
        ["--undecided-exit", "2"],
    ],
)
def test_bad_bindings_and_options_exit_2(rowscale: Path, args: list[str]) -> None:
    code, out, err = cli(["check", str(rowscale), *args])
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("sonnx-mul: error: ")


def test_summary_counts_nodes_not_requirement_ids(tmp_path: Path) -> None:
    nodes = [
        h.make_node("Mul", ["x", "y"], ["t"], name="bad"),  # R1 + R4: one node
        h.make_node("Mul", ["x", "x"], ["z"], name="good"),
    ]
    path = tmp_path / "two.onnx"
    onnx.save(model(nodes, [vi("x", T.FLOAT, [2, 3]), vi("y", T.FLOAT, [3])], ["t", "z"]), path)
    code, out, _ = cli(["check", str(path)])
    assert code == 1
    assert "(2 Mul node(s) checked: 1 with definite violations, 0 with undecided" in out


def test_conforms_without_mul_says_so(tmp_path: Path) -> None:
    path = tmp_path / "relu.onnx"
    onnx.save(model([h.make_node("Relu", ["x"], ["z"])], [vi("x", T.FLOAT, [2])]), path)
    code, out, _ = cli(["check", str(path)])
    assert code == 0 and "no Mul node to check" in out


def test_R4_function_call_site_in_cli(tmp_path: Path) -> None:
    body = [h.make_node("Mul", ["a", "b"], ["c"], name="fmul")]
    f = h.make_function("local", "scale", ["a", "b"], ["c"], body, [h.make_opsetid("", 14)])
    calls = [
        h.make_node("scale", ["x", "x"], ["u"], domain="local", name="ok_call"),
        h.make_node("scale", ["x", "y"], ["z"], domain="local", name="bad_call"),
    ]
    m = model(
        calls, [vi("x", T.FLOAT, ["N", 3]), vi("y", T.FLOAT, [3])], ["u", "z"], functions=[f],
        extra_opsets=[h.make_opsetid("local", 1)],
    )  # fmt: skip
    path = tmp_path / "f.onnx"
    onnx.save(m, path)
    code, out, _ = cli(["check", str(path)])
    assert code == 1
    assert "R1, R4 main/bad_call->local.scale/fmul: A has shape (N, 3) and B (3,)" in out
    assert "2 Mul node(s) checked: 1 with definite" in out
    assert os.path.exists(path)
