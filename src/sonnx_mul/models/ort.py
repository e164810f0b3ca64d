"""Run ONNX models on onnxruntime with every ``Mul`` node on the certified kernel.

``InferenceSession`` mirrors ``onnxruntime.InferenceSession``: it checks the
model against the profile first and refuses it as the reference engine does
(``Backend.prepare``); it inlines model-local functions (``onnx.inliner``), so
that Mul nodes in their bodies are rewritten too; it rewrites every Mul node
of the default domain (``""`` or ``"ai.onnx"``, in the graph and in the
subgraphs of If/Loop/Scan) into a Python custom op of onnxruntime-extensions
(PyOp) that calls ``sonnx_mul.mul`` with the node's opset; every other node
stays with onnxruntime.

Contracts:

* A Mul output is ``mul(a, b, opset=...)`` of the node's operands: the same
  bits as the reference engine's (canonical NaN included), whatever the
  session options (denormals-as-zero, thread counts). ``mul`` restores the
  caller's floating-point environment after every call.
* What the checker cannot decide statically (symbolic dims) is checked by
  ``mul`` at run time: ``run`` raises that ``ProfileError`` itself (not
  onnxruntime's wrapper of it) and returns nothing.
* PyOp cannot carry float16 (onnxruntime-extensions aborts the process) nor
  bfloat16 (onnxruntime's Python binding has no numpy type for it): a model
  with a Mul of those types is refused with ``EngineUnsupported`` naming the
  type, before any session exists. ``sonnx-mul run`` then falls back to the
  reference engine when no engine was asked for, and says so.
* Runs of certified sessions are serialized (one lock per process): a
  refusal raised inside onnxruntime is handed back to the run that caused it.
"""

from __future__ import annotations

import importlib.util
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, inliner, shape_inference

from ..api import mul
from ..dtypes import DEFAULT_OPSET
from ..errors import ProfileError
from .checker import ModelSource, check_model, load_model
from .executor import _refusal

DOMAIN = "ai.onnx.contrib"
"""onnxruntime-extensions registers PyOps in this domain (``default_opset_domain()``)."""

OP_PREFIX = "SonnxCertifiedMul_"

CARRIED: Mapping[int, str] = MappingProxyType(
    {
        TensorProto.FLOAT: "float",
        TensorProto.DOUBLE: "double",
        TensorProto.INT8: "int8",
        TensorProto.INT16: "int16",
        TensorProto.INT32: "int32",
        TensorProto.INT64: "int64",
        TensorProto.UINT8: "uint8",
        TensorProto.UINT16: "uint16",
        TensorProto.UINT32: "uint32",
        TensorProto.UINT64: "uint64",
    }
)
"""Element types a PyOp carries in and out bit for bit (measured: tests/ort/)."""

UNCARRIED: Mapping[int, str] = MappingProxyType(
    {TensorProto.FLOAT16: "float16", TensorProto.BFLOAT16: "bfloat16"}
)
"""Profile types PyOp cannot carry (docs/decisions/onnxruntime-engine.md)."""

_DEFAULT_DOMAINS = ("", "ai.onnx")
_RUN_LOCK = threading.Lock()
_REGISTER_LOCK = threading.Lock()


class _ProcessState:
    """The engine's process-wide state, each part written under its lock only.

    onnxruntime-extensions keeps one registry of PyOps per process and calls
    them by id, so the state cannot be per session: ``refusals`` belongs to
    the one run that holds ``_RUN_LOCK`` (runs are serialized);
    ``ours`` and ``library_hook`` are written once, under ``_REGISTER_LOCK``,
    and only read afterwards.
    """

    def __init__(self) -> None:
        self.registered = False
        self.refusals: list[Exception] = []
        self.ours: dict[int, Any] = {}  # our Opdefs by the id the library calls them with
        self.library_hook: Callable[..., Any] | None = None


_STATE = _ProcessState()


_FAILED_NODE = re.compile(r"running (\S+) node\. Name:'([^']*)'")


class EngineRunError(RuntimeError):
    """onnxruntime failed to run a node other than a refused Mul; ``node`` names it."""

    def __init__(self, message: str, node: str | None) -> None:
        super().__init__(message)
        self.node = node


class EngineUnsupported(TypeError):
    """The onnxruntime engine cannot run this model; the reference engine can.

    Not a ProfileError: the model may conform; this engine cannot carry it.
    """


def available() -> bool:
    """Whether onnxruntime and onnxruntime-extensions are installed (neither is imported)."""
    return all(importlib.util.find_spec(m) for m in ("onnxruntime", "onnxruntime_extensions"))


