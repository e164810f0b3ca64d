"""Names a file can spell never reach the checker's own symbols.

Before this rule, a symbol made up by an inference run was renamed to the
string ``unk__N@<run>[<graph>]``, and a declared ``dim_param`` spelled that
way was "equal" to it: ``check`` said conforms for a Mul that onnxruntime
broadcasts. Now made-up symbols are ``shapes.Made`` objects (a type, not a
string prefix) and every string given to ONNX's inference is a short name of
``symbols.Encoding``, mapped back after the run. Each model below was
"conforms" on the code before (the spellings match what that code made up
for that graph) and is "cannot be shown" now; negative controls plant the
old string namespace back.
"""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from sonnx_mul.models import check_report

# What the code before this rule made of ONNX's unk__0 in each place, and the
# spellings of the checker's other internal names (symbols.Encoding's short
# names, the old free-dim prefix, what fmt() prints).
SPELLINGS = [
    "unk__0@1[]", "unk__0@1[0, 1, 0]", "unk__0@2[]@call1", "unk__0@call1", "unk__0",
    "s0", "s1", "s2", "__sonnx_free_0", "<unk__0@1[]>", "?",
]  # fmt: skip


def vi(name: str, shape: list[str | int | None]) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, T.FLOAT, shape)


def verdict(model: onnx.ModelProto) -> str:
    return check_report(model).verdict


def main_model(spell: str) -> onnx.ModelProto:
    """a = Concat(p, q) (a size inference makes up) times y declared [spell]."""
    nodes = [h.make_node("Concat", ["p", "q"], ["a"], axis=0),
             h.make_node("Mul", ["a", "y"], ["z"])]  # fmt: skip
    inputs = [vi("p", ["P"]), vi("q", ["Q"]), vi("y", [spell])]
    graph = h.make_graph(nodes, "g", inputs, [vi("z", [None])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 14)])


def nested_model(spell: str) -> onnx.ModelProto:
    """The same Mul inside an If branch (a Concat of the branch's own: another graph)."""
    inner = h.make_graph(
        [h.make_node("Concat", ["p", "q"], ["a"], axis=0), h.make_node("Mul", ["a", "y"], ["z"])],
        "then", [], [vi("z", [None])],
    )  # fmt: skip
    other = h.make_graph([h.make_node("Identity", ["y"], ["w"])], "else", [], [vi("w", [None])])
    node = h.make_node("If", ["c"], ["o"], then_branch=inner, else_branch=other)
    inputs = [vi("p", ["P"]), vi("q", ["Q"]), vi("y", [spell]),
              h.make_tensor_value_info("c", T.BOOL, [])]  # fmt: skip
    graph = h.make_graph([node], "g", inputs, [vi("o", [None])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 14)])


def function_model(spell: str) -> onnx.ModelProto:
    """a = cat(p, q), a model-local function's Concat, times y declared [spell]."""
    body = [h.make_node("Concat", ["u", "v"], ["w"], axis=0)]
    func = h.make_function("local", "cat", ["u", "v"], ["w"], body, [h.make_opsetid("", 14)])
    nodes = [h.make_node("cat", ["p", "q"], ["a"], domain="local"),
             h.make_node("Mul", ["a", "y"], ["z"])]  # fmt: skip
    inputs = [vi("p", ["P"]), vi("q", ["Q"]), vi("y", [spell])]
    graph = h.make_graph(nodes, "g", inputs, [vi("z", [None])])
    m = h.make_model(
        graph, opset_imports=[h.make_opsetid("", 14), h.make_opsetid("local", 1)], functions=[func]
    )
    m.ir_version = 10
    return m


def free_model(spell: str) -> onnx.ModelProto:
    """x declared [?] (a free dim: the checker names it) times y declared [spell]."""
    graph = h.make_graph(
        [h.make_node("Mul", ["x", "y"], ["z"])], "g", [vi("x", [None]), vi("y", [spell])],
        [vi("z", [None])],
    )  # fmt: skip
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 14)])


BUILDERS = [main_model, nested_model, function_model, free_model]


@pytest.mark.parametrize("spell", SPELLINGS)
@pytest.mark.parametrize("build", BUILDERS, ids=lambda b: b.__name__)
def test_R1_spelled_internal_names_are_never_equal_to_made_sizes(build, spell: str) -> None:
    assert verdict(build(spell)) == "undecided"


