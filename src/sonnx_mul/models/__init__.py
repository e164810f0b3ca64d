"""Models: the profile checker for ONNX models and OpenVINO IR, and the certified executor."""

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
