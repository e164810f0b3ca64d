"""The ``sonnx-mul`` command line.

Subcommands live in the ``COMMANDS`` table: each is a ``Command`` with a
``configure`` function (adds its arguments) and a ``run`` function (returns
the exit code). A subcommand imports what it needs when it runs, so that
``--help`` and the light subcommands stay fast.

Exit codes: 0 success / conforms, 1 violations found or a profile error,
2 unreadable model, bad input file or wrong call (argparse also exits 2).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .errors import ProfileError

if TYPE_CHECKING:  # keep `sonnx-mul --help` and other subcommands light
    import onnx

    from .onnx.checker import Violation

EXIT_OK, EXIT_VIOLATIONS, EXIT_USAGE = 0, 1, 2


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    description: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


class UsageError(Exception):
    """A wrong call or unreadable input detected by a subcommand (exit 2)."""


def _err(message: str) -> None:
    print(f"sonnx-mul: error: {message}", file=sys.stderr)


# ---------------------------------------------------------------- check
def group_violations(
    violations: list[Violation],
) -> dict[tuple[str, str, str, bool], list[str]]:
    """Requirement ids by (path, node, message, definite), in first-seen order."""
    groups: dict[tuple[str, str, str, bool], list[str]] = {}
    for v in violations:
        groups.setdefault((v.path, v.node, v.message, v.definite), []).append(v.requirement)
    return groups


def _configure_check(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="ONNX model (.onnx) or OpenVINO IR (.xml)")
    p.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default text)"
    )


def _run_check(args: argparse.Namespace) -> int:
    from .onnx.checker import ModelReadError, check_model
    from .onnx.openvino import check_ir

    path = str(args.model)
    try:
        is_ir = path.lower().endswith(".xml")
        violations = check_ir(path) if is_ir else check_model(path)
    except ModelReadError as exc:
        _err(str(exc))
        return EXIT_USAGE
    if args.format == "json":
        doc = {
            "model": path,
            "conforms": not violations,
            "violations": [v.to_dict() for v in violations],
        }
        print(json.dumps(doc, indent=2))
    else:
        for (path_, node, message, definite), ids in group_violations(violations).items():
            kind = "" if definite else " (cannot be shown)"
            print(f"{', '.join(ids)}{kind} {path_}/{node}: {message}")
        if violations:
            undecided = sum(not v.definite for v in violations)
            note = f" ({undecided} cannot be shown statically)" if undecided else ""
            print(f"{path}: {len(violations)} violation(s) of the SONNX Mul profile{note}")
        else:
            print(f"{path}: conforms to the SONNX Mul profile")
    return EXIT_VIOLATIONS if violations else EXIT_OK


# ---------------------------------------------------------------- run
def _configure_run(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="ONNX model (.onnx)")
    p.add_argument(
        "--input", action="append", default=[], metavar="NAME=FILE.npy",
        help="value of graph input NAME, a .npy file (repeat for each input)",
    )  # fmt: skip
    p.add_argument("--out", default=".", help="directory for the NAME.npy outputs (default .)")


def _parse_inputs(specs: list[str]) -> dict[str, np.ndarray]:
    feeds: dict[str, np.ndarray] = {}
    for spec in specs:
        name, sep, file = spec.partition("=")
        if not sep or not name or not file:
            raise UsageError(f"--input expects NAME=FILE.npy, got {spec!r}")
        try:
            feeds[name] = np.load(file, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot read input {name!r} from {file}: {exc}") from exc
    return feeds


def _safe_filename(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    return cleaned if cleaned.strip(".") else f"_{cleaned}"


def _load_external_data(model: onnx.ModelProto, base_dir: Path) -> None:
    """Load external weights with onnx's own path checks (no escape from base_dir)."""
    import onnx

    try:
        onnx.load_external_data_for_model(model, str(base_dir))
    except Exception as exc:
        raise UsageError(f"cannot load the model's external data: {exc}") from exc


