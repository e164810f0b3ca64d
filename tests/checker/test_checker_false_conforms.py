"""Six classes of false "conforms", each one a model the checker called
conforming before (checked against commit d21626f) and must not now.

The runtime's behaviour is asserted where onnxruntime can show it (the oracle);
the negative controls put the unsound rule back and the same test fails.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from checker_corpus import build_corpus
from hostile_files import many_graphs_model
from models import ir_multiply, ir_net, ir_parameter, model, vi
from oracle import observe
from sonnx_mul.models import ModelReadError, check_report
from sonnx_mul.models import trusted as trusted_module
from sonnx_mul.models.openvino import check_ir_report

pytest.importorskip("onnxruntime")


def verdict(m: onnx.ModelProto) -> str:
    try:
        return check_report(m).verdict
    except ModelReadError:
        return "invalid"


# ---------------------------------------------------------------- 1. overridable values
def overridable_reshape() -> onnx.ModelProto:
    """x (6,) reshaped by s = [6, 1], an initializer that is also an input (IR 10)."""
    s = nh.from_array(np.array([6, 1], np.int64), "s")
    nodes = [h.make_node("Reshape", ["x", "s"], ["r"]), h.make_node("Mul", ["r", "y"], ["z"])]
    inputs = [vi("x", T.FLOAT, [6]), vi("y", T.FLOAT, [6, 1]), vi("s", T.INT64, [2])]
    return model(nodes, inputs, initializers=[s])


def test_class1_overridable_initializer_value_is_not_a_fact() -> None:
    m = overridable_reshape()
    x, y = np.ones(6, np.float32), np.ones((6, 1), np.float32)
    seen = observe(m, {"x": x, "y": y, "s": np.array([1, 6], np.int64)})
    a, b = seen.operands["Mul#1"]
    assert a.shape == (1, 6) and b.shape == (6, 1)  # the runtime broadcasts to (6, 6)
    assert verdict(m) == "undecided"
    del m.graph.input[2]  # not an input: a constant, its value is a fact
    assert verdict(m) == "conforms"


@pytest.mark.parametrize("op", ["Expand", "Tile"])
def test_class1_other_shape_operands(op: str) -> None:
    value = [2, 3] if op == "Expand" else [2, 1]
    s = nh.from_array(np.array(value, np.int64), "s")
    nodes = [h.make_node(op, ["x", "s"], ["r"]), h.make_node("Mul", ["r", "y"], ["z"])]
    inputs = [vi("x", T.FLOAT, [1, 3]), vi("y", T.FLOAT, [2, 3])]
    owned = model(nodes, inputs, initializers=[s])
    assert verdict(owned) == "conforms"  # a constant shape operand is a fact
    fed = model(nodes, [*inputs, vi("s", T.INT64, [2])], initializers=[s])
    assert verdict(fed) == "undecided"


# ---------------------------------------------------------------- 2. symbol collisions
@pytest.mark.parametrize("n_ifs", [2, 30])
def test_class2_symbols_of_separate_inference_runs_never_match(n_ifs: int) -> None:
    assert verdict(many_graphs_model(n_ifs)) == "undecided"


def test_class2_renamer_keeps_encoded_symbols_only() -> None:
    from sonnx_mul.models.symbols import Encoding, Renamer

    encoding = Encoding()
    short = encoding.param("N")
    names = Renamer(encoding, "3[0, 1, 0]")
    assert names.dim(short) == "N" and names.dim(4) == 4
    assert names.dim("unk__0") != Renamer(encoding, "4[]").dim("unk__0")


# ---------------------------------------------------------------- 3. untrusted inference
def pool_model(ceil_mode: int) -> onnx.ModelProto:
    """MaxPool k=2 s=2 pads end 1 on 6x6: onnx infers 4x4, onnxruntime gives 3x3."""
    pool = h.make_node(
        "MaxPool", ["x"], ["p"], kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 1, 1],
        ceil_mode=ceil_mode,
    )  # fmt: skip
    side = 4 if ceil_mode else 3
    inputs = [vi("x", T.FLOAT, [1, 1, 6, 6]), vi("y", T.FLOAT, [1, 1, side, side])]
    return model([pool, h.make_node("Mul", ["p", "y"], ["z"])], inputs, opset=18)


def test_class3_pooling_with_ceil_mode_is_not_trusted() -> None:
    m = pool_model(1)
    seen = observe(
        m, {"x": np.ones((1, 1, 6, 6), np.float32), "y": np.ones((1, 1, 4, 4), np.float32)}
    )
    assert seen.error is not None or seen.operands["Mul#1"][0].shape == (1, 1, 3, 3)
    assert verdict(m) == "undecided"
    assert verdict(pool_model(0)) == "conforms"  # floor mode: trusted, and right


def test_class3_a_model_declaring_the_runtime_shape_is_not_invalid() -> None:
    m = pool_model(1)
    m.graph.value_info.append(vi("p", T.FLOAT, [1, 1, 3, 3]))  # what onnxruntime produces
    assert verdict(m) != "invalid"


def test_class3_negative_control_trusting_pooling_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Back on the allow-list without its condition, the false "conforms" returns."""
    patched = dict(trusted_module.INFERRED)
    patched["MaxPool"] = trusted_module.Rule()
    monkeypatch.setattr(trusted_module, "INFERRED", patched)
    assert verdict(pool_model(1)) == "conforms"


