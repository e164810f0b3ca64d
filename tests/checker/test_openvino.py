"""sonnx_mul.models.openvino.check_ir on OpenVINO IR Multiply-1 layers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from models import ir_multiply, ir_net, ir_parameter, ir_port, ir_unary, ir_xml
from sonnx_mul import requirements
from sonnx_mul.models import ModelReadError, Violation
from sonnx_mul.models.openvino import check_ir, check_ir_report


def reqs(violations: list[Violation]) -> set[str]:
    return {v.requirement for v in violations}


def test_none_broadcast_identical_dims_conforms() -> None:
    assert check_ir(ir_xml([256, 56], [256, 56], broadcast="none")) == []


def test_numpy_default_identical_dims_conforms() -> None:
    assert check_ir(ir_xml([256, 56], [256, 56])) == []  # no <data>: numpy
    assert check_ir(ir_xml([2, 3], [2, 3], broadcast="numpy")) == []


def test_R4_numpy_broadcast_different_dims() -> None:
    found = check_ir(ir_xml([8, 1, 6, 1], [7, 1, 5], broadcast="numpy"))
    assert reqs(found) == {"R1", "R4"}
    assert {(v.node, v.path) for v in found} == {("mul", "ir")}
    for v in found:
        requirements.get(v.requirement)


def test_R4_numpy_default_different_dims() -> None:
    assert reqs(check_ir(ir_xml([2, 3], [3]))) == {"R1", "R4"}


def test_R4_pdpd_broadcast_refused() -> None:
    assert reqs(check_ir(ir_xml([2, 3], [2, 3], broadcast="pdpd"))) == {"R4"}


def test_R1_none_broadcast_different_dims() -> None:
    assert reqs(check_ir(ir_xml([2, 3], [3, 2], broadcast="none"))) == {"R1"}


def test_R1_dynamic_dims_cannot_be_shown() -> None:
    found = check_ir(ir_xml([-1, 3], [-1, 3]))
    assert reqs(found) == {"R1"} and not found[0].definite


def test_R1_DIMS_zero_dim() -> None:
    assert reqs(check_ir(ir_xml([0, 3], [0, 3]))) == {"R1-DIMS"}


@pytest.mark.parametrize("precision", ["FP16", "BF16", "FP64", "I8", "U16", "I64", "U64"])
def test_R3_supported_precisions_conform(precision: str) -> None:
    assert check_ir(ir_xml([2], [2], precision_a=precision)) == []


@pytest.mark.parametrize("precision", ["BOOL", "BOOLEAN", "U1", "I4", "U4", "F8E4M3", "STRING"])
def test_R3_unsupported_precision(precision: str) -> None:
    assert reqs(check_ir(ir_xml([2], [2], precision_a=precision))) == {"R3"}


def test_R3_SAME_mismatched_precisions() -> None:
    found = check_ir(ir_xml([2], [2], precision_a="FP32", precision_b="FP16"))
    assert reqs(found) == {"R3", "R3-SAME"}


def _body(net: bytes) -> str:
    """The <layers> and <edges> of a net, to nest as a body."""
    return net.decode().split('version="11">', 1)[1].rsplit("</net>", 1)[0]


def test_nested_body_layers_are_checked() -> None:
    inner = _body(ir_xml([2, 3], [3]))
    doc = (
        '<net name="outer" version="11"><layers><layer id="0" name="loop" type="Loop" '
        f'version="opset5"><body>{inner}</body></layer></layers></net>'
    )
    found = check_ir(doc.encode())
    assert reqs(found) == {"R1", "R4"} and {v.path for v in found} == {"outer/loop.body"}


def test_path_input(tmp_path: Path) -> None:
    path = tmp_path / "model.xml"
    path.write_bytes(ir_xml([2, 3], [3]))
    assert reqs(check_ir(path)) == {"R1", "R4"}
    with pytest.raises(ModelReadError):
        check_ir(tmp_path / "missing.xml")


BILLION_LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY a "aaaaaaaaaa">'
    '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>\n'
)
EXTERNAL_ENTITY = (
    '<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
)


@pytest.mark.parametrize("prolog", [BILLION_LAUGHS, EXTERNAL_ENTITY, "<!DOCTYPE net>\n"])
def test_doctype_and_entities_refused_as_unreadable(prolog: str) -> None:
    with pytest.raises(ModelReadError, match="refused"):
        check_ir(ir_xml([2], [2], prolog=prolog))


@pytest.mark.parametrize("data", [b"<net><layers>", b"not xml at all", b"<other/>"])
def test_malformed_xml_is_unreadable(data: bytes) -> None:
    with pytest.raises(ModelReadError):
        check_ir(data)


# ------------------------------------------------------------ edges are followed (issue 12)
def test_R1_R4_parameter_shape_beats_the_ports_claim() -> None:
    """A Parameter [3] feeds a Multiply whose ports both claim [2, 3]: OpenVINO
    broadcasts. The port contradicts its producer: the IR is refused as invalid."""
    net = ir_net(
        ir_parameter(0, [2, 3])
        + ir_parameter(1, [3], port_dims=[3])
        + ir_multiply(2, [2, 3], [2, 3]),
        [(0, 0, 2, 0), (1, 0, 2, 1)],
    )
    with pytest.raises(ModelReadError, match="producer gives"):
        check_ir(net)


def test_R1_R4_parameter_port_contradicting_its_shape_is_invalid() -> None:
    net = ir_net(
        ir_parameter(0, [2, 3])
        + ir_parameter(1, [3], port_dims=[2, 3])
        + ir_multiply(2, [2, 3], [2, 3]),
        [(0, 0, 2, 0), (1, 0, 2, 1)],
    )
    with pytest.raises(ModelReadError, match="Parameter layer 1 has shape"):
        check_ir(net)


def test_R1_R4_facts_from_edges() -> None:
    net = ir_net(
        ir_parameter(0, [2, 3]) + ir_parameter(1, [3]) + ir_multiply(2, [2, 3], [3]),
        [(0, 0, 2, 0), (1, 0, 2, 1)],
    )
    assert reqs(check_ir(net)) == {"R1", "R4"}


def test_R1_same_dynamic_source_through_sigmoid_conforms() -> None:
    """x * sigmoid(x) with a dynamic batch (-1): the same producer port."""
    dims = [-1, 64, 56, 56]
    net = ir_net(
        ir_parameter(0, dims) + ir_unary(1, "Sigmoid", dims) + ir_multiply(2, dims, dims),
        [(0, 0, 1, 0), (1, 1, 2, 1), (0, 0, 2, 0)],
    )
    assert check_ir(net) == []
    other = ir_net(
        ir_parameter(0, dims) + ir_parameter(3, dims) + ir_unary(1, "Sigmoid", dims)
        + ir_multiply(2, dims, dims),
        [(3, 0, 1, 0), (1, 1, 2, 1), (0, 0, 2, 0)],
    )  # fmt: skip
    found = check_ir(other)
    assert reqs(found) == {"R1"} and not found[0].definite


# ------------------------------------------------- malformed IRs: refused or judged by their facts
def _multiply(ports: str, lid: int = 2) -> str:
    """A Multiply layer 'mul' with the given <port> elements as its inputs."""
    return (
        f'<layer id="{lid}" name="mul" type="Multiply" version="opset1">'
        f"<input>{ports}</input><output>{ir_port(9, [2])}</output></layer>"
    )


def test_a_net_without_layers_has_no_multiply_to_check() -> None:
    assert check_ir_report(b'<net name="empty" version="11"/>').mul_nodes == 0


def test_R1_two_edges_into_one_port_are_an_invalid_ir() -> None:
    """Which producer feeds the port would be a guess: the IR is refused, never judged."""
    net = ir_net(
        ir_parameter(0, [2]) + ir_parameter(1, [3]) + ir_multiply(2, [2], [2]),
        [(0, 0, 2, 0), (1, 0, 2, 0), (1, 0, 2, 1)],
    )
    with pytest.raises(ModelReadError, match="two edges lead to layer 2 port 0"):
        check_ir(net)


def test_R1_an_edge_from_a_missing_output_port_is_an_invalid_ir() -> None:
    net = ir_net(
        ir_parameter(0, [2]) + ir_parameter(1, [2]) + ir_multiply(2, [2], [2]),
        [(0, 5, 2, 0), (1, 0, 2, 1)],
    )
    with pytest.raises(ModelReadError, match="layer 0 has no output port 5"):
        check_ir(net)


def test_R1_R4_a_parameter_without_a_shape_is_judged_by_its_port() -> None:
    """No <data shape>: the Parameter's own output port is the only fact there is."""
    bare = (
        '<layer id="0" name="p0" type="Parameter" version="opset1">'
        f"<output>{ir_port(0, [2, 3])}</output></layer>"
    )
    net = ir_net(
        bare + ir_parameter(1, [3]) + ir_multiply(2, [2, 3], [3]), [(0, 0, 2, 0), (1, 0, 2, 1)]
    )
    assert reqs(check_ir(net)) == {"R1", "R4"}


