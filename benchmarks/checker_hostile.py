"""Time and memory of `sonnx-mul check` on hostile files (figures for SECURITY.md).

python benchmarks/checker_hostile.py — each case runs in a fresh subprocess;
time is the median of 3 runs, memory the peak RSS (VmHWM) minus the RSS
after imports. Timing is measured here, never asserted in the unit tests.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from sonnx_mul.cli import main
import contextlib, io
def mb(key):
    with open("/proc/self/status") as f:
        return int(next(x for x in f if x.startswith(key + ":")).split()[1]) / 1024
base = mb("VmRSS")
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
    code = main(["check", sys.argv[2]])
print(json.dumps({"s": time.perf_counter() - t, "mb": mb("VmHWM") - base, "exit": code}))
"""


def build(folder: Path) -> dict[str, str]:
    sys.path.insert(0, str(ROOT / "tests"))
    import onnx

    from models import many_ifs

    cases: dict[str, str] = {}
    path = folder / "ifs.onnx"
    onnx.save(many_ifs(20_000, bad_every=1000), path)
    cases["20,000 If nodes, a Mul in each (3.6 MB)"] = str(path)
    from onnx import TensorProto as T
    from onnx import helper as h

    from models import model, vi

    mul = h.make_node("Mul", ["x", "x"], ["z"])
    big = 100 << 20  # issue 21: peak within 2x the file
    payloads = {
        "value_floats": h.make_node("Constant", [], ["c"], value_floats=[0.5] * (big // 4)),
        "value_ints": h.make_node("Constant", [], ["c"], value_ints=[2**62] * (big // 10)),
        "tensor": h.make_node(
            "Constant", [], ["c"], value=T(name="c", data_type=T.FLOAT, dims=[big // 4],
                                           raw_data=b"\x01" * big)
        ),
    }  # fmt: skip
    for name, node in payloads.items():
        path = folder / f"{name}.onnx"
        onnx.save(model([node, mul], [vi("x", T.FLOAT, [2])]), path)
        size = path.stat().st_size / 2**20
        cases[f"Constant {name}, {size:.0f} MB"] = str(path)
    fifo = folder / "fifo.onnx"
    os.mkfifo(fifo)
    cases["FIFO without writer"] = str(fifo)
    cases["/dev/zero"] = "/dev/zero"
    sparse = folder / "sparse.onnx"
    with open(sparse, "wb") as f:
        f.truncate(3 << 30)
    cases["3 GiB sparse file"] = str(sparse)
    deep = folder / "deep.xml"
    deep.write_bytes(b"<net>" + b"<a>" * 1_000_000 + b"</a>" * 1_000_000 + b"</net>")
    cases["IR XML nested 10^6 deep (7 MB)"] = str(deep)
    return cases


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cases = build(Path(tmp))
        print("| file | exit | time (median of 3) | peak memory over baseline |")
        print("|---|---|---|---|")
        for name, path in cases.items():
            runs = []
            for _ in range(3):
                out = subprocess.run(
                    [sys.executable, "-c", CASE, str(ROOT / "src"), path],
                    capture_output=True, text=True, timeout=600, check=True,
                )  # fmt: skip
                runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            secs = statistics.median(r["s"] for r in runs)
            mem = max(r["mb"] for r in runs)
            print(f"| {name} | {runs[0]['exit']} | {secs:.2f} s | {mem:.0f} MB |")


if __name__ == "__main__":
    main()
