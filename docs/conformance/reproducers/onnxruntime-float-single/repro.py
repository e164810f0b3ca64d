"""Reproducer: onnxruntime Mul on float (single model) violates F-FLOAT of the
SONNX Mul profile (sonnx-mul conform). Run: python repro.py  (exit 1: reproduced)."""

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

import onnxruntime as ort


def run(model_path, a, b):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 0
    so.inter_op_num_threads = 0
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.add_session_config_entry('session.set_denormal_as_zero', '1')
    sess = ort.InferenceSession(model_path, so, providers=['CPUExecutionProvider'])
    return sess.run(['C'], {'A': a, 'B': b})[0]


HERE = Path(__file__).resolve().parent
DTYPE = np.dtype('float32')
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
show = float if True else int
differ = 0
for i in range(a.size):
    e, g = expected[i], got[i]
    nan = True and np.isnan(float(e)) and np.isnan(float(g))
    same = nan or expected[i : i + 1].view("uint32")[0] == got[i : i + 1].view("uint32")[0]
    differ += not same
    print(f"{show(a[i])!r} * {show(b[i])!r}: certified {show(e)!r} "
          f"({int(expected[i : i + 1].view('uint32')[0]):#x}), runtime {show(g)!r} "
          f"({int(got[i : i + 1].view('uint32')[0]):#x}){'' if same else '  <- differs'}")
print(f"{differ} of {a.size} pairs differ")
sys.exit(1 if differ else 0)
