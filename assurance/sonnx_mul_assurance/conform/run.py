"""The conformance run: every selected type, every model variant, the refusal
checks, compared bit for bit with ``sonnx_mul.mul``.

``run_conformance(runtime, ...)`` returns a JSON-able dict (schema
``SCHEMA``): per type the pairs tried, mismatches, first examples with their
bits and a diagnosis, the reproducers written, a verdict; per requirement id
(F-FLOAT, F-WRAP, R1, R4, R1-DIMS) a roll-up; the runtime's settings.
"""

from __future__ import annotations

import datetime as dt
import platform
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from typing import Any, TextIO

import numpy as np

import sonnx_mul
from sonnx_mul.dtypes import ElementType, allowed_types, mul_version
from sonnx_mul_assurance.conform import cases, models
from sonnx_mul_assurance.conform.compare import (
    DIAGNOSED,
    DIAGNOSED_TOTAL,
    EXAMPLES,
    compare,
    diagnose,
    hexbits,
    value,
)
from sonnx_mul_assurance.conform.fpu import FloatEnvironmentError, flushes, ieee_environment
from sonnx_mul_assurance.conform.reproduce import write_reproducer
from sonnx_mul_assurance.conform.runtimes import Runtime, Session

SCHEMA = "sonnx-mul-conformance/1"
GRAPH_PAIRS = 1 << 20
"""Random pairs of the ``graph`` variant for types run exhaustively on ``single``
(beyond 8 bits): a graph changes which kernel runs, not the arithmetic space."""

REFUSALS: tuple[tuple[str, tuple[int, ...], tuple[int, ...], tuple[str, ...]], ...] = (
    ("broadcast of a row", (2, 3), (3,), ("R1", "R4")),
    ("broadcast of a size-1 dim", (2, 3), (1, 3), ("R1", "R4")),
    ("broadcast of a rank-0 tensor", (2, 3), (), ("R1", "R4")),
    ("shapes that do not broadcast", (2, 3), (3, 2), ("R1",)),
    ("zero-sized dims", (0, 3), (0, 3), ("R1-DIMS",)),
)
"""Inputs the profile forbids: (case, shape of A, shape of B, requirement ids).
A runtime must refuse each (raise); one that runs it is reported."""

REFUSAL_IDS: tuple[str, ...] = ("R1", "R4", "R1-DIMS")
TAIL_LENGTHS: tuple[int, ...] = (1, 2, 3, 5, 7, 15, 17, 31, 33, 63, 65)
"""Tensor lengths of the ``tails`` variant, in turn: every remainder modulo the
vector widths (4 to 64 elements) a kernel may have, so each pair meets the
scalar tail code. OpenVINO 2026.4.1 computes uint8 255 x 255 as 255 in its
vector body and 0 in its tail (measured)."""
REPRO_PAIRS = 16
"""Pairs in a reproducer at most: the first of each diagnosis, then spread ones."""


def requirement_of(etype: ElementType) -> str:
    """The registry id of a type's per-element semantics."""
    return "F-FLOAT" if etype.is_float else "F-WRAP"


class Progress:
    """A progress line on ``stream`` (``\\r``-rewritten), or nothing when disabled."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self._last = 0.0

    def show(self, label: str, done: int, total: int, start: float, final: bool = False) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if not final and now - self._last < 0.5:
            return
        self._last = now
        spent = now - start
        frac = done / total if total else 1.0
        eta = spent / frac - spent if frac > 0 else 0.0
        bar = "#" * int(30 * frac)
        self.stream.write(
            f"\r{label:<28} [{bar:<30}] {100 * frac:5.1f}% {done:,}/{total:,} pairs "
            f"{spent:6.0f} s, {eta:5.0f} s left"
        )
        if final:
            self.stream.write("\n")
        self.stream.flush()


def _versions() -> dict[str, str]:
    found = {"python": platform.python_version(), "platform": platform.platform()}
    for name in ("sonnx-mul", "sonnx-mul-assurance", "numpy", "ml_dtypes", "onnx"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "absent"
    return found


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


class RuntimeThread:
    """Every call into the runtime runs on one dedicated thread.

    A runtime may change the floating-point environment of the thread that
    creates or runs its sessions (flush-to-zero); the oracle, the diagnoses
    and the printing of values stay on the calling thread, untouched.
    """

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="conform-runtime")

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        return self._pool.submit(fn, *args)

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return self._pool.submit(fn, *args).result()

    def close(self) -> None:
        self._pool.shutdown(wait=True)


class _Variant:
    """The running tally of one (type, model variant)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.pairs = 0
        self.mismatches = 0
        self.seconds = 0.0
        self.runtime_seconds = 0.0
        self.examples: list[dict[str, Any]] = []
        self.diagnoses: dict[str, int] = {}
        self.diagnosed = 0
        self.error: str | None = None
        self.problems: list[str] = []
        self.found_a: list[np.ndarray] = []
        self.found_b: list[np.ndarray] = []
        self.reproducer: str | None = None

    def as_json(self) -> dict[str, Any]:
        status = "error" if self.error else ("non-conforming" if self.mismatches else "conforming")
        return {
            "variant": self.name,
            "status": status,
            "pairs": self.pairs,
            "mismatches": self.mismatches,
            "seconds": round(self.seconds, 3),
            "runtime_seconds": round(self.runtime_seconds, 3),
            "error": self.error,
            "problems": self.problems,
            "diagnoses": dict(sorted(self.diagnoses.items(), key=lambda kv: -kv[1])),
            "diagnosed": self.diagnosed,
            "examples": self.examples,
            "reproducer": self.reproducer,
        }


