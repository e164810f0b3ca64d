"""Hostile files for `sonnx-mul check` (issue 12): refused before reading,
capped, one-line errors with exit 2, linear walk.

Figures (time for 20,000 If nodes, ...) are measured by
``benchmarks/checker_hostile.py`` and quoted in SECURITY.md, never asserted here.
"""

from __future__ import annotations

import contextlib
import io
import os
import socket
import threading
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from models import ir_xml, many_ifs, model, mul_model, vi
from sonnx_mul.cli import main
from sonnx_mul.models import ModelReadError, check_model, check_report, inference, openvino, reading
from sonnx_mul.models import checker as checker_module


def cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def one_line_exit_2(argv: list[str], needle: str) -> None:
    code, out, err = cli(argv)
    assert code == 2 and out == "", (code, out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("sonnx-mul: error: "), err
    assert needle in lines[0], err


def within(seconds: float, action: object) -> None:
    """Run ``action`` in a thread; fail if it is still running after ``seconds`` (a block)."""
    done = threading.Event()
    errors: list[BaseException] = []

    def go() -> None:
        try:
            action()  # type: ignore[operator]
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            done.set()

    threading.Thread(target=go, daemon=True).start()
    assert done.wait(seconds), "blocked"
    if errors:
        raise errors[0]


@pytest.mark.parametrize("suffix", [".onnx", ".xml"])
def test_fifo_is_refused_without_blocking(tmp_path: Path, suffix: str) -> None:
    fifo = tmp_path / f"model{suffix}"
    os.mkfifo(fifo)  # no writer: a blocking open would hang for ever
    within(30, lambda: one_line_exit_2(["check", str(fifo)], "is a FIFO, not a regular file"))


@pytest.mark.parametrize(("path", "kind"), [("/dev/zero", "character device"), ("/", "directory")])
def test_devices_and_directories_are_refused(path: str, kind: str) -> None:
    within(30, lambda: one_line_exit_2(["check", path], kind))
    with pytest.raises(ModelReadError, match=kind):
        check_model(path)


def test_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.onnx"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        one_line_exit_2(["check", str(path)], "cannot read")


def test_negative_control_plain_open_blocks_on_a_fifo(tmp_path: Path) -> None:
    """The protection is real: a plain open() of the same FIFO blocks."""
    fifo = tmp_path / "m.onnx"
    os.mkfifo(fifo)
    with pytest.raises(AssertionError, match="blocked"):
        within(1, lambda: open(fifo, "rb").close())
    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # let the blocked reader go


def test_byte_cap_refuses_before_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.onnx"
    onnx.save(mul_model(), path)
    size = path.stat().st_size
    monkeypatch.setattr(checker_module, "MAX_MODEL_BYTES", size - 1)
    one_line_exit_2(["check", str(path)], f"over the {size - 1}-byte cap")
    monkeypatch.setattr(checker_module, "MAX_MODEL_BYTES", size)
    assert cli(["check", str(path)])[0] == 0  # negative control: at the cap it is read


def test_sparse_file_over_the_cap_is_not_read(tmp_path: Path) -> None:
    """A 3 GiB sparse file (no disk used): refused from its size, nothing read."""
    path = tmp_path / "huge.onnx"
    with open(path, "wb") as f:
        f.truncate(3 << 30)
    one_line_exit_2(["check", str(path)], "over the")
    xml = tmp_path / "huge.xml"
    with open(xml, "wb") as f:
        f.truncate(reading.MAX_IR_BYTES + 1)
    one_line_exit_2(["check", str(xml)], "over the")


def test_file_growing_past_the_cap_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    path.write_bytes(b"\0" * 100)
    with pytest.raises(ModelReadError, match="grew over"):
        reading.read_limited(path, 50, "x")


@pytest.fixture(autouse=True)
def _fstat_reports_small(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """For the growing-file test: fstat says 10 bytes, the read finds 100."""
    if request.node.name != "test_file_growing_past_the_cap_is_refused":
        return
    real = os.fstat

    class Small:
        def __init__(self, st: os.stat_result) -> None:
            self.st_mode, self.st_size = st.st_mode, 10

    monkeypatch.setattr(reading.os, "fstat", lambda fd: Small(real(fd)))


def test_deep_xml_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "deep.xml"
    path.write_bytes(b"<net>" + b"<a>" * 50_000 + b"</a>" * 50_000 + b"</net>")
    one_line_exit_2(["check", str(path)], "deeper than")


@pytest.mark.parametrize("error", [MemoryError, RecursionError])
def test_memory_and_recursion_errors_are_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: type[BaseException]
) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(mul_model(), path)
    xml = tmp_path / "m.xml"
    xml.write_bytes(ir_xml([2], [2]))

    def boom(*args: object, **kwargs: object) -> None:
        raise error()

    monkeypatch.setattr(checker_module, "_check", boom)
    monkeypatch.setattr(openvino, "_walk", boom)
    one_line_exit_2(["check", str(path)], "cannot check")
    one_line_exit_2(["check", str(xml)], "cannot check")
    with pytest.raises(ModelReadError):
        check_model(path)


# ------------------------------------------------------------ many nested graphs
def test_R1_R4_20000_if_nodes_are_all_checked() -> None:
    report = check_report(many_ifs(20_000, bad_every=1000).SerializeToString())
    assert report.mul_nodes == 20_000
    assert len(report.violations) == 40 and {v.requirement for v in report.violations} == {
        "R1",
        "R4",
    }
    assert all(v.definite for v in report.violations)


def test_graph_by_graph_inference_is_still_sound() -> None:
    """Above the threshold each graph is inferred alone: x * Sigmoid(x) inside a
    branch still conforms, and an If output feeding a Mul is undecided — as it is
    with whole-model inference since issue 21 (If is not on the allow-list)."""
    n = inference.FULL_INFERENCE_SUBGRAPHS
    assert check_model(many_ifs(n, inner=True)) == []
    assert check_model(many_ifs(n + 1, inner=True)) == []
    m = many_ifs(n // 2)  # 64 nested graphs: whole-model inference
    m.graph.node.append(h.make_node("Mul", ["o0", "x"], ["u"], name="after_if"))
    m.graph.output.append(vi("u"))
    found = check_model(m)
    assert {(v.node, v.requirement, v.definite) for v in found} == {("after_if", "R1", False)}
    m.graph.node.insert(0, many_ifs(1).graph.node[0])
    m.graph.node[0].output[0] = "extra"
    m.graph.node[0].attribute[0].g.node[0].output[0] = "tt"
    m.graph.node[0].attribute[0].g.output[0].name = "tt"
    m.graph.node[0].attribute[1].g.node[0].output[0] = "ee"
    m.graph.node[0].attribute[1].g.output[0].name = "ee"  # now 66 nested graphs
    found = check_model(m)
    assert {(v.node, v.requirement, v.definite) for v in found} == {
        ("after_if", "R1", False),
        ("after_if", "R3", False),
    }
    assert all("inferred on its own" in v.message for v in found)


def test_shadowing_names_in_a_branch_do_not_reach_outer_facts() -> None:
    """A branch defines 'y' itself (unknown shape): its Mul must not use the outer y."""
    then_g = h.make_graph(
        [h.make_node("Unsqueeze", ["x", "ax"], ["y"]), h.make_node("Mul", ["x", "y"], ["t"])],
        "then", [], [vi("t")],
    )  # fmt: skip
    else_g = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "else", [], [vi("e")])
    node = h.make_node("If", ["c"], ["z"], then_branch=then_g, else_branch=else_g)
    inputs = [
        vi("x", T.FLOAT, [2, 3]),
        vi("y", T.FLOAT, [2, 3]),
        vi("c", T.BOOL, []),
        vi("ax", T.INT64, [1]),
    ]
    with pytest.raises(ModelReadError, match="SSA"):  # onnx.checker refuses it (issue 21)
        check_model(model([node], inputs))


def test_graph_by_graph_claims_a_mul_depends_on_are_still_compared() -> None:
    """Above the threshold, a false value_info for a value a branch's Mul reads is
    still refused; a false claim nothing judged depends on may go unchecked."""
    m = many_ifs(inference.FULL_INFERENCE_SUBGRAPHS)
    branch = next(a.g for a in m.graph.node[0].attribute if a.name == "then_branch")
    branch.node.insert(0, h.make_node("Sigmoid", ["y3"], ["s"]))
    branch.node[1].input[1] = "s"
    branch.value_info.append(vi("s", T.FLOAT, [2, 3]))  # false: Sigmoid(y3) is (3,)
    with pytest.raises(ModelReadError, match="declared shape \\(2, 3\\), the model gives \\(3,\\)"):
        check_model(m)
    del branch.value_info[:]
    found = check_model(m)
    assert {(v.node, v.requirement) for v in found} == {("m0", "R1"), ("m0", "R4")}


# ---------------------------------------------------------------- .npy byte order
def run_mul(tmp_path: Path, elem: int, x: Path, y: Path) -> tuple[int, str, str]:
    path = tmp_path / "m.onnx"
    onnx.save(mul_model((2, 3), (2, 3), elem), path)
    out = tmp_path / "out"
    return cli(["run", str(path), "--input", f"x={x}", "--input", f"y={y}", "--out", str(out)])


@pytest.mark.parametrize(
    ("elem", "dtype"),
    [(T.FLOAT, "f4"), (T.DOUBLE, "f8"), (T.FLOAT16, "f2"), (T.INT16, "i2"), (T.INT64, "i8"),
     (T.UINT32, "u4")],
)  # fmt: skip
def test_a_big_endian_npy_is_read_by_value(tmp_path: Path, elem: int, dtype: str) -> None:
    """Standard types in the other byte order: numpy swaps them; the products are the
    products of the values, in native order."""
    a = np.array([[1, 2, 3], [-4, 5, 6]]).astype(dtype) if "u" not in dtype else (
        np.array([[1, 2, 3], [4, 5, 6]], dtype))  # fmt: skip
    b = (a + 1).astype(dtype)
    np.save(tmp_path / "x.npy", a.astype(">" + dtype))
    np.save(tmp_path / "y.npy", b.astype(">" + dtype))
    assert np.load(tmp_path / "x.npy").dtype.byteorder == ">"  # the file is big-endian
    code, _, err = run_mul(tmp_path, elem, tmp_path / "x.npy", tmp_path / "y.npy")
    assert code == 0, err
    result = np.load(tmp_path / "out" / "z.npy")
    assert result.dtype == np.dtype(dtype) and result.dtype.isnative
    assert result.tobytes() == (a * b).astype(dtype).tobytes()


def raw_bfloat16_npy(path: Path, bits: np.ndarray, descr: str) -> None:
    """A .npy of bfloat16 bit patterns stored as two raw bytes (``descr`` ``'>V2'``,
    ``'<V2'`` or ``'|V2'``), in the byte order the descr names (``|``: little)."""
    with path.open("wb") as f:
        header = {"descr": descr, "fortran_order": False, "shape": bits.shape}
        np.lib.format.write_array_header_1_0(f, header)
        f.write(bits.astype(">u2" if descr.startswith(">") else "<u2").tobytes())


def test_a_big_endian_raw_bfloat16_npy_is_refused(tmp_path: Path) -> None:
    """``'>V2'``: numpy drops the byte order of raw bytes, so the file would be read
    as little-endian bfloat16 bits (-0.0 x 1.0 gave 0x7016, not 0x8000): refused, exit 2,
    nothing written."""
    minus_zero = np.full((2, 3), 0x8000, np.uint16)
    one = np.full((2, 3), 0x3F80, np.uint16)
    raw_bfloat16_npy(tmp_path / "x.npy", minus_zero, ">V2")
    raw_bfloat16_npy(tmp_path / "y.npy", one, ">V2")
    assert np.load(tmp_path / "x.npy").dtype == np.dtype("V2")  # numpy forgot the order
    code, out, err = run_mul(tmp_path, T.BFLOAT16, tmp_path / "x.npy", tmp_path / "y.npy")
    assert (code, out) == (2, ""), err
    lines = err.splitlines()
    assert len(lines) == 1 and "input 'x'" in lines[0] and "'>V2'" in lines[0], err
    assert "the .npy byte-order rule" in lines[0]
    assert not (tmp_path / "out").exists()
    for descr in ("<V2", "|V2"):  # control: the machine's order is read, by value
        raw_bfloat16_npy(tmp_path / "x.npy", minus_zero, descr)
        raw_bfloat16_npy(tmp_path / "y.npy", one, descr)
        code, _, err = run_mul(tmp_path, T.BFLOAT16, tmp_path / "x.npy", tmp_path / "y.npy")
        assert code == 0, err
        product = np.load(tmp_path / "out" / "z.npy").view(np.uint16)
        assert (product == 0x8000).all(), hex(int(product.flat[0]))