def test_R1_a_port_without_a_producer_is_undecided_whatever_it_claims() -> None:
    """A port no edge feeds, or fed through a Sigmoid that nothing feeds: its dims are a
    claim, never a fact, so equal shapes cannot be shown (undecided, not conforming)."""
    unfed = ir_net(ir_parameter(0, [2]) + ir_multiply(2, [2], [2]), [(0, 0, 2, 0)])
    through = ir_net(
        ir_unary(1, "Sigmoid", [2]) + ir_parameter(0, [2]) + ir_multiply(2, [2], [2]),
        [(1, 1, 2, 0), (0, 0, 2, 1)],
    )
    for net in (unfed, through):
        found = check_ir(net)
        assert reqs(found) == {"R1"} and not found[0].definite


def test_R1_a_multiply_with_three_inputs_violates() -> None:
    ports = ir_port(0, [2]) + ir_port(1, [2]) + ir_port(3, [2])
    net = ir_net(
        ir_parameter(0, [2]) + _multiply(ports), [(0, 0, 2, 0), (0, 0, 2, 1), (0, 0, 2, 3)]
    )
    found = check_ir(net)
    assert [(v.requirement, v.definite) for v in found] == [("R1", True)]
    assert "3 input ports" in found[0].message


def test_R3_a_port_precision_contradicting_its_producer_is_an_invalid_ir() -> None:
    ports = ir_port(0, [2], "FP16") + ir_port(1, [2])
    net = ir_net(
        ir_parameter(0, [2]) + ir_parameter(1, [2]) + _multiply(ports), [(0, 0, 2, 0), (1, 0, 2, 1)]
    )
    with pytest.raises(ModelReadError, match="port 0 has precision FP16 but its producer gives"):
        check_ir(net)


