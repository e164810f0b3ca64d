"""The stable names ``sonnx_mul.onnx.check_model`` and ``.Backend`` (docs/spec/product.md §6).

The implementation is :mod:`sonnx_mul.models` (the ONNX and OpenVINO IR
checker and the certified executor); this module only re-exports it, so
tools written against the specified names keep working. Inside the project,
import from :mod:`sonnx_mul.models`.
"""

from .models import *  # noqa: F403  (the same names, by definition)
from .models import __all__ as __all__
