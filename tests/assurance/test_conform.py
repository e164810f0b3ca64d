"""``sonnx-mul conform`` against planted runtimes: every fault is found under its
requirement id (negative controls), the certified implementation passes
(positive control), exit codes, JUnit, determinism. No runtime package needed."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import conform_fakes as fakes
import numpy as np
import pytest

from sonnx_mul.cli import main
from sonnx_mul.dtypes import by_onnx_name
from sonnx_mul.models import Backend
from sonnx_mul_assurance.conform import BackendRuntime, CallableRuntime, cases, run_conformance
from sonnx_mul_assurance.conform.output import render_html, render_junit, render_markdown

HERE = Path(__file__).parent
SMALL = {"budget": 1 << 16, "random": 1 << 12}
"""float16/bfloat16 sampled, int8/uint8 exhaustive, 4096 random pairs elsewhere."""


def _types(*names: str) -> list[Any]:
    return [by_onnx_name(n) for n in names]


def _run(fn: Any, *names: str, **kw: Any) -> dict[str, Any]:
    return run_conformance(CallableRuntime(fn), types=_types(*names), **{**SMALL, **kw})


def _by_type(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["type"]: t for t in result["types"]}


def test_F_conforming_fake_passes_every_type() -> None:
    result = run_conformance(CallableRuntime(fakes.conforming), **SMALL)
    assert result["verdict"] == "conforming", result["violated"]
    assert {t["status"] for t in result["types"]} == {"conforming"}
    assert len(result["types"]) == 12
    assert {r["status"] for r in result["refusals"]} == {"refused"}
    for rid in ("F-FLOAT", "F-WRAP"):
        assert result["requirements"][rid]["verdict"] == "holds"
    for rid in ("R1", "R4", "R1-DIMS"):
        assert result["requirements"][rid]["verdict"] == "enforced"


def test_F_WRAP_saturating_fake_is_found_exhaustively() -> None:
    result = _run(fakes.saturating, "int8", "uint8", "int32", "float")
    t = _by_type(result)
    assert result["violated"] == ["F-WRAP"]
    assert t["float"]["status"] == "conforming"
    for name in ("int8", "uint8", "int32"):
        assert t[name]["status"] == "non-conforming"
        assert t[name]["requirement"] == "F-WRAP"
        top = next(iter(t[name]["variants"][0]["diagnoses"]))
        assert top.startswith("saturated")
    # every pair of uint8 was tried: 65,536, of which the saturating ones differ
    u8 = t["uint8"]["variants"][0]
    assert u8["pairs"] == 65536 and t["uint8"]["mode"] == "exhaustive"
    expected = sum(
        1 for x in range(256) for y in range(256) if x * y > 255 and (x * y) % 256 != 255
    )
    assert u8["mismatches"] == expected
    ex = u8["examples"][0]
    assert ex["a_bits"].startswith("0x") and ex["got_bits"] == "0xff"


def test_F_FLOAT_flushing_fake_is_found_on_every_float_type() -> None:
    result = _run(fakes.flushing, "float16", "bfloat16", "float", "double", "int8")
    t = _by_type(result)
    assert result["violated"] == ["F-FLOAT"]
    assert t["int8"]["status"] == "conforming"
    for name in ("float16", "bfloat16", "float", "double"):
        entry = t[name]
        assert entry["status"] == "non-conforming" and entry["requirement"] == "F-FLOAT"
        diagnoses = entry["variants"][0]["diagnoses"]
        assert any("flush" in d or "denormals-are-zero" in d for d in diagnoses), diagnoses
        # the edge set alone finds it: subnormal operands and results are in it
        assert any(e["kind"] == "edge" for e in entry["variants"][0]["examples"])


def test_F_FLOAT_round_toward_zero_fake_is_found() -> None:
    result = _run(fakes.toward_zero, "float16", "float", "uint16")
    t = _by_type(result)
    assert result["violated"] == ["F-FLOAT"]
    assert t["uint16"]["status"] == "conforming"
    for name in ("float16", "float"):
        diagnoses = t[name]["variants"][0]["diagnoses"]
        assert "one ulp toward zero (truncation / round toward zero)" in diagnoses, diagnoses
        assert "overflow gave the largest finite value (rounding toward zero?)" in diagnoses


def test_R4_broadcasting_fake_is_reported_with_right_bits() -> None:
    result = _run(fakes.broadcasting, "float", "int8")
    reqs = result["requirements"]
    assert reqs["F-FLOAT"]["verdict"] == "holds" and reqs["F-WRAP"]["verdict"] == "holds"
    assert reqs["R4"]["verdict"] == "not enforced"
    assert set(reqs["R4"]["accepted"]) == {
        "broadcast of a row",
        "broadcast of a size-1 dim",
        "broadcast of a rank-0 tensor",
    }
    assert reqs["R1-DIMS"]["verdict"] == "not enforced"
    # numpy refuses shapes that do not broadcast: that case is refused
    refused = {r["case"] for r in result["refusals"] if r["status"] == "refused"}
    assert refused == {"shapes that do not broadcast"}
    assert result["verdict"] == "non-conforming"
    assert set(result["violated"]) == {"R1", "R4", "R1-DIMS"}


def test_R4_not_checked_when_refusals_are_off() -> None:
    result = _run(fakes.broadcasting, "float", refusals=False)
    assert result["verdict"] == "conforming"
    assert result["requirements"]["R4"]["verdict"] == "not checked"


def test_F_backend_plugin_certified_backend_conforms() -> None:
    """The onnx.backend plug-in path, on the project's own Backend (both model variants)."""
    result = run_conformance(BackendRuntime(Backend), types=_types("int8", "float16"), **SMALL)
    assert result["verdict"] == "conforming", result["violated"]
    for t in result["types"]:
        assert [v["variant"] for v in t["variants"]] == ["single", "graph", "tails"]


