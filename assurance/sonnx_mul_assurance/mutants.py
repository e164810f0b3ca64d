"""Mutation testing behind ``make mutants``: do the checks kill planted faults?

``python -m sonnx_mul_assurance.mutants [--max-py N] [--max-mlw N] [--max-c N]
[--jobs J] [--file F ...] [--under DIR ...] [--key K ...] [--list] [--out FILE]``
generates mutants by operator, spread evenly over each target file:

* Python (kernel, api, numpy_loops, validation, dtypes, softfloat, onnx/checker and
  the checker's rules, shapes and declared-type modules, and the audit machinery:
  the report's modules, ``evidence/schema.py`` and ``why3/whyml.py``, ``make mutants-report``
  runs those only):
  comparison flips (``<``/``<=``, ``==``/``!=``, ``is``/``is not``,
  ``in``/``not in``), arithmetic and bit operators (``+``/``-``, ``<<``/``>>``,
  ``&``/``|``, ``//``/``%``), ``and``/``or``, integer constants +1, ``True``/
  ``False``, a ``raise`` statement replaced by ``pass``; never inside
  annotations, strings or comments;
* WhyML (every ``why3/*.mlw``): ``<=``/``<``, ``>=``/``>``, ``/\\``/``\\/``,
  integer literals +1, an ``ensures``/``raises``/``invariant``
  made ``true``, a ``requires`` made ``true``, an ``if ... then raise`` made
  ``if false then raise``; never inside comments;
* C, the glue ``src/sonnx_mul/_native.c`` (issue 28), in the functions of its
  strided paths and of its checked path only (``GLUE_FUNCTIONS``, each with why
  it is in): ``<``/``<=``, ``>``/``>=``, ``==``/``!=``, ``+``/``-`` (``+=``/
  ``-=``), ``&&``/``||``, decimal constants +1 (not an array's declared size),
  an early ``return``, a ``break``/``continue`` or an expression statement
  deleted; never inside comments, string or character literals or preprocessor
  lines; at most ``--max-c`` (default 100), shared evenly among the functions.

Each mutant runs in a private copy of the repository (``PYTHONPATH`` points
at the copy's ``src``, checked), against the fast checks of its file: the
targeted tests (``pytest -x``) for Python, ``tables check`` plus the Why3
proof of the mutated module for WhyML, ``GLUE_TESTS`` for the glue. For the
glue, each copy builds the extension once with its own ``setup.py``
(:mod:`.c.glue_build`; the copy's ``sonnx_mul._native`` is then the one
imported, checked), and each mutant recompiles the glue alone and relinks; the
unmutated module is put back after it. A failing check kills a mutant (a
crash too); a check running past the time limit counts as killed
("timeout", counted apart in the summary) only when the unmutated check takes at most
half the limit (``TIMEOUT_MARGIN``), before the run (it refuses to start otherwise) and
again right after the timeout (else the mutant is a survivor): such a timeout is a hang
or slow-down the mutant planted, not the machine's load. A Python mutant that does not
compile is dropped, a glue mutant that does not compile is recorded "invalid" (out of
the kill rate). The unmutated copy must pass every check first. Survivors are matched against
``proofs/mutants-equivalent.json`` (mutant key -> why it is equivalent, or
why the difference is unreachable); the run fails (exit 1) on any survivor
not listed there. Results: ``proofs/out/mutants.json`` (killed, equivalent,
survived and invalid counts, per file too, and every outcome).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tokenize
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from queue import Queue
from types import MappingProxyType

from sonnx_mul_assurance.c import glue_build
from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.why3 import whyml

REPORT_TESTS: tuple[str, ...] = (
    "tests/report/test_trace_report.py", "tests/report/test_gate_rules.py",
    "tests/report/test_report_internals.py", "tests/report/test_outcome_reading.py",
    "tests/report/test_hashing.py", "tests/report/test_trace_markers.py",
    "tests/report/test_requirements.py", "tests/report/test_report_cli.py",
    "tests/report/test_render.py", "tests/report/test_trace_audit.py",
    "tests/report/test_sonnx_newest.py", "tests/report/test_evidence_coverage.py",
    "tests/report/test_native_evidence.py", "tests/report/test_screenshots.py",
    "tests/report/test_evidence_binding.py", "tests/report/test_prose.py",
    "tests/report/test_coverage_gate.py", "tests/report/test_wg_class_report.py",
)  # fmt: skip
"""The tests of the audit machinery (``sonnx_mul_assurance.report``), fastest first."""

_RENDER_TESTS: tuple[str, ...] = (
    "tests/report/test_render.py", "tests/report/test_trace_report.py",
    "tests/report/test_trace_audit.py", "tests/report/test_sonnx_newest.py",
)  # fmt: skip
_PKG = "assurance/sonnx_mul_assurance"

REPORT_TARGETS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    f"{_PKG}/report/__init__.py": REPORT_TESTS,
    f"{_PKG}/report/evidence.py": REPORT_TESTS,
    f"{_PKG}/report/report.py": REPORT_TESTS,
    f"{_PKG}/report/markers.py": REPORT_TESTS,
    f"{_PKG}/report/protocol.py": REPORT_TESTS,
    f"{_PKG}/report/native_evidence.py": (
        "tests/report/test_native_evidence.py", "tests/report/test_gate_rules.py",
        "tests/report/test_trace_report.py",
    ),
    f"{_PKG}/report/cdefs.py": (
        "tests/report/test_native_evidence.py", "tests/report/test_evidence_coverage.py",
    ),
    f"{_PKG}/report/screenshots.py": ("tests/report/test_screenshots.py",),
    f"{_PKG}/report/prose.py": ("tests/report/test_prose.py", "tests/report/test_screenshots.py"),
    f"{_PKG}/report/coverage.py": (
        "tests/report/test_coverage_gate.py", "tests/report/test_render.py",
        "tests/report/test_trace_report.py",
    ),
    f"{_PKG}/report/wg_classes.py": (
        "tests/report/test_wg_class_report.py", "tests/operator/test_wg_classes.py",
        "tests/report/test_render.py",
    ),
    f"{_PKG}/report/alignment.py": (
        "tests/report/test_sonnx_newest.py", "tests/report/test_render.py",
        "tests/report/test_trace_audit.py",
    ),
    f"{_PKG}/report/hashes.py": (
        "tests/report/test_report_internals.py", "tests/report/test_hashing.py",
        "tests/report/test_trace_audit.py",
    ),
    f"{_PKG}/report/cli.py": (
        "tests/report/test_report_cli.py", "tests/report/test_trace_report.py",
    ),
    f"{_PKG}/report/strictdoc.py": (
        "tests/report/test_report_cli.py", "tests/report/test_trace_markers.py",
    ),
    f"{_PKG}/report/sources.py": (
        "tests/report/test_report_internals.py", "tests/report/test_trace_audit.py",
    ),
    f"{_PKG}/report/document.py": _RENDER_TESTS,
    f"{_PKG}/report/render.py": _RENDER_TESTS,
    f"{_PKG}/report/trusted.py": (
        "tests/report/test_report_internals.py", "tests/report/test_trace_audit.py",
    ),
    # What the report reads through: the evidence schema, the inputs each evidence
    # file is bound to, and the WhyML reader.
    f"{_PKG}/evidence/binding.py": (
        "tests/report/test_evidence_binding.py", "tests/report/test_gate_rules.py",
        "tests/assurance/test_suite_reuse.py",
    ),
    f"{_PKG}/evidence/schema.py": (
        "tests/assurance/test_evidence_schema.py", "tests/report/test_gate_rules.py",
        "tests/report/test_outcome_reading.py", "tests/report/test_trace_report.py",
    ),
    f"{_PKG}/why3/whyml.py": (
        "tests/assurance/test_whyml.py", "tests/report/test_report_internals.py",
        "tests/report/test_trace_markers.py", "tests/report/test_gate_rules.py",
    ),
})  # fmt: skip
"""Each module of the audit machinery (``report/`` and the two modules it reads
through) and the tests that face it (all of ``tests/report`` for the core).
``report/__main__.py`` holds only the call of ``main``."""

_RULE_TESTS = (
    "tests/checker/test_rule_pins.py", "tests/checker/test_checker_name_spellings.py",
    "tests/checker/test_checker_false_conforms.py", "tests/checker/test_onnx_checker.py",
    "tests/checker/test_checker_soundness.py", "tests/checker/test_checker_symbolic.py",
    "tests/checker/test_checker_mutants.py",
)  # fmt: skip

_M = "src/sonnx_mul/models"
_INFERENCE_TESTS = (*_RULE_TESTS, "tests/checker/test_trusted_inference.py")
_READING_TESTS = (
    "tests/checker/test_rule_pins.py", "tests/checker/test_onnx_checker.py",
    "tests/cli/test_cli_hardening.py",
    "tests/checker/test_hostile_models.py",
)  # fmt: skip

_HOSTILE = "tests/checker/test_hostile_models.py"
WIRE_TESTS: tuple[str, ...] = (
    "tests/checker/test_wire.py",
    f"{_HOSTILE}::test_attribute_lists_cost_at_most_twice_the_file",
    f"{_HOSTILE}::test_R1_R4_nesting_at_the_decoding_limit_is_checked",
    f"{_HOSTILE}::test_nesting_too_deep_is_model_read_error",
)  # fmt: skip
"""The wire pre-pass's checks: its own tests (exactness against sanitize, verdicts with and
without it, malformed lists, the bound's refusals) and the hostile-file tests that read a
file through it (the memory of every list class, nesting); deterministic (no timing
asserted), under a minute unmutated on an idle machine. Left out: the negative controls
(they disable the pre-pass, whose mutants then change nothing) and the 50 MB payloads
(their fixtures alone cost more than the rest under load)."""

MODELS_TARGETS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    f"{_M}/facts.py": _RULE_TESTS,
    f"{_M}/trusted.py": _INFERENCE_TESTS,
    f"{_M}/symbols.py": _RULE_TESTS,
    f"{_M}/validity.py": _RULE_TESTS,
    f"{_M}/scope.py": (*_RULE_TESTS, "tests/checker/test_onnx_executor.py"),
    f"{_M}/functions.py": (*_RULE_TESTS, "tests/checker/test_checker_corpus.py"),
    f"{_M}/inference.py": (*_INFERENCE_TESTS, "tests/cli/test_hostile_files.py"),
    f"{_M}/sanitize.py": (*_RULE_TESTS, "tests/checker/test_hostile_models.py"),
    f"{_M}/findings.py": (
        "tests/checker/test_rule_pins.py", "tests/cli/test_cli_check.py",
        "tests/checker/test_onnx_checker.py",
    ),
    f"{_M}/reading.py": _READING_TESTS,
    f"{_M}/external.py": (
        "tests/checker/test_executor_pins.py", "tests/cli/test_cli_hardening.py",
        "tests/checker/test_hostile_models.py",
    ),
    f"{_M}/executor.py": (
        "tests/checker/test_executor_pins.py", "tests/checker/test_onnx_executor.py",
    ),
    f"{_M}/openvino.py": (
        "tests/checker/test_openvino_pins.py", "tests/checker/test_openvino.py",
        "tests/checker/test_checker_false_conforms.py",
    ),
    f"{_M}/ort.py": ("tests/ort/test_ort_engine.py",),
})  # fmt: skip
"""The rest of ``models/`` (``checker``, ``rules``, ``shapes`` and ``declared``
are listed with the product's core below), each against the tests that face it.
``models/__init__.py`` holds only re-exports (no mutant can be generated in it)."""

_CONFORM_TESTS = (
    "tests/assurance/test_conform_compare.py", "tests/assurance/test_conform_pins.py",
    "tests/assurance/test_conform.py", "tests/assurance/test_conform_runtimes.py",
)  # fmt: skip
_C = "assurance/sonnx_mul_assurance/conform"

CONFORM_TARGETS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    f"{_C}/{name}.py": _CONFORM_TESTS
    for name in (
        "compare", "cases", "cli", "fpu", "models", "output", "reproduce", "run", "runtimes",
    )
})  # fmt: skip
"""Every module of ``conform/`` against conform's tests (``conform/__init__.py``
holds only re-exports)."""

MAX_PY_OF: Mapping[str, int] = MappingProxyType(
    {file: 12 for file in (*MODELS_TARGETS, *CONFORM_TARGETS)}
)
"""Mutants per file where not the ``--max-py`` default (25): 12 for the files of
``models/`` and ``conform/`` added for issue 29, so that the whole of ``make
mutants`` stays within the hour on two cores. An explicit ``--max-py`` applies
to every file."""

PY_TESTS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "src/sonnx_mul/oracle/integers.py": (
        "tests/assurance/test_kernel_contracts.py", "tests/operator/test_semantics_int.py",
        "tests/operator/test_semantics_float.py",
    ),
    "src/sonnx_mul/api.py": (
        "tests/operator/test_plain_lane.py", "tests/operator/test_native.py",
        "tests/operator/test_interruption.py", "tests/operator/test_out.py",
        "tests/operator/test_noloss.py", "tests/operator/test_overflow_boundaries.py",
    ),
    "src/sonnx_mul/numpy_loops.py": (
        "tests/operator/test_numpy_loops.py", "tests/operator/test_overflow_boundaries.py",
    ),
    "src/sonnx_mul/validation.py": (
        "tests/assurance/test_tables.py", "tests/operator/test_arguments.py",
        "tests/operator/test_dense.py", "tests/operator/test_shapes.py",
        "tests/operator/test_types.py", "tests/operator/test_out.py",
        "tests/operator/test_plain_lane.py", "tests/assurance/test_contracts_real.py",
    ),
    "src/sonnx_mul/dtypes.py": (
        "tests/operator/test_dtypes.py", "tests/operator/test_types.py",
        "tests/assurance/test_tables.py",
    ),
    "src/sonnx_mul/oracle/softfloat.py": (
        "tests/operator/test_semantics_float.py", "tests/assurance/test_contracts_real.py",
    ),
    # The checker's core faces the rule pins too (they pin the rules these modules
    # apply); checker.py also reads the file (the wire pre-pass, the nesting and
    # memory refusals): the hostile-file tests face it as well.
    "src/sonnx_mul/models/checker.py": (
        *_RULE_TESTS, "tests/checker/test_checker_corpus.py", "tests/checker/test_wire.py",
        "tests/checker/test_hostile_models.py",
    ),
    "src/sonnx_mul/models/rules.py": (*_RULE_TESTS, "tests/checker/test_checker_corpus.py"),
    "src/sonnx_mul/models/shapes.py": (*_RULE_TESTS, "tests/checker/test_checker_corpus.py"),
    "src/sonnx_mul/models/declared.py": (*_RULE_TESTS, "tests/checker/test_checker_corpus.py"),
    # The wire pre-pass against its own tests and the hostile-file tests that read a
    # file through it (memory bound, nesting), not the whole of test_hostile_models.py
    # and test_fuzz_models.py: with those the unmutated run took more than half the time
    # limit on the shared machine, where a timeout no longer tells a hang (WIRE_TESTS).
    "src/sonnx_mul/models/wire.py": WIRE_TESTS,
    # The verifier of verify-install, against the tests that call it in this
    # process (the attack tests' child processes import the installed verifier,
    # not the mutated copy, and the test ordering would run their minutes first).
    "src/sonnx_mul_verify.py": ("tests/cli/test_verify_rules.py", "tests/cli/test_wrong_calls.py"),
    # The pinned proofs' core and the pure parts of the Why3 and WP checks built on it
    # (limits, pins, manifests, answers read, statements cut), without a prover.
    "assurance/sonnx_mul_assurance/pinned.py": (
        "tests/assurance/test_pinned.py", "tests/assurance/test_why3_limits.py",
        "tests/assurance/test_wp_passes.py",
    ),
    "assurance/sonnx_mul_assurance/why3/plan.py": (
        "tests/assurance/test_why3_limits.py", "tests/assurance/test_pinned.py",
    ),
    "assurance/sonnx_mul_assurance/why3/runner.py": ("tests/assurance/test_pinned.py",),
    "assurance/sonnx_mul_assurance/c/wp_statements.py": (
        "tests/assurance/test_pinned.py", "tests/assurance/test_wp_passes.py",
    ),
    "assurance/sonnx_mul_assurance/evidence/files.py": (
        "tests/assurance/test_single_definitions.py", "tests/assurance/test_pinned.py",
    ),
    # Structural coverage's measure and gate, and the probe of a test run's environment.
    "assurance/sonnx_mul_assurance/structural.py": ("tests/report/test_coverage_gate.py",),
    "assurance/sonnx_mul_assurance/evidence/environment.py": (
        "tests/operator/test_fp_environment.py", "tests/report/test_wg_class_report.py",
    ),
    # The checker's trust rules and conform's comparison (issue 29): each rule is pinned
    # by tests/checker/test_rule_pins.py, tests/checker/test_checker_name_spellings.py and
    # tests/assurance/test_conform_compare.py.
    **MODELS_TARGETS,
    **CONFORM_TARGETS,
    **REPORT_TARGETS,
})  # fmt: skip
"""Each Python target and the tests that check it (fast, targeted).

