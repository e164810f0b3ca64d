"""Issue 29: conform's own rules (argument parsing, runtime options, the float
environment, the run's constants) each pinned by a test that fails when that
rule alone is changed: ``make mutants`` over ``conform/`` left these unnoticed.
"""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from sonnx_mul.cli.errors import UsageError
from sonnx_mul_assurance.conform import cli


@pytest.mark.parametrize(
    ("text", "count"),
    [("2^20", 1 << 20), ("2**3", 8), ("1e6", 10**6), ("3E2", 300), ("1_000", 1000), ("7", 7)],
)
def test_pair_counts_are_read_in_every_spelling(text: str, count: int) -> None:
    assert cli.pairs(text) == count


@pytest.mark.parametrize("text", ["lots", "2^", "1e", "-5", "1.5"])
def test_a_pair_count_that_is_not_one_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="not a pair count"):
        cli.pairs(text)


@pytest.mark.parametrize("text", ["-1", "x", "\u0661", ""])
def test_a_count_must_be_ascii_digits(text: str) -> None:
    """``str.isdigit`` alone accepts other scripts' digits; ``int`` would read them."""
    with pytest.raises(argparse.ArgumentTypeError, match="not a non-negative integer"):
        cli._count(text)
    assert cli._count("12") == 12


def _args(runtime: str, **options: object) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    cli.configure(p)
    args = p.parse_args(["--runtime", runtime])
    for k, v in options.items():
        setattr(args, k, v)
    return args


def test_each_runtime_takes_its_own_settings_only() -> None:
    with pytest.raises(UsageError, match=r"^--intra-op-threads is an onnxruntime setting$"):
        cli.make_runtime(_args("openvino", intra_op_threads=2))
    with pytest.raises(UsageError, match=r"^--device is an OpenVINO setting$"):
        cli.make_runtime(_args("onnxruntime", device="CPU"))
    ort = cli.make_runtime(_args("onnxruntime", intra_op_threads=1))
    assert ort.settings()["intra_op_num_threads"] == 1
    assert ort.settings()["inter_op_num_threads"] == 0  # onnxruntime's own default
    # --denormals-optimization on|off reaches OpenVINO as a boolean property
    for flag, value in (("on", "True"), ("off", "False")):
        ov = cli.make_runtime(_args("openvino", denormals_optimization=flag)).settings()
        assert ov["requested"] == {"CPU_DENORMALS_OPTIMIZATION": value}


# ------------------------------------------------------------------ float environment
_FTZ, _DAZ = 1 << 15, 1 << 6  # MXCSR bits: flush-to-zero, denormals-are-zero
_MXCSR = 28  # offset of __mxcsr in glibc's x86-64 fenv_t


def _set_mxcsr(bits: int) -> None:
    """Set MXCSR's FTZ/DAZ bits in this thread through libm (what onnxruntime's
    set_denormal_as_zero does), as a runtime under test may leave them."""
    import ctypes
    import struct

    from sonnx_mul_assurance.conform import fpu

    assert fpu._LIBM is not None
    env = ctypes.create_string_buffer(64)
    fpu._LIBM.fegetenv(env)
    mxcsr = struct.unpack_from("<I", env.raw, _MXCSR)[0]
    struct.pack_into("<I", env, _MXCSR, (mxcsr & ~(_FTZ | _DAZ)) | bits)
    fpu._LIBM.fesetenv(env)


x86_64_glibc = pytest.mark.skipif(
    __import__("platform").machine() != "x86_64" or __import__("platform").libc_ver()[0] != "glibc",
    reason="sets MXCSR through glibc's x86-64 fenv_t",
)


@x86_64_glibc
@pytest.mark.parametrize("bits", [_FTZ, _DAZ, _FTZ | _DAZ], ids=["ftz", "daz", "both"])
def test_flushing_is_detected_and_the_ieee_environment_restored(bits: int) -> None:
    """fpu.flushes sees FTZ alone and DAZ alone; ieee_environment runs its body in
    the default environment (glibc's FE_DFL_ENV) and gives the caller's back."""
    from sonnx_mul_assurance.conform import fpu

    assert not fpu.flushes()
    try:
        _set_mxcsr(bits)
        assert fpu.flushes()
        with fpu.ieee_environment():
            assert not fpu.flushes()
            tiny = np.array([np.float32(2.0**-126)]) * np.float32(0.5)
            assert tiny.view(np.uint32)[0] == 0x00400000  # the subnormal, not 0
        assert fpu.flushes()  # the caller's environment is back
    finally:
        _set_mxcsr(0)
    assert not fpu.flushes()


