"""Exhaustive verification of the compiled float16/bfloat16 code of the native kernel.

``python -m sonnx_mul_assurance.native_exhaustive`` builds the kernel and the
harness ``native/verify/exhaustive.c`` with the pinned flags
(``native/flags.mk``), runs the harness's negative control first (planted
wrong narrowings must be caught), then every check: all 2^32 binary32 inputs
of both narrowings, all 2^16 patterns of both widenings, all 2^32 pairs of
``sonnx_mul_f16`` and of ``sonnx_mul_bf16``, against oracles that share no
code with the kernel.  Writes ``proofs/out/native-exhaustive.json`` (inputs,
mismatches, seconds per check) and exits non-zero on any mismatch, on a
planted fault not caught, or on a check that did not run.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

FLAGS = Path("native/flags.mk")
HARNESS = Path("native/verify/exhaustive.c")
BUILD = Path("build/c-kernel")
OUT = Path("proofs/out/native-exhaustive.json")
CHECKS = ("widen-f16", "widen-bf16", "narrow-f16", "narrow-bf16", "mul-f16", "mul-bf16")
_ASSIGN_RE = re.compile(r"^([A-Z0-9_]+)\s*=\s*(.*)$")


def read_flags(path: Path) -> dict[str, list[str]]:
    """The ``NAME = words`` lines of native/flags.mk (the one place the flags live)."""
    flags: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        match = _ASSIGN_RE.match(line.strip())
        if match is not None:
            flags[match.group(1)] = match.group(2).split()
    return flags


def compile_flags(root: Path) -> list[str]:
    """The kernel's compile flags for this machine (x86-64 adds SSE2)."""
    flags = read_flags(root / FLAGS)
    result = list(flags["SONNX_CFLAGS"])
    if platform.machine() in ("x86_64", "AMD64"):
        result += flags["SONNX_CFLAGS_X86_64"]
    return result


def build(root: Path) -> Path:
    """Build the static library (make c-kernel) and the harness; return the harness."""
    subprocess.run(["make", "-s", f"{BUILD}/libsonnx_mul_kernel.a"], cwd=root, check=True)
    exe = root / BUILD / "exhaustive"
    argv = [
        "gcc",
        *compile_flags(root),
        "-Wall",
        "-Wextra",
        "-mf16c",  # the harness only: the F16C oracle (the kernel is built without it)
        f"-I{root / 'native/include'}",
        str(root / HARNESS),
        str(root / BUILD / "libsonnx_mul_kernel.a"),
        "-lm",
        "-o",
        str(exe),
    ]
    subprocess.run(argv, check=True)
    return exe


def run(root: Path, checks: tuple[str, ...] = CHECKS) -> int:
    """Run the negative control then the checks; write the evidence file."""
    exe = build(root)
    record: dict[str, Any] = {"flags": compile_flags(root), "checks": {}, "selftest": {}}
    errors: list[str] = []
    proc = subprocess.run([str(exe), "selftest"], capture_output=True, text=True, check=False)
    for line in proc.stdout.splitlines():
        name, caught, _, seconds = line.split()
        record["selftest"][name] = {"caught": int(caught), "seconds": float(seconds)}
    if proc.returncode != 0 or len(record["selftest"]) != 2:
        errors.append(f"negative control failed: a planted fault was not caught\n{proc.stdout}")
    start = time.perf_counter()
    proc = subprocess.run([str(exe), *checks], capture_output=True, text=True, check=False)
    for line in proc.stdout.splitlines():
        name, inputs, bad, seconds, cpu = line.split()
        record["checks"][name] = {
            "inputs": int(inputs),
            "mismatches": int(bad),
            "seconds": float(seconds),
            "cpu_seconds": float(cpu),
        }
        print(
            f"native-exhaustive: {name}: {inputs} inputs, {bad} mismatches,"
            f" {seconds} s wall, {cpu} s CPU"
        )
    missing = [c for c in checks if c not in record["checks"]]
    if missing:
        errors.append(f"checks that did not run: {missing}")
    bad_checks = [c for c, v in record["checks"].items() if v["mismatches"] != 0]
    if bad_checks or proc.returncode != 0:
        errors.append(f"mismatches in {bad_checks} (exit {proc.returncode}):\n{proc.stderr}")
    record["seconds"] = time.perf_counter() - start
    record["verdict"] = "pass" if not errors else "fail"
    record["errors"] = errors
    (root / OUT).parent.mkdir(parents=True, exist_ok=True)
    (root / OUT).write_text(json.dumps(record, indent=1) + "\n")
    for error in errors:
        print(f"native-exhaustive: FAIL {error}", file=sys.stderr)
    return 0 if not errors else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path.cwd())
    parser.add_argument("checks", nargs="*", help=f"some of {', '.join(CHECKS)} (default: all)")
    args = parser.parse_args(argv)
    unknown = [c for c in args.checks if c not in CHECKS]
    if unknown:
        parser.error(f"unknown checks {unknown}")
    return run(args.root, tuple(args.checks) or CHECKS)


if __name__ == "__main__":
    sys.exit(main())