def _check_chunk(
    etype: ElementType,
    tally: _Variant,
    session: Session,
    chunk: cases.Chunk,
    opset: int,
    thread: RuntimeThread,
    pieces: bool = False,
) -> None:
    a, b = np.ascontiguousarray(chunk.a), np.ascontiguousarray(chunk.b)

    def timed() -> tuple[np.ndarray, float]:
        t0 = time.perf_counter()
        out = session(a, b) if not pieces else _in_pieces(session, a, b)
        return out, time.perf_counter() - t0

    running = thread.submit(timed)  # the runtime works while the oracle does
    try:
        with ieee_environment():  # never a flushed oracle, whatever the runtime set (fpu.py)
            expected = sonnx_mul.mul(a, b, opset=opset)
    finally:
        got, spent = running.result()  # never leave the runtime running on an error here
    tally.runtime_seconds += spent
    tally.pairs += len(chunk)
    outcome = compare(etype, got, expected)
    if outcome.problem and outcome.problem not in tally.problems:
        tally.problems.append(outcome.problem)
    idx = outcome.mismatches
    if not idx.size:
        return
    tally.mismatches += int(idx.size)
    if outcome.problem:
        tally.diagnoses[outcome.problem] = tally.diagnoses.get(outcome.problem, 0) + int(idx.size)
        if not tally.found_a:  # the reproducer shows the wrong dtype or shape on a few pairs
            tally.found_a.append(a[:4].copy())
            tally.found_b.append(b[:4].copy())
        return  # nothing element-wise to show
    with ieee_environment():  # decoding values must not flush either
        _diagnose_chunk(etype, tally, chunk.kind, a, b, expected, got, idx)


