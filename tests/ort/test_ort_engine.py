"""The onnxruntime engine: every Mul on the certified kernel inside onnxruntime.

Bits are compared as unsigned integers. Each rule was seen to fail with a
fault planted by hand: the rewrite skipped (onnxruntime's own Mul runs),
onnxruntime-extensions' own result hook (its list round trip flushes
subnormal products under denormals-as-zero), the run-time refusal dropped.
"""
# @relation(F, R1, R4, scope=file)

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import sonnx_mul.models.ort as engine_module
from sonnx_mul import ProfileError, mul
from sonnx_mul.cli import main
from sonnx_mul.models import Backend
from sonnx_mul.models.ort import EngineUnsupported, InferenceSession

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import ort_models  # the bench's realistic models, run here for bits

OPSET = [h.make_opsetid("", 21)]


def bits(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array)
    return array.view(f"u{array.dtype.itemsize}")


def vi(name: str, elem: int, shape: list[int | str] | None) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, shape)


def make(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[str],
         elem: int, **kw: object) -> onnx.ModelProto:  # fmt: skip
    graph = h.make_graph(nodes, "g", inputs, [vi(o, elem, None) for o in outputs])
    return h.make_model(graph, opset_imports=OPSET, ir_version=10, **kw)


def tapped(model: onnx.ModelProto) -> tuple[onnx.ModelProto, list[onnx.NodeProto]]:
    """The model with every Mul's operands and product as graph outputs too."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    muls = [n for n in out.graph.node if n.op_type == "Mul"]
    have = {o.name for o in out.graph.output}
    for name in dict.fromkeys(x for n in muls for x in [*n.input, n.output[0]]):
        if name not in have and name not in {i.name for i in out.graph.initializer}:
            out.graph.output.append(vi(name, T.FLOAT, None))
    return out, muls


# ---------------------------------------------------------------- bits, both engines
@pytest.mark.parametrize("build", list(ort_models.MODELS.values()), ids=list(ort_models.MODELS))
def test_realistic_models_every_mul_is_the_certified_product(
    build: Callable[[], tuple[onnx.ModelProto, dict[str, np.ndarray]]],
) -> None:
    """MatMul, Conv, Softmax... differ between runtimes in the last bits (summation
    order), so each engine's Mul outputs are compared with ``mul`` of the operands
    that engine computed; the model's output too, where Mul is last."""
    model, feeds = build()
    probe, muls = tapped(model)
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in probe.graph.initializer}
    names = [o.name for o in probe.graph.output]
    session = InferenceSession(probe)
    assert session.certified_nodes == len(muls) >= 2
    for run in (
        lambda: session.run(None, feeds),
        lambda: list(Backend.prepare(probe).run(feeds)),
    ):
        values = {**inits, **dict(zip(names, run(), strict=True))}
        for node in muls:
            a, b = (values[x] for x in node.input)
            want = mul(np.asarray(a), np.asarray(b))
            assert np.array_equal(bits(values[node.output[0]]), bits(want)), node.name


EXACT_TYPES = {
    T.FLOAT: np.float32, T.DOUBLE: np.float64, T.INT8: np.int8, T.INT16: np.int16,
    T.INT32: np.int32, T.INT64: np.int64, T.UINT8: np.uint8, T.UINT16: np.uint16,
    T.UINT32: np.uint32, T.UINT64: np.uint64,
}  # fmt: skip


def random_bits(dtype: type, shape: tuple[int, ...], seed: int) -> np.ndarray:
    size = np.dtype(dtype).itemsize
    raw = np.random.default_rng(seed).integers(0, 256, int(np.prod(shape)) * size, np.uint8)
    return raw.view(dtype).reshape(shape)