def test_R3_a_port_without_any_precision_is_undecided() -> None:
    ports = '<port id="0"><dim>2</dim></port>' + ir_port(1, [2])
    found = check_ir(ir_net(_multiply(ports), []))
    r3 = [v for v in found if v.requirement == "R3"]
    assert len(r3) == 1 and not r3[0].definite and "no precision" in r3[0].message


def test_deep_xml_is_refused() -> None:
    deep = b"<net>" + b"<a>" * 100_000 + b"</a>" * 100_000 + b"</net>"
    with pytest.raises(ModelReadError, match="deeper than"):
        check_ir(deep)


def test_R1_R4_every_body_of_an_if_layer_is_checked() -> None:
    """An If layer has two bodies; a Multiply in the second one is found too."""
    good, bad = _body(ir_xml([2, 3], [2, 3])), _body(ir_xml([2, 3], [3]))
    doc = (
        '<net name="outer" version="11"><layers><layer id="0" name="cond" type="If" '
        f'version="opset8"><then_body>{good}</then_body>'
        f"<else_body>{bad}</else_body></layer></layers></net>"
    )
    report = check_ir_report(doc.encode())
    assert report.mul_nodes == 2
    assert {(v.requirement, v.path) for v in report.violations} == {
        ("R1", "outer/cond.else_body"),
        ("R4", "outer/cond.else_body"),
    }


def test_R1_R4_claims_along_a_unary_chain_are_checked() -> None:
    """Parameter [3] -> Sigmoid whose ports claim [2, 3] -> Multiply: refused; the
    same chain with honest ports is judged from the Parameter's shape."""
    lying = ir_net(
        ir_parameter(0, [2, 3]) + ir_parameter(1, [3]) + ir_unary(3, "Sigmoid", [2, 3])
        + ir_multiply(2, [2, 3], [2, 3]),
        [(0, 0, 2, 0), (1, 0, 3, 0), (3, 1, 2, 1)],
    )  # fmt: skip
    with pytest.raises(ModelReadError, match="shape-preserving"):
        check_ir(lying)
    honest = ir_net(
        ir_parameter(0, [2, 3]) + ir_parameter(1, [3]) + ir_unary(3, "Sigmoid", [3])
        + ir_multiply(2, [2, 3], [3]),
        [(0, 0, 2, 0), (1, 0, 3, 0), (3, 1, 2, 1)],
    )  # fmt: skip
    assert reqs(check_ir(honest)) == {"R1", "R4"}


