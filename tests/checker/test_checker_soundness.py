"""No false "conforms": declarations never override facts (issue 12).

Each case was reported as conforming by the checker before this fix
(checked against that version) while onnxruntime broadcasts or refuses the
types; the runtime's behaviour is asserted here too, as the oracle.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from models import model, vi
from sonnx_mul.models import ModelReadError, check_model

ort = pytest.importorskip("onnxruntime")


def run_ort(m: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return list(session.run(None, feeds))


def not_conforming(m: onnx.ModelProto) -> str:
    """'invalid' (ModelReadError) or 'violates' (a definite violation); fails on conforms."""
    try:
        found = check_model(m)
    except ModelReadError:
        return "invalid"
    assert found, "reported as conforming"
    assert any(v.definite for v in found), found
    return "violates"


X = np.ones((2, 3), np.float32)
W3 = nh.from_array(np.arange(3, dtype=np.float32), "w")
MUL = h.make_node("Mul", ["x", "w"], ["z"], name="m")


def test_value_info_does_not_override_an_initializer() -> None:
    m = model([MUL], [vi("x", T.FLOAT, [2, 3])], initializers=[W3])
    m.graph.value_info.append(vi("w", T.FLOAT, [2, 3]))
    assert run_ort(m, {"x": X})[0].shape == (2, 3)  # the runtime broadcasts (3,) to (2, 3)
    assert not_conforming(m) == "invalid"


def test_false_graph_output_shape_does_not_override_inference() -> None:
    nodes = [h.make_node("Identity", ["w"], ["t"]), h.make_node("Mul", ["x", "t"], ["z"])]
    m = model(nodes, [vi("x", T.FLOAT, [2, 3])], initializers=[W3])
    m.graph.output.append(vi("t", T.FLOAT, [2, 3]))
    out = run_ort(m, {"x": X})
    assert out[0].shape == (2, 3) and out[1].shape == (3,)  # lenient merge, then broadcast
    assert not_conforming(m) == "invalid"


def test_false_value_info_of_a_node_output() -> None:
    nodes = [h.make_node("Identity", ["w"], ["t"]), h.make_node("Mul", ["x", "t"], ["z"])]
    m = model(nodes, [vi("x", T.FLOAT, [2, 3])], initializers=[W3])
    m.graph.value_info.append(vi("t", T.FLOAT, [2, 3]))
    assert run_ort(m, {"x": X})[0].shape == (2, 3)
    assert not_conforming(m) == "invalid"


def test_initializer_type_differs_from_its_value_info() -> None:
    w = nh.from_array(np.ones((2, 3), np.float64), "w")
    m = model([MUL], [vi("x", T.FLOAT, [2, 3])], initializers=[w])
    m.graph.value_info.append(vi("w", T.FLOAT, [2, 3]))
    with pytest.raises(Exception, match="bound to different types"):
        run_ort(m, {"x": X})
    assert not_conforming(m) == "invalid"


@pytest.mark.parametrize("declared", [(T.FLOAT, [2, 3]), (T.DOUBLE, [3])])
def test_initializer_contradicting_its_graph_input(declared: tuple[int, list[int]]) -> None:
    w = nh.from_array(np.ones((2, 3), np.float64), "w")
    m = model([MUL], [vi("x", T.DOUBLE, [2, 3]), vi("w", *declared)], initializers=[w])
    with pytest.raises(Exception, match="initializer"):
        run_ort(m, {"x": X.astype(np.float64)})  # onnxruntime refuses it as well
    with pytest.raises(ModelReadError, match="initializer 'w'"):
        check_model(m)


def _int8_mul(first: int, second: int, first_domain: str = "") -> onnx.ModelProto:
    m = model([h.make_node("Mul", ["x", "y"], ["z"])], [vi("x", T.INT8, [2]), vi("y", T.INT8, [2])])
    del m.opset_import[:]
    m.opset_import.extend([h.make_opsetid(first_domain, first), h.make_opsetid("", second)])
    return m


@pytest.mark.parametrize(("first", "domain"), [(14, ""), (14, "ai.onnx"), (13, "ai.onnx")])
def test_duplicate_default_opset_imports_refused(first: int, domain: str) -> None:
    m = _int8_mul(first, 27 - first, domain)
    feeds = {"x": np.ones(2, np.int8), "y": np.ones(2, np.int8)}
    if 27 - first == 13:  # onnxruntime takes the LAST import: Mul-13 has no int8
        with pytest.raises(Exception, match="invalid"):
            run_ort(m, feeds)
    with pytest.raises(ModelReadError, match="more than once"):
        check_model(m)


def test_duplicate_opset_import_in_a_function_refused() -> None:
    f = h.make_function(
        "local", "f", ["a", "b"], ["c"], [h.make_node("Mul", ["a", "b"], ["c"])],
        [h.make_opsetid("", 14), h.make_opsetid("ai.onnx", 13)],
    )  # fmt: skip
    node = h.make_node("f", ["x", "y"], ["z"], domain="local")
    m = model([node], [vi("x", T.INT8, [2]), vi("y", T.INT8, [2])], functions=[f],
              extra_opsets=[h.make_opsetid("local", 1)])  # fmt: skip
    with pytest.raises(ModelReadError, match="more than once"):
        check_model(m)


def test_overridable_initializer_is_judged_as_the_runtime_runs_it() -> None:
    """IR >= 4: the default (1, 3) value broadcasts against x (N, 3) for N = 2."""
    w = nh.from_array(np.ones((1, 3), np.float32), "w")
    inputs = [vi("x", T.FLOAT, ["N", 3]), vi("w", T.FLOAT, ["N", 3])]
    m = model([MUL], inputs, initializers=[w])
    assert run_ort(m, {"x": X})[0].shape == (2, 3)  # w not fed: its default is used
    found = check_model(m)
    assert found and {v.requirement for v in found} >= {"R1"}


def test_ir3_initializer_is_a_constant() -> None:
    w = nh.from_array(np.ones((2, 3), np.float32), "w")
    m = model([MUL], [vi("x", T.FLOAT, [2, 3]), vi("w", T.FLOAT, ["N", 3])], initializers=[w])
    m.ir_version = 3
    with pytest.raises(Exception, match="Invalid input name"):
        run_ort(m, {"x": X, "w": X})  # not overridable before IR 4
    assert check_model(m) == []


def test_subgraph_input_declaration_does_not_override() -> None:
    """A Loop body input declared (2, 3) while the carried value is (3,): never conforms."""
    body = h.make_graph(
        [h.make_node("Mul", ["v", "x"], ["v2"]), h.make_node("Identity", ["c"], ["c2"])],
        "body",
        [vi("i", T.INT64, []), vi("c", T.BOOL, []), vi("v", T.FLOAT, [2, 3])],
        [vi("c2", T.BOOL, []), vi("v2")],
    )
    loop = h.make_node("Loop", ["n", "", "w"], ["z"], body=body)
    m = model([loop], [vi("x", T.FLOAT, [2, 3]), vi("n", T.INT64, [])], initializers=[W3])
    found = check_model(m)
    assert found and {v.requirement for v in found} == {"R1"}
