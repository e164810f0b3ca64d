"""The command line: ``python -m sonnx_mul_assurance.structural
run|collect|check|add-unlisted|rekey`` (the package's docstring says what each does)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from sonnx_mul_assurance import structural
from sonnx_mul_assurance.structural.build import isa_variants
from sonnx_mul_assurance.structural.collect import RunState, collect
from sonnx_mul_assurance.structural.gate import add_unlisted, check
from sonnx_mul_assurance.structural.rekey import rekey
from sonnx_mul_assurance.structural.run import run
from sonnx_mul_assurance.structural.scope import BUILD, OUT, TESTS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sonnx_mul_assurance.structural",
        description=(structural.__doc__ or "").splitlines()[0],
    )
    parser.add_argument("command", choices=("run", "collect", "check", "add-unlisted", "rekey"))
    parser.add_argument("--root", type=Path, default=Path.cwd())
    parser.add_argument(
        "--from",
        dest="rev",
        default="HEAD",
        help="rekey: the git revision the exemptions were written against (default HEAD)",
    )
    parser.add_argument(
        "tests", nargs="*", help="run: other test paths than TESTS (recorded in the file)"
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.command == "check":
        return check(root)
    if args.command == "add-unlisted":
        return add_unlisted(root)
    if args.command == "rekey":
        return rekey(root, args.rev)
    if args.command == "collect":  # again from build/coverage, without running anything
        work = root / BUILD
        junits = sorted(work.glob("pytest*.xml"))
        # the probe imports the instrumented module: its profile goes aside
        probe = str(work / "probe.profraw")
        env = {**os.environ, "PYTHONPATH": str(work / "src"), "LLVM_PROFILE_FILE": probe}
        state = RunState(TESTS, isa_variants(root, env), junits, {}, [], {}, time.perf_counter())
        return collect(root, OUT, state)
    return run(root, tests=tuple(args.tests) or TESTS)


if __name__ == "__main__":
    sys.exit(main())
