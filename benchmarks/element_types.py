"""The element types the benchmarks measure, read from the product's registry
(src/sonnx_mul/dtypes.py): name -> (numpy type, ONNX type).  ALL_TYPES holds the
twelve; TYPES the ones of the side-by-side table (read by run.py, which measures
them, and bench_page.py, which sizes their rows)."""

from __future__ import annotations

from onnx import TensorProto

from sonnx_mul import dtypes

ALL_TYPES: dict[str, tuple[type, int]] = {
    t.dtype.name: (t.dtype.type, getattr(TensorProto, t.onnx_name.upper()))
    for t in dtypes.ALL_TYPES
}

TYPES = {
    name: ALL_TYPES[name] for name in ("float32", "float16", "bfloat16", "int8", "int32", "int64")
}
