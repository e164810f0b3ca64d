"""Reproducers: for each (type, model variant) with mismatches, a directory
``OUT/reproducers/<runtime>-<type>-<variant>/`` holding the model
(``model.onnx``), the mismatching operands and the certified results as bit
patterns (``a_bits.npy``, ``b_bits.npy``, ``expected_bits.npy``, unsigned
integers, so that bfloat16 needs no special .npy support) and ``repro.py``, a
script that depends only on numpy (ml_dtypes for bfloat16) and the runtime:
it runs the model, prints each pair and exits 1 when a result differs.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx

import sonnx_mul
from sonnx_mul.dtypes import ElementType
from sonnx_mul_assurance.conform.fpu import ieee_environment
from sonnx_mul_assurance.conform.runtimes import Runtime

_SCRIPT = '''"""Reproducer: {runtime} Mul on {type} ({variant} model) violates {req} of the
SONNX Mul profile (sonnx-mul conform). Run: python repro.py  (exit 1: reproduced)."""

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
{extra_import}
{runtime_code}


HERE = Path(__file__).resolve().parent
DTYPE = {dtype}
a = np.load(HERE / "a_bits.npy").view(DTYPE)
b = np.load(HERE / "b_bits.npy").view(DTYPE)
expected = np.load(HERE / "expected_bits.npy").view(DTYPE)
# the runtime runs on its own thread: a runtime that switches its thread to
# flush-to-zero must not change how this script decodes and prints values
with ThreadPoolExecutor(1) as pool:
    got = np.asarray(pool.submit(run, str(HERE / "model.onnx"), a, b).result())
if got.dtype != expected.dtype or got.shape != expected.shape:
    print(f"runtime output {{got.dtype}} {{list(got.shape)}}, "
          f"certified {{expected.dtype}} {{list(expected.shape)}}")
    sys.exit(1)
show = float if {is_float} else int
differ = 0
for i in range(a.size):
    e, g = expected[i], got[i]
    nan = {is_float} and np.isnan(float(e)) and np.isnan(float(g))
    same = nan or expected[i : i + 1].view("{uint}")[0] == got[i : i + 1].view("{uint}")[0]
    differ += not same
    print(f"{{show(a[i])!r}} * {{show(b[i])!r}}: certified {{show(e)!r}} "
          f"({{int(expected[i : i + 1].view('{uint}')[0]):#x}}), runtime {{show(g)!r}} "
          f"({{int(got[i : i + 1].view('{uint}')[0]):#x}}){{'' if same else '  <- differs'}}")
print(f"{{differ}} of {{a.size}} pairs differ")
sys.exit(1 if differ else 0)
'''


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def write_reproducer(
    out_dir: Path,
    runtime: Runtime,
    etype: ElementType,
    variant: str,
    model: onnx.ModelProto,
    a: np.ndarray,
    b: np.ndarray,
    opset: int,
    requirement: str,
) -> Path:
    """Write the reproducer of these mismatching pairs; return its directory."""
    where = out_dir / "reproducers" / _slug(f"{runtime.name}-{etype.onnx_name}-{variant}")
    where.mkdir(parents=True, exist_ok=True)
    with ieee_environment():
        expected = sonnx_mul.mul(a, b, opset=opset)
    u = etype.uint_view
    onnx.save(model, str(where / "model.onnx"))
    for name, arr in (("a_bits", a), ("b_bits", b), ("expected_bits", expected)):
        np.save(where / f"{name}.npy", np.ascontiguousarray(arr).view(u), allow_pickle=False)
    bf16 = etype.onnx_name == "bfloat16"
    dtype = "ml_dtypes.bfloat16" if bf16 else f"np.dtype({etype.dtype.name!r})"
    (where / "repro.py").write_text(
        _SCRIPT.format(
            runtime=runtime.name, type=etype.onnx_name, variant=variant, req=requirement,
            extra_import="import ml_dtypes\n" if bf16 else "",
            runtime_code=runtime.reproducer(), dtype=dtype, is_float=etype.is_float,
            uint=u.name,
        )
    )  # fmt: skip
    return where