# ------------------------------------------------------------ issue 21: port dims are claims
def _ir_from_onnx(tmp_path: Path) -> Path:
    """OpenVINO's own IR of Mul(Reshape(x (3,), [1, 3]), y (2, 3)) (numpy broadcast)."""
    ov = pytest.importorskip("openvino")
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    s = nh.from_array(np.array([1, 3], np.int64), "s")
    nodes = [h.make_node("Reshape", ["x", "s"], ["r"]), h.make_node("Mul", ["r", "y"], ["z"])]
    inputs = [
        h.make_tensor_value_info("x", T.FLOAT, [3]),
        h.make_tensor_value_info("y", T.FLOAT, [2, 3]),
    ]
    graph = h.make_graph(nodes, "g", inputs, [h.make_tensor_value_info("z", T.FLOAT, None)], [s])
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 14)])
    m.ir_version = 10
    model = ov.Core().read_model(m.SerializeToString(), b"")
    path = tmp_path / "m.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def test_class5_edited_reshape_claim_is_not_a_fact_openvino_reinfers(tmp_path: Path) -> None:
    """Issue 21, class 5, with OpenVINO as the oracle (optional dependency)."""
    ov = pytest.importorskip("openvino")
    path = _ir_from_onnx(tmp_path)
    assert check_ir_report(path).verdict == "undecided"  # Reshape output: no fact
    text = path.read_text()
    edited = text.replace(
        '<port id="2" precision="FP32" names="r">\n\t\t\t\t\t<dim>1</dim>',
        '<port id="2" precision="FP32" names="r">\n\t\t\t\t\t<dim>2</dim>',
    ).replace(
        '<port id="0" precision="FP32">\n\t\t\t\t\t<dim>1</dim>\n\t\t\t\t\t<dim>3</dim>',
        '<port id="0" precision="FP32">\n\t\t\t\t\t<dim>2</dim>\n\t\t\t\t\t<dim>3</dim>',
    )
    assert edited.count("<dim>1</dim>") == text.count("<dim>1</dim>") - 2  # both claims edited
    path.write_text(edited)
    assert check_ir_report(path).verdict == "undecided"  # was "conforms" (issue 21)
    model = ov.Core().read_model(str(path))
    mul = next(op for op in model.get_ops() if op.get_type_name() == "Multiply")
    assert list(mul.input(0).get_partial_shape().to_shape()) == [1, 3]  # OpenVINO re-infers


def test_class5_port_claims_without_openvino() -> None:
    """The same edit on a hand-written IR: Reshape's port claims (2, 3), it is unknown."""
    reshape = (
        '<layer id="3" name="r" type="Reshape" version="opset1"><input>'
        '<port id="0" precision="FP32"><dim>3</dim></port></input>'
        '<output><port id="2" precision="FP32"><dim>2</dim><dim>3</dim></port></output></layer>'
    )
    xml = ir_net(
        ir_parameter(0, [3]) + ir_parameter(1, [2, 3]) + reshape + ir_multiply(4, [2, 3], [2, 3]),
        [(0, 0, 3, 0), (3, 2, 4, 0), (1, 0, 4, 1)],
    )
    assert check_ir_report(xml).verdict == "undecided"


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
def _issue21_models() -> st.SearchStrategy[tuple[Any, dict[str, Any]]]:
    from checker.test_checker_differential import issue21_models  # needs onnxruntime

    return issue21_models()


@given(st.deferred(_issue21_models), st.randoms(use_true_random=False))
def test_ir_with_edited_port_dims_never_conforms_against_openvino(
    generated: tuple[Any, dict[str, Any]], rnd: Any
) -> None:
    """Differential, OpenVINO as the oracle (optional): issue-21 models converted by
    OpenVINO to IR, random port dims edited; whenever check_ir says "conforms",
    OpenVINO (re-reading the edited IR) gives every Multiply two equal input shapes."""
    ov = pytest.importorskip("openvino")
    import re
    import tempfile

    model, _ = generated
    try:
        converted = ov.Core().read_model(model.SerializeToString(), b"")
    except Exception:
        return  # OpenVINO cannot read this model: nothing to compare
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.xml"
        ov.save_model(converted, str(path), compress_to_fp16=False)
        text = path.read_text()
        dims = list(re.finditer(r"<dim>(-?\d+)</dim>", text))
        for match in rnd.sample(dims, min(len(dims), rnd.randint(0, 3))):
            start, end = match.span(1)
            text = text[:start] + str(rnd.randint(1, 3)) + text[end:]  # an edited claim
        path.write_text(text)
        try:
            verdict = check_ir_report(path).verdict
            reread = ov.Core().read_model(str(path))
        except Exception:
            return  # refused by the checker or by OpenVINO: no "conforms" to compare
        event(f"IR verdict {verdict}")
        if verdict != "conforms":
            return
        for op in reread.get_ops():
            if op.get_type_name() == "Multiply":
                a, b = (op.input(i).get_partial_shape() for i in (0, 1))
                assert a.compatible(b) and str(a) == str(b), (str(a), str(b), text)