# ---------------------------------------------------------------- 4. sequences
def test_class4_sequence_chunks_are_unknown() -> None:
    nodes = [
        h.make_node("SplitToSequence", ["x", "k"], ["seq"], axis=0),
        h.make_node("SequenceAt", ["seq", "first"], ["u"]),
        h.make_node("SequenceAt", ["seq", "last"], ["v"]),
        h.make_node("Mul", ["u", "v"], ["z"], name="m"),
    ]
    inits = [
        nh.from_array(np.array(2, np.int64), "k"),
        nh.from_array(np.array(0, np.int64), "first"),
        nh.from_array(np.array(-1, np.int64), "last"),
    ]
    m = model(nodes, [vi("x", T.FLOAT, [5])], initializers=inits)
    seen = observe(m, {"x": np.ones(5, np.float32)})
    a, b = seen.operands["m"]
    assert (a.shape, b.shape) == ((2,), (1,))  # the last chunk is shorter
    assert verdict(m) == "undecided"


# ---------------------------------------------------------------- 5. IR port claims
def test_class5_ir_port_dims_of_other_layers_are_claims() -> None:
    reshape = (
        '<layer id="3" name="r" type="Reshape" version="opset1"><input>'
        '<port id="0" precision="FP32"><dim>1</dim><dim>3</dim></port></input>'
        '<output><port id="1" precision="FP32"><dim>2</dim><dim>3</dim></port></output></layer>'
    )
    xml = ir_net(
        ir_parameter(0, [1, 3]) + ir_parameter(1, [2, 3]) + reshape
        + ir_multiply(2, [2, 3], [2, 3]),
        [(0, 0, 3, 0), (3, 1, 2, 0), (1, 0, 2, 1)],
    )  # fmt: skip
    report = check_ir_report(xml)
    assert report.verdict == "undecided", report


# ---------------------------------------------------------------- 6. invalid models
def _function(overload: str = "") -> onnx.FunctionProto:
    f = h.make_function(
        "local", "f", ["a", "b"], ["c"], [h.make_node("Mul", ["a", "b"], ["c"], name="fm")],
        [h.make_opsetid("", 14)],
    )  # fmt: skip
    f.overload = overload
    return f


def _calling(functions: list[onnx.FunctionProto], overload: str = "") -> onnx.ModelProto:
    call = h.make_node("f", ["x", "y"], ["z"], domain="local", name="call")
    call.overload = overload
    inputs = [vi("x", T.FLOAT, [2, 3]), vi("y", T.FLOAT, [2, 3])]
    return model([call], inputs, functions=functions, extra_opsets=[h.make_opsetid("local", 1)])


def test_class6_duplicate_function_is_invalid() -> None:
    with pytest.raises(ModelReadError, match="more than once"):
        check_report(_calling([_function(), _function()]))


def test_class6_one_call_of_an_overloaded_function_is_checked() -> None:
    report = check_report(_calling([_function("a"), _function("b")], overload="a"))
    assert (report.verdict, report.mul_nodes) == ("conforms", 1)
    bad = _function("b")
    bad.node[0].input[1] = "a"  # Mul(a, a): still conforming, a different body
    assert check_report(_calling([_function("a"), bad], overload="b")).mul_nodes == 1


# ---------------------------------------------------------------- the common patterns
GATES = {
    "efficientnet_block_silu": {"silu1", "silu2"},
    "yolo_block_silu": {"silu1", "silu2"},
    "swish_beta": {"gate"},
    "mobilenetv3_hswish": {"hswish_hardsigmoid", "hswish_relu6"},
    "glu_split": {"glu"},
    "gelu_tanh": {"gate", "x_sq", "x_cube"},
}


def test_silu_swish_hswish_glu_conform_with_a_symbolic_batch() -> None:
    corpus = build_corpus()
    for name, gates in GATES.items():
        report = check_report(corpus[name])
        flagged = {v.node for v in report.violations}
        assert not gates & flagged, (name, report.violations)
        assert report.mul_nodes >= len(gates)


@pytest.mark.parametrize("name", sorted(GATES))
@pytest.mark.parametrize("batch", [1, 3])
def test_corpus_conforming_muls_run_with_equal_operands(name: str, batch: int) -> None:
    """The oracle: onnxruntime multiplies operands of one shape at every gate."""
    m = build_corpus()[name]
    shape = [batch, 8, 32, 32] if "N" in str(m.graph.input[0]) and name != "glu_split" else None
    tokens = name in ("glu_split", "gelu_tanh")
    x = np.ones((batch, 5, 16) if tokens else tuple(shape or ()), np.float32)
    seen = observe(m, {"x": x})
    assert seen.error is None, seen.error
    for gate in GATES[name]:
        a, b = seen.operands[gate]
        assert a.shape == b.shape


def test_corpus_table_in_docs_is_current() -> None:
    """docs/checker-corpus.md is what benchmarks/checker_corpus.py writes today."""
    from pathlib import Path

    from checker_corpus import table

    text = (Path(__file__).resolve().parents[2] / "docs" / "checker-corpus.md").read_text()
    for name, checked, ok, bad, unsure in table():
        assert f"| {name} | {checked} | {ok} | {bad} | {unsure} |" in text, name


# ---------------------------------------------------------------- negative controls
def test_negative_control_symbols_shared_across_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the renaming, the two runs' ``unk__0`` match and class 2 conforms again."""
    from sonnx_mul.models import facts

    monkeypatch.setattr(facts.Renamer, "dim", lambda self, d: d)
    assert verdict(many_graphs_model(30)) == "conforms"


def test_negative_control_overridable_value_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the overridable rule, class 1 conforms again."""
    from sonnx_mul.models import checker

    real = checker.Facts
    monkeypatch.setattr(checker, "Facts", lambda overridable: real(frozenset()))
    assert verdict(overridable_reshape()) == "conforms"
