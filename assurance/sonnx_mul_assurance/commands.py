"""The assurance subcommands of ``sonnx-mul``: ``report`` and ``prove``.

They reach the product's command line through the ``sonnx_mul.commands``
entry-point group (``assurance/pyproject.toml``): the product lists no
assurance module, so a deployment without this package has neither command.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sonnx_mul.cli.errors import Command, UsageError
from sonnx_mul_assurance.pipeline import main as pipeline_main
from sonnx_mul_assurance.report.cli import configure_report, run_report


def is_checkout(root: Path) -> bool:
    """True when ``root`` is a checkout of sonnx-mul (sources, Why3 theories, proofs)."""
    return (
        (root / "src" / "sonnx_mul" / "requirements.py").is_file()
        and (root / "why3").is_dir()
        and (root / "proofs").is_dir()
    )


def checkout_root(given: Path | None, command: str) -> Path:
    """``given`` or the nearest checkout above the current directory, else UsageError."""
    if given is not None:
        root = given.resolve()
        if not is_checkout(root):
            raise UsageError(f"{command}: {root} is not a checkout of sonnx-mul")
        return root
    here = Path.cwd().resolve()
    for candidate in (here, *here.parents):
        if is_checkout(candidate):
            return candidate
    raise UsageError(
        f"{command} runs in a checkout of sonnx-mul (with src/sonnx_mul, why3/ and "
        f"proofs/); {here} is not inside one (use --root)"
    )


def _run_report(args: argparse.Namespace) -> int:
    args.root = checkout_root(args.root, "report")
    return run_report(args)


def _configure_prove(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", type=Path, default=None, help="repository root (default: found)")


def _run_prove(args: argparse.Namespace) -> int:
    root = checkout_root(args.root, "prove")
    return pipeline_main(["--root", str(root)])


REPORT = Command(
    "report", "write the traceability report and run its gate",
    "Collect the evidence of proofs/out (Why3 goals, CrossHair conditions, pytest "
    "JUnit, Frama-C WP goals, the MISRA check, exhaustive agreement) and the requirement "
    "markers of the sources, and write "
    "DIR/traceability.json, .md and .html (and DIR/sources/, the files it links to): per "
    "requirement its spec, code, test and proof evidence and a verdict; absent evidence, "
    "trusted base, objectives, SONNX alignment, hashes. --require exhaustive --require "
    "native-exhaustive (release builds, make report-release) fails the gate without "
    "exhaustive.json or native-exhaustive.json. Exit 0: every requirement passes; "
    "1: the gate failed.",
    configure_report, _run_report,
)  # fmt: skip

PROVE = Command(
    "prove", "run the whole proof pipeline (what make prove runs)",
    "In a checkout of the project: the Why3 proofs, the CrossHair contract checks, "
    "Frama-C WP on the C kernel and its MISRA check, the tests with the agreement "
    "checks, then the traceability report into proofs/out/ "
    "and its gate. Exit 0: every step passed; 1: a step failed (all steps still run).",
    _configure_prove, _run_prove,
)  # fmt: skip
