"""Runtime adapters: the plug-in interface of ``sonnx-mul conform``.

A runtime under test is a :class:`Runtime`: a name, the settings that may
change its results (recorded with every result), and ``prepare(model)``
which returns a :class:`Session`, a callable ``session(a, b) -> c`` on the
model's two inputs ``A`` and ``B``. Raising from ``prepare`` or from the
session is how a runtime refuses a model or an input; a refusal of a type
that the profile allows is recorded as "type not supported", not as a
mismatch.

Adapters:

- :class:`OnnxRuntime` (``onnxruntime``, CPU execution provider), with its
  thread counts, graph optimisation level and denormal-as-zero option;
- :class:`OpenVinoRuntime` (``openvino``, a device, CPU by default), with its
  inference precision hint, execution mode, thread count and denormals
  optimisation;
- :class:`BackendRuntime`: any ``onnx.backend.base.Backend`` (class or instance);
- :class:`CallableRuntime`: any Python callable ``fn(a, b) -> ndarray`` on two
  numpy arrays of one shape and dtype (the model is not used: shapes and
  types are what the callable sees).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np
import onnx

Session = Callable[[np.ndarray, np.ndarray], np.ndarray]


class RuntimeUnavailable(Exception):
    """The runtime's package is not installed or cannot start (exit 2)."""


class Runtime(Protocol):
    """What a conformance run needs from a runtime (see the module docstring)."""

    name: str
    uses_models: bool
    """False for a bare callable: model variants (single, graph) are the same to it."""

    def settings(self) -> dict[str, Any]:
        """Version and every setting that may change results, as JSON-able values."""
        ...

    def prepare(self, model: onnx.ModelProto) -> Session:
        """A session computing the model's output ``C`` from ``A`` and ``B``."""
        ...

    def reproducer(self) -> str:
        """Python lines that define ``run(model_path, a, b) -> c`` for this runtime
        with these settings (written into each reproducer script)."""
        ...


# ------------------------------------------------------------------ onnxruntime
ORT_OPT_LEVELS = ("disable", "basic", "extended", "all")


class OnnxRuntime:
    """onnxruntime's CPU execution provider with the given session options."""

    uses_models = True

    def __init__(
        self,
        *,
        intra_op_threads: int = 0,
        inter_op_threads: int = 0,
        graph_optimization: str = "all",
        denormal_as_zero: bool = False,
    ) -> None:
        try:
            import onnxruntime
        except ImportError as exc:
            raise RuntimeUnavailable(
                "onnxruntime is not installed (pip install 'sonnx-mul-assurance[conform]')"
            ) from exc
        if graph_optimization not in ORT_OPT_LEVELS:
            raise ValueError(f"graph optimisation level must be one of {ORT_OPT_LEVELS}")
        self._ort = onnxruntime
        self.name = "onnxruntime"
        self.intra_op_threads = intra_op_threads
        self.inter_op_threads = inter_op_threads
        self.graph_optimization = graph_optimization
        self.denormal_as_zero = denormal_as_zero

    def _options(self) -> Any:
        ort = self._ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = self.intra_op_threads
        so.inter_op_num_threads = self.inter_op_threads
        so.graph_optimization_level = {
            "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
            "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
            "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
            "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
        }[self.graph_optimization]
        # onnxruntime's own switch for flush-to-zero / denormals-are-zero
        so.add_session_config_entry(
            "session.set_denormal_as_zero", "1" if self.denormal_as_zero else "0"
        )
        so.log_severity_level = 3
        return so

    def settings(self) -> dict[str, Any]:
        return {
            "runtime": "onnxruntime",
            "version": self._ort.__version__,
            "execution_provider": "CPUExecutionProvider",
            "intra_op_num_threads": self.intra_op_threads,
            "inter_op_num_threads": self.inter_op_threads,
            "graph_optimization_level": self.graph_optimization,
            "session.set_denormal_as_zero": self.denormal_as_zero,
        }

    def prepare(self, model: onnx.ModelProto) -> Session:
        sess = self._ort.InferenceSession(
            model.SerializeToString(), self._options(), providers=["CPUExecutionProvider"]
        )

        def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return np.asarray(sess.run(["C"], {"A": a, "B": b})[0])

        return run

    def reproducer(self) -> str:
        level = {
            "disable": "ORT_DISABLE_ALL",
            "basic": "ORT_ENABLE_BASIC",
            "extended": "ORT_ENABLE_EXTENDED",
            "all": "ORT_ENABLE_ALL",
        }[self.graph_optimization]
        return "\n".join([
            "import onnxruntime as ort",
            "",
            "",
            "def run(model_path, a, b):",
            "    so = ort.SessionOptions()",
            f"    so.intra_op_num_threads = {self.intra_op_threads}",
            f"    so.inter_op_num_threads = {self.inter_op_threads}",
            f"    so.graph_optimization_level = ort.GraphOptimizationLevel.{level}",
            f"    so.add_session_config_entry('session.set_denormal_as_zero', "
            f"'{1 if self.denormal_as_zero else 0}')",
            "    sess = ort.InferenceSession(model_path, so, providers=['CPUExecutionProvider'])",
            "    return sess.run(['C'], {'A': a, 'B': b})[0]",
        ])  # fmt: skip


