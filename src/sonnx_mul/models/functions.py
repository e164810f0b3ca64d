"""Model-local functions specialised per call site.

For one call node, a small model is built: its inputs are the call's inputs
with the types the caller's shape inference gives them, its only node is the
call, its opset imports are the function's own. ``onnx.inliner`` then
inlines that one call (binding the call's attributes to the body's
``ref_attr_name`` attributes, renaming values); nested calls stay calls and
are specialised in turn by the checker. Each body node is tagged through its
``doc_string`` (cleared by the checker beforehand) so the inlined copy still
names the function node it came from.

Only functions whose opset imports agree with the called function's are
included (the inliner refuses mixed versions); a call into another one stays
opaque, its outputs unknown.
"""

from __future__ import annotations

import re

import onnx
import onnx.inliner

from .sanitize import DEFAULT_DOMAINS, STRIPPED, FunctionKey

TAG = "sonnx-mul:function-node:"
FunctionId = FunctionKey
_OVERLOAD = "@overload:"  # the called overload's name in the small model (the inliner
# identifies functions by (domain, name) only)


def _imports(func: onnx.FunctionProto) -> dict[str, int]:
    return {
        ("" if o.domain in DEFAULT_DOMAINS else o.domain): int(o.version) for o in func.opset_import
    }


def specialise(
    call: onnx.NodeProto,
    input_types: list[onnx.TypeProto | None],
    func: onnx.FunctionProto,
    functions: dict[FunctionId, onnx.FunctionProto],
    model_opsets: dict[str, int],
    ir_version: int,
) -> onnx.ModelProto:
    """The call inlined into a small model whose inputs carry the call site's types.

    Raises whatever onnx.inliner raises when it cannot inline.
    """
    own = _imports(func)
    imports = dict(own)
    imports.setdefault(call.domain, model_opsets.get(call.domain, 1))
    tiny = onnx.ModelProto()
    tiny.ir_version = max(int(ir_version), 8)  # local functions need IR >= 8
    for domain, version in imports.items():
        tiny.opset_import.add(domain=domain, version=version)
    fname = f"{func.name}{_OVERLOAD}{func.overload}" if func.overload else func.name
    for other in functions.values():
        other_imports = _imports(other)
        if other is func:
            copy = tiny.functions.add()
            copy.CopyFrom(other)
            copy.name, copy.overload = fname, ""
            for i, node in enumerate(copy.node):
                mark = STRIPPED if STRIPPED in node.doc_string else ""
                node.doc_string = f"{TAG}{i};{mark}"
        elif not other.overload and all(imports.get(d, v) == v for d, v in other_imports.items()):
            tiny.functions.add().CopyFrom(other)
    graph = tiny.graph
    graph.name = "call_site"
    seen: set[str] = set()
    for name, tp in zip(call.input, input_types, strict=True):
        if name and name not in seen:
            seen.add(name)
            vi = graph.input.add(name=name)
            if tp is not None:
                vi.type.CopyFrom(tp)
    node = graph.node.add()
    node.CopyFrom(call)
    node.ClearField("doc_string")
    node.op_type, node.overload = fname, ""
    for out in call.output:
        if out:
            graph.output.add(name=out)
    return onnx.inliner.inline_selected_functions(tiny, [(func.domain, fname)])


def body_index(node: onnx.NodeProto) -> int | None:
    """Index in the function body of an inlined node, from its tag."""
    text = node.doc_string
    found = re.match(r"\d+", text[len(TAG) :]) if text.startswith(TAG) else None
    return int(found.group()) if found else None
