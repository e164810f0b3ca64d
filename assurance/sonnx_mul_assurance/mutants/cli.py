"""``python -m sonnx_mul_assurance.mutants [--max-py N] [--max-mlw N] [--max-c N]
[--jobs J] [--file F ...] [--under DIR ...] [--key K ...] [--list] [--out FILE]``."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from sonnx_mul_assurance.mutants import targets as targets_
from sonnx_mul_assurance.mutants.mutators import generate
from sonnx_mul_assurance.mutants.report import OUT, report
from sonnx_mul_assurance.mutants.runner import run_all

EQUIVALENT = Path("proofs/mutants-equivalent.json")
"""Mutant key -> why it is equivalent, or why the difference is unreachable."""


def _progress(line: str) -> None:
    print(line, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sonnx_mul_assurance.mutants")
    parser.add_argument("--root", type=Path, default=Path.cwd())
    parser.add_argument(
        "--max-py", type=int, default=None,
        help=f"mutants per Python file (default: its max in {targets_.TARGETS}, else "
        f"{targets_.DEFAULT_MAX_PY})",
    )  # fmt: skip
    parser.add_argument("--max-mlw", type=int, default=6, help="mutants per WhyML file")
    parser.add_argument(
        "--max-c", type=int, default=None,
        help=f"mutants of the C glue, shared among its functions (default: its max in "
        f"{targets_.TARGETS})",
    )  # fmt: skip
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--file", action="append", help="only these files (repeatable)")
    parser.add_argument(
        "--under", action="append", metavar="DIR",
        help="only the targets under DIR, e.g. assurance/sonnx_mul_assurance/report (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--out", type=Path, default=OUT, help=f"results file, relative to --root (default {OUT})"
    )
    parser.add_argument("--key", action="append", help="only these mutants (repeatable)")
    parser.add_argument("--list", action="store_true", help="print the mutants, run nothing")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    targets = targets_.load(root)
    if missing := targets_.missing(targets, root):
        print(f"{targets_.TARGETS} names what is not there:", *missing, sep="\n  ", file=sys.stderr)
        return 2
    mutants = generate(root, targets, args.max_py, args.max_mlw, args.file, args.under, args.max_c)
    if args.key:
        mutants = [m for m in mutants if m.key in args.key]
    if args.list:
        for m in mutants:
            where = f"{m.file}:{m.line}" + (f" ({m.function})" if m.function else "")
            print(f"{m.key} {where} {m.original!r} -> {m.replacement!r}  {m.context}")
        print(f"{len(mutants)} mutants")
        return 0
    equivalent: dict[str, str] = {}
    if (root / EQUIVALENT).exists():
        equivalent = {
            k: str(v["reason"]) for k, v in json.loads((root / EQUIVALENT).read_text()).items()
        }
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="sonnx-mutants-") as tmp:
        outcomes = run_all(root, mutants, targets, equivalent, args.jobs, Path(tmp), _progress)
    if isinstance(outcomes, str):
        print(outcomes, file=sys.stderr)
        return 2
    return report(root, outcomes, time.monotonic() - start, args.out)