def test_R1_a_spelled_name_is_still_one_size_with_itself() -> None:
    """Positive control: two inputs declaring the same spelled name conform (IR.md)."""
    for spell in SPELLINGS:
        graph = h.make_graph(
            [h.make_node("Mul", ["x", "y"], ["z"])], "g", [vi("x", [spell]), vi("y", [spell])],
            [vi("z", [None])],
        )  # fmt: skip
        assert verdict(h.make_model(graph, opset_imports=[h.make_opsetid("", 14)])) == "conforms"


def test_made_symbols_are_a_type_no_string_equals() -> None:
    from sonnx_mul.models.shapes import Made, same_shape

    made = Made("1[]", "unk__0")
    assert made != "unk__0" and made != str(made) and made == Made("1[]", "unk__0")
    assert same_shape((made,), ("unk__0",)) == "unknown"
    assert same_shape((made,), (Made("1[]", "unk__0"),)) == "equal"


def test_negative_control_string_namespace_collides(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planting the old rule (a made-up symbol is the string ``name@tag``) makes the
    spelled name "conforms" again: the tests above see the difference."""
    from sonnx_mul.models import symbols
    from sonnx_mul.models.shapes import Made

    real = symbols.Renamer.dim

    def as_string(self: symbols.Renamer, d: object) -> object:
        out = real(self, d)  # type: ignore[arg-type]
        return f"{out.name}@{out.origin}" if isinstance(out, Made) else out

    monkeypatch.setattr(symbols.Renamer, "dim", as_string)
    assert verdict(main_model("unk__0@1[]")) == "conforms"


def test_renamer_shape_of_no_type_or_another_kind_is_unknown() -> None:
    """An output inference gave no type (None) or a non-tensor type has an unknown shape."""
    import onnx

    from sonnx_mul.models.symbols import Encoding, Renamer

    names = Renamer(Encoding(), "1[]")
    assert names.shape(None) is None
    seq = onnx.helper.make_sequence_type_proto(onnx.helper.make_tensor_type_proto(1, [2]))
    assert names.shape(seq) is None
    assert names.shape(onnx.helper.make_tensor_type_proto(1, None)) is None
    assert names.shape(onnx.helper.make_tensor_type_proto(1, [2, "unk__0"])) == (
        2,
        __import__("sonnx_mul.models.shapes", fromlist=["Made"]).Made("1[]", "unk__0"),
    )


def test_encoding_reaches_every_type_of_a_model() -> None:
    """symbols.type_protos: nested graphs' inputs, outputs and value_info (GRAPH and
    GRAPHS attributes), TYPE_PROTO attributes and function value_info are all encoded,
    so no spelling of the file (however long) is left for inference or onnx.checker."""
    from sonnx_mul.models.symbols import Encoding

    def typed(name: str, sym: str) -> onnx.ValueInfoProto:
        return h.make_tensor_value_info(name, T.FLOAT, [sym])

    branch = h.make_graph([h.make_node("Identity", ["x"], ["b"])], "then", [], [typed("b", "B")])
    branch.value_info.append(typed("x2", "V"))
    scan_body = h.make_graph([], "body", [typed("s_in", "S")], [typed("s_in", "S")])
    optional = h.make_node("Optional", [], ["o"], type=h.make_tensor_type_proto(T.FLOAT, ["OPT"]))
    nodes = [
        h.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch),
        h.make_node("Scan", ["x"], ["w"], body=scan_body, num_scan_inputs=1),
        optional,
    ]
    func = h.make_function("local", "f", ["a"], ["a2"], [h.make_node("Identity", ["a"], ["a2"])],
                           [h.make_opsetid("", 14)])  # fmt: skip
    func.value_info.append(typed("a2", "F"))
    graph = h.make_graph(nodes, "g", [typed("x", "X"), h.make_tensor_value_info("c", T.BOOL, [])],
                         [typed("y", "Y")])  # fmt: skip
    m = h.make_model(graph, functions=[func])
    Encoding().encode_model(m, free=False, main_inputs=True)
    text = str(m)
    for sym in ("X", "Y", "B", "V", "S", "OPT", "F"):
        assert f'dim_param: "{sym}"' not in text, sym
    assert 'dim_param: "s0"' in text
