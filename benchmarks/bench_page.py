"""BENCHMARKS.md from the results run.py measured (benchmarks/results.json): the
side-by-side table, the goals and every section the results hold."""

from __future__ import annotations

import numpy as np
from element_types import TYPES


def _time(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} µs"
    return f"{seconds * 1e3:.2f} ms"


def _limit(limit: float | None) -> str:
    return "—" if limit is None else f"{limit:.1f}×"


def _within(goal: dict) -> str:  # type: ignore[type-arg]
    if goal["limit"] is None:
        return "no limit"
    return "yes" if goal["every_repeat_within"] else "NO"


def render(results: dict) -> str:  # type: ignore[type-arg]
    rows = results["rows"]
    names = list(rows[0]["seconds"])
    for extra in ("sonnx mul error worst", "sonnx mul error"):
        if extra not in names:
            names.insert(names.index("sonnx mul out=") + 1, extra)
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (`benchmarks/run.py`). Medians of the per-call time over",
        "interleaved repeats; the ratio in brackets is to `np.multiply` in the same run",
        "(below 1 is faster). `n/a`: onnxruntime's CPU provider has no Mul for the type.",
        "",
        f"Date: {results['date']}  ",
        "Machine: " + ", ".join(f"{k} {v}" for k, v in results["machine"].items()) + "  ",
        f"Copy bandwidth (read + write): {results['copy_bandwidth_gbs']:.1f} GB/s",
        "",
        "| type | elements | " + " | ".join(names) + " |",
        "|---|---:|" + "---:|" * len(names),
    ]
    for row in rows:
        base = row["seconds"]["np.multiply"]
        cells = []
        for name in names:
            value = row["seconds"].get(name)
            cells.append(_time(value) + (f" ({value / base:.2f}×)" if value else ""))
        lines.append(f"| {row['type']} | {row['n']:,} | " + " | ".join(cells) + " |")
    lines += ["", "## Targets: ratios in one run", ""]
    lines += [
        "Each ratio is measured in its own interleaved loop: per repeat one sample of",
        "the case and one of its base (several calls each), ratio = case / base of",
        "that repeat. Median and min–max over the repeats. Clock: `wall` elapsed time",
        "(the 1.6e7 fresh results), `cpu` this process's CPU time (every case runs in the",
        "calling thread, onnxruntime too with one intra-op thread: leaves out the time",
        "other jobs of the shared machine hold the cores). `np.copyto`: a copy of the",
        "same array (two memory streams; a multiply has three, so 1.5× is the bandwidth",
        "limit). Limits: the product's targets; no limit: reported only.",
        "Load: the 1-minute load average when the ratio was measured (2 cores).",
        "",
        "| case | base | limit | clock | load | case time: median (min–max) "
        "| base time: median (min–max) | ratio: median (min–max) | every repeat within |",
        "|---|---|---:|---|---:|---:|---:|---:|---|",
    ]
    for goal in results["targets"]:
        t, u, r = goal["seconds"], goal["base_seconds"], goal["ratio"]
        lines.append(
            f"| {goal['name']} | {goal['base']} | {_limit(goal['limit'])} | {goal['clock']} "
            f"| {goal['load_average']:.1f} "
            f"| {_time(t['median'])} ({_time(t['min'])}–{_time(t['max'])}) "
            f"| {_time(u['median'])} ({_time(u['min'])}–{_time(u['max'])}) "
            f"| {r['median']:.2f}× ({r['min']:.2f}–{r['max']:.2f}) "
            f"| {_within(goal)} ({goal['repeats']} repeats) |"
        )
    lines += ["", "## Traffic at 16e6 elements", ""]
    for row in rows:
        if row["n"] == 16_000_000:
            itemsize = np.dtype(TYPES[row["type"]][0]).itemsize
            traffic = 3 * row["n"] * itemsize  # two reads and one write
            gbs = traffic / row["seconds"]["sonnx mul"] / 1e9
            fraction = gbs / results["copy_bandwidth_gbs"]
            lines.append(
                f"- {row['type']}: sonnx mul moves {gbs:.1f} GB/s, "
                f"{fraction:.0%} of the copy bandwidth"
            )
    lines += ["", "## Peak memory of one call at 16e6 elements (tracemalloc)", ""]
    lines += [
        "Bytes numpy allocated during the call, the result included (the inputs exist",
        "before). `overflow='error'` keeps the result plus O(block) temporaries for",
        "every layout; with `out=` only the temporaries.",
        "",
    ]
    for name, value in results["peak_memory_bytes"].items():
        lines.append(f"- {name}: {value / 2**20:.1f} MiB")
    if results.get("hostile_files"):
        from checker_hostile import CONSTANT_MB, FACTOR, render_memory

        lines += ["", "## Hostile files: peak memory of `sonnx-mul check`", ""]
        lines += [
            "Fresh process per file; peak RSS over the RSS after imports. The bound of",
            f"SECURITY.md is {FACTOR:.0f}x the file plus {CONSTANT_MB} MB; a row marked **no**",
            "is a class not yet within it. Times are medians of 3 runs, wall and CPU",
            "(the CPU time is the one to compare across rows on a loaded machine).",
        ]
        measured = results.get("hostile_measured")
        if measured:
            lines += [
                f"Measured {measured['date']}, 1-minute load average "
                f"{measured['load_average']:.1f} (2 cores shared)."
            ]
        lines += [""]
        lines += render_memory(results["hostile_files"])
    if results.get("value_classes"):
        from value_classes import Row
        from value_classes import render as render_classes

        lines += ["", "## Time by value class at 1e6 elements, `out=`", ""]
        lines += [
            "Medians of this process's CPU time: every class of a type on the same",
            "arrays (its operands copied in before each sample), the classes sampled",
            "round-robin, each mul beside np.copyto of its first operand. Targets: every",
            "class within 1.25x of the type's fastest, checked within 2x of wrap, the",
            "slowest class within 2x of the copy.",
            "",
        ]
        lines += render_classes([Row(**row) for row in results["value_classes"]])
    if results.get("kernel_cycles"):
        import kernel_cycles

        lines += ["", "## The C kernel alone, per element", ""]
        lines += [
            "The proved sources, portable build (native/flags.py), timed from C",
            "(benchmarks/kernel_cycles.c): medians over the calls, per type the worst",
            "value class of value_classes.py (both overflow modes) and the best.",
            "TSC ticks are reference cycles at the counter's nominal rate.",
            "",
        ]
        rows_c = [kernel_cycles.Row(**row) for row in results["kernel_cycles"]]
        lines += kernel_cycles.render(rows_c, bool(results.get("kernel_has_tsc")))
    if results.get("call_cost"):
        import call_cost

        lines += ["", "## The fixed cost of a call: 16 elements, layer by layer", ""]
        lines += [
            "Medians of this process's CPU time per call, in ns, every layer timed by",
            "calling it directly in one interleaved loop (benchmarks/call_cost.py): the",
            "Python frame of `mul` (mul − `_native.plain`), the plain lane's checks",
            "(`_native.plain` − `_native.multiply`), the glue (`_native.multiply` − a call",
            "of the extension that does nothing: argument parsing, the kernel's",
            "preconditions, the FP-environment bracket, the result, the kernel), that",
            "call itself; from C, the portable build's kernel on 16 elements and the",
            f"bracket alone. Target: mul at most {call_cost.LIMIT}× np.multiply.",
            "",
        ]
        lines += call_cost.render([call_cost.Row(**row) for row in results["call_cost"]])
    if results.get("fp_environment"):
        import fp_environment

        lines += ["", "## Under a foreign floating-point environment", ""]
        lines += [
            "mul(a, b, out=) on 1e6 random bit patterns with the caller's MXCSR set",
            "as another library may leave it; numpy's multiply is the control.",
            "",
        ]
        rows_f = [fp_environment.Row(**row) for row in results["fp_environment"]]
        lines += fp_environment.render(rows_f)
    if results.get("ort_models"):
        import ort_models

        section = results["ort_models"]
        lines += ["", "## Realistic models: the onnxruntime engine", ""]
        lines += [
            "Models built with onnx.helper (benchmarks/ort_models.py), float32, one",
            "intra-op thread: plain onnxruntime (its own Mul), the onnxruntime engine",
            "(every Mul on the certified kernel as a Python custom op, `sonnx-mul run",
            "--engine onnxruntime`) and the reference engine (every other operator on",
            "onnx.reference), interleaved. Medians of this process's CPU time per run",
            "(each engine runs in the calling thread); ratios are",
            "medians of the per-repeat ratios to plain onnxruntime: the engine's is the",
            f"cost of certification per model. Measured {section['date']}, 1-minute",
            f"load average {section.get('load_average', 0.0):.1f} (2 cores shared: the",
            "Python-side costs of both engines grow with the load).",
            "",
        ]
        lines += ort_models.render([ort_models.Row(**row) for row in section["rows"]])
    if results.get("prove_seconds"):
        lines += [
            "",
            f"`make prove` wall time (proofs/out/pipeline.json): {results['prove_seconds']:.0f} s",
        ]
    lines += ["", f"Benchmark wall time: {results['bench_seconds']:.0f} s", ""]
    return "\n".join(lines)