@pytest.mark.parametrize("elem", list(EXACT_TYPES), ids=[T.DataType.Name(t) for t in EXACT_TYPES])
def test_mixed_model_bit_identical_on_both_engines(elem: int) -> None:
    """Mul between operators both runtimes compute exactly (Transpose, Reshape, Concat,
    Neg/Abs on signed types, Identity), random bit patterns in (NaNs, subnormals,
    wrapping products): every output bit-identical between the two engines."""
    dtype = EXACT_TYPES[elem]
    signed = np.dtype(dtype).kind in "if"
    n = h.make_node
    shape = h.make_tensor("shape", T.INT64, [2], [8, 6])
    nodes = [
        n("Transpose", ["a"], ["at"], perm=[1, 0]),
        n("Mul", ["at", "b"], ["m1"], name="first"),
        n("Neg" if signed else "Identity", ["m1"], ["m2"]),
        n("Reshape", ["m2", "shape"], ["m3"]),
        n("Mul", ["m3", "c"], ["m4"], name="second"),
        n("Concat", ["m4", "m3"], ["y"], axis=0),
    ]
    inputs = [vi("a", elem, [4, 12]), vi("b", elem, [12, 4]), vi("c", elem, [8, 6])]
    model = make(nodes, inputs, ["y", "m1"], elem)
    model.graph.initializer.append(shape)
    feeds = {
        "a": random_bits(dtype, (4, 12), 1),
        "b": random_bits(dtype, (12, 4), 2),
        "c": random_bits(dtype, (8, 6), 3),
    }
    session = InferenceSession(model)
    assert session.certified_nodes == 2
    ours = session.run(None, feeds)
    reference = Backend.prepare(model).run(feeds)
    for x, y in zip(ours, reference, strict=True):
        assert np.array_equal(bits(x), bits(np.asarray(y)))


# ---------------------------------------------------------------- served by the certified kernel
NAN_PAYLOAD = 0x7FC12345  # a quiet NaN with a payload: x86 multiplication propagates it


def nan_model() -> onnx.ModelProto:
    nodes = [h.make_node("Mul", ["a", "b"], ["m"], name="m"), h.make_node("Abs", ["m"], ["y"])]
    return make(nodes, [vi("a", T.FLOAT, [3]), vi("b", T.FLOAT, [3])], ["y"], T.FLOAT)


def test_nan_payload_kept_by_onnxruntime_made_canonical_by_the_engine() -> None:
    """onnxruntime's own Mul keeps the payload; the engine's output is the certified
    kernel's canonical NaN, as the reference engine's: the Mul ran on the kernel."""
    feeds = {
        "a": np.array([NAN_PAYLOAD, 0x3F800000, 0x7F800000], np.uint32).view(np.float32),
        "b": np.array([0x3F800000, NAN_PAYLOAD, 0x00000000], np.uint32).view(np.float32),
    }
    model = nan_model()
    plain = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    kept = bits(plain.run(None, feeds)[0])
    assert kept[0] == NAN_PAYLOAD  # what the test relies on: onnxruntime keeps it
    ours = bits(InferenceSession(model).run(None, feeds)[0])
    reference = bits(np.asarray(Backend.prepare(model).run(feeds)[0]))
    canonical = bits(mul(feeds["a"], feeds["b"]))
    assert ours[0] != kept[0]
    assert np.array_equal(ours, reference)
    assert np.array_equal(ours, bits(np.abs(canonical.view(np.float32))))


def test_mul_in_a_model_local_function_and_in_a_subgraph_is_certified() -> None:
    """Functions are inlined, If branches rewritten: canonical NaN from both."""
    fn = h.make_function(
        "local", "Scale", ["x", "y"], ["z"], [h.make_node("Mul", ["x", "y"], ["z"])], OPSET
    )
    branch = h.make_graph(
        [h.make_node("Mul", ["a", "b"], ["t"], name="in_branch")], "then", [],
        [vi("t", T.FLOAT, [3])],
    )  # fmt: skip
    other = h.make_graph(
        [h.make_node("Identity", ["a"], ["e"])], "else", [], [vi("e", T.FLOAT, [3])]
    )
    nodes = [
        h.make_node("Scale", ["a", "b"], ["f"], domain="local", name="call"),
        h.make_node("If", ["cond"], ["g"], then_branch=branch, else_branch=other),
    ]
    inputs = [vi("a", T.FLOAT, [3]), vi("b", T.FLOAT, [3]), vi("cond", T.BOOL, [])]
    model = make(nodes, inputs, ["f", "g"], T.FLOAT, functions=[fn])
    model.opset_import.append(h.make_opsetid("local", 1))
    session = InferenceSession(model)
    assert session.certified_nodes == 2
    feeds = {
        "a": np.array([NAN_PAYLOAD, 1, 2], np.uint32).view(np.float32),
        "b": np.ones(3, np.float32),
        "cond": np.array(True),
    }
    for out in session.run(None, feeds):
        assert bits(out)[0] == bits(mul(feeds["a"], feeds["b"]))[0] != NAN_PAYLOAD


