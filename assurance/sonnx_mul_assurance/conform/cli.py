"""``sonnx-mul conform``: the subcommand (registered through the
``sonnx_mul.commands`` entry point as :data:`CONFORM`).

Exit codes: 0 conforming; 1 non-conforming (a type's bits differ, or a
forbidden input was accepted); 2 a wrong call, a runtime that is not
installed or cannot start, or one that ran none of the selected types.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from sonnx_mul.cli.errors import EXIT_OK, EXIT_USAGE, EXIT_VIOLATIONS, Command, UsageError
from sonnx_mul.dtypes import ElementType, allowed_types, by_onnx_name
from sonnx_mul_assurance.conform import models
from sonnx_mul_assurance.conform.fpu import FloatEnvironmentError
from sonnx_mul_assurance.conform.output import render_json, render_junit, render_text, write_all
from sonnx_mul_assurance.conform.run import run_conformance
from sonnx_mul_assurance.conform.runtimes import (
    ORT_OPT_LEVELS,
    OV_MODES,
    OV_PRECISIONS,
    OnnxRuntime,
    OpenVinoRuntime,
    Runtime,
    RuntimeUnavailable,
    load_plugin,
)

_ORT_OPTS = ("intra_op_threads", "inter_op_threads", "graph_optimization", "denormal_as_zero")
_OV_OPTS = ("device", "inference_precision", "execution_mode", "num_threads",
            "denormals_optimization")  # fmt: skip


def pairs(text: str) -> int:
    """A pair count: ``1000000``, ``1e6``, ``2^20`` or ``2**20``."""
    t = text.strip().replace("_", "")
    m = re.fullmatch(r"2(?:\^|\*\*)(\d{1,2})", t)
    if m:
        return 1 << int(str(m.group(1)))
    m = re.fullmatch(r"(\d+)(?:e(\d{1,2}))?", t, flags=re.IGNORECASE)
    if m:
        scale: int = 10 ** int(m.group(2) or 0)
        return int(m.group(1)) * scale
    raise argparse.ArgumentTypeError(f"not a pair count: {text!r} (e.g. 1000000, 1e6, 2^20)")


def _count(text: str) -> int:
    if not text.isascii() or not text.isdigit():
        raise argparse.ArgumentTypeError(f"not a non-negative integer: {text!r}")
    return int(text)


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--runtime", required=True, metavar="onnxruntime|openvino|MODULE:NAME",
        help="the runtime under test; MODULE:NAME names an onnx.backend.base.Backend "
        "(class or instance) or a Python callable fn(a, b) -> array (the plug-in interface)",
    )  # fmt: skip
    p.add_argument("--types", default="all", metavar="T1,T2,...",
                   help="ONNX element type names (float16, bfloat16, float, double, int8, ...); "
                   "default: every type of the opset's Mul")  # fmt: skip
    p.add_argument("--opset", type=_count, default=14, help="opset of the models (default 14)")
    p.add_argument("--budget", type=pairs, default=None, metavar="PAIRS",
                   help="at most PAIRS pairs per type (the edge set is always tried whole); "
                   "float16/bfloat16 are exhaustive (2^32 pairs) unless this is smaller, then "
                   "sampled; int8/uint8 are always exhaustive")  # fmt: skip
    p.add_argument(
        "--random",
        type=pairs,
        default=None,
        metavar="PAIRS",
        help="random pairs per non-exhaustive type (default 2^20)",
    )
    p.add_argument("--seed", type=_count, default=0, help="seed of the random pairs (default 0)")
    p.add_argument("--variants", default=",".join(models.VARIANTS), metavar="V1,V2",
                   help="model variants: single (one Mul), graph (a Mul among layout "
                   "operators); default both")  # fmt: skip
    p.add_argument("--no-refusals", dest="refusals", action="store_false",
                   help="do not offer forbidden inputs (broadcasting, zero-sized dims): for a "
                   "deployment whose models are checked by 'sonnx-mul check' first")  # fmt: skip
    p.add_argument(
        "--format",
        choices=("text", "json", "junit"),
        default="text",
        help="what stdout gets (default text)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="write conformance.json, .md, .html, .junit.xml and reproducers/ here",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: when stderr is a terminal)",
    )
    ort = p.add_argument_group("onnxruntime settings")
    ort.add_argument("--intra-op-threads", type=_count, default=None, metavar="N")
    ort.add_argument("--inter-op-threads", type=_count, default=None, metavar="N")
    ort.add_argument("--graph-optimization", choices=ORT_OPT_LEVELS, default=None)
    ort.add_argument(
        "--denormal-as-zero",
        action="store_true",
        default=None,
        help="session.set_denormal_as_zero=1 (flush denormals: not IEEE)",
    )
    ov = p.add_argument_group("OpenVINO settings")
    ov.add_argument("--device", default=None, help="OpenVINO device (default CPU)")
    ov.add_argument(
        "--inference-precision",
        choices=OV_PRECISIONS,
        default=None,
        help="INFERENCE_PRECISION_HINT (default: the device's)",
    )
    ov.add_argument(
        "--execution-mode",
        choices=OV_MODES,
        default=None,
        help="EXECUTION_MODE_HINT (ACCURACY keeps the model's precision)",
    )
    ov.add_argument(
        "--num-threads", type=_count, default=None, metavar="N", help="INFERENCE_NUM_THREADS"
    )
    ov.add_argument(
        "--denormals-optimization",
        choices=("on", "off"),
        default=None,
        help="CPU_DENORMALS_OPTIMIZATION (on flushes denormals)",
    )


def _given(args: argparse.Namespace, names: tuple[str, ...]) -> dict[str, object]:
    return {n: getattr(args, n) for n in names if getattr(args, n) is not None}


def make_runtime(args: argparse.Namespace) -> Runtime:
    """The runtime the arguments name; UsageError for options of another runtime."""
    ort, ov = _given(args, _ORT_OPTS), _given(args, _OV_OPTS)
    name = args.runtime
    if name != "onnxruntime" and ort:
        raise UsageError(f"--{next(iter(ort)).replace('_', '-')} is an onnxruntime setting")
    if name != "openvino" and ov:
        raise UsageError(f"--{next(iter(ov)).replace('_', '-')} is an OpenVINO setting")
    try:
        if name == "onnxruntime":
            return OnnxRuntime(**ort)  # type: ignore[arg-type]
        if name == "openvino":
            if "denormals_optimization" in ov:
                ov["denormals_optimization"] = ov["denormals_optimization"] == "on"
            return OpenVinoRuntime(**ov)  # type: ignore[arg-type]
        if ":" not in name:
            raise UsageError(f"unknown runtime {name!r}: onnxruntime, openvino or MODULE:NAME")
        return load_plugin(name)
    except RuntimeUnavailable as exc:
        raise UsageError(f"runtime unavailable: {exc}") from exc
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def parse_types(text: str, opset: int) -> list[ElementType]:
    """``all`` or comma-separated ONNX type names allowed at ``opset``."""
    allowed = allowed_types(opset)
    if text.strip() == "all":
        return list(allowed)
    chosen: list[ElementType] = []
    for name in (x.strip() for x in text.split(",") if x.strip()):
        t = by_onnx_name({"float32": "float", "float64": "double"}.get(name, name))
        if t is None:
            raise UsageError(f"unknown element type {name!r} (ONNX names: float16, bfloat16, "
                             "float, double, int8, int16, int32, int64, uint8, ... )")  # fmt: skip
        if t not in allowed:
            raise UsageError(f"{name} is not a type of Mul at opset {opset}")
        if t not in chosen:
            chosen.append(t)
    if not chosen:
        raise UsageError("--types names no type")
    return chosen


def run(args: argparse.Namespace) -> int:
    if args.opset < 1:
        raise UsageError("--opset must be at least 1")
    types = parse_types(args.types, args.opset)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in variants if v not in models.VARIANTS]
    if unknown or not variants:
        raise UsageError(f"--variants takes {', '.join(models.VARIANTS)}; got {args.variants!r}")
    runtime = make_runtime(args)
    if args.out is not None:
        try:
            args.out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create --out {args.out}: {exc.strerror or exc}") from exc
    show = sys.stderr.isatty() if args.progress is None else args.progress
    try:
        result = run_conformance(
            runtime, types=types, opset=args.opset, budget=args.budget, random=args.random,
            seed=args.seed, variants=variants, refusals=args.refusals, out_dir=args.out,
            progress=sys.stderr if show else None,
        )  # fmt: skip
    except FloatEnvironmentError as exc:
        raise UsageError(str(exc)) from exc
    if args.out is not None:
        write_all(result, args.out)
    render = {"text": render_text, "json": render_json, "junit": render_junit}[args.format]
    sys.stdout.write(render(result))
    if result["verdict"] == "not run":
        raise UsageError(f"{runtime.name} ran none of the selected types")
    return EXIT_OK if result["verdict"] == "conforming" else EXIT_VIOLATIONS


CONFORM = Command(
    "conform", "measure a runtime's Mul bit for bit against the certified semantics",
    "Build single-Mul models (and a Mul inside a small graph) per element type, run them in "
    "the runtime and compare every output bit (NaN as NaN) with sonnx_mul.mul: every pair "
    "of int8/uint8 and of float16/bfloat16 (unless --budget), edge sets and seeded random "
    "pairs for the other types; then offer the inputs the profile forbids (broadcasting, "
    "zero-sized dims), which must be refused. Results per type and requirement id (F-FLOAT, "
    "F-WRAP, R1, R4, R1-DIMS), with the first mismatches, their bits and reproducers. "
    f"Exit {EXIT_OK}: conforming; {EXIT_VIOLATIONS}: non-conforming; {EXIT_USAGE}: wrong "
    "call, runtime unavailable, or no selected type ran.",
    configure, run,
)  # fmt: skip