def test_a_flushing_environment_that_stays_flushing_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When restoring the default environment does not stop the flushing, no
    certified result may be computed: FloatEnvironmentError, the body never runs."""
    from sonnx_mul_assurance.conform import fpu

    class StuckLibm:  # fegetenv/fesetenv that change nothing
        def fegetenv(self, env: object) -> int:
            return 0

        def fesetenv(self, env: object) -> int:
            return 0

    monkeypatch.setattr(fpu, "flushes", lambda: True)
    monkeypatch.setattr(fpu, "_LIBM", StuckLibm())
    ran: list[bool] = []
    with pytest.raises(fpu.FloatEnvironmentError, match="still flushed"), fpu.ieee_environment():
        ran.append(True)
    assert ran == []


def test_opset_1_is_a_valid_opset(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--opset takes every opset from 1 (Mul-1: float16, float, double)."""
    from pathlib import Path

    from sonnx_mul.cli import main

    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    argv = ["conform", "--runtime", "conform_fakes:conforming", "--opset", "1", "--types",
            "float", "--budget", "2^12", "--random", "2^8", "--variants", "single"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr()
    assert main([*argv[:4], "0", *argv[5:]]) == 2
    assert "--opset must be at least 1" in capsys.readouterr().err


# ------------------------------------------------------------------ the pairs tried
EDGE_SETS = {
    "float16": (2300, "d930aca5c14bc5e4"),
    "bfloat16": (5824, "5782a5baacb17f4d"),
    "float": (6144, "f96e1bc1177ba8ff"),
    "double": (35396, "3a589d9b1b18eb1f"),
    "int8": (1587, "c82affb965609324"),
    "int16": (7705, "63f19370e9944256"),
    "int32": (33765, "e2ad99dce488b380"),
    "int64": (141157, "d9bbdf42eaa6c539"),
    "uint8": (549, "ece295a0b5f58187"),
    "uint16": (2246, "858d6855f929c3fc"),
    "uint32": (9096, "501be6cd55e6d5da"),
    "uint64": (36616, "78a5de78cd42cd4e"),
}
"""Size and digest (sha256 of a's then b's bit patterns, little-endian uint64) of
each type's edge set: the pairs every recorded conformance run tried first."""


@pytest.mark.parametrize("name", list(EDGE_SETS))
def test_the_edge_set_is_the_one_recorded_runs_tried(name: str) -> None:
    """cases.py's contract: deterministic per type. The edge set (ties in every
    binade, overflow and underflow thresholds, integer wrap limits) is evidence:
    a run's pair count and reproducers refer to it, so a change to it must be a
    deliberate one that updates this table, never a side effect."""
    import hashlib

    from sonnx_mul.dtypes import by_onnx_name
    from sonnx_mul_assurance.conform import cases

    t = by_onnx_name(name)
    assert t is not None
    e = cases.edge_pairs(t)
    data = (
        e.a.view(t.uint_view).astype("<u8").tobytes()
        + e.b.view(t.uint_view).astype("<u8").tobytes()
    )
    assert (len(e), hashlib.sha256(data).hexdigest()[:16]) == EDGE_SETS[name]


def test_half_the_random_float_pairs_aim_at_the_range_limits() -> None:
    """random_pairs: half the float pairs have exponents summing near overflow or
    near underflow. Seed 0, float32: of the 2048 aimed pairs 459 products fall below
    the smallest normal (uniform bit patterns, the other half: 255; aimed at the
    wrong side of the threshold, emin + m instead of emin - m: 9)."""
    from sonnx_mul.dtypes import by_onnx_name
    from sonnx_mul_assurance.conform import cases

    t = by_onnx_name("float")
    assert t is not None
    c = cases.random_pairs(t, 4096, 0)
    with np.errstate(all="ignore"):
        aimed = c.a[:2048].astype(np.float64) * c.b[:2048].astype(np.float64)
    nonzero = aimed[np.isfinite(aimed) & (aimed != 0)]
    assert (np.abs(nonzero) < np.finfo(np.float32).tiny).sum() > 350


def test_an_unknown_type_name_is_named_as_unknown() -> None:
    with pytest.raises(UsageError, match=r"^unknown element type 'complex64'"):
        cli.parse_types("complex64", 14)
    # a known type the opset's Mul lacks is said differently
    with pytest.raises(UsageError, match=r"^int8 is not a type of Mul at opset 5$"):
        cli.parse_types("int8", 5)


def test_a_runtime_that_cannot_start_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from sonnx_mul_assurance.conform.runtimes import RuntimeUnavailable

    def missing(**_: object) -> None:
        raise RuntimeUnavailable("onnxruntime is not installed")

    monkeypatch.setattr(cli, "OnnxRuntime", missing)
    with pytest.raises(UsageError, match=r"^runtime unavailable: onnxruntime is not installed$"):
        cli.make_runtime(_args("onnxruntime"))


# ------------------------------------------------------------------ renderings
def test_the_text_summary_shows_the_first_example_no_acceptance_and_unsupported_types(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pathlib import Path

    from sonnx_mul.dtypes import by_onnx_name
    from sonnx_mul_assurance.conform import CallableRuntime, run_conformance
    from sonnx_mul_assurance.conform.output import render_text

    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    import conform_fakes

    result = run_conformance(
        CallableRuntime(conform_fakes.saturating), types=[by_onnx_name("int8")],
        budget=1 << 16, random=1 << 12, variants=("single",),
    )  # fmt: skip
    text = render_text(result)
    first, second = result["types"][0]["variants"][0]["examples"][:2]
    shown = "first: {a} * {b} = {got} ({got_bits})"
    assert shown.format(**first) in text and shown.format(**second) not in text
    # the saturating fake refuses every forbidden input: none accepted, said so
    assert "accepted: none" in text
    unsupported = {"type": "float16", "requirement": "F-FLOAT", "status": "not supported",
                   "seconds": 0.25, "reason": "no kernel"}  # fmt: skip
    result["types"].append(unsupported)
    lines = render_text(result).splitlines()
    at = lines.index("F-FLOAT  float16   not supported   - pairs, - mismatches, 0.2 s")
    assert lines[at + 1].strip() == "no kernel"
    # JUnit: the unsupported type is one skipped test; a failure's text is indent=1 JSON
    import xml.etree.ElementTree as ET

    from sonnx_mul_assurance.conform.output import render_junit

    suite = ET.fromstring(render_junit(result)).find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert (suite.get("tests"), suite.get("skipped")) == (str(len(cases)), "1")
    failure = suite.find("testcase/failure")
    assert failure is not None and failure.text is not None
    assert failure.text.startswith('{\n "diagnoses": {\n  "')


def test_a_second_run_into_the_same_folder_rewrites_its_reproducers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    from pathlib import Path

    from sonnx_mul.dtypes import by_onnx_name
    from sonnx_mul_assurance.conform import CallableRuntime, run_conformance

    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    import conform_fakes

    for _ in range(2):
        result = run_conformance(
            CallableRuntime(conform_fakes.saturating), types=[by_onnx_name("uint8")],
            budget=1 << 16, random=1 << 12, variants=("single",), refusals=False,
            out_dir=Path(str(tmp_path)),
        )  # fmt: skip
        repro = Path(result["types"][0]["variants"][0]["reproducer"])
        assert (repro / "a_bits.npy").is_file()


# ------------------------------------------------------------------ runtime adapters
def test_runtime_options_outside_their_lists_are_refused() -> None:
    from sonnx_mul_assurance.conform import OnnxRuntime, OpenVinoRuntime

    with pytest.raises(ValueError, match="graph optimisation level must be one of"):
        OnnxRuntime(graph_optimization="everything")
    with pytest.raises(ValueError, match="execution mode must be one of"):
        OpenVinoRuntime(execution_mode="fastest")
    with pytest.raises(ValueError, match="inference precision must be one of"):
        OpenVinoRuntime(inference_precision="f8")


@pytest.mark.parametrize("module", ["onnxruntime", "openvino"])
def test_a_runtime_not_installed_is_runtime_unavailable(
    monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    import sys

    from sonnx_mul_assurance.conform import OnnxRuntime, OpenVinoRuntime
    from sonnx_mul_assurance.conform.runtimes import RuntimeUnavailable

    monkeypatch.setitem(sys.modules, module, None)  # import then raises ImportError
    runtime = OnnxRuntime if module == "onnxruntime" else OpenVinoRuntime
    with pytest.raises(RuntimeUnavailable, match=f"^{module} is not installed"):
        runtime()


def test_the_model_runtimes_run_the_graph_variant_and_a_callable_does_not() -> None:
    """uses_models: a runtime that takes models is given the graph variant too; a
    bare callable sees only arrays, so that variant would test nothing new."""
    from sonnx_mul_assurance.conform import CallableRuntime, OnnxRuntime, OpenVinoRuntime

    assert OnnxRuntime.uses_models is True and OpenVinoRuntime.uses_models is True
    assert CallableRuntime.uses_models is False


def test_a_plugin_spec_without_module_or_name_is_a_value_error() -> None:
    from sonnx_mul_assurance.conform.runtimes import load_plugin

    for spec in ("conform_fakes", "conform_fakes:", ":conforming"):
        with pytest.raises(ValueError, match="a plug-in runtime is MODULE:NAME"):
            load_plugin(spec)


def test_openvino_results_are_copies_that_the_next_call_does_not_overwrite() -> None:
    """An infer request reuses its output tensor: each result is copied out."""
    from sonnx_mul.dtypes import by_onnx_name
    from sonnx_mul_assurance.conform import OpenVinoRuntime, models

    t = by_onnx_name("float")
    assert t is not None
    run = OpenVinoRuntime(inference_precision="f32").prepare(models.build("single", t, 14))
    first = run(np.full(8, 2.0, np.float32), np.full(8, 3.0, np.float32))
    run(np.full(8, 5.0, np.float32), np.full(8, 7.0, np.float32))
    assert first.tobytes() == np.full(8, 6.0, np.float32).tobytes()


# ------------------------------------------------------------------ the run
def test_every_tail_length_leaves_a_scalar_tail() -> None:
    """run.TAIL_LENGTHS: past 3, each length is 2^k - 1 or 2^k + 1, never a multiple
    of a vector width (4, 8, 16 or 32 lanes), so every slice ends in a scalar tail."""
    from sonnx_mul_assurance.conform import run

    assert run.TAIL_LENGTHS[:3] == (1, 2, 3)
    for n in run.TAIL_LENGTHS[3:]:
        assert (n - 1) & (n - 2) == 0 or (n + 1) & n == 0, n
        assert all(n % w for w in (4, 8, 16, 32)), n
    assert max(run.TAIL_LENGTHS) == 65


def test_one_kind_of_mismatch_shows_two_examples_and_the_default_opset_is_14(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Examples: the first two mismatches, then one per new diagnosis (here every
    mismatch is 'saturated': two). The run records its opset: 14 unless told."""
    from pathlib import Path

    from sonnx_mul.dtypes import by_onnx_name
    from sonnx_mul_assurance.conform import CallableRuntime, run_conformance

    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    import conform_fakes

    result = run_conformance(
        CallableRuntime(conform_fakes.saturating), types=[by_onnx_name("int8")],
        budget=1 << 16, random=1 << 12, variants=("single",), refusals=False,
    )  # fmt: skip
    variant = result["types"][0]["variants"][0]
    assert list(variant["diagnoses"]) == [
        "saturated to the type's range instead of wrapping modulo 2^n"
    ]
    assert len(variant["examples"]) == 2
    assert result["opset"] == 14


def test_the_progress_line_says_time_spent_and_left(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from sonnx_mul_assurance.conform import run

    monkeypatch.setattr(run.time, "monotonic", lambda: 110.0)  # a fixed clock
    out = io.StringIO()
    run.Progress(out).show("int8 single", 50, 100, start=100.0, final=True)
    assert out.getvalue().endswith(" 50.0% 50/100 pairs     10 s,    10 s left\n")


def test_short_tensors_take_the_tail_lengths_in_turn() -> None:
    """docs/conformance.md: ``tails`` feeds lengths 1, 2, 3, 5, 7, 15, 17, 31, 33,
    63, 65 in turn (the last slice holds what is left)."""
    from sonnx_mul_assurance.conform import run

    seen: list[int] = []

    def session(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        seen.append(a.size)
        return a * b

    a = np.arange(300, dtype=np.float32)
    out = run._in_pieces(session, a, a)
    assert seen == [1, 2, 3, 5, 7, 15, 17, 31, 33, 63, 65, 1, 2, 3, 5, 7, 15, 17, 8]
    assert out.tobytes() == (a * a).tobytes()


def test_the_graph_model_of_a_16_bit_float_gets_the_edges_and_2_20_pairs() -> None:
    """docs/conformance.md: 16-bit floats run exhaustively on ``single``; ``graph``
    gets their edge set and 2^20 random pairs."""
    from sonnx_mul.dtypes import by_onnx_name
    from sonnx_mul_assurance.conform import cases, run

    t = by_onnx_name("float16")
    assert t is not None
    plan = cases.plan(t)
    assert plan.mode == "exhaustive"
    _, count = run._variant_chunks("graph", plan)
    assert count == len(cases.edge_pairs(t)) + 2**20


def test_times_are_recorded_to_the_millisecond(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ``seconds`` of a result is rounded to 3 decimals (a clock that ticks
    0.1234567 s per reading would show its fourth decimal otherwise)."""
    import itertools
    import time
    from pathlib import Path

    from sonnx_mul.dtypes import by_onnx_name
    from sonnx_mul_assurance.conform import CallableRuntime, run_conformance

    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    import conform_fakes

    ticks = itertools.count()
    monkeypatch.setattr(time, "perf_counter", lambda: next(ticks) * 0.1234567)
    result = run_conformance(
        CallableRuntime(conform_fakes.saturating), types=[by_onnx_name("int8")],
        budget=1 << 16, random=1 << 12, variants=("single",), refusals=False,
    )  # fmt: skip
    variant = result["types"][0]["variants"][0]
    for value in (variant["seconds"], variant["runtime_seconds"], result["seconds"]):
        assert value == round(value, 3), value


def test_past_the_diagnosis_budget_256_mismatches_per_chunk_and_spread_reproducers() -> None:
    """run._diagnose_chunk: past DIAGNOSED_TOTAL, 256 spread mismatches per chunk are
    still diagnosed; the reproducer's pairs are spread over the chunk's mismatches,
    from the first to the last."""
    from sonnx_mul.dtypes import by_onnx_name
    from sonnx_mul_assurance.conform import run

    t = by_onnx_name("int8")
    assert t is not None
    a = np.arange(-128, 128, dtype=np.int8).repeat(2)
    b = np.tile(np.array([3, 5], np.int8), 256)  # neighbours differ: each pair is its own
    exact = a.astype(np.int32) * b.astype(np.int32)
    expected = exact.astype(np.int8)  # wraps
    got = np.clip(exact, -128, 127).astype(np.int8)  # saturating
    idx = np.flatnonzero(expected != got)
    assert idx.size > 300
    tally = run._Variant("single")
    tally.diagnosed = run.DIAGNOSED_TOTAL
    run._diagnose_chunk(t, tally, "random", a, b, expected, got, idx)
    assert tally.diagnosed - run.DIAGNOSED_TOTAL == 256
    pa, pb = np.concatenate(tally.found_a), np.concatenate(tally.found_b)
    assert (pa[0], pb[0]) == (a[idx[0]], b[idx[0]])
    assert (pa[-1], pb[-1]) == (a[idx[-1]], b[idx[-1]])
    assert pa.size == run.REPRO_PAIRS // 2


def test_out_may_name_a_folder_whose_parents_do_not_exist_yet(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    from pathlib import Path

    from sonnx_mul.cli import main

    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    out = Path(str(tmp_path)) / "runs" / "today"
    argv = ["conform", "--runtime", "conform_fakes:conforming", "--types", "int8",
            "--variants", "single", "--no-refusals", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr()
    assert (out / "conformance.json").is_file()