# @relation(F, scope=function)
def _certified_kernel(
    a: np.ndarray, b: np.ndarray, opset: int = DEFAULT_OPSET, node: str = ""
) -> np.ndarray:
    """The body of every certified custom op: ``mul`` with the node's opset.

    An exception must not leave a PyOp (onnxruntime-extensions terminates the
    process): a refusal is kept for ``InferenceSession.run``, which raises it
    and discards every output of the run; zeros stand in for the product
    meanwhile, so that the graph can finish.
    """
    a, b = np.asarray(a), np.asarray(b)
    try:
        return mul(a, b, opset=int(opset))
    except Exception as exc:
        exc.node = node  # type: ignore[attr-defined]  # the CLI names it, as for the reference engine
        _STATE.refusals.append(exc)
        return np.zeros_like(a)


def _register() -> None:
    """Register one PyOp per carried type (PyOp signatures have one fixed type).

    onnxruntime-extensions' own hook hands a PyOp's result back as
    ``result.flatten().tolist()``: Python floats and ints that its C++ side
    converts again, under onnxruntime's MXCSR (FTZ with
    ``session.set_denormal_as_zero``: a subnormal float32 product came back
    as 0), and uint64 through double. Our ops are answered by ``_hook``
    instead, which returns the array itself; every other PyOp of the process
    keeps the library's hook.
    """
    with _REGISTER_LOCK:
        if _STATE.registered:
            return
        from onnxruntime_extensions import PyCustomOpDef, _ocos, onnx_op  # measured: 117 ms, extra

        for name in CARRIED.values():
            dt = getattr(PyCustomOpDef, f"dt_{name}")
            opdef = onnx_op(
                op_type=OP_PREFIX + name,
                inputs=[dt, dt],
                outputs=[dt],
                attrs={"opset": PyCustomOpDef.dt_int64, "node": PyCustomOpDef.dt_string},
            )(_certified_kernel)
            _STATE.ours[id(opdef)] = opdef
        _STATE.library_hook = _ocos._on_pyop_invocation
        PyCustomOpDef.install_hooker(_hook)
        _STATE.registered = True


def _hook(k_id: int, feed: Sequence[np.ndarray], attributes: Mapping[str, Any]) -> Any:
    """The PyOp dispatcher: our ops return their array as it is (bits, no conversion)."""
    opdef = _STATE.ours.get(k_id)
    if opdef is None:
        assert _STATE.library_hook is not None  # installed with our hook
        return _STATE.library_hook(k_id, feed, attributes)
    a, b = feed
    result = _certified_kernel(a, b, **opdef.cast_attributes(attributes))
    return (k_id, result.shape, np.ascontiguousarray(result).reshape(-1))


def _native_order(feed: Mapping[str, Any]) -> dict[str, Any]:
    """The feeds with every array in this machine's byte order, converted by value.

    onnxruntime reads an array's buffer as native whatever its dtype says
    (a big-endian float32 feed came back as products of reinterpreted
    bits); the reference engine reads by value, and so must this one.
    """
    out: dict[str, Any] = {}
    for name, value in feed.items():
        if isinstance(value, np.ndarray) and not value.dtype.isnative:
            value = value.astype(value.dtype.newbyteorder("="))
        out[name] = value
    return out


def _graphs(node: onnx.NodeProto) -> Iterator[onnx.GraphProto]:
    for attr in node.attribute:
        if attr.type == onnx.AttributeProto.GRAPH:
            yield attr.g
        elif attr.type == onnx.AttributeProto.GRAPHS:
            yield from attr.graphs


