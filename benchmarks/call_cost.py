"""The fixed cost of a call: 16 elements, per type, with and without ``out=``, layer by layer.

Each layer is timed by calling the layer below it directly, all in one
interleaved loop (medians of this process's CPU time per call):

- ``mul``: the public function (its Python frame, then the plain lane);
- ``_native.plain``: the plain lane's checks (exact ndarray types, the
  default opset and a mode by value, a C-contiguous ``out``), then the glue;
- ``_native.multiply``: the glue (argument parsing, the kernel's
  preconditions, the FP-environment bracket, the result's allocation, the
  kernel's 16 elements);
- ``C call``: a call of the extension that does nothing (``_native.isa``),
  the floor of any call from Python into C (every layer is called through a
  lambda, this one too: the floor includes that call);
- ``np.multiply``: the base of the target (at most 0.8x, with and without ``out=``).

The differences are each layer's own cost. From C (``kernel_cycles.c``,
the portable build, not the variant the glue runs): the kernel's 16
elements alone and the bracket alone (MXCSR saved, set, restored), per call
over a batch of calls.

    python benchmarks/call_cost.py [--quick]
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import time
from dataclasses import dataclass

import numpy as np
import value_classes
from sampling import Case, sample

from sonnx_mul import _native, mul
from sonnx_mul.dtypes import DEFAULT_OPSET

N = 16
LIMIT = 0.8
"""mul against np.multiply at 16 elements, with and without out= (the target)."""
LAYERS = ("mul", "_native.plain", "_native.multiply", "C call", "np.multiply")
TYPES = ("float16", "bfloat16", "float32", "float64", *value_classes.INT_TYPES)


@dataclass(frozen=True)
class Row:
    """One type, with or without out=: median ns per call of each layer, and
    the C-side kernel and bracket."""

    type: str
    out: bool
    ns: dict[str, float]
    kernel_ns: float
    bracket_ns: float

    @property
    def ratio(self) -> float:
        return self.ns["mul"] / self.ns["np.multiply"]


def _operands(type_name: str) -> tuple[np.ndarray, np.ndarray]:
    dtype = value_classes.FLOAT_FORMATS.get(type_name, (np.dtype(type_name),))[0]
    a = np.arange(1, N + 1).astype(dtype)
    return a, a[::-1].copy()


def _c_side(type_name: str, a: np.ndarray, b: np.ndarray, calls: int) -> tuple[float, float]:
    """ns per call of the kernel alone and of the bracket alone, from C."""
    import kernel_cycles

    dll = kernel_cycles.build()
    dll.sonnx_bench_batch_ns.restype = ctypes.c_uint64
    dll.sonnx_bench_batch_ns.argtypes = [
        ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
        ctypes.c_size_t, ctypes.c_int,
    ]  # fmt: skip
    c = np.empty_like(a)
    kind = kernel_cycles.KINDS[type_name]
    kernel, bracket = [], []
    for _ in range(7):
        args = (a.ctypes.data, b.ctypes.data, c.ctypes.data)
        kernel.append(dll.sonnx_bench_batch_ns(kind, 0, *args, N, calls) / calls)
        bracket.append(dll.sonnx_bench_batch_ns(kind, 1, *args, 0, calls) / calls)
    return statistics.median(kernel), statistics.median(bracket)


def _cases(a: np.ndarray, b: np.ndarray, out: np.ndarray | None) -> dict[str, Case]:
    """Each layer's call, every one through a lambda (the same overhead in every case)."""
    opset = DEFAULT_OPSET
    if out is None:
        return {
            "mul": lambda: mul(a, b),
            "_native.plain": lambda: _native.plain(a, b, None, opset, "wrap", opset),
            "_native.multiply": lambda: _native.multiply(a, b, None, False),
            "C call": lambda: _native.isa(),
            "np.multiply": lambda: np.multiply(a, b),
        }
    return {
        "mul": lambda: mul(a, b, out=out),
        "_native.plain": lambda: _native.plain(a, b, out, opset, "wrap", opset),
        "_native.multiply": lambda: _native.multiply(a, b, out, False),
        "C call": lambda: _native.isa(),
        "np.multiply": lambda: np.multiply(a, b, out=out),
    }


def measure(quick: bool = False) -> list[Row]:
    repeats, target = (3, 0.002) if quick else (15, 0.01)
    rows = []
    for type_name in TYPES:
        a, b = _operands(type_name)
        kernel_ns, bracket_ns = _c_side(type_name, a, b, 2000 if quick else 200_000)
        for out in (None, np.empty_like(a)):
            samples = sample(_cases(a, b, out), repeats, target, time.process_time)
            ns = {k: statistics.median(v) * 1e9 for k, v in samples.items()}
            rows.append(Row(type_name, out is not None, ns, kernel_ns, bracket_ns))
    return rows


def render(rows: list[Row]) -> list[str]:
    lines = [
        "| type | out= | mul | Python frame of mul | plain lane's checks | glue | C call "
        "| kernel, portable (C) | bracket (C) | np.multiply | mul / np.multiply |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        n = r.ns
        within = "" if r.ratio <= LIMIT else " **over**"
        lines.append(
            f"| {r.type} | {'yes' if r.out else 'no'} | {n['mul']:.0f} "
            f"| {n['mul'] - n['_native.plain']:.0f} "
            f"| {n['_native.plain'] - n['_native.multiply']:.0f} "
            f"| {n['_native.multiply'] - n['C call']:.0f} | {n['C call']:.0f} "
            f"| {r.kernel_ns:.0f} | {r.bracket_ns:.0f} | {n['np.multiply']:.0f} "
            f"| {r.ratio:.2f}×{within} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    rows = measure(args.quick)
    print("\n".join(render(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
