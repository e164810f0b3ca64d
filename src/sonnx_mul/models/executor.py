"""Run ONNX models with every ``Mul`` node executed by ``sonnx_mul.mul``.

``Mul`` replaces the standard operator of ``onnx.reference.ReferenceEvaluator``
(``new_ops=[Mul]``; ``CertifiedEvaluator`` does it for model-local functions
too); the other operators keep the reference implementation.
``Backend`` wraps that as an ``onnx.backend.base.Backend``: ``prepare`` checks
the model first and refuses it when a Mul node certainly violates the profile;
what cannot be decided statically (symbolic dims) is checked by ``mul`` on the
actual arrays at run time. Only Mul nodes of the default domain ``""`` are
replaced (a node spelled ``ai.onnx`` is not run by the reference evaluator).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend as _BaseBackend
from onnx.backend.base import BackendRep as _BaseBackendRep
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

from ..api import mul
from ..dtypes import DEFAULT_OPSET
from ..errors import ProfileError
from .checker import Violation, check_model


def find_profile_error(exc: BaseException) -> ProfileError | None:
    """The ProfileError in ``exc``'s cause chain (the evaluator wraps TypeErrors)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ProfileError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


class Mul(OpRun):
    """Certified Mul for ``ReferenceEvaluator(model, new_ops=[Mul])``.

    Use ``CertifiedEvaluator`` to also cover Mul nodes in model-local functions.
    """

    op_domain = ""

    # @relation(R4, scope=function)
    def _run(self, a: Any, b: Any, broadcast: int | None = None, **_: Any) -> tuple[np.ndarray]:
        """C = mul(A, B) with the node's opset; Mul-1/6 ``broadcast=1`` is refused (R4)."""
        if broadcast:
            raise ProfileError(
                f"Mul node {self.onnx_node.name!r} has the legacy attribute "
                f"broadcast={broadcast}; broadcasting is forbidden",
                ("R4",),
            )
        opsets: Mapping[str, int] = self.run_params.get("opsets", {})
        opset = int(opsets.get("", opsets.get("ai.onnx", DEFAULT_OPSET)))
        # The evaluator may hand over numpy scalars for 0-d values: keep dtype, make 0-d arrays.
        a = np.asarray(a) if isinstance(a, np.generic) else a
        b = np.asarray(b) if isinstance(b, np.generic) else b
        return (mul(a, b, opset=opset),)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().run(*args, **kwargs)  # type: ignore[no-untyped-call]
        except TypeError as exc:  # OpRun.run rewraps TypeError; keep the profile error
            found = find_profile_error(exc)
            if found is None:
                raise
            raise found from None


class CertifiedEvaluator(ReferenceEvaluator):
    """ReferenceEvaluator with the certified Mul everywhere.

    ``ReferenceEvaluator(model, new_ops=[Mul])`` alone builds the evaluators of
    model-local functions WITHOUT ``new_ops`` (onnx 1.23), so Mul nodes inside
    functions would run the standard implementation. It builds them with
    ``self.__class__``, so injecting ``Mul`` here covers functions too.
    """

    def __init__(
        self,
        proto: Any,
        opsets: dict[str, int] | None = None,
        functions: list[Any] | None = None,
        verbose: int = 0,
        new_ops: list[type[OpRun]] | None = None,
        **kwargs: Any,
    ) -> None:
        ops: list[type[OpRun]] = [Mul, *(new_ops or [])]
        super().__init__(proto, opsets, functions, verbose, ops, **kwargs)


def _refusal(violations: Sequence[Violation]) -> ProfileError:
    ids = tuple(dict.fromkeys(v.requirement for v in violations))
    groups: dict[tuple[str, str, str], list[str]] = {}
    for v in violations:
        groups.setdefault((v.path, v.node, v.message), []).append(v.requirement)
    lines = "; ".join(f"{', '.join(r)} at {p}/{n}: {m}" for (p, n, m), r in groups.items())
    return ProfileError(f"the model violates the SONNX Mul profile: {lines}", ids)


class BackendRep(_BaseBackendRep):
    """A prepared model: a ReferenceEvaluator whose Mul is the certified one."""

    def __init__(self, model: onnx.ModelProto, violations: Sequence[Violation]) -> None:
        self.model = model
        self.violations = tuple(violations)  # undecided ones, checked at run time
        self.evaluator = CertifiedEvaluator(model)

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Outputs in graph order; inputs as a list (graph order) or a dict by name."""
        if isinstance(inputs, Mapping):
            feeds = dict(inputs)
        else:
            items = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
            feeds = dict(zip(self.evaluator.input_names, items, strict=False))
        try:
            return tuple(self.evaluator.run(None, feeds))
        except Exception as exc:
            found = find_profile_error(exc)
            if found is None or found is exc:
                raise
            raise found from exc


class Backend(_BaseBackend):
    """ONNX backend running Mul nodes on ``sonnx_mul.mul`` (CPU only)."""

    # @relation(R1, R2, R3, R4, scope=function)
    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> BackendRep:
        """Check the model, refuse definite violations (ProfileError), build the runner."""
        if not cls.supports_device(device):
            raise ValueError(f"device {device!r} is not supported (CPU only)")
        violations = check_model(model)
        definite = [v for v in violations if v.definite]
        if definite:
            raise _refusal(definite)
        return BackendRep(model, [v for v in violations if not v.definite])

    @classmethod
    def run_model(
        cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any
    ) -> tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device.upper() == "CPU"