def test_F_a_runtime_that_raises_on_valid_input_is_an_error_not_a_pass() -> None:
    calls = {"n": 0}

    def flaky(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        calls["n"] += 1
        if a.dtype == np.float32 and a.shape[0] > 10:
            raise RuntimeError("kernel crashed")
        return fakes.conforming(a, b)

    result = _run(flaky, "float", refusals=False)
    assert result["types"][0]["status"] == "error"
    assert result["verdict"] == "non-conforming"


def test_F_wrong_output_dtype_is_a_mismatch_of_every_pair(tmp_path: Path) -> None:
    def widening(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return fakes.conforming(a, b).astype(np.float32)

    result = _run(widening, "float16", refusals=False, out_dir=tmp_path)
    v = result["types"][0]["variants"][0]
    assert v["mismatches"] == v["pairs"] > 0
    assert "wrong output dtype" in next(iter(v["diagnoses"]))
    assert v["reproducer"] and (Path(v["reproducer"]) / "repro.py").is_file()


# ------------------------------------------------------------------ determinism
def _stable(result: dict[str, Any]) -> str:
    drop = {"date", "seconds", "runtime_seconds", "command"}

    def strip(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in drop}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return json.dumps(strip(result), sort_keys=True)


def test_F_tails_variant_finds_a_fault_of_short_tensors_only() -> None:
    """A kernel whose scalar tail differs from its vector body (OpenVINO's uint8)."""

    def tail_bug(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        c = fakes.conforming(a, b)
        if a.dtype == np.uint8 and a.shape[0] % 16:
            tail = a.shape[0] - a.shape[0] % 16
            c[tail:] = np.clip(a[tail:].astype(int) * b[tail:], 0, 255)
        return c

    result = _run(tail_bug, "uint8", refusals=False)
    by_variant = {v["variant"]: v for v in result["types"][0]["variants"]}
    assert by_variant["single"]["mismatches"] == 0  # 65,536 pairs: no tail
    assert by_variant["tails"]["mismatches"] > 0
    assert result["verdict"] == "non-conforming"


def test_F_runs_are_deterministic_for_a_seed() -> None:
    one = _run(fakes.toward_zero, "float", "int16", seed=7)
    two = _run(fakes.toward_zero, "float", "int16", seed=7)
    assert _stable(one) == _stable(two)
    t = by_onnx_name("float")
    assert t is not None
    a1 = next(cases.random_chunks(t, 100, 7))
    a2 = next(cases.random_chunks(t, 100, 7))
    a3 = next(cases.random_chunks(t, 100, 8))
    assert np.array_equal(a1.a.view(np.uint32), a2.a.view(np.uint32))
    assert not np.array_equal(a1.a.view(np.uint32), a3.a.view(np.uint32))


def test_F_edge_sets_hold_the_limits() -> None:
    """Ints: products at the range limits and one past; floats: ties, thresholds, specials."""
    i32 = by_onnx_name("int32")
    assert i32 is not None
    pairs = set(cases.int_edges(i32))
    assert (1 << 16, 1 << 15) in pairs  # 2^31: one past the maximum
    assert (-(1 << 16), 1 << 15) in pairs  # -2^31: exactly the minimum
    f16 = by_onnx_name("float16")
    assert f16 is not None
    chunk = cases.edge_pairs(f16)
    products = sonnx_mul_products(chunk.a, chunk.b)
    kinds = {float(x) for x in products if np.isfinite(x)}
    assert 0.0 in kinds and 65504.0 in kinds and 2.0**-24 in kinds
    assert np.isinf(products).any() and np.isnan(products).any()


def sonnx_mul_products(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    import sonnx_mul

    return sonnx_mul.mul(a, b).astype(np.float64)


# ------------------------------------------------------------------ outputs
def test_F_junit_is_valid_xml_with_failures_per_finding() -> None:
    result = _run(fakes.saturating, "int8", "float")
    root = ET.fromstring(render_junit(result))
    suite = root.find("testsuite")
    assert suite is not None
    cases_ = suite.findall("testcase")
    assert int(suite.get("tests", "0")) == len(cases_)
    failed = [c for c in cases_ if c.find("failure") is not None]
    # int8 on the single model and in short tensors (tails); float conforms
    assert int(suite.get("failures", "0")) == len(failed) == 2
    assert {c.get("classname") for c in failed} == {"conform.saturating.F-WRAP"}
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["setting.runtime"] == "python callable"


def test_F_markdown_and_html_show_the_findings() -> None:
    result = _run(fakes.saturating, "uint8")
    md, html = render_markdown(result), render_html(result)
    for text in (md, html):
        assert "F-WRAP" in text and "saturated" in text and "0xff" in text
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html


# ------------------------------------------------------------------ CLI
@pytest.fixture
def fakes_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))


ARGS = ["--budget", "2^16", "--random", "2^12"]


def test_cli_exit_0_conforming(fakes_path: None, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["conform", "--runtime", "conform_fakes:conforming", "--types", "int8,float", *ARGS]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.rstrip().endswith("verdict: conforming")


def test_cli_exit_1_and_outputs_written(
    fakes_path: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["conform", "--runtime", "conform_fakes:saturating", "--types", "uint8",
                 "--format", "json", "--out", str(tmp_path), *ARGS])  # fmt: skip
    assert code == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["violated"] == ["F-WRAP"]
    for name in ("conformance.json", "conformance.md", "conformance.html", "conformance.junit.xml"):
        assert (tmp_path / name).is_file()
    ET.parse(tmp_path / "conformance.junit.xml")
    repro = tmp_path / "reproducers" / "saturating-uint8-single" / "repro.py"
    assert repro.is_file()
    done = subprocess.run([sys.executable, str(repro)], capture_output=True, text=True,
                          cwd=tmp_path, env={"PYTHONPATH": str(HERE)}, check=False)  # fmt: skip
    assert done.returncode == 1, done.stderr  # the reproducer reproduces
    assert "<- differs" in done.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["--runtime", "nosuchruntime"],
        ["--runtime", "no_such_module_xyz:fn"],
        ["--runtime", "conform_fakes:conforming", "--types", "complex64"],
        ["--runtime", "conform_fakes:conforming", "--types", "int8", "--opset", "13"],
        ["--runtime", "conform_fakes:conforming", "--budget", "lots"],
        ["--runtime", "conform_fakes:conforming", "--variants", "huge"],
        ["--runtime", "conform_fakes:conforming", "--inference-precision", "f32"],
        ["--runtime", "conform_fakes:conforming", "--graph-optimization", "all"],
    ],
)
def test_cli_exit_2_bad_call_one_line(
    fakes_path: None, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["conform", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sonnx-mul: error: ") and err.count("\n") == 1, err


def test_cli_exit_2_when_no_type_runs(fakes_path: None, capsys: pytest.CaptureFixture[str]) -> None:
    """A backend that refuses every model ran nothing: not a verdict, exit 2."""
    code = main(["conform", "--runtime", "test_conform:RefusingBackend", "--types", "int8"])
    assert code == 2
    assert "ran none of the selected types" in capsys.readouterr().err


from onnx.backend.base import Backend as _OnnxBackend  # noqa: E402


class RefusingBackend(_OnnxBackend):
    @classmethod
    def prepare(cls, model: Any, device: str = "CPU", **kwargs: Any) -> Any:
        raise NotImplementedError("no Mul here")


def test_cli_progress_on_stderr_and_junit_on_stdout(
    fakes_path: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["conform", "--runtime", "conform_fakes:conforming", "--types", "uint8",
                 "--format", "junit", "--progress"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0
    assert "uint8 single" in captured.err and "100.0%" in captured.err
    root = ET.fromstring(captured.out.split("\n", 1)[1])  # after the XML declaration
    assert root.tag == "testsuites" and root.get("failures") == "0"


def test_cli_exit_2_when_the_oracle_would_flush(
    fakes_path: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No verdict against a flushed oracle: FTZ that cannot be undone stops the run."""
    from sonnx_mul_assurance.conform import fpu

    monkeypatch.setattr(fpu, "flushes", lambda: True)
    monkeypatch.setattr(fpu, "_LIBM", None)
    code = main(["conform", "--runtime", "conform_fakes:conforming", "--types", "float"])
    assert code == 2
    assert "cannot be computed" in capsys.readouterr().err