def _run_run(args: argparse.Namespace) -> int:
    from .onnx.checker import ModelReadError, load_model
    from .onnx.executor import Backend

    try:
        feeds = _parse_inputs(args.input)
        model = load_model(args.model)
        _load_external_data(model, Path(args.model).parent)
        rep = Backend.prepare(model)
        missing = [n for n in rep.evaluator.input_names if n not in feeds]
        unknown = [n for n in feeds if n not in rep.evaluator.input_names]
        if missing or unknown:
            raise UsageError(f"missing inputs {missing}, unknown inputs {unknown}")
        outputs = rep.run(feeds)
    except (UsageError, ModelReadError) as exc:
        _err(str(exc))
        return EXIT_USAGE
    except ProfileError as exc:
        _err(str(exc))
        return EXIT_VIOLATIONS
    except Exception as exc:  # the reference evaluator failed on another op
        _err(f"the model could not be run: {type(exc).__name__}: {exc}")
        return EXIT_VIOLATIONS
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, value in zip(rep.evaluator.output_names, outputs, strict=True):
        array = np.asarray(value)
        target = out_dir / f"{_safe_filename(name)}.npy"
        np.save(target, array, allow_pickle=False)
        print(f"{name}: shape {array.shape} dtype {array.dtype} -> {target}")
    return EXIT_OK


# ---------------------------------------------------------------- selftest
def _configure_selftest(p: argparse.ArgumentParser) -> None:
    del p  # no options


def _run_selftest(args: argparse.Namespace) -> int:
    from .known_answers import selftest

    report = selftest()
    for failure in report.failures:
        print(f"FAIL {failure}")
    verdict = "passed" if report.ok else f"FAILED ({len(report.failures)} vectors)"
    print(f"self-test {verdict}: {report.checked} known-answer vectors on the fast path")
    return EXIT_OK if report.ok else EXIT_VIOLATIONS


# ---------------------------------------------------------------- report
def _configure_report(p: argparse.ArgumentParser) -> None:
    from .trace.cli import configure_report

    configure_report(p)


def _run_report(args: argparse.Namespace) -> int:
    from .trace.cli import run_report

    return run_report(args)


# ---------------------------------------------------------------- prove
def _configure_prove(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", type=Path, default=Path.cwd(), help="repository root")


def _run_prove(args: argparse.Namespace) -> int:
    from .proof.pipeline import main as pipeline_main

    return pipeline_main(["--root", str(args.root)])


COMMANDS: tuple[Command, ...] = (
    Command(
        "check", "check every Mul node of a model against the SONNX profile",
        "Check every Mul node of an ONNX model (graph, subgraphs, local functions) or every "
        "Multiply layer of an OpenVINO IR .xml against R1-R4. Exit 0: conforms; 1: "
        "violations found; 2: the model could not be read.",
        _configure_check, _run_check,
    ),
    Command(
        "run", "run an ONNX model with the certified Mul",
        "Run an ONNX model: Mul nodes on the certified implementation, other operators on "
        "onnx.reference. Writes every output as OUT/NAME.npy. Exit 0: done; 1: refused by "
        "the profile or failed; 2: unreadable model or input, or wrong call.",
        _configure_run, _run_run,
    ),
    Command(
        "selftest", "run the known-answer self-test in this process",
        "Run known-answer vectors for every element type (ties to even, subnormals, "
        "overflow to infinity, NaN, signed zero, integer wrap and checked overflow) through "
        "the fast path in this process. Fails when the floating-point unit flushes "
        "subnormals (FTZ/DAZ), as some native libraries make it do. Exit 0: passed; 1: failed.",
        _configure_selftest, _run_selftest,
    ),
    Command(
        "report", "write the traceability report and run its gate",
        "Collect the evidence of proofs/out (Why3 goals, CrossHair conditions, pytest "
        "JUnit, exhaustive agreement) and the requirement markers of the sources, and write "
        "DIR/traceability.json, .md and .html: per requirement its spec, code, test and "
        "proof evidence and a verdict. Exit 0: every requirement passes; 1: the gate failed.",
        _configure_report, _run_report,
    ),
    Command(
        "prove", "run the whole proof pipeline (what make prove runs)",
        "In a checkout of the project: the Why3 proofs, the CrossHair contract checks, the "
        "tests with the agreement checks, then the traceability report into proofs/out/ "
        "and its gate. Exit 0: every step passed; 1: a step failed (all steps still run).",
        _configure_prove, _run_prove,
    ),
)  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sonnx-mul",
        description="Certified ONNX Mul under the SONNX profile (R1-R4).",
        epilog="'sonnx-mul SUBCOMMAND --help' explains each subcommand.\n"
        "Exit codes: 0 success / conforms, 1 violations found or refused by the "
        "profile,\n2 unreadable model or input, or wrong call.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND")
    for command in COMMANDS:
        p = sub.add_parser(command.name, help=command.help, description=command.description)
        command.configure(p)
        p.set_defaults(_run=command.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse ``argv`` (default sys.argv[1:]) and run the subcommand."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or usage error (2)
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    result: int = args._run(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
