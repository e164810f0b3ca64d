"""The C kernel on every target of native/flags.mk, checked bit for bit against x86-64 gcc.

For each target, ``make c-kernel`` (with that target's compiler, in a
build directory of its own, from scratch) builds the kernel with the
target's pinned flags, runs the example's known answers and the portable
harness (native/verify/portable.c, which includes its parts from
native/verify/portable/: every float type's edge rows x every 16-bit
pattern, and the integer types' edges, against an integer-only oracle;
under qemu-user when the target is not the host), as many targets
at a time as the machine has cores. Then every
type's output hash must equal the reference target's (x86-64 gcc, the
build the Python evidence is produced on), NaNs included. Writes
proofs/out/targets.json; exit 1 on any failure.

    python -m sonnx_mul_assurance.c.targets            # the sampled rows (CI)
    python -m sonnx_mul_assurance.c.targets --full     # + all 2^32 f16/bf16 pairs
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sonnx_mul_assurance.evidence import files, schema

OUT = files.evidence_path(files.TARGETS)
BUILD = Path("build/targets")


@dataclass(frozen=True)
class Target:
    """A compiler (and extra flags) the kernel is built with: one row of the check."""

    name: str
    cc: str
    extra: tuple[str, ...] = field(default=())


TARGETS: tuple[Target, ...] = (
    Target("x86_64-gcc", "gcc"),  # the reference: the first row
    Target("x86_64-clang", "clang"),
    Target("i686-gcc", "i686-linux-gnu-gcc"),
    Target("aarch64-gcc", "aarch64-linux-gnu-gcc"),
    Target("armhf-gcc", "arm-linux-gnueabihf-gcc"),
    Target("armhf-neon-gcc", "arm-linux-gnueabihf-gcc", ("-mfpu=neon",)),
    Target("riscv64-gcc", "riscv64-linux-gnu-gcc"),
)
FULL_ARGS = (("--full", "f16"), ("--full", "bf16"))


def build_and_run(root: Path, target: Target, harness_args: tuple[str, ...]) -> dict[str, Any]:
    """``make c-kernel`` for one target, from scratch; its results and times."""
    directory = BUILD / target.name
    shutil.rmtree(root / directory, ignore_errors=True)
    command = [
        "make",
        "--no-print-directory",
        "c-kernel",
        f"KERNEL_CC={target.cc}",
        f"KERNEL_DIR={directory}",
        f"KERNEL_EXTRA_CFLAGS={' '.join(target.extra)}",
        f"PORTABLE_ARGS={' '.join(harness_args)}",
    ]
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    jsonl = root / directory / "portable.jsonl"
    types = []
    if jsonl.exists():
        types = [json.loads(line) for line in jsonl.read_text().splitlines() if line.strip()]
    cflags = root / directory / "cflags"
    return {
        "cc": target.cc,
        "flags": [*cflags.read_text().split(), *target.extra] if cflags.exists() else [],
        "exit": proc.returncode,
        "known_answers": "all known answers agree" in proc.stdout,
        "types": {row["type"]: row for row in types},
        "seconds": round(seconds, 2),
        "log": proc.stdout[-2000:] + proc.stderr[-2000:] if proc.returncode else "",
    }


def verdicts(results: dict[str, dict[str, Any]], reference: str) -> list[str]:
    """Every failure: a build or run that failed, a mismatch, a hash unlike the reference's."""
    errors = []
    want = results[reference]["types"]
    if not want:
        errors.append(f"{reference}: the reference produced no results")
    for name, result in results.items():
        if result["exit"] != 0 or not result["known_answers"]:
            errors.append(f"{name}: make c-kernel failed (exit {result['exit']})\n{result['log']}")
            continue
        if set(result["types"]) != set(want):
            errors.append(f"{name}: types {sorted(result['types'])}, not {sorted(want)}")
        for type_name, row in result["types"].items():
            if row["mismatches"] != 0:
                errors.append(f"{name} {type_name}: {row['mismatches']} mismatches with the oracle")
            if type_name in want and row["hash"] != want[type_name]["hash"]:
                errors.append(
                    f"{name} {type_name}: hash {row['hash']} is not {reference}'s"
                    f" {want[type_name]['hash']}"
                )
    return errors


def run(root: Path, targets: tuple[Target, ...], full: bool) -> int:
    """Check every target; write the evidence; 0 when all agree."""
    runs = [()] + (list(FULL_ARGS) if full else [])
    record: dict[str, Any] = {"reference": targets[0].name, "runs": {}}
    errors: list[str] = []
    for args in runs:
        label = " ".join(args) or "sample"
        # one build directory per target: the builds run side by side, one
        # per core (their times are reported, not judged)
        with ThreadPoolExecutor(max_workers=min(len(targets), os.cpu_count() or 1)) as pool:
            built = list(
                pool.map(functools.partial(build_and_run, root, harness_args=args), targets)
            )
        results = {t.name: result for t, result in zip(targets, built, strict=True)}
        for name, result in results.items():
            pairs = sum(row["pairs"] for row in result["types"].values())
            print(
                f"targets [{label}] {name}: exit {result['exit']}, {pairs} pairs,"
                f" {result['seconds']} s"
            )
        errors += [f"[{label}] {e}" for e in verdicts(results, targets[0].name)]
        record["runs"][label] = results
    record["verdict"] = "pass" if not errors else "fail"
    record["errors"] = errors
    (root / OUT).parent.mkdir(parents=True, exist_ok=True)
    schema.dump(schema.from_json(schema.TargetsEvidence, record, OUT.name), root / OUT)
    for error in errors:
        print(f"targets: FAIL {error}", file=sys.stderr)
    return 0 if not errors else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path.cwd())
    parser.add_argument("--full", action="store_true", help="also every float16/bfloat16 pair")
    parser.add_argument(
        "--only", nargs="*", default=None, help="target names (the reference first)"
    )
    args = parser.parse_args(argv)
    targets: tuple[Target, ...] = TARGETS
    if args.only:
        unknown = set(args.only) - {t.name for t in TARGETS}
        if unknown:
            parser.error(f"unknown targets {sorted(unknown)}")
        targets = tuple(t for t in TARGETS if t.name in args.only)
        if targets[0] != TARGETS[0]:
            targets = (TARGETS[0], *targets)
    return run(args.root, targets, args.full)


if __name__ == "__main__":
    sys.exit(main())