def _diagnose_chunk(
    etype: ElementType,
    tally: _Variant,
    kind: str,
    a: np.ndarray,
    b: np.ndarray,
    expected: np.ndarray,
    got: np.ndarray,
    idx: np.ndarray,
) -> None:
    found = sum(x.size for x in tally.found_a)
    room = max(min(DIAGNOSED, DIAGNOSED_TOTAL - tally.diagnosed), 256)
    spread = np.linspace(0, idx.size - 1, room).astype(np.int64)
    sample = idx[spread] if idx.size > room else idx  # spread over the chunk, not the first
    for i in sample:
        what = diagnose(etype, a[i], b[i], expected[i], got[i])
        new = what not in tally.diagnoses  # show and reproduce each kind of finding once
        tally.diagnoses[what] = tally.diagnoses.get(what, 0) + 1
        tally.diagnosed += 1
        if len(tally.examples) < EXAMPLES and (new or len(tally.examples) < 2):
            tally.examples.append({
                "kind": kind, "a": value(a[i], etype), "b": value(b[i], etype),
                "a_bits": hexbits(a[i], etype), "b_bits": hexbits(b[i], etype),
                "expected": value(expected[i], etype), "expected_bits": hexbits(expected[i], etype),
                "got": value(got[i], etype), "got_bits": hexbits(got[i], etype),
                "diagnosis": what,
            })  # fmt: skip
        if new and found < REPRO_PAIRS:
            tally.found_a.append(a[i : i + 1].copy())
            tally.found_b.append(b[i : i + 1].copy())
            found += 1
    if found < REPRO_PAIRS // 2:  # then pairs spread over the chunk's mismatches
        picks = idx[
            np.linspace(0, idx.size - 1, min(REPRO_PAIRS // 2 - found, idx.size)).astype(int)
        ]
        tally.found_a.append(a[picks].copy())
        tally.found_b.append(b[picks].copy())


def _in_pieces(session: Session, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The session run on consecutive short slices (``TAIL_LENGTHS`` in turn), joined."""
    outs: list[np.ndarray] = []
    start, k = 0, 0
    while start < a.shape[0]:
        n = TAIL_LENGTHS[k % len(TAIL_LENGTHS)]
        outs.append(np.asarray(session(a[start : start + n].copy(), b[start : start + n].copy())))
        start, k = start + n, k + 1
    if any(o.dtype != outs[0].dtype for o in outs):
        return np.concatenate([o.astype(object) for o in outs])  # a wrong-dtype finding anyway
    return np.concatenate(outs)


def _variant_chunks(variant: str, plan: cases.Plan) -> Any:
    if variant == "tails":  # every pair of an 8-bit type, else the edge set
        if plan.etype.bits <= 8:
            return plan.chunks(), plan.total
        edges = cases.edge_pairs(plan.etype)
        return iter([edges]), len(edges)
    if variant == "single" or plan.mode == "edge+random" or plan.etype.bits <= 8:
        return plan.chunks(), plan.total
    # 16-bit float types run exhaustively on the single model: the graph model
    # gets the edge set and GRAPH_PAIRS random pairs
    sample = cases.Plan(plan.etype, "edge+random", 0, plan.seed, None, GRAPH_PAIRS)
    edges = cases.edge_pairs(plan.etype)
    return sample.chunks(), len(edges) + GRAPH_PAIRS


def check_type(
    runtime: Runtime,
    etype: ElementType,
    *,
    opset: int,
    plan: cases.Plan,
    variants: Sequence[str],
    progress: Progress,
    out_dir: Path | None,
    thread: RuntimeThread,
) -> dict[str, Any]:
    """One type: each model variant's tally, the type's verdict and totals."""
    start = time.perf_counter()
    req = requirement_of(etype)
    entry: dict[str, Any] = {
        "type": etype.onnx_name, "requirement": req, "mode": plan.mode,
        "pairs": 0, "mismatches": 0, "seconds": 0.0, "variants": [],
    }  # fmt: skip
    wanted = [v for v in variants if runtime.uses_models or v != "graph"]
    for variant in wanted:
        tally = _Variant(variant)
        t0 = time.perf_counter()
        model = models.build(variant, etype, opset)
        flushed_before = thread.call(flushes)
        try:
            session = thread.call(runtime.prepare, model)
        except Exception as exc:  # the runtime refuses the model: the type is not supported
            if variant == wanted[0]:  # the first model decides: the type is not supported
                entry.update(status="not supported", reason=_first_line(exc))
                entry["seconds"] = round(time.perf_counter() - start, 3)
                return entry
            tally.error = f"could not prepare: {_first_line(exc)}"
            entry["variants"].append(tally.as_json())
            continue
        if thread.call(flushes) and not flushed_before:
            entry["fpu_note"] = (
                "preparing the model switched the calling thread to flush-to-zero/denormals-"
                "are-zero: every later float computation on that thread is affected"
            )
        chunks, total = _variant_chunks(variant, plan)
        label = f"{etype.onnx_name} {variant}"
        try:
            for chunk in chunks:
                _check_chunk(etype, tally, session, chunk, opset, thread, variant == "tails")
                progress.show(label, tally.pairs, total, t0)
        except FloatEnvironmentError:
            raise  # this side cannot compute the certified results: no verdict at all
        except Exception as exc:  # failed on a valid input: an error, never "conforming"
            tally.error = f"failed while running: {_first_line(exc)}"
        progress.show(label, tally.pairs, total, t0, final=True)
        tally.seconds = time.perf_counter() - t0
        if tally.found_a and out_dir is not None:
            path = write_reproducer(
                out_dir, runtime, etype, variant, model,
                np.concatenate(tally.found_a), np.concatenate(tally.found_b), opset, req,
            )  # fmt: skip
            tally.reproducer = path.as_posix()
        entry["variants"].append(tally.as_json())
    vs = entry["variants"]
    entry["pairs"] = sum(v["pairs"] for v in vs)
    entry["mismatches"] = sum(v["mismatches"] for v in vs)
    entry["status"] = (
        "error" if any(v["error"] for v in vs)
        else "non-conforming" if entry["mismatches"] else "conforming"
    )  # fmt: skip
    entry["seconds"] = round(time.perf_counter() - start, 3)
    return entry


def check_refusals(
    runtime: Runtime, etype: ElementType, opset: int, thread: RuntimeThread
) -> list[dict[str, Any]]:
    """Offer each forbidden input of ``REFUSALS``; record whether the runtime refused it."""
    found = []
    for case, sa, sb, ids in REFUSALS:
        a, b = models.ones(etype, sa), models.ones(etype, sb)
        try:
            session = thread.call(runtime.prepare, models.shaped(etype, opset, sa, sb))
            out = thread.call(session, a, b)
        except Exception as exc:
            found.append({"type": etype.onnx_name, "case": case, "shape_a": list(sa),
                          "shape_b": list(sb), "requirements": list(ids), "status": "refused",
                          "detail": _first_line(exc)})  # fmt: skip
            continue
        shape = list(np.shape(out))
        found.append({"type": etype.onnx_name, "case": case, "shape_a": list(sa),
                      "shape_b": list(sb), "requirements": list(ids), "status": "accepted",
                      "detail": f"ran and returned shape {shape}"})  # fmt: skip
    return found


def _rollup(
    types: list[dict[str, Any]], refusals: list[dict[str, Any]], checked: bool
) -> dict[str, Any]:
    reqs: dict[str, Any] = {}
    for req in ("F-FLOAT", "F-WRAP"):
        mine = [t for t in types if t["requirement"] == req]
        ran = [t for t in mine if t["status"] != "not supported"]
        if not mine:
            continue
        bad = [t["type"] for t in ran if t["status"] != "conforming"]
        reqs[req] = {
            "verdict": "not run" if not ran else ("violated" if bad else "holds"),
            "types": [t["type"] for t in ran],
            "violated_by": bad,
            "not_supported": [t["type"] for t in mine if t["status"] == "not supported"],
            "pairs": sum(t["pairs"] for t in ran),
            "mismatches": sum(t["mismatches"] for t in ran),
        }
    for req in REFUSAL_IDS:
        mine = [r for r in refusals if req in r["requirements"]]
        if not checked:
            reqs[req] = {"verdict": "not checked", "cases": 0, "accepted": {}}
            continue
        accepted: dict[str, list[str]] = {}
        for r in mine:
            if r["status"] == "accepted":
                accepted.setdefault(r["case"], []).append(r["type"])
        reqs[req] = {
            "verdict": "not enforced" if accepted else ("enforced" if mine else "not run"),
            "cases": len(mine),
            "accepted": accepted,
        }
    return reqs


def run_conformance(
    runtime: Runtime,
    *,
    types: Sequence[ElementType] | None = None,
    opset: int = 14,
    budget: int | None = None,
    random: int | None = None,
    seed: int = 0,
    variants: Sequence[str] = models.VARIANTS,
    refusals: bool = True,
    out_dir: Path | None = None,
    progress: TextIO | None = None,
    on_type: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Run ``runtime`` on every type of ``types`` (default: all the opset allows).

    The verdict is ``conforming`` when every type the runtime runs gives the
    certified bits and (``refusals``) every forbidden input is refused;
    ``not run`` when the runtime runs none of the types.
    """
    allowed = allowed_types(opset)
    chosen = list(types) if types is not None else list(allowed)
    for t in chosen:
        if t not in allowed:
            raise ValueError(
                f"{t.onnx_name} is not a type of Mul-{mul_version(opset)} (opset {opset})"
            )
    start = time.perf_counter()
    bar = Progress(progress)
    results: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    thread = RuntimeThread()
    try:
        for etype in chosen:
            p = cases.plan(etype, budget=budget, seed=seed, random=random)
            entry = check_type(runtime, etype, opset=opset, plan=p, variants=variants,
                               progress=bar, out_dir=out_dir, thread=thread)  # fmt: skip
            if refusals and entry["status"] != "not supported":
                refused += check_refusals(runtime, etype, opset, thread)
            results.append(entry)
            if on_type is not None:
                on_type(entry)
    finally:
        thread.close()
    reqs = _rollup(results, refused, refusals)
    ran = [t for t in results if t["status"] != "not supported"]
    bad = [r for r, v in reqs.items() if v["verdict"] in ("violated", "not enforced")]
    verdict = "not run" if not ran else ("non-conforming" if bad else "conforming")
    return {
        "schema": SCHEMA,
        "date": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "runtime": runtime.name,
        "settings": runtime.settings(),
        "opset": opset,
        "mul_version": mul_version(opset),
        "seed": seed,
        "budget": budget,
        "random_pairs": random if random is not None else cases.DEFAULT_RANDOM,
        "variants": [v for v in variants if runtime.uses_models or v != "graph"],
        "refusals_checked": refusals,
        "verdict": verdict,
        "violated": bad,
        "seconds": round(time.perf_counter() - start, 3),
        "types": results,
        "refusals": refused,
        "requirements": reqs,
        "tools": _versions(),
        "command": " ".join(sys.argv) if sys.argv else "",
    }