# ------------------------------------------------------------------ OpenVINO
OV_PRECISIONS = ("default", "f32", "f16", "bf16")
OV_MODES = ("default", "PERFORMANCE", "ACCURACY")


class OpenVinoRuntime:
    """OpenVINO (``openvino.Core``) on a device, reading the ONNX model directly."""

    uses_models = True

    def __init__(
        self,
        *,
        device: str = "CPU",
        inference_precision: str = "default",
        execution_mode: str = "default",
        num_threads: int = 0,
        denormals_optimization: bool | None = None,
    ) -> None:
        try:
            import openvino
        except ImportError as exc:
            raise RuntimeUnavailable(
                "openvino is not installed (pip install 'sonnx-mul-assurance[conform]')"
            ) from exc
        if inference_precision not in OV_PRECISIONS:
            raise ValueError(f"inference precision must be one of {OV_PRECISIONS}")
        if execution_mode not in OV_MODES:
            raise ValueError(f"execution mode must be one of {OV_MODES}")
        self._ov = openvino
        self.name = "openvino"
        self.core = openvino.Core()
        if device not in self.core.available_devices:
            raise RuntimeUnavailable(
                f"OpenVINO device {device!r} is not available (have: "
                f"{', '.join(self.core.available_devices) or 'none'})"
            )
        self.device = device
        self.config: dict[str, Any] = {}
        if inference_precision != "default":
            self.config["INFERENCE_PRECISION_HINT"] = inference_precision
        if execution_mode != "default":
            self.config["EXECUTION_MODE_HINT"] = execution_mode
        if num_threads:
            self.config["INFERENCE_NUM_THREADS"] = num_threads
        if denormals_optimization is not None:
            self.config["CPU_DENORMALS_OPTIMIZATION"] = denormals_optimization
        self._effective: dict[str, Any] = {}

    def settings(self) -> dict[str, Any]:
        return {
            "runtime": "openvino",
            "version": self._ov.get_version(),
            "device": self.device,
            "device_name": str(self.core.get_property(self.device, "FULL_DEVICE_NAME")),
            "requested": {k: str(v) for k, v in self.config.items()},
            "effective": dict(self._effective) or self._device_defaults(),
        }

    def _device_defaults(self) -> dict[str, str]:
        found = {}
        for key in ("INFERENCE_PRECISION_HINT", "EXECUTION_MODE_HINT", "INFERENCE_NUM_THREADS"):
            try:
                found[key] = str(self.core.get_property(self.device, key))
            except Exception:  # a property this device does not have
                continue
        return found

    def prepare(self, model: onnx.ModelProto) -> Session:
        ov_model = self.core.read_model(model.SerializeToString(), b"")
        compiled = self.core.compile_model(ov_model, self.device, self.config)
        for key in ("INFERENCE_PRECISION_HINT", "EXECUTION_MODE_HINT", "INFERENCE_NUM_THREADS"):
            try:  # what the compiled model really uses, recorded with the results
                self._effective[key] = str(compiled.get_property(key))
            except Exception:
                continue
        request = compiled.create_infer_request()

        def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            out = request.infer({"A": a, "B": b})
            return np.array(next(iter(out.values())), copy=True)

        return run

    def reproducer(self) -> str:
        config = {k: str(v) for k, v in self.config.items()}
        return "\n".join([
            "import openvino as ov",
            "",
            "",
            "def run(model_path, a, b):",
            "    core = ov.Core()",
            "    model = core.read_model(model_path)",
            f"    compiled = core.compile_model(model, {self.device!r}, {config!r})",
            "    out = compiled.create_infer_request().infer({'A': a, 'B': b})",
            "    return next(iter(out.values()))",
        ])  # fmt: skip