def _nodes(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    for node in graph.node:
        yield node
        for sub in _graphs(node):
            yield from _nodes(sub)


def _types(graph: onnx.GraphProto, outer: Mapping[str, int]) -> dict[str, int]:
    """Element type of every value name visible in ``graph`` (0 when unknown)."""
    types = dict(outer)
    for init in graph.initializer:
        types[init.name] = init.data_type
    for info in [*graph.input, *graph.value_info, *graph.output]:
        if info.type.HasField("tensor_type") and info.type.tensor_type.elem_type:
            types[info.name] = info.type.tensor_type.elem_type
    return types


def _rewrite(graph: onnx.GraphProto, outer: Mapping[str, int], opset: int) -> int:
    """Rewrite the Mul nodes of ``graph`` and its subgraphs in place; their number."""
    types = _types(graph, outer)
    count = 0
    for node in graph.node:
        for sub in _graphs(node):
            count += _rewrite(sub, types, opset)
        if node.op_type != "Mul" or node.domain not in _DEFAULT_DOMAINS:
            continue
        where = f"Mul node {node.name!r}"
        for attr in node.attribute:
            if attr.name == "broadcast" and attr.i:  # the checker refuses it first (R4)
                raise ProfileError(f"{where} has the legacy attribute broadcast=1", ("R4",))
        elem = types.get(node.input[0], 0) if node.input else 0
        if elem in UNCARRIED:
            raise EngineUnsupported(
                f"{where}: the onnxruntime engine cannot carry {UNCARRIED[elem]} through a "
                "Python custom op (onnxruntime-extensions PyOp); use the reference engine"
            )
        if elem not in CARRIED:
            known = onnx.helper.tensor_dtype_to_string(elem) if elem else "unknown"
            raise EngineUnsupported(
                f"{where}: the element type of its operands is {known}; the onnxruntime "
                "engine needs one of " + ", ".join(CARRIED.values())
            )
        node.op_type = OP_PREFIX + CARRIED[elem]
        node.domain = DOMAIN
        del node.attribute[:]  # Mul-1's consumed_inputs has no meaning for the kernel
        node.attribute.append(onnx.helper.make_attribute("opset", opset))
        described = f"{node.name or '(unnamed)'!r} (Mul, outputs {list(node.output)})"
        node.attribute.append(onnx.helper.make_attribute("node", described))
        count += 1
    return count


def certify(model: onnx.ModelProto) -> tuple[onnx.ModelProto, int]:
    """A copy of ``model`` whose default-domain Mul nodes are certified custom ops.

    Model-local functions are inlined first (``onnx.inliner``). Returns the
    rewritten model and the number of Mul nodes rewritten. Raises
    ``EngineUnsupported`` for a Mul whose element type PyOp cannot carry or
    that type inference cannot tell.
    """
    work = onnx.ModelProto()
    work.CopyFrom(model)
    if work.functions:
        work = inliner.inline_local_functions(work)
        del work.functions[:]
    inferred = shape_inference.infer_shapes(work)
    versions = {o.domain: o.version for o in inferred.opset_import}
    opset = int(versions.get("", versions.get("ai.onnx", DEFAULT_OPSET)))
    count = _rewrite(inferred.graph, {}, opset)
    if DOMAIN not in versions:
        inferred.opset_import.append(onnx.helper.make_opsetid(DOMAIN, 1))
    return inferred, count


class InferenceSession:
    """``onnxruntime.InferenceSession`` with every Mul node on ``sonnx_mul.mul``.

    ``model``: a ModelProto, a path or the serialized bytes. The model is
    checked first: a definite violation raises ``ProfileError`` (nothing is
    built); ``EngineUnsupported`` when a Mul's type cannot be carried or
    onnxruntime cannot load the rewritten model (its IR version, an operator
    onnxruntime lacks).
    ``sess_options`` (an ``onnxruntime.SessionOptions``) is used as given, with
    onnxruntime-extensions' library registered on it; ``providers`` defaults
    to the CPU provider (the certified op runs on the CPU).
    """

    engine = "onnxruntime"

    # @relation(R1, R2, R3, R4, scope=function)
    def __init__(
        self,
        model: ModelSource,
        sess_options: Any = None,
        providers: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        import onnxruntime  # measured: 73 ms; the optional extra, only when a session is made
        from onnxruntime_extensions import get_library_path  # measured: 117 ms, extra

        proto = load_model(model)
        definite = [v for v in check_model(proto) if v.definite]
        if definite:
            raise _refusal(definite)
        rewritten, self.certified_nodes = certify(proto)
        _register()
        if sess_options is None:
            options = onnxruntime.SessionOptions()
            options.log_severity_level = 4  # errors are raised, never also logged to stderr
        else:
            options = sess_options
        options.register_custom_ops_library(get_library_path())
        self._outputs = {n.name: list(n.output) for n in _nodes(rewritten.graph) if n.name}
        try:
            self._session = onnxruntime.InferenceSession(
                rewritten.SerializeToString(),
                options,
                providers=list(providers or ["CPUExecutionProvider"]),
                **kwargs,
            )
        except Exception as exc:  # e.g. an IR version newer than this onnxruntime reads
            raise EngineUnsupported(f"onnxruntime cannot load the model: {exc}") from exc

    def _failure(self, exc: Exception) -> EngineRunError:
        """onnxruntime's error, with the failing node named as the reference engine names it."""
        found = _FAILED_NODE.search(str(exc))
        node = None
        if found is not None:
            op_type, name = found.groups()
            node = f"{name!r} ({op_type}, outputs {self._outputs.get(name, [])})"
        return EngineRunError(f"{type(exc).__name__}: {exc}", node)

    def get_inputs(self) -> Any:
        return self._session.get_inputs()

    def get_outputs(self) -> Any:
        return self._session.get_outputs()

    def run(
        self,
        output_names: Sequence[str] | None,
        input_feed: Mapping[str, Any],
        run_options: Any = None,
    ) -> list[np.ndarray]:
        """The outputs named (all when None), as onnxruntime returns them.

        A Mul refused at run time raises its ``ProfileError``; nothing is returned.
        """
        with _RUN_LOCK:
            _STATE.refusals.clear()
            try:
                outputs: list[np.ndarray] = self._session.run(
                    output_names, _native_order(input_feed), run_options
                )
            except Exception as exc:
                if _STATE.refusals:
                    raise _STATE.refusals[0] from exc
                raise self._failure(exc) from exc
            finally:
                refusals = list(_STATE.refusals)
                _STATE.refusals.clear()
            if refusals:  # onnxruntime swallowed a refusal: never return its outputs
                raise refusals[0]
            return outputs
