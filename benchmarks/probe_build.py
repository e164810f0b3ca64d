"""The x86-64 builds of a design probe (``int64_scan``, ``f32_exact``): the
kernel's flags of ``native/flags.mk`` and them plus each ISA variant's
(``native/isa.toml``), which
CPU runs which, and one probe compiled into a shared library."""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "bench"


@functools.cache
def _flags() -> Any:
    sys.path.insert(0, str(ROOT / "native"))
    import flags  # native/flags.py: the one source of the compile flags and the ISA table

    return flags


def _variants() -> dict[str, Any]:
    """native/isa.toml's variants by name, the reference (the proved build as such) first."""
    return {v.name: v for v in _flags().variants()}


REFERENCE = next(iter(_variants()))
"""The reference build's name (the first variant of native/isa.toml)."""


def builds() -> dict[str, list[str]]:
    """The flags of each x86-64 build: the reference's (flags.mk's rows for gcc), and
    them plus each other variant's (native/isa.toml)."""
    base = _flags().cflags("gcc")
    return {name: [*base, *v.cflags] for name, v in _variants().items()}


def supported(build: str) -> bool:
    """True when this CPU has the features native/isa.toml gives the variant ``build``."""
    cpu = Path("/proc/cpuinfo").read_text(encoding="utf-8").split()
    return all(feature in cpu for feature in _variants()[build].cpu)


def compile_probe(
    source: str,
    name: str,
    cflags: list[str],
    defines: list[str],
    patch: tuple[str, str] | None = None,
) -> ctypes.CDLL:
    """``benchmarks/<source>.c`` built with ``cflags`` and ``defines`` (``-D`` words) and loaded;
    ``patch`` = (file in native/src, replacement): that file replaced (a planted fault).

    One file per build, defines and patch (a process loads a path once),
    written whole under a temporary name first (another test worker may load it)."""
    BUILD.mkdir(parents=True, exist_ok=True)
    suffix = "".join("_" + d.removeprefix("-D").replace("=", "_") for d in defines)
    suffix += f"_patched_{hashlib.sha256(patch[1].encode()).hexdigest()[:12]}" if patch else ""
    lib = BUILD / f"lib{source}_{name}{suffix}.so"
    with tempfile.TemporaryDirectory(dir=BUILD) as scratch:
        built = Path(scratch) / lib.name
        patched = [f"-I{scratch}"] if patch else []
        if patch:
            (Path(scratch) / patch[0]).write_text(patch[1], encoding="utf-8")
        argv = [
            "gcc", *cflags, *defines, "-fPIC", "-shared", *patched, f"-I{ROOT / 'native/include'}",
            f"-I{ROOT / 'native/src'}", str(ROOT / "benchmarks" / f"{source}.c"), "-o", str(built),
        ]  # fmt: skip
        subprocess.run(argv, check=True)
        os.replace(built, lib)
    return ctypes.CDLL(str(lib))


def times(dll: ctypes.CDLL, which: int, a: np.ndarray, b: np.ndarray, reps: int) -> list[float]:
    """Microseconds of ``reps`` runs of the probe's loop ``which`` on a and b
    (its ``probe_time``, timed from C; the first, cold run dropped)."""
    c = np.empty_like(a)
    out = np.zeros(reps + 1, np.uint64)
    dll.probe_time(which, a.ctypes.data, b.ctypes.data, c.ctypes.data, a.size, reps + 1,
                   out.ctypes.data)  # fmt: skip
    return [t / 1000 for t in out[1:].tolist()]


ENVIRONMENTS = ("FTZ+DAZ", "toward -inf", "toward +inf", "toward zero")
"""The foreign floating-point environments 1..4 of ``probe_env.h``'s ``mxcsr_of``."""


def run(dll: ctypes.CDLL, which: int, env: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The probe's loop ``which`` on a and b under environment ``env`` (its ``probe_run``)."""
    c = np.empty_like(a)
    dll.probe_run(which, env, a.ctypes.data, b.ctypes.data, c.ctypes.data, a.size)
    return c


def environment_differences(
    dll: ctypes.CDLL, which: int, a: np.ndarray, b: np.ndarray
) -> list[int]:
    """Per foreign environment, the pairs whose bits differ from the default environment's."""
    default = run(dll, which, 0, a, b)
    return [int(np.count_nonzero(run(dll, which, env, a, b) != default)) for env in (1, 2, 3, 4)]


def class_table(
    dll: ctypes.CDLL,
    loops: tuple[str, ...],
    timed: dict[str, tuple[np.ndarray, np.ndarray]],
    reps: int,
) -> None:
    """Prints each of the probe's ``loops`` timed on each value class of
    ``timed`` (µs, min / median of ``reps``), each later loop's median over
    the first's (the hardware loop), and each loop's spread (slowest class
    median over fastest)."""
    heads = " | ".join(f"{loop} us min / median" for loop in loops)
    ratios = " | ".join(f"{loop} / {loops[0]}" for loop in loops[1:])
    print(f"| class | {heads} | {ratios} |")
    print("|---" * (len(loops) * 2) + "|")
    medians: dict[str, list[float]] = {loop: [] for loop in loops}
    for label, (a, b) in timed.items():
        samples = [times(dll, which, a, b, reps) for which in range(len(loops))]
        for loop, r in zip(loops, samples, strict=True):
            medians[loop].append(statistics.median(r))
        cells = " | ".join(f"{min(r):.0f} / {statistics.median(r):.0f}" for r in samples)
        first = statistics.median(samples[0])
        ratio = " | ".join(f"{statistics.median(r) / first:.2f}" for r in samples[1:])
        print(f"| {label} | {cells} | {ratio} |")
    spreads = ", ".join(f"{loop} {max(m) / min(m):.2f}" for loop, m in medians.items())
    print(f"  spread (slowest class median / fastest): {spreads}")
