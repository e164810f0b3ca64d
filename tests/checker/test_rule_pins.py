"""Issue 29, item 6: every trust rule of the checker pinned by a test that fails without it.

Each rule exists because a false verdict was found; each test below builds
the model that rule decides and asserts the verdict, so that removing or
loosening that rule alone (a planted change, or a mutant of
``make mutants``) fails here. For the allow-list conditions both sides are
pinned: the model inside the condition conforms (the rule is used), the
model just outside it is "cannot be shown" (the condition holds it back).
Issue 29 found these planted changes leaving the suite green: provenance
kept through an all-ones operand of higher rank, the ``ai.onnx`` spelling
dropped from the validity skeleton, an allow-list attribute condition
removed.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from models import external_initializer
from sonnx_mul.models import ModelReadError, check_report
from sonnx_mul.models.validity import skeleton


def vi(name: str, shape: list[int | str | None] | None) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, T.FLOAT, shape)


def verdict(m: onnx.ModelProto) -> str:
    try:
        return check_report(m).verdict
    except ModelReadError:
        return "invalid"


def build(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    inits: list[onnx.TensorProto] = (),  # type: ignore[assignment]
    opset: int = 14,
    domain: str = "",
) -> onnx.ModelProto:
    out = [h.make_value_info("z", onnx.TypeProto())]
    graph = h.make_graph(nodes, "g", inputs, out, list(inits))
    return h.make_model(graph, opset_imports=[h.make_opsetid(domain, opset)])


# ---------------------------------------------------------------- provenance
def test_R4_provenance_is_lost_through_an_all_ones_operand_of_higher_rank() -> None:
    """y = x + ones(1, 1) has rank 2 where x has rank 1: x * y broadcasts. x's shape is
    unknown (no inference can decide): provenance alone would say "same shape"."""
    ones = nh.from_array(np.ones((1, 1), np.float32), "ones")
    nodes = [h.make_node("Add", ["x", "ones"], ["y"]), h.make_node("Mul", ["x", "y"], ["z"])]
    assert verdict(build(nodes, [vi("x", None)], [ones])) != "conforms"


@pytest.mark.parametrize("shape", [(), (1,)])
def test_R1_provenance_kept_through_a_scalar_or_ones_of_no_higher_rank(shape: tuple) -> None:
    """Positive side: x + c with c rank 0, or all-ones of rank <= x's, keeps x's shape
    (x's rank is known, its dims are not)."""
    c = nh.from_array(np.ones(shape, np.float32), "c")
    nodes = [h.make_node("Add", ["x", "c"], ["y"]), h.make_node("Mul", ["x", "y"], ["z"])]
    assert verdict(build(nodes, [vi("x", [None])], [c])) == "conforms"


def test_R1_provenance_through_a_unary_chain_with_unknown_shape() -> None:
    nodes = [h.make_node("Sigmoid", ["x"], ["s"]), h.make_node("Relu", ["s"], ["r"]),
             h.make_node("Mul", ["x", "r"], ["z"])]  # fmt: skip
    assert verdict(build(nodes, [vi("x", None)])) == "conforms"


def test_R1_provenance_is_not_kept_by_a_shape_changing_operator() -> None:
    nodes = [h.make_node("Transpose", ["x"], ["t"]), h.make_node("Mul", ["x", "t"], ["z"])]
    assert verdict(build(nodes, [vi("x", None)])) != "conforms"


def test_R1_provenance_of_two_different_inputs_differs() -> None:
    nodes = [h.make_node("Add", ["x", "y"], ["s"]), h.make_node("Mul", ["x", "s"], ["z"])]
    assert verdict(build(nodes, [vi("x", None), vi("y", None)])) != "conforms"


# ---------------------------------------------------------------- validity normalisation
@pytest.mark.parametrize("where", ["opset", "node", "both"])
def test_the_default_domain_spelled_ai_onnx_is_valid(where: str) -> None:
    """IR.md: ``ai.onnx`` is the default domain; onnxruntime accepts it, onnx.checker
    only ``""``: the validity skeleton respells it (a refusal here was a false "invalid")."""
    node = h.make_node("Mul", ["x", "x"], ["z"], domain="ai.onnx" if where != "opset" else "")
    m = build([node], [vi("x", [2])], domain="ai.onnx" if where != "node" else "")
    assert verdict(m) == "conforms"


def test_an_invalid_model_stays_invalid_after_normalisation() -> None:
    node = h.make_node("Mul", ["x", "undefined"], ["z"], domain="ai.onnx")
    assert verdict(build([node], [vi("x", [2])], domain="ai.onnx")) == "invalid"


def _big_tensor(name: str) -> onnx.TensorProto:
    """More elements than sanitize.PAYLOAD_LIMIT: its payload is cleared before the
    validity check, so the skeleton must give it zero elements (else onnx.checker
    says a tensor without data is malformed: a false "invalid")."""
    return nh.from_array(np.ones(1 << 17, np.float32), name)


def _constant_of_big(out: str) -> onnx.NodeProto:
    return h.make_node("Constant", [], [out], value=_big_tensor("c"))


def _big_sparse(name: str) -> onnx.SparseTensorProto:
    n = 1 << 17
    values = nh.from_array(np.ones(n, np.float32), name)
    indices = nh.from_array(np.arange(n, dtype=np.int64), "i")
    return h.make_sparse_tensor(values, indices, [n])


def _mul_of(source: onnx.NodeProto | None, inits: list[onnx.TensorProto] = ()) -> onnx.ModelProto:  # type: ignore[assignment]
    nodes = ([source] if source else []) + [h.make_node("Mul", ["x", "c"], ["z"])]
    return build(nodes, [vi("x", [1 << 17])], inits)


def test_valid_with_a_cleared_initializer() -> None:
    assert verdict(_mul_of(None, [_big_tensor("c")])) == "conforms"


def test_valid_with_a_cleared_tensor_attribute() -> None:
    assert verdict(_mul_of(_constant_of_big("c"))) == "conforms"


def test_valid_with_a_cleared_sparse_initializer_and_attribute() -> None:
    # the verdict on a sparse operand is another rule's (R3); here: not "invalid"
    m = _mul_of(h.make_node("Constant", [], ["c"], sparse_value=_big_sparse("v")))
    assert verdict(m) != "invalid"
    m = _mul_of(h.make_node("Identity", ["s"], ["c"]))
    m.graph.sparse_initializer.append(_big_sparse("s"))
    assert verdict(m) != "invalid"


def test_valid_with_a_cleared_tensor_in_a_branch_and_in_a_function() -> None:
    """The skeleton walks nested graphs and model-local function bodies too."""
    branch = h.make_graph([_constant_of_big("k")], "then", [], [vi("k", [1 << 17])])
    other = h.make_graph([_constant_of_big("k2")], "else", [], [vi("k2", [1 << 17])])
    cond = nh.from_array(np.array(True), "cond")
    node = h.make_node("If", ["cond"], ["c"], then_branch=branch, else_branch=other)
    assert verdict(_mul_of(node, [cond])) != "invalid"
    f = h.make_function(
        "local", "big", ["a"], ["b"],
        [_constant_of_big("k"), h.make_node("Mul", ["a", "k"], ["b"])],
        [h.make_opsetid("", 14)],
    )  # fmt: skip
    m = build([h.make_node("big", ["x"], ["z"], domain="local")], [vi("x", [1 << 17])])
    m.opset_import.append(h.make_opsetid("local", 1))
    m.functions.append(f)
    assert verdict(m) == "conforms"


def test_valid_with_an_input_without_shape() -> None:
    """A tensor type without shape gets a placeholder shape (onnx.checker wants one);
    a sequence type is left as it is."""
    x = h.make_tensor_value_info("x", T.FLOAT, None)
    assert verdict(build([h.make_node("Mul", ["x", "x"], ["z"])], [x])) == "conforms"
    seq = h.make_tensor_sequence_value_info("s", T.FLOAT, [2])
    nodes = [h.make_node("SequenceAt", ["s", "i"], ["x"]), h.make_node("Mul", ["x", "x"], ["z"])]
    i = nh.from_array(np.array(0, np.int64), "i")
    assert verdict(build(nodes, [seq], [i])) != "invalid"


@pytest.mark.parametrize("location", ["w.bin", "/etc/passwd", "../w.bin"])
def test_valid_with_external_data_whatever_its_location(location: str) -> None:
    """An external initializer gets zero elements in the skeleton: onnx.checker would
    otherwise judge its file (absent, absolute, outside the folder) and call a model
    invalid whose data the checker never reads (the location is run's business)."""
    w = external_initializer(location)
    nodes = [h.make_node("Mul", ["x", "w"], ["z"])]
    assert verdict(build(nodes, [vi("x", [2, 3])], [w])) == "conforms"


def test_a_default_opset_past_the_newest_is_r3_opset_not_invalid() -> None:
    """onnx.checker cannot judge an opset it does not know: that model is left to
    R3-OPSET (a definite violation), for the default domain spelled either way."""
    newest = onnx.defs.onnx_opset_version()
    for domain in ("", "ai.onnx"):
        m = build([h.make_node("Mul", ["x", "x"], ["z"])], [vi("x", [2])], [], newest + 1, domain)
        report = check_report(m)
        assert [v.requirement for v in report.violations] == ["R3-OPSET"], domain


@pytest.mark.parametrize("opset", [1, 7, onnx.defs.onnx_opset_version()])
def test_an_invalid_model_is_invalid_at_the_first_and_the_newest_opset(opset: int) -> None:
    """onnx.checker judges every default-domain opset in 1..newest (both ends included);
    only outside it is the verdict left to R3-OPSET."""
    node = h.make_node("Mul", ["x", "undefined"], ["z"])
    assert verdict(build([node], [vi("x", [2])], opset=opset)) == "invalid"


def test_only_the_default_domains_opset_decides_whether_onnx_checker_runs() -> None:
    """Another domain's version (here 1000) is no reason to skip onnx.checker: the
    invalid model stays invalid."""
    node = h.make_node("Mul", ["x", "undefined"], ["z"])
    m = build([node], [vi("x", [2])])
    m.opset_import.append(h.make_opsetid("com.example", 1000))
    assert verdict(m) == "invalid"


def test_the_refusal_carries_the_first_line_of_onnx_checkers_message() -> None:
    node = h.make_node("Mul", ["x", "undefined"], ["z"])
    m = build([node], [vi("x", [2])])
    with pytest.raises(onnx.checker.ValidationError) as direct:
        onnx.checker.check_model(skeleton(m))
    lines = str(direct.value).strip().splitlines()
    assert len(lines) > 1  # so that taking any other line would differ
    with pytest.raises(ModelReadError) as refused:
        check_report(m)
    assert str(refused.value) == f"invalid ONNX model (onnx.checker): {lines[0]}"


# ---------------------------------------------------------------- static-fact ownership
def reshape_model(fed: bool, ir: int) -> onnx.ModelProto:
    shape = nh.from_array(np.array([2, 3], np.int64), "s")
    nodes = [h.make_node("Reshape", ["x", "s"], ["r"]), h.make_node("Mul", ["r", "y"], ["z"])]
    inputs = [vi("x", [6]), vi("y", [2, 3])]
    if fed:
        inputs.append(h.make_tensor_value_info("s", T.INT64, [2]))
    m = build(nodes, inputs, [shape])
    m.ir_version = ir
    return m


def test_R1_an_owned_initializer_is_a_fact() -> None:
    assert verdict(reshape_model(fed=False, ir=8)) == "conforms"
    assert verdict(reshape_model(fed=True, ir=3)) == "conforms"  # IR < 4: a constant


def test_R1_an_overridable_initializer_is_no_fact() -> None:
    assert verdict(reshape_model(fed=True, ir=8)) == "undecided"


def test_R1_a_shape_operand_from_an_input_is_no_fact() -> None:
    nodes = [h.make_node("Reshape", ["x", "s"], ["r"]), h.make_node("Mul", ["r", "y"], ["z"])]
    inputs = [vi("x", [6]), vi("y", [2, 3]), h.make_tensor_value_info("s", T.INT64, [2])]
    assert verdict(build(nodes, inputs)) == "undecided"


# ---------------------------------------------------------------- allow-list conditions
def inferred_output(
    node: onnx.NodeProto, x_shape: list[int], inits: list[onnx.TensorProto]
) -> list[int] | None:
    """What ONNX infers for ``node``'s output 0 from x: the declared shape of B below."""
    out = onnx.shape_inference.infer_shapes(build([node], [vi("x", x_shape)], inits)).graph
    for v in (*out.value_info, *out.output):
        if v.name == node.output[0] and v.type.tensor_type.HasField("shape"):
            dims = v.type.tensor_type.shape.dim
            found = [d.dim_value if d.HasField("dim_value") else None for d in dims]
            return None if None in found else found  # type: ignore[return-value]
    return None


CONDITIONS = {
    # op, attributes inside the condition, attributes just outside it
    "MaxPool ceil_mode": ("MaxPool", {"kernel_shape": [2, 2]},
                          {"kernel_shape": [2, 2], "ceil_mode": 1}),
    "MaxPool dilations": ("MaxPool", {"kernel_shape": [2, 2], "dilations": [1, 1]},
                          {"kernel_shape": [2, 2], "dilations": [2, 2]}),
    "MaxPool auto_pad": ("MaxPool", {"kernel_shape": [2, 2], "auto_pad": "VALID"},
                         {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER"}),
    "AveragePool ceil_mode": ("AveragePool", {"kernel_shape": [3, 3], "strides": [2, 2]},
                              {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    "Conv dilated SAME": ("Conv", {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER"},
                          {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "dilations": [2, 2]}),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CONDITIONS))
def test_R1_allow_list_condition_pinned_on_both_sides(name: str) -> None:
    op, inside, outside = CONDITIONS[name]
    results = []
    for attrs in (inside, outside):
        extra = ["w"] if op == "Conv" else []
        node = h.make_node(op, ["x", *extra], ["p"], **attrs)
        inits = [nh.from_array(np.ones((1, 1, 3, 3), np.float32), "w")] if extra else []
        shape = inferred_output(node, [1, 1, 7, 7], inits)
        assert shape is not None, (name, attrs)
        mul = h.make_node("Mul", ["p", "q"], ["z"])
        results.append(verdict(build([node, mul], [vi("x", [1, 1, 7, 7]), vi("q", shape)], inits)))
    assert results == ["conforms", "undecided"], (name, results)


def test_R1_squeeze_without_axes_is_not_trusted() -> None:
    for axes, expected in ((True, "conforms"), (False, "undecided")):
        inits = [nh.from_array(np.array([0], np.int64), "axes")] if axes else []
        node = h.make_node("Squeeze", ["x", "axes"] if axes else ["x"], ["p"])
        mul = h.make_node("Mul", ["p", "q"], ["z"])
        m = build([node, mul], [vi("x", [1, 3]), vi("q", [3])], inits)
        assert verdict(m) == expected, axes


def test_R1_legacy_broadcast_add_is_not_trusted() -> None:
    """Add-6 with broadcast=1: not cross-checked against a runtime (no inference trust)."""
    for attrs, expected in (({}, "conforms"), ({"broadcast": 1}, "undecided")):
        node = h.make_node("Add", ["x", "y"], ["p"], **attrs)
        mul = h.make_node("Mul", ["p", "q"], ["z"])
        m = build([node, mul], [vi("x", [2, 3]), vi("y", [2, 3]), vi("q", [2, 3])], opset=6)
        found = check_report(m)
        assert ("R1" not in {v.requirement for v in found.violations}) == (expected == "conforms")


def test_R1_provenance_through_a_scalar_with_unknown_rank() -> None:
    """x of unknown rank (no inference can decide) times x + c, c a rank-0 constant:
    only provenance (a scalar operand keeps it) shows the same shape."""
    c = nh.from_array(np.array(2.0, np.float32), "c")
    nodes = [h.make_node("Add", ["x", "c"], ["y"]), h.make_node("Mul", ["x", "y"], ["z"])]
    assert verdict(build(nodes, [vi("x", None)], [c])) == "conforms"


# ---------------------------------------------------------------- owned values
@pytest.mark.parametrize(("n", "expected"), [(64, "conforms"), (65, "undecided")])
def test_R1_an_owned_value_has_at_most_64_elements(n: int, expected: str) -> None:
    """facts.VALUE_LIMIT: a Reshape to n ones is decided only when its shape operand
    (n elements) is small enough to be owned."""
    s = nh.from_array(np.ones(n, np.int64), "s")
    nodes = [h.make_node("Reshape", ["x", "s"], ["r"]), h.make_node("Mul", ["r", "q"], ["z"])]
    assert verdict(build(nodes, [vi("x", [1]), vi("q", [1] * n)], [s])) == expected


def value_input_model(op: str, owned: bool) -> onnx.ModelProto:
    """``op`` whose value input (shape, split, starts, pads) is an initializer (owned) or
    an overridable one (also a graph input: ONNX's inference still reads its value, so
    only the ownership rule holds the result back); its output times q, declared with
    the result of the initializer's value."""
    i64 = T.INT64
    specs = {  # op: (inputs, value input name, its value, x shape, output shape, attrs)
        "ConstantOfShape": (["v"], "v", [2, 3], None, [2, 3], {}),
        "Split": (["x", "v"], "v", [1, 3], [4, 3], [1, 3], {"axis": 0}),
        "Slice": (["x", "v", "e"], "v", [1], [4, 3], [2, 3], {}),
        "Pad": (["x", "v"], "v", [1, 0, 1, 0], [2, 3], [4, 3], {}),
    }
    inputs_, name, value, x_shape, out_shape, attrs = specs[op]
    outputs = ["p", "p2"] if op == "Split" else ["p"]
    node = h.make_node(op, inputs_, outputs, **attrs)
    inits = [nh.from_array(np.array([3], np.int64), "e")] if op == "Slice" else []
    inputs = [vi("q", out_shape)] + ([vi("x", x_shape)] if x_shape else [])
    inits.append(nh.from_array(np.array(value, np.int64), name))
    if not owned:  # also a graph input (IR >= 4): a caller may feed another value
        inputs.append(h.make_tensor_value_info(name, i64, [len(value)]))
    mul = h.make_node("Mul", ["p", "q"], ["z"])
    return build([node, mul], inputs, inits, opset=18)


@pytest.mark.parametrize("op", ["ConstantOfShape", "Split", "Slice", "Pad"])
def test_R1_value_inputs_must_be_owned(op: str) -> None:
    """trusted.INFERRED's value_inputs: each entry's listed input pinned on both sides."""
    assert verdict(value_input_model(op, owned=True)) == "conforms"
    assert verdict(value_input_model(op, owned=False)) == "undecided"


# ---------------------------------------------------------------- the scope's types
def test_R3_a_call_argument_without_element_type_is_undecided() -> None:
    """A graph input declared as a tensor with no element type (0) passed to a
    model-local function: the call's own run gets no type for it (Scope.type_of),
    so R3 cannot be shown inside; never a crash, never "conforms"."""
    x = h.make_tensor_value_info("x", 0, [2])
    f = h.make_function(
        "local", "sq", ["a"], ["b"], [h.make_node("Mul", ["a", "a"], ["b"])],
        [h.make_opsetid("", 14)],
    )  # fmt: skip
    m = build([h.make_node("sq", ["x"], ["z"], domain="local")], [x])
    m.opset_import.append(h.make_opsetid("local", 1))
    m.functions.append(f)
    report = check_report(m)
    assert report.verdict == "undecided"
    assert {v.requirement for v in report.violations} == {"R3"}
    # the reason is strict inference's (strict_mode: a type error is an error, not a gap)
    assert all("strict shape inference failed" in v.message for v in report.violations)


# ---------------------------------------------------------------- model-local functions
def _call_model(
    called: list[onnx.FunctionProto], node: onnx.NodeProto, x_shape: list[int | str | None]
) -> onnx.ModelProto:
    m = build([node], [vi("x", x_shape)])
    m.opset_import.append(h.make_opsetid("local", 1))
    m.functions.extend(called)
    return m


def _fn(name: str, nodes: list[onnx.NodeProto], inputs: list[str], opset: int = 14):  # type: ignore[no-untyped-def]
    return h.make_function("local", name, inputs, ["b"], nodes, [h.make_opsetid("", opset),
                           h.make_opsetid("local", 1)])  # fmt: skip


def test_a_call_with_one_value_twice_is_followed() -> None:
    """f(x, x): the call site's small model declares x once (a value named twice is
    one input), and the Mul inside is checked with x's facts on both sides."""
    f = _fn("two", [h.make_node("Mul", ["p", "q"], ["b"])], ["p", "q"])
    m = _call_model([f], h.make_node("two", ["x", "x"], ["z"], domain="local"), [2, 3])
    assert check_report(m).verdict == "conforms"


def test_a_function_calling_another_is_checked_through_both() -> None:
    """The functions a call's body may call go into its small model with it: the Mul
    of the inner function is checked (here it broadcasts: R4, definite)."""
    inner = _fn("inner", [h.make_node("Mul", ["p", "r"], ["b"])], ["p"])
    inner.node.insert(0, h.make_node("ReduceSum", ["p"], ["r"], keepdims=1))
    outer = _fn("outer", [h.make_node("inner", ["a"], ["b"], domain="local")], ["a"])
    m = _call_model([outer, inner], h.make_node("outer", ["x"], ["z"], domain="local"), [2, 3])
    report = check_report(m)
    assert report.verdict == "violates", report
    assert all("inner" in v.path for v in report.violations)


def test_a_function_of_another_opset_that_is_not_called_does_not_matter() -> None:
    """Only the functions whose imports agree with the call's go into its small model:
    an unrelated function importing another version of a domain (com.example, which
    the model does not import) leaves the verdict alone."""
    f = _fn("sq", [h.make_node("Mul", ["a", "a"], ["b"])], ["a"])
    f.opset_import.append(h.make_opsetid("com.example", 1))
    other = _fn("old", [h.make_node("Relu", ["a"], ["b"])], ["a"])
    other.opset_import.append(h.make_opsetid("com.example", 2))
    m = _call_model([f, other], h.make_node("sq", ["x"], ["z"], domain="local"), [2, 3])
    assert check_report(m).verdict == "conforms"


def test_a_call_with_an_omitted_input_is_followed() -> None:
    """f(x, ""): an omitted optional input is no input of the call site's model."""
    f = _fn("opt", [h.make_node("Mul", ["p", "p"], ["b"])], ["p", "q"])
    m = _call_model([f], h.make_node("opt", ["x", ""], ["z"], domain="local"), [2, 3])
    assert check_report(m).verdict == "conforms"


# ---------------------------------------------------------------- payload hygiene
def _stripped_after(t: onnx.TensorProto) -> bool:
    from sonnx_mul.models.sanitize import STRIPPED, strip_payloads

    m = build([h.make_node("Mul", ["x", t.name], ["z"])], [vi("x", None)], [t])
    strip_payloads(m)
    return m.graph.initializer[0].doc_string == STRIPPED


def test_payloads_above_64_ki_elements_are_cleared() -> None:
    """sanitize.PAYLOAD_LIMIT: 2^16 elements kept, one more cleared (SECURITY's bound
    on what shape inference copies); a zero dim makes an empty tensor, never big."""
    assert not _stripped_after(nh.from_array(np.zeros(1 << 16, np.uint8), "w"))
    assert _stripped_after(nh.from_array(np.zeros((1 << 16) + 1, np.uint8), "w"))
    assert not _stripped_after(nh.from_array(np.zeros((0, 1 << 17), np.uint8), "w"))


@pytest.mark.parametrize(
    ("attr", "values", "field"),
    [("value_ints", [1], "int64_data"), ("value_floats", [1.0], "float_data"),
     ("value_strings", [b"s"], "string_data")],
)  # fmt: skip
def test_a_long_constant_list_becomes_a_placeholder_tensor_of_its_shape(
    attr: str, values: list[object], field: str
) -> None:
    from sonnx_mul.models.sanitize import STRIPPED, WITNESS_ELEMENTS, strip_payloads

    n = (1 << 16) + 1
    node = h.make_node("Constant", [], ["c"], **{attr: values * n})
    m = build([node, h.make_node("Mul", ["x", "c"], ["z"])], [vi("x", [n])])
    strip_payloads(m)
    (kept,) = m.graph.node[0].attribute
    assert kept.name == "value" and kept.t.doc_string == STRIPPED
    # its payload: zeros, as many as validity's witness of the shape needs (sanitize.py)
    zero = b"" if field == "string_data" else 0
    assert list(kept.t.dims) == [n]
    assert list(getattr(kept.t, field)) == [zero] * WITNESS_ELEMENTS
    assert m.graph.node[0].doc_string != STRIPPED  # a Constant keeps its meaning: its shape


@pytest.mark.parametrize("kind", ["tensor", "ints"])
def test_a_call_with_a_cleared_attribute_is_not_followed(kind: str) -> None:
    """The call's meaning changed when its attribute was cleared: its Mul nodes are
    not checked (R1 cannot be shown), never judged on what is left."""
    f = _fn("sq", [h.make_node("Mul", ["a", "a"], ["b"])], ["a"])
    w = _big_tensor("w") if kind == "tensor" else [0] * ((1 << 16) + 1)
    call = h.make_node("sq", ["x"], ["z"], domain="local", w=w)
    report = check_report(_call_model([f], call, [2, 3]))
    assert report.verdict == "undecided"
    assert [v.requirement for v in report.violations] == ["R1"]
    assert "too large to keep" in report.violations[0].message


def test_a_graphs_attribute_of_another_domain_is_walked() -> None:
    """A list of graphs (GRAPHS, custom operators only) is walked like a graph: the
    Mul inside is found and judged (a body's formal inputs: shapes unknown)."""
    body = h.make_graph(
        [h.make_node("Mul", ["p", "q"], ["r"])], "body",
        [vi("p", [2, 3]), vi("q", [3])], [vi("r", [2, 3])],
    )  # fmt: skip
    node = h.make_node("Loopish", ["x"], ["z"], domain="com.example")
    node.attribute.append(h.make_attribute("bodies", [body]))
    m = build([node], [vi("x", [2, 3])])
    m.opset_import.append(h.make_opsetid("com.example", 1))
    report = check_report(m)
    assert report.mul_nodes == 1 and report.verdict == "undecided"
    assert {v.path for v in report.violations} == {"main/Loopish#0.bodies[0]"}


def test_findings_are_immutable_values() -> None:
    """A Violation is definite unless said otherwise; findings and reports are frozen
    values (hashable, compared by value): a caller can keep and compare them."""
    import dataclasses

    from sonnx_mul.models import Report, Violation

    v = Violation("R1", "n", "main", "m")
    assert v.definite is True
    assert len({v, Violation("R1", "n", "main", "m")}) == 1
    r = Report((v,), 1)
    assert hash(r) == hash(Report((v,), 1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.definite = False  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.mul_nodes = 2  # type: ignore[misc]


# ---------------------------------------------------------------- inference
def _graphs(n: int) -> onnx.GraphProto:
    """A main graph holding exactly ``n`` nested graphs: one-graph nodes of a custom
    domain (each a GRAPH attribute), the last ones nested in the first's body."""
    leaf = h.make_graph([h.make_node("Identity", ["x"], ["o"])], "leaf", [], [vi("o", [2])])
    nodes = [h.make_node("Op", ["x"], ["o"], domain="com.example", body=leaf)
             for _ in range(n - 1)]  # fmt: skip
    body = h.make_graph(nodes, "body", [], [vi("o", [2])])  # nested: counted as deep
    top = h.make_node("Op", ["x"], ["o"], domain="com.example", body=body)
    return h.make_graph([top], "main", [vi("x", [2])], [vi("o", [2])])


def test_whole_model_inference_up_to_64_nested_graphs() -> None:
    """README and SECURITY: above 64 nested graphs each graph is inferred on its own
    (inference.many_subgraphs); exactly 64 is still one whole-model inference."""
    from sonnx_mul.models.inference import many_subgraphs

    assert many_subgraphs(_graphs(1)) is False
    assert many_subgraphs(_graphs(64)) is False
    assert many_subgraphs(_graphs(65)) is True


def _split(monkeypatch: pytest.MonkeyPatch) -> None:
    from sonnx_mul.models import inference

    monkeypatch.setattr(inference, "FULL_INFERENCE_SUBGRAPHS", 0)


def _in_a_branch(nodes: list[onnx.NodeProto], inits: list[onnx.TensorProto]) -> onnx.ModelProto:
    then_g = h.make_graph(nodes, "then", [], [vi("t", None)], inits)
    else_g = h.make_graph([h.make_node("Identity", ["y"], ["e"])], "else", [], [vi("e", None)])
    node = h.make_node("If", ["c"], ["z"], then_branch=then_g, else_branch=else_g)
    c = h.make_tensor_value_info("c", T.BOOL, [])
    return build([node], [vi("x", [6]), vi("y", [2, 3]), c])


def test_graph_by_graph_a_branch_initializer_is_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inferred alone, a branch's initializers are defined in it (not free names to
    look up outside): Reshape by an owned shape gives the Mul operand its shape."""
    _split(monkeypatch)
    shape = nh.from_array(np.array([2, 3], np.int64), "s")
    nodes = [h.make_node("Reshape", ["x", "s"], ["r"]), h.make_node("Mul", ["r", "y"], ["t"])]
    assert verdict(_in_a_branch(nodes, [shape])) == "conforms"


def test_graph_by_graph_an_omitted_input_is_no_free_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An omitted optional input ("") is not an outer value of the branch."""
    _split(monkeypatch)
    nodes = [h.make_node("Clip", ["y", "", ""], ["k"]), h.make_node("Mul", ["k", "y"], ["t"])]
    assert verdict(_in_a_branch(nodes, [])) == "conforms"


# ---------------------------------------------------------------- reading
def test_the_byte_caps_are_the_ones_security_states() -> None:
    """SECURITY.md: "2 GiB − 1 for ONNX (protobuf cannot parse more), 256 MiB for IR
    XML". A lower ONNX cap refuses models protobuf reads; a higher one reads bytes
    that cannot parse; the IR cap bounds what expat is given."""
    from pathlib import Path

    from sonnx_mul.models import reading

    security = (Path(__file__).parents[2] / "SECURITY.md").read_text()
    assert "2 GiB − 1 for ONNX" in security and "256 MiB for IR" in security
    assert reading.MAX_MODEL_BYTES == 2 * 2**30 - 1
    assert reading.MAX_IR_BYTES == 256 * 2**20


def test_a_file_of_the_cap_is_read_and_one_byte_more_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from sonnx_mul.models.reading import read_limited

    f = tmp_path / "m.onnx"
    f.write_bytes(b"x" * 10)
    assert read_limited(f, 10, "model") == b"x" * 10
    with pytest.raises(ModelReadError, match=r"^cannot read model: "):
        read_limited(f, 9, "model")