# ------------------------------------------------------------------ plug-ins
class BackendRuntime:
    """Any ``onnx.backend.base.Backend``: ``prepare(model, device).run([a, b])[0]``."""

    uses_models = True

    def __init__(self, backend: Any, *, name: str | None = None, device: str = "CPU") -> None:
        self.backend = backend
        self.device = device
        self.name: str = name or str(getattr(backend, "__name__", type(backend).__name__))
        self.spec = f"{getattr(backend, '__module__', '?')}:{self.name}"

    def settings(self) -> dict[str, Any]:
        return {"runtime": "onnx.backend", "backend": self.spec, "device": self.device}

    def prepare(self, model: onnx.ModelProto) -> Session:
        rep = self.backend.prepare(model, self.device)

        def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return np.asarray(rep.run([a, b])[0])

        return run

    def reproducer(self) -> str:
        module, _, attr = self.spec.partition(":")
        return "\n".join([
            "import importlib",
            "import onnx",
            "",
            "",
            "def run(model_path, a, b):",
            f"    backend = getattr(importlib.import_module({module!r}), {attr!r})",
            f"    return backend.prepare(onnx.load(model_path), {self.device!r}).run([a, b])[0]",
        ])  # fmt: skip


class CallableRuntime:
    """A Python callable ``fn(a, b) -> ndarray`` taking the two operand arrays."""

    uses_models = False

    def __init__(
        self, fn: Callable[[np.ndarray, np.ndarray], Any], *, name: str | None = None
    ) -> None:
        self.fn = fn
        self.name: str = name or str(getattr(fn, "__name__", type(fn).__name__))
        self.spec = f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', self.name)}"

    def settings(self) -> dict[str, Any]:
        return {"runtime": "python callable", "callable": self.spec}

    def prepare(self, model: onnx.ModelProto) -> Session:
        del model  # a bare callable sees only the arrays

        def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            with np.errstate(all="ignore"):  # IEEE results are the point, not warnings
                return np.asarray(self.fn(a, b))

        return run

    def reproducer(self) -> str:
        module, _, attr = self.spec.partition(":")
        return "\n".join([
            "import importlib",
            "",
            "",
            "def run(model_path, a, b):",
            f"    fn = importlib.import_module({module!r})",
            f"    for part in {attr!r}.split('.'):",
            "        fn = getattr(fn, part)",
            "    return fn(a, b)",
        ])  # fmt: skip


def load_plugin(spec: str) -> Runtime:
    """``MODULE:NAME`` -> a runtime: an ``onnx.backend.base.Backend`` (class or
    instance) becomes a :class:`BackendRuntime`, a Runtime is used as is, any
    other callable a :class:`CallableRuntime`. ValueError when it is none of them."""
    from onnx.backend.base import Backend

    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"a plug-in runtime is MODULE:NAME, got {spec!r}")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise RuntimeUnavailable(f"cannot load the runtime {spec!r}: {exc}") from exc
    is_backend = (inspect.isclass(obj) and issubclass(obj, Backend)) or isinstance(obj, Backend)
    if is_backend:
        return BackendRuntime(obj, name=attr)
    if all(hasattr(obj, x) for x in ("prepare", "settings", "reproducer", "uses_models")):
        return obj  # type: ignore[no-any-return]
    if callable(obj):
        return CallableRuntime(obj, name=attr)
    raise ValueError(f"{spec} is neither an onnx Backend, a Runtime nor a callable")


def describe(settings: Mapping[str, Any]) -> str:
    """One line of settings: ``key=value, ...`` (nested mappings flattened)."""
    parts: list[str] = []
    for k, v in settings.items():
        if isinstance(v, Mapping):
            parts += [f"{k}.{kk}={vv}" for kk, vv in v.items()]
        else:
            parts.append(f"{k}={v}")
    return ", ".join(parts)