# ---------------------------------------------------------------- session options
DAZ_SCRIPT = """
import ctypes, json, sys
import numpy as np, onnxruntime as ort
from onnx import TensorProto as T, helper as h
import sonnx_mul.models.ort as engine
from sonnx_mul.models import Backend

threads, leave_mxcsr = int(sys.argv[1]), sys.argv[2]
if leave_mxcsr:  # negative control: a Mul that leaves the default MXCSR behind
    lib = ctypes.CDLL(leave_mxcsr)
    certified = engine.mul
    def leaky(*args, **kwargs):
        result = certified(*args, **kwargs)
        lib.sonnx_test_set_mxcsr(0x1F80)
        return result
    engine.mul = leaky
vi = h.make_tensor_value_info
nodes = [h.make_node("Mul", ["a", "b"], ["m"], name="m1"),
         h.make_node("Mul", ["m", "b"], ["y"], name="m2"),
         h.make_node("Add", ["y", "zero"], ["z"], name="after")]
inputs = [vi("a", T.FLOAT, [4]), vi("b", T.FLOAT, [4]), vi("zero", T.FLOAT, [4])]
graph = h.make_graph(nodes, "g", inputs, [vi(n, T.FLOAT, None) for n in ("y", "m", "z")])
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 21)], ir_version=10)
a = np.array([1, 0x00400000, 0x807FFFFF, 713624], np.uint32).view(np.float32)
feeds = {"a": a, "b": np.ones(4, np.float32), "zero": np.zeros(4, np.float32)}

def options():
    opts = ort.SessionOptions()
    opts.add_session_config_entry("session.set_denormal_as_zero", "1")
    opts.intra_op_num_threads = threads
    return opts

plain = ort.InferenceSession(model.SerializeToString(), options(),
                             providers=["CPUExecutionProvider"]).run(None, feeds)
ours = engine.InferenceSession(model, options()).run(None, feeds)
reference = Backend.prepare(model).run(feeds)
u = lambda xs: [np.asarray(x).view(np.uint32).tolist() for x in xs]
print(json.dumps({"a": u([a])[0], "plain": u(plain), "ours": u(ours), "reference": u(reference)}))
"""
FLUSHED = (0, 0x80000000)


def run_daz_script(threads: int, leave_mxcsr: str = "") -> dict[str, list[list[int]]]:
    done = subprocess.run(
        [sys.executable, "-c", DAZ_SCRIPT, str(threads), leave_mxcsr], capture_output=True,
        text=True, timeout=120, check=True,
    )  # fmt: skip
    result: dict[str, list[list[int]]] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("threads", [1, 2])
def test_denormals_as_zero_and_threads_do_not_change_the_bits(threads: int) -> None:
    """With ``session.set_denormal_as_zero`` onnxruntime sets FTZ/DAZ in the thread
    that creates the session: its own Mul flushes the subnormal products (checked:
    the option is in force), the engine's, through two chained Mul nodes, stay the
    reference engine's; and onnxruntime's Add after them still flushes: the
    environment onnxruntime set is back after each certified call. In a fresh
    interpreter: the thread's environment is what is under test, and the tests
    before this one leave theirs in it."""
    result = run_daz_script(threads)
    assert all(v in FLUSHED for out in result["plain"] for v in out)  # the option is in force
    y, m, z = result["ours"]
    assert [y, m] == result["reference"][:2]
    assert y == m == result["a"]  # the subnormal products themselves
    assert all(v in FLUSHED for v in z)  # onnxruntime's own environment, restored


