"""Time and memory of `sonnx-mul check` on hostile files (figures for SECURITY.md).

python benchmarks/checker_hostile.py — each case runs in a fresh subprocess;
time (wall and CPU) is the median of 3 runs, memory the peak RSS (VmHWM) minus the
RSS after imports. Timing is measured here, never asserted in the unit tests. The
files are built by tests/hostile_files.py, the module the tests build them with (no
test module is imported here).
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
t, cpu = time.perf_counter(), time.process_time()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
    code = main(["check", sys.argv[2]])
print(json.dumps({
    "s": time.perf_counter() - t, "cpu": time.process_time() - cpu,
    "mb": mb("VmHWM") - base, "exit": code,
}))
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


FACTOR, CONSTANT_MB = 2.0, 24
"""SECURITY.md's memory bound for a check: 2x the file plus this constant (issue 29)."""


def memory_cases(folder: Path) -> dict[str, str]:
    """The hostile-file classes of issue 29's memory bound, as files in ``folder``."""
    sys.path.insert(0, str(ROOT / "tests"))
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    from hostile_files import (
        attribute_list_model,
        bench_classes,
        long_symbol_model,
        many_graphs_model,
    )
    from models import model, vi

    cases: dict[str, str] = {}

    def save(name: str, m: onnx.ModelProto | bytes) -> None:
        path = folder / f"{len(cases)}.onnx"
        if isinstance(m, bytes):
            path.write_bytes(m)
        else:
            onnx.save(m, path)
        cases[name] = str(path)

    save("long symbol (20 MB), 100 nodes", long_symbol_model(20 << 20, 100, 10))
    save(
        "many nodes sharing a long symbol (8 MB x 2000 nodes)",
        long_symbol_model(8 << 20, 2000, 200),
    )
    mul = h.make_node("Mul", ["x", "x"], ["z"])
    big = 50 << 20
    payload = T(name="c", data_type=T.FLOAT, dims=[big // 4], raw_data=b"\x01" * big)
    lists = {
        "value_ints": h.make_node("Constant", [], ["c"], value_ints=[2**62] * (big // 10)),
        "value_floats": h.make_node("Constant", [], ["c"], value_floats=[0.5] * (big // 4)),
        "ints of a non-Constant node": h.make_node("Identity", ["x"], ["c"], pads=[1] * (big // 2)),
        "tensor": h.make_node("Constant", [], ["c"], value=payload),
    }
    for name, node in lists.items():
        label = "Constant tensor (raw_data)" if name == "tensor" else f"attribute list: {name}"
        save(label, model([node, mul], [vi("x", T.FLOAT, [2])]))
    # What protobuf's writer never produces but a file may: the worst expansions on parsing.
    save("attribute list: packed 1-byte ints", attribute_list_model("packed ints", big))
    save("attribute list: value_strings, empty strings", attribute_list_model("value_strings", big))
    # tensor payloads written the same ways
    save(
        "initializer int64_data, 1-byte varints",
        attribute_list_model("initializer int64_data", big),
    )
    save(
        "initializer string_data, empty strings",
        attribute_list_model("initializer string_data", big),
    )
    save("many nested graphs: 200 If, one symbol per run", many_graphs_model(200))
    for name, data in bench_classes().items():
        save(name, data)
    return cases


def memory_rows(quick: bool = False) -> list[dict[str, object]]:
    """Per class: file size, exit code, peak memory over the baseline, ratio, within bound."""
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in memory_cases(Path(tmp)).items():
            size = Path(path).stat().st_size / 2**20
            runs = []
            for _ in range(1 if quick else 3):
                out = subprocess.run(
                    [sys.executable, "-c", CASE, str(ROOT / "src"), path],
                    capture_output=True, text=True, timeout=1200, check=True,
                )  # fmt: skip
                runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            peak = max(float(r["mb"]) for r in runs)
            rows.append({
                "file": name, "size_mb": size, "exit": runs[0]["exit"], "peak_mb": peak,
                "seconds": statistics.median(float(r["s"]) for r in runs),
                "cpu_seconds": statistics.median(float(r["cpu"]) for r in runs),
                "ratio": peak / size if size else None,
                "within": peak <= FACTOR * size + CONSTANT_MB,
            })  # fmt: skip
            print(name, f"{size:.1f} MB file, peak {peak:.0f} MB")
    return rows


def render_memory(rows: list[dict[str, object]]) -> list[str]:
    bound = f"<= {FACTOR:.0f}x file + {CONSTANT_MB} MB"
    lines = [
        f"| file | size | exit | time (median) | CPU time (median) | peak memory over baseline "
        f"| ratio | {bound} |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "-"
        # results of a bench before a time column have no time to show
        seconds = f"{r['seconds']:.2f} s" if r.get("seconds") is not None else "-"
        cpu = f"{r['cpu_seconds']:.2f} s" if r.get("cpu_seconds") is not None else "-"
        lines.append(
            f"| {r['file']} | {r['size_mb']:.1f} MB | {r['exit']} | {seconds} | {cpu} | "
            f"{r['peak_mb']:.0f} MB | "
            f"{ratio} | {'yes' if r['within'] else '**no**'} |"
        )
    return lines


def main() -> None:
    if "--memory" in sys.argv:
        print("\n".join(render_memory(memory_rows())))
        return
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
