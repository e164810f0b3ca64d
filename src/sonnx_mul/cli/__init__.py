"""The ``sonnx-mul`` command line.

The product's subcommands (check, run, selftest, verify-install) live in the
``COMMANDS`` table: each is a ``Command`` with a ``configure`` function (adds
its arguments) and a ``run`` function (returns the exit code, or raises
``CliError`` / ``UsageError``). Other distributions add subcommands through
the ``sonnx_mul.commands`` entry-point group (the assurance tooling's
``prove`` and ``report``); the product imports none of them: their names
and help come from the entry-point metadata, and only the subcommand that is
invoked is imported (``sonnx-mul check`` never loads ``sonnx_mul_assurance``).

Error contract, for every subcommand (``main`` enforces it): a failure is ONE
line on stderr, ``sonnx-mul: error: MESSAGE``, or a one-line JSON object
``{"error": MESSAGE, "exit_code": N}`` when the call has ``--format json``;
never a traceback. Exit codes: 0 success / conforms; 1 violations found, a
profile error or a failed step; 2 wrong call, unreadable model or input
(also a FIFO, a device or anything but a regular file: refused, never waited
on), unwritable output (also a standard output closed at start, ``>&-``), a
plugin subcommand that cannot be loaded; 130 interrupted; 141 the reader of stdout went away
(``sonnx-mul check m.onnx | head``), silently, as a SIGPIPE'd Unix tool.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import numpy as np
import onnx

# the verifier outside the package (stdlib only), and the error contract every command keeps
from sonnx_mul_verify import add_arguments, guarded, verify

from .. import __version__, kernel
from ..errors import ProfileError
from ..known_answers import selftest
from ..models import ort
from ..models.checker import (
    ModelReadError,
    Report,
    ShapeBindingError,
    Violation,
    check_report,
    load_model,
)
from ..models.executor import Backend
from ..models.external import load_external_data
from ..models.openvino import check_ir_report
from .errors import (
    EXIT_BROKEN_PIPE as EXIT_BROKEN_PIPE,
)
from .errors import (
    EXIT_OK,
    EXIT_USAGE,
    EXIT_VIOLATIONS,
    CliError,
    Command,
    UsageError,
    _Parser,
)
from .files import failing_node, input_files, output_files, read_inputs


# ---------------------------------------------------------------- check
def group_violations(
    violations: Sequence[Violation],
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
    p.add_argument(
        "--dim", action="append", default=[], metavar="NAME=SIZE",
        help="bind the free (symbolic) dim NAME of the model's inputs to SIZE (repeatable)",
    )  # fmt: skip
    p.add_argument(
        "--input-shape", action="append", default=[], metavar="INPUT=D1,D2,...",
        help="fix the shape of graph input INPUT; its free dims are bound too (repeatable)",
    )  # fmt: skip
    p.add_argument(
        "--undecided-exit", type=int, default=EXIT_VIOLATIONS, metavar="CODE",
        help="exit code when every finding is undecided ('cannot be shown'), none definite "
        "(default 1, like violations; e.g. 3 to tell them apart; 0 and 2 are refused)",
    )  # fmt: skip


MAX_DIM = 2**63 - 1
"""The largest size a dim can have (ONNX dims are int64)."""


def _is_size(text: str) -> bool:
    return text.isascii() and text.isdigit() and int(text) <= MAX_DIM


def _parse_bindings(args: argparse.Namespace) -> tuple[dict[str, int], dict[str, list[int]]]:
    """``--dim`` and ``--input-shape`` as dicts; UsageError for a malformed spec, a size
    outside 0..2**63-1, or a name given twice (even with the same size: a repeat is a
    slip, and a contradictory one must never silently keep the last)."""
    dims: dict[str, int] = {}
    shapes: dict[str, list[int]] = {}
    for spec in args.dim:
        name, sep, size = spec.partition("=")
        if not sep or not name or not _is_size(size.strip()):
            raise UsageError(f"--dim expects NAME=SIZE (0 <= SIZE < 2**63), got {spec!r}")
        if name in dims:
            raise UsageError(f"--dim {name}= is given more than once")
        dims[name] = int(size)
    for spec in args.input_shape:
        name, sep, text = spec.partition("=")
        parts = [x.strip() for x in text.split(",")] if text.strip() else []
        if not sep or not name or not all(_is_size(x) for x in parts):
            raise UsageError(
                f"--input-shape expects INPUT=D1,D2,... (0 <= size < 2**63), got {spec!r}"
            )
        if name in shapes:
            raise UsageError(f"--input-shape {name}= is given more than once")
        shapes[name] = [int(x) for x in parts]
    if args.undecided_exit in (EXIT_OK, EXIT_USAGE) or not 0 <= args.undecided_exit <= 125:
        raise UsageError("--undecided-exit must be 1 or 3..125 (0 and 2 keep their meaning)")
    return dims, shapes


def _check_summary(path: str, report: Report, unit: str) -> str:
    bad, undecided = report.nodes(True), report.nodes(False)
    if report.mul_nodes == 0:
        return f"{path}: conforms to the SONNX Mul profile (no {unit} node to check)"
    checked = f"{report.mul_nodes} {unit} node(s) checked"
    if not report.violations:
        return f"{path}: conforms to the SONNX Mul profile ({checked})"
    return (
        f"{path}: does not conform to the SONNX Mul profile ({checked}: {len(bad)} with "
        f"definite violations, {len(undecided)} with undecided findings only)"
    )


def _run_check(args: argparse.Namespace) -> int:
    path = str(args.model)
    is_ir = path.lower().endswith(".xml")
    try:
        dims, shapes = _parse_bindings(args)
        if is_ir and (dims or shapes):
            raise UsageError("--dim and --input-shape apply to ONNX models only")
        report = (
            check_ir_report(path) if is_ir else check_report(path, dims=dims, input_shapes=shapes)
        )
    except (ModelReadError, ShapeBindingError) as exc:
        raise UsageError(str(exc)) from exc
    except (MemoryError, RecursionError) as exc:  # hostile input: one line, exit 2
        raise UsageError(f"cannot check the model: {type(exc).__name__}") from None
    unit = "Multiply" if is_ir else "Mul"
    if args.format == "json":
        doc = {
            "model": path,
            "conforms": not report.violations,
            "verdict": report.verdict,
            "mul_nodes_checked": report.mul_nodes,
            "nodes_with_definite_violations": len(report.nodes(True)),
            "nodes_with_undecided_findings_only": len(report.nodes(False)),
            "definite": [v.to_dict() for v in report.definite],
            "undecided": [v.to_dict() for v in report.undecided],
            "violations": [v.to_dict() for v in report.violations],
        }
        print(json.dumps(doc, indent=2))
    else:
        for (path_, node, message, definite), ids in group_violations(report.violations).items():
            kind = "" if definite else " (cannot be shown)"
            print(f"{', '.join(ids)}{kind} {path_}/{node}: {message}")
        print(_check_summary(path, report, unit))
    if report.verdict == "violates":
        return EXIT_VIOLATIONS
    return int(args.undecided_exit) if report.verdict == "undecided" else EXIT_OK


# ---------------------------------------------------------------- run
def _configure_run(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="ONNX model (.onnx)")
    p.add_argument(
        "--input", action="append", default=[], metavar="NAME=FILE.npy",
        help="value of graph input NAME, a .npy file (once per input)",
    )  # fmt: skip
    p.add_argument("--out", default=".", help="directory for the NAME.npy outputs (default .)")
    p.add_argument(
        "--engine", choices=ENGINES, default=None,
        help="onnxruntime: every other operator on onnxruntime (the extra [onnxruntime]); "
        "reference: on onnx.reference (default onnxruntime when installed, else reference)",
    )  # fmt: skip


ENGINES = ("onnxruntime", "reference")


def _execute(
    args: argparse.Namespace, model: onnx.ModelProto, feeds: dict[str, np.ndarray]
) -> tuple[str, list[np.ndarray]]:
    """Run on the engine asked for (or the default); the line saying which ran, the outputs.

    Without ``--engine``, a model the onnxruntime engine cannot carry runs on
    the reference engine, and the line says why; with ``--engine onnxruntime``
    it is a wrong call (exit 2).
    """
    engine = args.engine or ("onnxruntime" if ort.available() else "reference")
    note = "" if args.engine else " (default)"
    if engine == "onnxruntime":
        if not ort.available():
            raise UsageError("--engine onnxruntime needs the extra sonnx-mul[onnxruntime]")
        try:
            session = ort.InferenceSession(model)
        except ort.EngineUnsupported as exc:
            if args.engine:
                raise UsageError(f"{exc}") from exc
            engine, note = "reference", f" (onnxruntime cannot run this model: {exc})"
        else:
            certified = f"{session.certified_nodes} Mul node(s) on the certified kernel"
            line = f"engine: onnxruntime{note}, {certified}"
            return line, session.run(None, feeds)
    return f"engine: reference{note}", list(Backend.prepare(model).run(feeds))


def _run_run(args: argparse.Namespace) -> int:
    """Inputs and output names are checked before anything runs or is written."""
    files = input_files(args.input)
    try:
        model = load_model(args.model)
    except ModelReadError as exc:
        raise UsageError(str(exc)) from exc
    try:
        load_external_data(model, Path(args.model).parent)
    except ModelReadError as exc:
        raise UsageError(str(exc)) from exc
    feeds = read_inputs(model, files)
    out_dir = Path(args.out)
    targets = output_files(model, out_dir)
    try:
        engine_line, outputs = _execute(args, model, feeds)
    except UsageError:
        raise
    except Exception as exc:  # a profile refusal, or the reference evaluator failed
        node = failing_node(exc) or getattr(exc, "node", None)
        where = f"node {node}: " if node else ""
        if isinstance(exc, ProfileError):  # refused: the message names the requirements
            raise CliError(f"{where}{exc}") from exc
        raise CliError(f"the model could not be run: {where}{type(exc).__name__}: {exc}") from exc
    out_dir.mkdir(parents=True, exist_ok=True)
    print(engine_line)
    for (name, target), value in zip(targets, outputs, strict=True):
        array = np.asarray(value)
        np.save(target, array, allow_pickle=False)
        print(f"{name}: shape {array.shape} dtype {array.dtype} -> {target}")
    return EXIT_OK


# ---------------------------------------------------------------- selftest
def _configure_selftest(p: argparse.ArgumentParser) -> None:
    del p  # no options


def _run_selftest(args: argparse.Namespace) -> int:
    report = selftest()
    for failure in report.failures:
        print(f"FAIL {failure}")
    verdict = "passed" if report.ok else f"FAILED ({len(report.failures)} vectors)"
    vectors = f"{report.checked} known-answer vectors on the {report.kernel} kernel"
    if report.isa != "-":
        vectors += f" ({report.isa} build"
        if report.isa_compared:
            vectors += f", {report.isa_compared} types bit for bit against the portable build"
        vectors += ")"
    print(f"self-test {verdict}: {vectors}")
    print(f"kernel build: {kernel.BUILD}")
    return EXIT_OK if report.ok else EXIT_VIOLATIONS


# ---------------------------------------------------------------- verify-install
def _configure_verify_install(p: argparse.ArgumentParser) -> None:
    add_arguments(p)


def _run_verify_install(args: argparse.Namespace) -> int:
    """Hands off to the verifier outside the package (``sonnx_mul_verify``).

    Reached only through ``python -m sonnx_mul.cli`` or ``main()``, which
    have imported ``sonnx_mul`` already: a tampered package could answer here
    instead. The ``sonnx-mul`` console script and ``python -I -m
    sonnx_mul_verify`` never get here (SECURITY.md).
    """
    return verify(Path(args.report), allow_hooks=args.allow_hook, as_json=args.format == "json")


PLUGIN_GROUP = "sonnx_mul.commands"

COMMANDS: tuple[Command, ...] = (
    Command(
        "check", "check every Mul node of a model against the SONNX profile",
        "Check every Mul node of an ONNX model (graph, subgraphs, local functions) or every "
        "Multiply layer of an OpenVINO IR .xml against R1-R4. Exit 0: conforms; 1: "
        "violations found (definite, or undecided ones: see --undecided-exit); 2: the model "
        "could not be read, is invalid (declared types contradict it), or a wrong call.",
        _configure_check, _run_check,
    ),
    Command(
        "run", "run an ONNX model with the certified Mul",
        "Run an ONNX model: Mul nodes on the certified implementation, other operators on "
        "onnxruntime or onnx.reference (--engine). Writes every output as OUT/NAME.npy. "
        "Exit 0: done; 1: refused by the profile or failed; 2: unreadable model or input, "
        "or wrong call (also --engine onnxruntime for a model it cannot carry).",
        _configure_run, _run_run,
    ),
    Command(
        "selftest", "run the known-answer self-test in this process",
        "Run known-answer vectors for every element type (ties to even, subnormals, "
        "overflow to infinity, NaN, signed zero, integer wrap and checked overflow) through "
        "the native kernel in this process, and print how it was compiled. Fails when the "
        "floating-point unit flushes subnormals (FTZ/DAZ), as some native libraries make it "
        "do. Exit 0: passed; 1: failed.",
        _configure_selftest, _run_selftest,
    ),
    Command(
        "verify-install", "check that the imported package is the code a report covers",
        "Without importing it first, hash every file of the sonnx_mul package this Python "
        "would import (sources and native binaries) and compare with the package block of "
        "REPORT.json (written by 'sonnx-mul report'); check that every cached .pyc is the "
        "compilation of its verified source, that no start-up hook (.pth import line, "
        "sitecustomize) could patch it, that no environment variable selects another "
        "kernel; then import it in a child process for the self-test, and print the "
        "report's own gate verdict. Exit 0: all of that holds and the gate passed; 1: a "
        "finding; 2: unreadable report; 3: no finding but the report's gate failed. The "
        "console script answers it from sonnx_mul_verify, outside the package.",
        _configure_verify_install, _run_verify_install,
    ),
)  # fmt: skip


@dataclass(frozen=True)
class Plugin:
    """A subcommand another distribution registers, known from its metadata only."""

    name: str
    entry: EntryPoint
    distribution: str

    @property
    def help(self) -> str:
        return f"(from {self.distribution}; 'sonnx-mul {self.name} --help' for its options)"


def plugin_commands() -> tuple[Plugin, ...]:
    """Subcommands of the ``sonnx_mul.commands`` group, from metadata: nothing is imported.

    A plugin may not take the name of a product subcommand (it could
    otherwise stand in for ``verify-install``): such an entry is ignored.
    """
    product = {c.name for c in COMMANDS}
    found: dict[str, Plugin] = {}
    for entry in entry_points(group=PLUGIN_GROUP):
        if entry.name in product or entry.name in found:
            continue
        dist = entry.dist
        label = f"{dist.name} {dist.version}" if dist is not None else entry.value
        found[entry.name] = Plugin(entry.name, entry, label)
    return tuple(sorted(found.values(), key=lambda p: p.name))


def load_plugin(plugin: Plugin) -> Command:
    """Import the plugin's command (only when it is invoked); UsageError if it cannot be."""
    try:
        command = plugin.entry.load()
    except Exception as exc:  # ImportError, an error in the plugin's module: one line, exit 2
        raise UsageError(
            f"cannot load subcommand {plugin.name!r} ({plugin.entry.value}, from "
            f"{plugin.distribution}): {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(command, Command) or command.name != plugin.name:
        raise UsageError(
            f"cannot load subcommand {plugin.name!r}: {plugin.entry.value} is not a "
            f"sonnx_mul.cli.errors.Command named {plugin.name!r}"
        )
    return command


def _invoked(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (the first word that is not an option)."""
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser; of the plugins only the one ``argv`` invokes is imported and configured."""
    parser = _Parser(
        prog="sonnx-mul",
        description="Certified ONNX Mul under the SONNX profile (R1-R4).",
        epilog="'sonnx-mul SUBCOMMAND --help' explains each subcommand.\n"
        "Exit codes: 0 success / conforms, 1 violations found or refused by the "
        "profile,\n2 unreadable model or input, unwritable output, or wrong call.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"sonnx-mul {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND")
    invoked = _invoked(argv)
    commands: list[Command | Plugin] = [*COMMANDS, *plugin_commands()]
    for command in commands:
        if isinstance(command, Plugin) and command.name == invoked:
            command = load_plugin(command)
        if isinstance(command, Plugin):  # listed for --help, never parsed
            sub.add_parser(command.name, help=command.help, add_help=False)
            continue
        p = sub.add_parser(command.name, help=command.help, description=command.description)
        command.configure(p)
        p.set_defaults(_run=command.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse ``argv`` (default sys.argv[1:]), run the subcommand.

    Every failure becomes one line on stderr and an exit code (module
    docstring; ``sonnx_mul_verify.guarded``, the contract verify-install keeps too).
    """
    argv = sys.argv[1:] if argv is None else list(argv)

    def run(args: argparse.Namespace) -> int:
        code: int = args._run(args)
        return code

    return guarded(argv, lambda words: build_parser(words).parse_args(words), run, _judge)


def _judge(exc: Exception) -> tuple[str, int]:
    """(message, exit code) of a failure of a subcommand."""
    if isinstance(exc, CliError):
        return str(exc), exc.exit_code
    if isinstance(exc, ProfileError):
        return str(exc), EXIT_VIOLATIONS
    if isinstance(exc, OSError):  # unreadable input or unwritable output
        return _describe_os_error(exc), EXIT_USAGE
    if isinstance(exc, MemoryError):
        return "not enough memory for this input", EXIT_USAGE
    # a defect: still one line, and never 1 ("violates")
    return f"internal error: {type(exc).__name__}: {exc}", EXIT_USAGE


def _describe_os_error(exc: OSError) -> str:
    if exc.strerror and exc.filename is not None:
        return f"{exc.strerror}: {exc.filename}"
    return str(exc) or type(exc).__name__