def test_negative_control_a_mul_that_leaves_its_environment_is_seen(
    tmp_path: Path,
) -> None:
    """The same run with a Mul that leaves the default MXCSR behind: the Add after it
    no longer flushes, and the rule above sees it."""
    library = tmp_path / "libmxcsr.so"
    source = Path(__file__).resolve().parents[1] / "operator" / "native" / "mxcsr.c"
    compiler = shutil.which("gcc")
    assert compiler is not None
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-O2", str(source), "-o", str(library)], check=True
    )
    _, _, z = run_daz_script(1, str(library))["ours"]
    assert not all(v in FLUSHED for v in z)


# ---------------------------------------------------------------- refusals
def broadcast_model() -> onnx.ModelProto:
    nodes = [h.make_node("Mul", ["a", "b"], ["m"], name="mul0"), h.make_node("Relu", ["m"], ["y"])]
    return make(nodes, [vi("a", T.FLOAT, ["n"]), vi("b", T.FLOAT, ["k"])], ["y"], T.FLOAT)


def test_run_time_broadcast_is_the_reference_engines_profile_error() -> None:
    model = broadcast_model()
    feeds = {"a": np.ones(3, np.float32), "b": np.ones(1, np.float32)}
    with pytest.raises(ProfileError) as ours:
        InferenceSession(model).run(None, feeds)
    with pytest.raises(ProfileError) as reference:
        Backend.prepare(model).run(feeds)
    assert type(ours.value) is type(reference.value)
    assert ours.value.requirements == reference.value.requirements == ("R1", "R4")
    assert str(ours.value) == str(reference.value)


def write_inputs(tmp_path: Path, model: onnx.ModelProto, **arrays: np.ndarray) -> list[str]:
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    argv = ["run", str(path), "--out", str(tmp_path / "out")]
    for name, array in arrays.items():
        np.save(tmp_path / f"{name}.npy", array)
        argv += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    return argv


def test_cli_run_time_broadcast_exit_1_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = write_inputs(
        tmp_path, broadcast_model(), a=np.ones(3, np.float32), b=np.ones(1, np.float32)
    )
    assert main([*argv, "--engine", "onnxruntime"]) == 1
    captured = capsys.readouterr()
    line = captured.err.strip()
    assert "\n" not in line and "R1, R4" in line and "'mul0' (Mul" in line, captured.err
    assert captured.out == "" and not (tmp_path / "out").exists()


def test_cli_says_which_engine_ran(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = write_inputs(tmp_path, nan_model(), a=np.ones(3, np.float32), b=np.ones(3, np.float32))
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith("engine: onnxruntime (default), 1 Mul node(s)")
    assert main([*argv, "--engine", "reference"]) == 0
    assert capsys.readouterr().out.startswith("engine: reference\n")


@pytest.mark.parametrize("as_json", [False, True])
def test_cli_unknown_engine_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    argv = write_inputs(tmp_path, nan_model(), a=np.ones(3, np.float32), b=np.ones(3, np.float32))
    argv += ["--engine", "tensorrt"] + (["--format", "json"] if as_json else [])
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and captured.out == "" and not (tmp_path / "out").exists()
    message = json.loads(lines[0])["error"] if as_json else lines[0]
    assert "--engine" in message and "tensorrt" in message


def float16_model() -> onnx.ModelProto:
    nodes = [h.make_node("Mul", ["a", "b"], ["y"], name="half")]
    return make(nodes, [vi("a", T.FLOAT16, [2]), vi("b", T.FLOAT16, [2])], ["y"], T.FLOAT16)


def test_a_type_pyop_cannot_carry_is_refused_by_name_or_run_on_the_reference_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(EngineUnsupported, match=r"'half'.*float16"):
        InferenceSession(float16_model())
    ones = np.ones(2, np.float16)
    argv = write_inputs(tmp_path, float16_model(), a=ones, b=ones)
    assert main([*argv, "--engine", "onnxruntime"]) == 2
    assert "float16" in capsys.readouterr().err
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert (
        out.startswith("engine: reference (onnxruntime cannot run this model: ")
        and "float16" in out
    )


def test_a_mul_spelled_ai_onnx_is_certified_too() -> None:
    """onnxruntime runs ``ai.onnx`` nodes as the default domain: left alone, that Mul
    would run uncertified."""
    node = h.make_node("Mul", ["a", "b"], ["y"], name="spelled", domain="ai.onnx")
    model = make([node], [vi("a", T.FLOAT, [2]), vi("b", T.FLOAT, [2])], ["y"], T.FLOAT)
    model.opset_import[0].domain = "ai.onnx"
    session = InferenceSession(model)
    assert session.certified_nodes == 1
    a = np.array([NAN_PAYLOAD, 1], np.uint32).view(np.float32)
    out = session.run(None, {"a": a, "b": np.ones(2, np.float32)})[0]
    assert bits(out)[0] == bits(mul(a, np.ones(2, np.float32)))[0] != NAN_PAYLOAD


def test_without_the_extra_the_default_is_reference_and_asking_for_onnxruntime_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_module, "available", lambda: False)
    argv = write_inputs(tmp_path, nan_model(), a=np.ones(3, np.float32), b=np.ones(3, np.float32))
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith("engine: reference (default)\n")
    assert main([*argv, "--engine", "onnxruntime"]) == 2
    assert "sonnx-mul[onnxruntime]" in capsys.readouterr().err


