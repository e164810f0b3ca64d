"""sonnx-mul: the certified ONNX Mul operator under the SONNX profile."""

from .api import mul
from .errors import (
    ArgumentError,
    ElementTypeError,
    IntegerOverflowError,
    NotAnArrayError,
    ProfileError,
    ShapeError,
    SparseTensorError,
)
from .known_answers import SelfTestReport, selftest

__version__ = "0.1.0"

__all__ = [
    "ArgumentError",
    "ElementTypeError",
    "IntegerOverflowError",
    "NotAnArrayError",
    "ProfileError",
    "SelfTestReport",
    "ShapeError",
    "SparseTensorError",
    "mul",
    "selftest",
]
