"""Command lines of the trace package: ``lint``, ``report``, ``strictdoc``.

Exit codes: 0 green, 1 the gate or the lint failed, 2 a wrong call.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from sonnx_mul_assurance.report.markers import lint
from sonnx_mul_assurance.report.protocol import OPTIONAL
from sonnx_mul_assurance.report.report import build_report, write_report
from sonnx_mul_assurance.report.strictdoc import export


def find_root(start: Path | None = None) -> Path:
    """The repository root: the nearest parent holding the registry module."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / "src" / "sonnx_mul" / "requirements.py").is_file():
            return candidate
    return Path(__file__).resolve().parents[3]  # assurance/sonnx_mul_assurance/report/cli.py


def configure_report(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, type=Path, help="directory for traceability.*")
    p.add_argument(
        "--evidence", type=Path, default=None, help="evidence directory (default proofs/out)"
    )
    p.add_argument("--root", type=Path, default=None, help="repository root (default: found)")
    p.add_argument("--no-probe", action="store_true", help="do not run provers for versions")
    p.add_argument(
        "--require",
        action="append",
        default=[],
        choices=sorted(OPTIONAL),
        help="fail the gate when this optional evidence is absent (release builds: "
        "--require exhaustive)",
    )
    p.add_argument(
        "--same-tools",
        action="store_true",
        help="release gate: refuse evidence whose recorded tool versions are not the "
        "installed ones",
    )


def run_report(args: argparse.Namespace) -> int:
    root = args.root.resolve() if args.root else find_root()
    report = build_report(
        root,
        args.evidence,
        probe_tools=not args.no_probe,
        require=tuple(args.require),
        same_tools=args.same_tools,
    )
    paths = write_report(report, args.out, root)
    for path in paths:
        print(f"wrote {path}")
    problems = report["gate"]["problems"]
    if problems:
        print(f"traceability gate: FAILED ({len(problems)} problems)", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print(f"traceability gate: passed ({len(report['requirements'])} requirements)")
    return 0


def configure_lint(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", type=Path, default=None, help="repository root (default: found)")


def run_lint(args: argparse.Namespace) -> int:
    root = args.root.resolve() if args.root else find_root()
    problems = lint(root)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"marker lint: {len(problems)} problems", file=sys.stderr)
        return 1
    return 0


def configure_strictdoc(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, default=Path("build/strictdoc"), help="build directory")
    p.add_argument("--root", type=Path, default=None, help="repository root (default: found)")
    p.add_argument("--strictdoc", default="strictdoc", help="the strictdoc executable")
    p.add_argument("--no-export", action="store_true", help="only write the .sdoc and config")


def run_strictdoc(args: argparse.Namespace) -> int:
    root = args.root.resolve() if args.root else find_root()
    return export(root, args.out, args.strictdoc, run=not args.no_export)


def _sub(
    argv: list[str] | None,
    prog: str,
    configure: Callable[[argparse.ArgumentParser], None],
    run: Callable[[argparse.Namespace], int],
) -> int:
    parser = argparse.ArgumentParser(prog=prog)
    configure(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else 2
    return run(args)


def report_main(argv: list[str] | None = None) -> int:
    """``report --out DIR [--evidence DIR] [--root DIR] [--no-probe]``: the report and gate."""
    return _sub(argv, "sonnx-mul report", configure_report, run_report)


def lint_main(argv: list[str] | None = None) -> int:
    """``lint [--root DIR]``: the marker lint."""
    return _sub(argv, "python -m sonnx_mul_assurance.report lint", configure_lint, run_lint)


def main(argv: list[str] | None = None) -> int:
    """``python -m sonnx_mul_assurance.report {lint,report,strictdoc} ...``."""
    args = list(sys.argv[1:] if argv is None else argv)
    commands: dict[str, Callable[[list[str]], int]] = {
        "lint": lint_main,
        "report": report_main,
        "strictdoc": lambda a: _sub(a, "strictdoc", configure_strictdoc, run_strictdoc),
    }
    if not args or args[0] not in commands:
        print(
            "usage: python -m sonnx_mul_assurance.report {lint,report,strictdoc} [options]",
            file=sys.stderr,
        )
        return 2
    return commands[args[0]](args[1:])