@pytest.mark.parametrize("dtype", ["f4", "f8", "i2", "i8", "u4"])
def test_feeds_in_the_other_byte_order_are_read_by_value(dtype: str) -> None:
    """A big-endian feed gives the bits of the same values fed natively, as the
    reference engine gives them: onnxruntime alone would read the buffer as native."""
    elem = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    model = make(
        [h.make_node("Mul", ["a", "b"], ["y"], name="m")],
        [vi("a", elem, [2, 3]), vi("b", elem, [2, 3])],
        ["y"],
        elem,
    )
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype)
    b = (a + 1).astype(dtype)
    swapped = {"a": a.astype(">" + dtype), "b": b.astype(">" + dtype)}
    assert not swapped["a"].dtype.isnative  # the case under test (a little-endian machine)
    ours = InferenceSession(model).run(None, swapped)[0]
    reference = np.asarray(Backend.prepare(model).run(swapped)[0])
    assert ours.dtype.isnative
    assert np.array_equal(bits(ours), bits(reference.astype(dtype)))
    assert np.array_equal(bits(ours), bits(a * b))


def two_floats(
    *nodes: onnx.NodeProto, opsets: list[onnx.OperatorSetIdProto] = OPSET
) -> onnx.ModelProto:
    graph = h.make_graph(
        list(nodes), "g", [vi("a", T.FLOAT, [2]), vi("b", T.FLOAT, [2])], [vi("y", T.FLOAT, None)]
    )
    return h.make_model(graph, opset_imports=opsets, ir_version=10)


def test_the_session_answers_onnxruntimes_input_and_output_queries() -> None:
    session = InferenceSession(two_floats(h.make_node("Mul", ["a", "b"], ["y"], name="m")))
    assert [i.name for i in session.get_inputs()] == ["a", "b"]
    assert [(o.name, o.type) for o in session.get_outputs()] == [("y", "tensor(float)")]


def test_a_feed_onnxruntime_refuses_before_any_node_is_an_error_naming_no_node() -> None:
    session = InferenceSession(two_floats(h.make_node("Mul", ["a", "b"], ["y"], name="m")))
    with pytest.raises(engine_module.EngineRunError, match="Unexpected input data type") as raised:
        session.run(None, {"a": np.ones(2, np.float64), "b": np.ones(2, np.float32)})
    assert raised.value.node is None