The report modules (the audit machinery) face the tests of ``tests/report``
(``REPORT_TARGETS``): the gate rules, the outcome reading, the hashing
negative controls and the helpers' tests are written to kill their mutants.
"""

GLUE = glue_build.GLUE
"""The C glue between numpy and the proved kernel (``sonnx_mul._native``)."""

GLUE_FUNCTIONS: tuple[str, ...] = (
    # the overlap/extent check: out must be exactly A or B or share no byte with them
    "extent",  # the byte range an array's elements may touch (any strides, reversed too)
    "same_view",  # "exactly A": the same data, dims, strides and element type
    "aliasing_allowed",  # the decision: exactly the operand, or disjoint extents
    "preconditions",  # applies it to both operands, after the checks it relies on
    # the layout to blocks: which arrays run in one call, which go through the iterator
    "plain",  # native, aligned, contiguous in the one order of all operands
    "contiguous_block",  # every block the kernel gets is contiguous (checked per block)
    "wrap_blocks",  # the wrap/float kernel over the iterator's blocks (strided operands/outs)
    # the checked path: the first overflow in C order for any layout, nothing written
    "scan_blocks",  # a scan over blocks in a given order: the flat index of the first overflow
    "first_overflow",  # memory order says whether, C order says which
    "run",  # the dispatch: one-call vs blocks, checked for Fortran, error returns
    "plain_lane",  # mul's plain lane: which calls skip the full checks, refusals as None
)
"""The functions of ``GLUE`` the glue's mutants are planted in: its strided paths and
its checked path (issue 28). The rest of the file is argument checking (``check_operand``,
``same_shape``), the dtype table and the module's definition; the variant selection and
the import-time checks are ``_native_variants.c``'s."""

