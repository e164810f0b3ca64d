"""Reproducer: openvino Mul on int64 (single model) violates F-WRAP of the
SONNX Mul profile (sonnx-mul conform). Run: python repro.py  (exit 1: reproduced)."""

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

import openvino as ov


def run(model_path, a, b):
    core = ov.Core()
    model = core.read_model(model_path)
    compiled = core.compile_model(model, 'CPU', {})
    out = compiled.create_infer_request().infer({'A': a, 'B': b})
    return next(iter(out.values()))


HERE = Path(__file__).resolve().parent
DTYPE = np.dtype('int64')
a = np.load(HERE / "a_bits.npy").view(DTYPE)
b = np.load(HERE / "b_bits.npy").view(DTYPE)
expected = np.load(HERE / "expected_bits.npy").view(DTYPE)
# the runtime runs on its own thread: a runtime that switches its thread to
# flush-to-zero must not change how this script decodes and prints values
with ThreadPoolExecutor(1) as pool:
    got = np.asarray(pool.submit(run, str(HERE / "model.onnx"), a, b).result())
if got.dtype != expected.dtype or got.shape != expected.shape:
    print(f"runtime output {got.dtype} {list(got.shape)}, "
          f"certified {expected.dtype} {list(expected.shape)}")
    sys.exit(1)
show = float if False else int
differ = 0
for i in range(a.size):
    e, g = expected[i], got[i]
    nan = False and np.isnan(float(e)) and np.isnan(float(g))
    same = nan or expected[i : i + 1].view("uint64")[0] == got[i : i + 1].view("uint64")[0]
    differ += not same
    print(f"{show(a[i])!r} * {show(b[i])!r}: certified {show(e)!r} "
          f"({int(expected[i : i + 1].view('uint64')[0]):#x}), runtime {show(g)!r} "
          f"({int(got[i : i + 1].view('uint64')[0]):#x}){'' if same else '  <- differs'}")
print(f"{differ} of {a.size} pairs differ")
sys.exit(1 if differ else 0)