def test_R1_R4_a_refusal_is_raised_when_onnxruntime_then_fails_on_its_stand_in() -> None:
    """The refused Mul's zeros let the graph go on; a later node failing on them (a
    Reshape to the wrong size) must not hide the refusal, which is what is raised."""
    nodes = [
        h.make_node("Mul", ["a", "b"], ["m"], name="mul0"),
        h.make_node("Reshape", ["m", "s"], ["y"], name="reshape"),
    ]
    inputs = [vi("a", T.FLOAT, ["n"]), vi("b", T.FLOAT, ["k"]), vi("s", T.INT64, [1])]
    session = InferenceSession(make(nodes, inputs, ["y"], T.FLOAT))
    feeds = {"a": np.ones(3, np.float32), "b": np.ones(1, np.float32), "s": np.array([2])}
    with pytest.raises(ProfileError) as raised:
        session.run(None, feeds)
    assert raised.value.requirements == ("R1", "R4")
    assert "Reshape" in str(raised.value.__cause__)  # onnxruntime's own failure, kept as cause


def test_R4_certify_refuses_the_legacy_broadcast_attribute_itself() -> None:
    """The checker refuses broadcast=1 first (R4); the rewrite refuses it too, should it ever
    be called on a model the checker has not seen. broadcast=0 is certified."""
    legacy = [h.make_opsetid("", 6)]
    with pytest.raises(ProfileError, match="legacy attribute broadcast=1") as raised:
        engine_module.certify(
            two_floats(h.make_node("Mul", ["a", "b"], ["y"], broadcast=1), opsets=legacy)
        )
    assert raised.value.requirements == ("R4",)
    session = InferenceSession(
        two_floats(h.make_node("Mul", ["a", "b"], ["y"], name="m", broadcast=0), opsets=legacy)
    )
    assert session.certified_nodes == 1
    a, b = np.array([1.5, -2], np.float32), np.array([3, 0.25], np.float32)
    assert bits(session.run(None, {"a": a, "b": b})[0]).tolist() == bits(a * b).tolist()


def test_a_mul_in_a_graphs_attribute_is_certified_and_the_domain_imported_once() -> None:
    """A node's list of graphs (AttributeProto.graphs, which no standard operator has but
    a custom one may) is walked like a single graph: its Mul is rewritten too."""
    body = h.make_graph(
        [h.make_node("Mul", ["a", "a"], ["t"], name="inner")], "body", [], [vi("t", T.FLOAT, None)]
    )
    holder = h.make_node("Holder", ["a"], ["y"], name="holder", domain="custom.test")
    holder.attribute.append(h.make_attribute("bodies", [body]))
    opsets = [*OPSET, h.make_opsetid("custom.test", 1), h.make_opsetid(engine_module.DOMAIN, 1)]
    rewritten, count = engine_module.certify(two_floats(holder, opsets=opsets))
    assert count == 1
    inner = rewritten.graph.node[0].attribute[0].graphs[0].node[0]
    assert (inner.op_type, inner.domain) == ("SonnxCertifiedMul_float", engine_module.DOMAIN)
    imported = [o.domain for o in rewritten.opset_import]
    assert imported.count(engine_module.DOMAIN) == 1


def test_another_python_custom_op_in_the_model_runs_its_own_kernel() -> None:
    """onnxruntime-extensions calls one hook for every Python custom op: ours answers
    the certified Mul and hands every other op to the library's own hook."""
    from onnxruntime_extensions import PyCustomOpDef, onnx_op

    @onnx_op(
        op_type="SonnxTestNegate", inputs=[PyCustomOpDef.dt_float], outputs=[PyCustomOpDef.dt_float]
    )
    def negate(x: np.ndarray) -> np.ndarray:
        return -x

    model = two_floats(
        h.make_node("SonnxTestNegate", ["a"], ["n"], name="neg", domain="ai.onnx.contrib"),
        h.make_node("Mul", ["n", "b"], ["y"], name="m"),
        opsets=[*OPSET, h.make_opsetid("ai.onnx.contrib", 1)],
    )
    model.graph.value_info.append(vi("n", T.FLOAT, [2]))
    session = InferenceSession(model)
    assert session.certified_nodes == 1
    out = session.run(None, {"a": np.array([1, 2], np.float32), "b": np.array([3, 4], np.float32)})
    assert out[0].tolist() == [-3, -8]