GLUE_TESTS: tuple[str, ...] = (
    "tests/operator/test_glue_boundaries.py", "tests/operator/test_out.py",
    "tests/operator/test_isa.py", "tests/operator/test_native.py",
    "tests/operator/test_layout.py", "tests/operator/test_overflow_boundaries.py",
    "tests/operator/test_memory.py", "tests/operator/test_plain_lane.py",
)  # fmt: skip
"""The tests that face the glue's strided and checked paths (the glue's own boundaries,
out= and its aliasing, the ISA argument, every layout with and without out=, checked
mode on every layout and its memory, the plain lane against the full checks), fastest first."""

MAX_C = 100
"""Glue mutants by default (``--max-c``), shared evenly among ``GLUE_FUNCTIONS``."""

EQUIVALENT = Path("proofs/mutants-equivalent.json")
OUT = Path("proofs/out/mutants.json")
COPY_IGNORE = shutil.ignore_patterns(
    ".venv", ".git", "build", "proofs/out", "__pycache__", ".*_cache", "*.egg-info"
)
PY_TIMEOUT = 300
MLW_TIMEOUT = 600
C_TIMEOUT = 300


@dataclass(frozen=True)
class Mutant:
    file: str
    line: int
    start: int  # offset in the file's text
    end: int
    original: str
    replacement: str
    context: str  # the source line, stripped
    col: int  # column in the line
    occurrence: int = 0  # among mutants with the same line text, column and operator
    function: str = ""  # the C function it is in (not part of the key)

    @property
    def key(self) -> str:
        """Stable across edits elsewhere in the file: the line text, the operator."""
        raw = (
            f"{self.file}|{self.context}|{self.col}|{self.original}|{self.replacement}"
            f"|{self.occurrence}"
        )
        return hashlib.sha256(raw.encode()).hexdigest()[:12]

    def apply(self, text: str) -> str:
        assert text[self.start : self.end] == self.original
        return text[: self.start] + self.replacement + text[self.end :]


