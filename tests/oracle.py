"""onnxruntime as the oracle of the model checker: what the runtime actually does.

``observe`` runs a model with every main-graph Mul's two inputs added as
graph outputs, so the shapes and element types the runtime really multiplies
are seen; ``judge`` compares them with the checker's findings per node.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx

from sonnx_mul.models import ModelReadError, Report, check_report

DEFAULT = ("", "ai.onnx")


@dataclass
class Observed:
    """What onnxruntime did: refused (``error``), or the operands of each main-graph Mul."""

    error: str | None
    operands: dict[str, tuple[np.ndarray, np.ndarray]]  # by node label


def labels(graph: onnx.GraphProto) -> list[tuple[str, onnx.NodeProto]]:
    """Main-graph Mul nodes with the checker's label for them."""
    return [
        (node.name or f"{node.op_type}#{i}", node)
        for i, node in enumerate(graph.node)
        if node.op_type == "Mul" and node.domain in DEFAULT
    ]


def unsupported(error: str) -> bool:
    """The runtime lacks the opset or a kernel: says nothing about the profile."""
    return "ValidateOpsetForDomain" in error or "NOT_IMPLEMENTED" in error


def observe(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> Observed:
    import onnxruntime as ort

    m = onnx.ModelProto()
    m.CopyFrom(model)
    m.ir_version = min(m.ir_version, 10)
    outputs = {o.name for o in m.graph.output}
    muls = labels(m.graph)
    for _, node in muls:
        for name in node.input:
            if name not in outputs:
                m.graph.output.add(name=name)
                outputs.add(name)
    ort.set_default_logger_severity(3)  # the refusals are returned, not logged
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        session = ort.InferenceSession(m.SerializeToString(), options, ["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        values = dict(zip(names, session.run(names, feeds), strict=True))
    except Exception as exc:
        return Observed(str(exc), {})
    return Observed(None, {label: (values[n.input[0]], values[n.input[1]]) for label, n in muls})


@dataclass
class Verdict:
    report: Report | None  # None: ModelReadError (invalid model)
    error: str = ""


def checked(model: onnx.ModelProto) -> Verdict:
    try:
        return Verdict(check_report(model))
    except ModelReadError as exc:
        return Verdict(None, str(exc))


def disagreements(verdict: Verdict, seen: Observed) -> list[str]:
    """Where the checker's claims contradict what the runtime did (empty: agreement).

    * "conforms" -> the runtime runs the model (unless it lacks the opset or a
      kernel) and every main-graph Mul gets operands of one shape and one type;
    * a definite R1 (R3-SAME) at a main-graph node -> the runtime refuses the
      model or that node's operands differ in shape (in type).
    """
    report = verdict.report
    if report is None or (seen.error is not None and unsupported(seen.error)):
        return []
    problems: list[str] = []
    if report.verdict == "conforms":
        if seen.error is not None:
            return [f"conforms, but onnxruntime refuses it: {seen.error[:200]}"]
        for label, (a, b) in seen.operands.items():
            if a.shape != b.shape or a.dtype != b.dtype:
                problems.append(
                    f"conforms, but {label} multiplies {a.shape}{a.dtype} by {b.shape}{b.dtype}"
                )
    if seen.error is not None:
        return problems
    for v in report.definite:
        if v.path != "main" or v.node not in seen.operands:
            continue
        a, b = seen.operands[v.node]
        if v.requirement == "R1" and a.shape == b.shape:
            problems.append(f"definite R1 at {v.node}, but shapes {a.shape} agree")
        if v.requirement == "R3-SAME" and a.dtype == b.dtype:
            problems.append(f"definite R3-SAME at {v.node}, but types {a.dtype} agree")
    return problems
