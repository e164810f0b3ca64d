"""ONNX integration: model checker, certified executor, OpenVINO IR checker.

Inside this package ``import onnx`` is the real ``onnx`` distribution
(absolute imports); this package is ``sonnx_mul.onnx``.
"""

from .checker import (
    ModelReadError,
    Report,
    ShapeBindingError,
    Violation,
    check_model,
    check_report,
    load_model,
)
from .executor import Backend, BackendRep, CertifiedEvaluator, Mul

__all__ = [
    "Backend",
    "BackendRep",
    "CertifiedEvaluator",
    "ModelReadError",
    "Mul",
    "Report",
    "ShapeBindingError",
    "Violation",
    "check_model",
    "check_report",
    "load_model",
]