Outcome = schema.MutantOutcome


# ------------------------------------------------------------------ Python


_PY_OPS = MappingProxyType({
    "<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==",
    "+": "-", "-": "+", "<<": ">>", ">>": "<<", "&": "|", "|": "&",
    "//": "%", "%": "//", "*": "//",
})  # fmt: skip
_PY_NAMES = MappingProxyType({"and": "or", "or": "and", "True": "False", "False": "True"})


def _offsets(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _excluded_spans(tree: ast.AST, starts: list[int]) -> list[tuple[int, int]]:
    """Annotations and docstrings: mutating them changes nothing that runs."""
    spans = []
    for node in ast.walk(tree):
        targets: list[ast.expr | None] = []
        if isinstance(node, ast.arg):
            targets.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            targets.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            targets.append(node.annotation)
        for t in targets:
            if t is not None and t.end_lineno is not None and t.end_col_offset is not None:
                spans.append(
                    (
                        starts[t.lineno - 1] + t.col_offset,
                        starts[t.end_lineno - 1] + t.end_col_offset,
                    )
                )
    return spans


def python_mutants(file: str, text: str) -> list[Mutant]:
    tree = ast.parse(text)
    starts = _offsets(text)
    excluded = _excluded_spans(tree, starts)
    lines = text.splitlines()
    found: list[Mutant] = []

    def add(line: int, col: int, length: int, original: str, replacement: str) -> None:
        start = starts[line - 1] + col
        if any(a <= start < b for a, b in excluded):
            return
        found.append(
            Mutant(
                file,
                line,
                start,
                start + length,
                original,
                replacement,
                lines[line - 1].strip(),
                col,
            )
        )

    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        (line, col), s = tok.start, tok.string
        if tok.type == tokenize.OP and s in _PY_OPS:
            add(line, col, len(s), s, _PY_OPS[s])
        elif tok.type == tokenize.NAME and s in _PY_NAMES:
            add(line, col, len(s), s, _PY_NAMES[s])
        elif tok.type == tokenize.NAME and s == "is":
            add(line, col, 2, "is", "is not")
        elif tok.type == tokenize.NAME and s == "in" and not _after_for(lines[line - 1], col):
            add(line, col, 2, "in", "not in")
        elif tok.type == tokenize.NUMBER and re.fullmatch(r"\d+", s):
            add(line, col, len(s), s, str(int(s) + 1))
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.end_lineno is not None:
            start = starts[node.lineno - 1] + node.col_offset
            end = starts[node.end_lineno - 1] + (node.end_col_offset or 0)
            found.append(
                Mutant(
                    file,
                    node.lineno,
                    start,
                    end,
                    text[start:end],
                    "pass",
                    lines[node.lineno - 1].strip(),
                    node.col_offset,
                )
            )
    return [m for m in found if _compiles(m.apply(text))]


def _after_for(line: str, col: int) -> bool:
    """``in`` of a ``for`` clause (its mutant does not parse)."""
    return re.search(r"\bfor\b[^:]*$", line[:col]) is not None and "if" not in line[:col]


def _compiles(text: str) -> bool:
    try:
        compile(text, "<mutant>", "exec")
    except SyntaxError:
        return False
    return True


# ------------------------------------------------------------------ WhyML

_MLW_RULES: tuple[tuple[str, str | None], ...] = (
    (r"(?<![<\-])<=(?!>)", "<"),
    (r"(?<![<\-])<(?![=\->]|\s*float)", "<="),
    (r">=", ">"),
    (r"(?<![\-<=])>(?!=)", ">="),
    (r"/\\", "\\/"),
    (r"\\/", "/\\"),
    (r"(?<![\w.'])\d+(?![\w.])", None),  # +1
    (r"\bensures\s*\{[^{}]*\}", "ensures { true }"),
    (r"\brequires\s*\{[^{}]*\}", "requires { true }"),
    (r"\binvariant\s*\{[^{}]*\}", "invariant { true }"),
    (r"\braises\s*\{\s*(\w+)[^{}]*?->[^{}]*\}", "raises"),
    (r"\bif\b[^;]*?\bthen raise\b", "if false then raise"),
)


def mlw_mutants(file: str, text: str) -> list[Mutant]:
    # Offsets are kept by strip_comments: a match starts inside a comment
    # where the blanked text differs (no rule's match starts with a blank).
    clean = whyml.strip_comments(text)
    starts = _offsets(text)
    lines = text.splitlines()
    found = []
    for pattern, replacement in _MLW_RULES:
        for m in re.finditer(pattern, text):
            if clean[m.start()] != text[m.start()]:
                continue
            if "< float" in lines[text.count("\n", 0, m.start())]:
                continue  # the format of a float type: the cross-check's job (tables)
            if replacement is None:
                new = str(int(m.group()) + 1)
            elif replacement == "raises":
                new = f"raises {{ {m.group(1)} -> true }}"
            else:
                new = replacement
            if new == m.group():
                continue
            line = next(i for i, s in enumerate(starts) if s > m.start())
            col = m.start() - starts[line - 1]
            found.append(
                Mutant(file, line, m.start(), m.end(), m.group(), new, lines[line - 1].strip(), col)
            )
    return found


def spread(mutants: list[Mutant], limit: int) -> list[Mutant]:
    """At most ``limit`` mutants, evenly spaced over the file (deterministic)."""
    ordered = sorted(mutants, key=lambda m: (m.start, m.replacement))
    seen: dict[tuple[str, int, str, str], int] = {}
    for i, m in enumerate(ordered):
        same = (m.context, m.col, m.original, m.replacement)
        ordered[i] = dataclasses.replace(m, occurrence=seen.get(same, 0))
        seen[same] = seen.get(same, 0) + 1
    if len(ordered) <= limit:
        return ordered
    return [ordered[i * len(ordered) // limit] for i in range(limit)]


# ------------------------------------------------------------------ C (the glue)

_C_TOKEN = re.compile(
    r"0[xX][0-9A-Fa-f]+[uUlL]*|\d+[uUlL]*|[A-Za-z_]\w*"
    r"|->|\+\+|--|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|\S"
)
_C_OPS = MappingProxyType({
    "<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==",
    "+": "-", "-": "+", "+=": "-=", "-=": "+=", "&&": "||", "||": "&&",
})  # fmt: skip
_C_CONTROL = frozenset({"if", "while", "for", "switch"})
_C_NOT_STATEMENTS = frozenset({
    *_C_CONTROL, "do", "else", "case", "default", "goto", "return", "break", "continue",
    "const", "static", "struct", "enum", "unsigned", "signed", "volatile",
})  # fmt: skip


def c_code_mask(text: str) -> str:
    """``text`` with its comments, string and character literals and preprocessor
    lines (continuations included) blanked: what is left is code, at the same offsets."""
    out = list(text)
    n = len(text)

    def blank(a: int, b: int) -> None:
        for j in range(a, b):
            if out[j] != "\n":
                out[j] = " "

    i, line_start = 0, True
    while i < n:
        c = text[i]
        if c == "\n":
            i, line_start = i + 1, True
        elif c in " \t\r\f\v":
            i += 1
        elif line_start and c == "#":
            j = i
            while True:
                end = text.find("\n", j)
                end = n if end < 0 else end
                if end == n or not text[:end].rstrip(" \t\r").endswith("\\"):
                    break
                j = end + 1
            blank(i, end)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            blank(i, end)
            i = end
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            end = min(j + 1, n)
            blank(i, end)
            i, line_start = end, False
        else:
            i, line_start = i + 1, False
    return "".join(out)


def _matching(code: str, at: int) -> int:
    """The offset of the bracket closing the one at ``at`` (code already masked)."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    opening, closing = code[at], pairs[code[at]]
    depth = 0
    for j in range(at, len(code)):
        if code[j] == opening:
            depth += 1
        elif code[j] == closing:
            depth -= 1
            if depth == 0:
                return j
    raise ValueError(f"unbalanced {opening!r} at offset {at}")


def c_functions(code: str) -> dict[str, tuple[int, int]]:
    """Each function definition's name -> the offsets of its body, from ``{`` to
    after ``}`` (``code`` masked by :func:`c_code_mask`)."""
    found: dict[str, tuple[int, int]] = {}
    i = 0
    while True:
        m = re.compile(r"([A-Za-z_]\w*)\s*\(|[{]").search(code, i)
        if m is None:
            return found
        if m.group() == "{":  # a top-level initializer or type body: not a function
            i = _matching(code, m.start()) + 1
            continue
        close = _matching(code, m.end() - 1)
        after = re.compile(r"\s*").match(code, close + 1)
        body = after.end() if after else close + 1
        if body < len(code) and code[body] == "{" and m.group(1) not in _C_CONTROL:
            end = _matching(code, body) + 1
            found[m.group(1)] = (body, end)
            i = end
        else:
            i = close + 1


def _c_statements(tokens: list[re.Match[str]]) -> list[tuple[int, int, str, int]]:
    """(start, end, first token, brace depth in the body) of each statement that
    :func:`c_mutants` may delete: ``return``, ``break``, ``continue`` and expression
    statements (never a declaration, a control statement or a label)."""
    found = []
    parens: list[bool] = []  # for each open parenthesis: a control statement's head?
    depth = 0
    prev = ""
    closed_control = False
    for k, tok in enumerate(tokens):
        s = tok.group()
        start_here = not parens and (prev in (";", "{", "}", "else", "do") or closed_control)
        closed_control = False
        if s == "(":
            parens.append(prev in _C_CONTROL)
        elif s == ")":
            closed_control = parens.pop() if parens else False
        elif s == "{":
            depth += 1
        elif s == "}":
            depth -= 1
        if start_here and s not in ("{", "}", ";"):
            end = _statement_end(tokens, k)
            nxt = tokens[k + 1].group() if k + 1 < len(tokens) else ""
            # a type and a name (``size_t n``, ``PyArrayObject *c``): a declaration
            declaration = re.fullmatch(r"[A-Za-z_]\w*", s) is not None and (
                re.fullmatch(r"[A-Za-z_]\w*", nxt) is not None or nxt == "*"
            )
            jump = s in ("return", "break", "continue")
            expression = s not in _C_NOT_STATEMENTS and not declaration and nxt != ":"
            if (jump or expression) and end is not None:
                found.append((tok.start(), end, s, depth))
        prev = s
    return found


def _statement_end(tokens: list[re.Match[str]], k: int) -> int | None:
    """The offset after the ``;`` that ends the statement starting at token ``k``."""
    depth = 0
    for tok in tokens[k:]:
        s = tok.group()
        if s in "([{" and len(s) == 1:
            depth += 1
        elif s in ")]}" and len(s) == 1:
            depth -= 1
            if depth < 0:
                return None
        elif s == ";" and depth == 0:
            return tok.end()
    return None


def c_mutants(file: str, text: str, functions: tuple[str, ...]) -> list[Mutant]:
    """The C mutants of the bodies of ``functions`` (each must be defined in ``text``):
    comparison flips, ``+``/``-`` (``+=``/``-=``), ``&&``/``||``, decimal constants + 1
    (not an array's size in a declaration), an early ``return`` (one inside a nested
    block), a ``break``/``continue`` or an expression statement deleted (made ``;``).
    Never inside comments, string or character literals or preprocessor lines."""
    code = c_code_mask(text)
    bodies = c_functions(code)
    missing = [f for f in functions if f not in bodies]
    if missing:
        raise ValueError(f"{file}: no definition of {', '.join(missing)}")
    starts = _offsets(text)
    lines = text.splitlines()
    found: list[Mutant] = []

    def add(function: str, start: int, end: int, replacement: str) -> None:
        line = next(i for i, s in enumerate(starts) if s > start)
        found.append(
            Mutant(
                file, line, start, end, text[start:end], replacement,
                lines[line - 1].strip(), start - starts[line - 1], function=function,
            )
        )  # fmt: skip

    for function in functions:
        a, b = bodies[function]
        tokens = list(_C_TOKEN.finditer(code, a, b))
        for k, tok in enumerate(tokens):
            s = tok.group()
            if s in _C_OPS:
                add(function, tok.start(), tok.end(), _C_OPS[s])
            elif re.fullmatch(r"\d+[uUlL]*", s):
                size = k > 0 and tokens[k - 1].group() == "["
                if size and re.match(r"\s*\]\s*=\s*\{", code[tok.end() : b]):
                    continue  # an array's size in its declaration: the initializer fixes it
                digits = re.match(r"\d+", s)
                assert digits is not None
                new = str(int(digits.group()) + 1) + s[digits.end() :]
                add(function, tok.start(), tok.end(), new)
        for start, end, first, depth in _c_statements(tokens):
            if first == "return" and depth <= 1:
                continue  # the function's last word: deleting it falls off its end
            add(function, start, end, ";")
    return found


def spread_functions(mutants: list[Mutant], limit: int) -> list[Mutant]:
    """At most ``limit`` mutants, shared evenly among their functions (a function
    with fewer mutants than its share gives the rest to the others), evenly spaced
    within each function (deterministic)."""
    ordered = spread(mutants, len(mutants))  # numbers the occurrences
    groups: dict[str, list[Mutant]] = {}
    for m in ordered:
        groups.setdefault(m.function, []).append(m)
    quota: dict[str, int] = {}
    left = limit
    for n_left, name in enumerate(sorted(groups, key=lambda f: len(groups[f])), start=0):
        share = left // (len(groups) - n_left)
        quota[name] = min(len(groups[name]), share)
        left -= quota[name]
    chosen = [
        group[i * len(group) // quota[name]]
        for name, group in groups.items()
        for i in range(quota[name])
    ]
    return sorted(chosen, key=lambda m: (m.start, m.replacement))


def _module_of(text: str, offset: int) -> str | None:
    """The last module starting at or before ``offset`` (:func:`whyml.parse`)."""
    line = text.count("\n", 0, offset) + 1
    before = [m.name for m in whyml.parse(text) if m.start <= line]
    return before[-1] if before else None


# ------------------------------------------------------------------ running


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: int) -> tuple[str, str]:
    """("pass" | "fail" | "timeout", tail of the output)."""
    try:
        proc = subprocess.run(
            argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return "timeout", ""
    tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
    return ("pass" if proc.returncode == 0 else "fail"), " | ".join(tail)[-300:]


TIMEOUT_MARGIN = 2
"""A check's unmutated run may take at most its time limit / this. A mutant whose check
then runs past the limit took more than this many times as long: a hang or a slow-down it
planted (a walk made quadratic, a loop that never ends), counted "timeout" among the dead.
With a baseline closer to the limit, a timeout would be the machine's load, not the
mutant's doing: the run refuses to start instead of counting such timeouts as kills."""


def baseline_refusal(verdict: str, tail: str, seconds: float, timeout: int) -> str | None:
    """Why the unmutated run of a check cannot stand as the baseline (None: it can)."""
    if verdict == "timeout":
        return f"timed out after {timeout} s (choose faster tests for the file)"
    if verdict != "pass":
        return f"fails: {tail}"
    if seconds * TIMEOUT_MARGIN > timeout:
        return (
            f"took {seconds:.0f} s, more than 1/{TIMEOUT_MARGIN} of its {timeout} s limit: "
            "a mutant's timeout would not show a hang (choose faster tests for the file)"
        )
    return None


def _judge_timeout(copy: Path, argv: list[str], timeout: int) -> tuple[schema.MutantStatus, str]:
    """A mutant's check timed out: the unmutated check (the copy is restored) runs again
    now. Within half the limit, the mutant took more than twice as long under the same
    load: a kill ("timeout"). Slower (the machine's load grew since the baseline), the
    timeout says nothing of the mutant: it is a survivor, which fails the run until it
    is run again on a quieter machine (``--key``)."""
    began = time.monotonic()
    verdict, tail = _run(argv, copy, _env(copy), timeout)
    return timeout_verdict(verdict, tail, time.monotonic() - began, timeout)


def timeout_verdict(
    verdict: str, tail: str, seconds: float, timeout: int
) -> tuple[schema.MutantStatus, str]:
    """The status of a timed-out mutant given the unmutated check's run just after it."""
    refusal = baseline_refusal(verdict, tail, seconds, timeout)
    if refusal is None:
        return "timeout", f"the unmutated check then took {seconds:.0f} s of its {timeout} s"
    return "survived", f"timed out, but the unmutated check then {refusal}: not a kill"


def checks_for(mutant_file: str, module: str | None) -> list[tuple[list[str], int]]:
    python = sys.executable
    pytest = [python, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider"]
    if mutant_file.endswith(".py"):
        return [([*pytest, *PY_TESTS[mutant_file]], PY_TIMEOUT)]
    if mutant_file == GLUE:  # run on the module rebuilt from the mutated glue (run_mutant)
        return [([*pytest, *GLUE_TESTS], C_TIMEOUT)]
    modules = [module] if module else None
    prove = (
        "import sys; from pathlib import Path; "
        "from sonnx_mul_assurance.why3.driver import run_check; "
        f"sys.exit(run_check(Path('.'), [{mutant_file!r}], modules={modules!r}))"
    )
    return [
        ([python, "-m", "sonnx_mul_assurance.why3.tables", "check"], PY_TIMEOUT),
        ([python, "-c", prove], MLW_TIMEOUT),
    ]


def _env(copy: Path) -> dict[str, str]:
    """The copy's product and tooling first on the path (before the editable installs)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(copy / "src"), str(copy / "assurance")])
    env.pop("PYTEST_XDIST_WORKER", None)
    return env


def _make_copy(root: Path, into: Path, glue: bool = False) -> glue_build.GlueBuild | None:
    """A private copy of ``root`` at ``into``; with ``glue``, the extension built there
    (its build, for the glue's mutants). Checks that the copy's packages (and then its
    extension) are the ones its checks import."""
    shutil.copytree(root, into, ignore=COPY_IGNORE)
    build = glue_build.prepare(into) if glue else None
    modules = ["sonnx_mul", "sonnx_mul_assurance.report", *(["sonnx_mul._native"] if glue else [])]
    code = f"import {', '.join(modules)}; " + "; ".join(f"print({m}.__file__)" for m in modules)
    probe = subprocess.run(
        [sys.executable, "-c", code],
        cwd=into, env=_env(into), capture_output=True, text=True, check=True,
    )  # fmt: skip
    if not all(line.startswith(str(into)) for line in probe.stdout.split()):
        raise RuntimeError(f"the copy's packages are not the ones imported: {probe.stdout}")
    return build


def run_mutant(
    copy: Path,
    mutant: Mutant,
    equivalent: dict[str, str],
    glue: glue_build.GlueBuild | None = None,
) -> Outcome:
    """Plant ``mutant`` in ``copy``, run its checks, restore the copy. A mutant of the
    glue is compiled first (``glue``: the copy's build): one that does not compile is
    "invalid"; the module built from the unmutated glue is put back afterwards."""
    path = copy / mutant.file
    original = path.read_text()
    start = time.monotonic()
    status: schema.MutantStatus = "survived"
    detail = ""
    timed_out: tuple[list[str], int] | None = None  # the check that ran past its limit
    try:
        path.write_text(mutant.apply(original))
        module = _module_of(original, mutant.start) if mutant.file.endswith(".mlw") else None
        built = True
        if mutant.file == GLUE:
            if glue is None:
                raise RuntimeError(f"{GLUE}: a mutant of the glue needs the copy's build")
            built, detail = glue.rebuild()
            status = "survived" if built else "invalid"
        for argv, timeout in checks_for(mutant.file, module) if built else []:
            verdict, tail = _run(argv, copy, _env(copy), timeout)
            if verdict != "pass":
                status, detail = ("timeout" if verdict == "timeout" else "killed"), tail
                timed_out = (argv, timeout) if verdict == "timeout" else None
                break
    finally:
        path.write_text(original)
        if mutant.file == GLUE and glue is not None:
            glue.restore()
    if timed_out is not None:
        status, detail = _judge_timeout(copy, *timed_out)
    if status == "survived" and mutant.key in equivalent:
        status, detail = "equivalent", equivalent[mutant.key]
    return Outcome(
        mutant.key, mutant.file, mutant.line, mutant.original, mutant.replacement,
        mutant.context, status, round(time.monotonic() - start, 1), detail,
    )  # fmt: skip


def generate(
    root: Path,
    max_py: int | None,
    max_mlw: int,
    only: list[str] | None,
    under: list[str] | None = None,
    max_c: int = MAX_C,
) -> list[Mutant]:
    """Mutants of every target, or of the ``only`` files and the targets ``under`` folders;
    ``max_py`` None: each file's :data:`MAX_PY_OF` (default 25); ``max_c`` mutants of
    the glue, shared among :data:`GLUE_FUNCTIONS`."""

    def wanted(file: str) -> bool:
        if only is None and under is None:
            return True
        folders = [u.rstrip("/") + "/" for u in under or []]
        return file in (only or []) or any(file.startswith(f) for f in folders)

    mutants: list[Mutant] = []
    for file in PY_TESTS:
        if wanted(file):
            limit = max_py if max_py is not None else MAX_PY_OF.get(file, 25)
            mutants += spread(python_mutants(file, (root / file).read_text()), limit)
    for mlw in sorted((root / "why3").glob("*.mlw")):
        file = f"why3/{mlw.name}"
        if wanted(file):
            mutants += spread(mlw_mutants(file, mlw.read_text()), max_mlw)
    if wanted(GLUE) and max_c > 0:
        glue = c_mutants(GLUE, (root / GLUE).read_text(), GLUE_FUNCTIONS)
        mutants += spread_functions(glue, max_c)
    return mutants


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sonnx_mul_assurance.mutants")
    parser.add_argument("--root", type=Path, default=Path.cwd())
    parser.add_argument(
        "--max-py", type=int, default=None,
        help="mutants per Python file (default: 25, 12 for models/ and conform/ files)",
    )  # fmt: skip
    parser.add_argument("--max-mlw", type=int, default=6, help="mutants per WhyML file")
    parser.add_argument(
        "--max-c", type=int, default=MAX_C,
        help=f"mutants of the C glue {GLUE}, shared among GLUE_FUNCTIONS (default {MAX_C})",
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
    mutants = generate(root, args.max_py, args.max_mlw, args.file, args.under, args.max_c)
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
        copies: Queue[Path] = Queue()
        files = sorted({m.file for m in mutants})
        builds: dict[Path, glue_build.GlueBuild | None] = {}
        for j in range(args.jobs):
            copy = Path(tmp) / f"copy{j}"
            builds[copy] = _make_copy(root, copy, glue=GLUE in files)
            copies.put(copy)
        baseline_copy = copies.get()
        baseline: dict[tuple[str, ...], tuple[str, int]] = {}
        for file in files:  # the unmutated files must pass their checks (each set once)
            for argv_, timeout in checks_for(file, None):
                baseline.setdefault(tuple(argv_), (file, timeout))
        for argv_t, (file, timeout) in baseline.items():
            began = time.monotonic()
            verdict, tail = _run(list(argv_t), baseline_copy, _env(baseline_copy), timeout)
            refusal = baseline_refusal(verdict, tail, time.monotonic() - began, timeout)
            if refusal is not None:
                print(f"baseline of {file}: {refusal}", file=sys.stderr)
                return 2
        copies.put(baseline_copy)
        print(
            f"{len(mutants)} mutants; baseline passes ({time.monotonic() - start:.0f} s)",
            flush=True,
        )

        def work(mutant: Mutant) -> Outcome:
            copy = copies.get()
            try:
                outcome = run_mutant(copy, mutant, equivalent, builds[copy])
            finally:
                copies.put(copy)
            where = f"{mutant.file}:{mutant.line}"
            change = f"{mutant.original!r} -> {mutant.replacement!r}"
            print(f"{outcome.status:<10} {outcome.seconds:6.1f}s {where} {change} [{mutant.key}]")
            return outcome

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            outcomes = list(pool.map(work, mutants))
    elapsed = time.monotonic() - start
    return report(root, outcomes, elapsed, args.out)


def report(root: Path, outcomes: list[Outcome], elapsed: float, out: Path = OUT) -> int:
    by_file: dict[str, dict[str, int]] = {}
    for o in outcomes:
        counts = by_file.setdefault(o.file, {})
        counts[o.status] = counts.get(o.status, 0) + 1
    dead = sum(o.status in ("killed", "timeout") for o in outcomes)
    equivalent = sum(o.status == "equivalent" for o in outcomes)
    invalid = sum(o.status == "invalid" for o in outcomes)
    survivors = [o for o in outcomes if o.status == "survived"]
    total = len(outcomes)
    counted = total - equivalent - invalid  # a mutant that does not compile tests nothing
    rate = dead / counted if counted > 0 else 1.0
    data = schema.MutantsRecord(
        mutants=total, killed=dead, equivalent=equivalent, survived=len(survivors),
        kill_rate=round(rate, 4), seconds=round(elapsed, 1), by_file=by_file, outcomes=outcomes,
        invalid=invalid,
    )  # fmt: skip
    schema.dump(data, root / out)
    for file, counts in sorted(by_file.items()):
        print(f"  {file}: {counts}")
    for o in survivors:
        print(
            f"SURVIVED {o.key} {o.file}:{o.line} {o.original!r} -> {o.replacement!r}  {o.context}"
        )
    timeouts = sum(o.status == "timeout" for o in outcomes)
    print(
        f"mutants: {total}, killed {dead} ({timeouts} by timeout), equivalent {equivalent}, "
        f"survived {len(survivors)}, "
        f"invalid {invalid}; kill rate {100 * rate:.1f}% of the non-equivalent valid ones; "
        f"{elapsed:.0f} s"
    )
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
