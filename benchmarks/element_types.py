"""The element types the side-by-side table measures: name -> (numpy type, ONNX type)
(read by run.py, which measures them, and bench_page.py, which sizes their rows)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from onnx import TensorProto

TYPES = {
    "float32": (np.float32, TensorProto.FLOAT),
    "float16": (np.float16, TensorProto.FLOAT16),
    "bfloat16": (ml_dtypes.bfloat16, TensorProto.BFLOAT16),
    "int8": (np.int8, TensorProto.INT8),
    "int32": (np.int32, TensorProto.INT32),
    "int64": (np.int64, TensorProto.INT64),
}
