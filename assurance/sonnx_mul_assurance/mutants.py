"""Mutation testing behind ``make mutants``: do the checks kill planted faults?

``python -m sonnx_mul_assurance.mutants [--max-py N] [--max-mlw N] [--jobs J]
[--file F ...] [--under DIR ...] [--out FILE]``
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
  ``if false then raise``; never inside comments.

Each mutant runs in a private copy of the repository (``PYTHONPATH`` points
at the copy's ``src``, checked), against the fast checks of its file: the
targeted tests (``pytest -x``) for Python, ``tables check`` plus the Why3
proof of the mutated module for WhyML. A failing check kills it; a check
running past the time limit counts as killed ("timeout"); a mutant that
does not compile is dropped ("invalid"). The unmutated copy must pass every
check first. Survivors are matched against ``proofs/mutants-equivalent.json``
(mutant key -> why it is equivalent); the run fails (exit 1) on any
survivor not listed there. Results: ``proofs/out/mutants.json``.
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
    # What the report reads through: the evidence schema and the WhyML reader.
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
    "tests/checker/test_rule_pins.py", "tests/checker/test_checker_issue29.py",
    "tests/checker/test_checker_issue21.py", "tests/checker/test_onnx_checker.py",
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
        "tests/checker/test_checker_issue21.py",
    ),
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
    "src/sonnx_mul/models/wire.py": (
        "tests/checker/test_fuzz_models.py", "tests/checker/test_wire.py",
        "tests/checker/test_hostile_models.py",
    ),
    # The checker's trust rules and conform's comparison (issue 29): each rule is pinned
    # by tests/checker/test_rule_pins.py, tests/checker/test_checker_issue29.py and
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

EQUIVALENT = Path("proofs/mutants-equivalent.json")
OUT = Path("proofs/out/mutants.json")
COPY_IGNORE = shutil.ignore_patterns(
    ".venv", ".git", "build", "proofs/out", "__pycache__", ".*_cache", "*.egg-info"
)
PY_TIMEOUT = 300
MLW_TIMEOUT = 600


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


def checks_for(mutant_file: str, module: str | None) -> list[tuple[list[str], int]]:
    python = sys.executable
    if mutant_file.endswith(".py"):
        tests = list(PY_TESTS[mutant_file])
        argv = [python, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider", *tests]
        return [(argv, PY_TIMEOUT)]
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


def _make_copy(root: Path, into: Path) -> Path:
    shutil.copytree(root, into, ignore=COPY_IGNORE)
    code = (
        "import sonnx_mul, sonnx_mul_assurance.report; "
        "print(sonnx_mul.__file__); print(sonnx_mul_assurance.report.__file__)"
    )
    probe = subprocess.run(
        [sys.executable, "-c", code],
        cwd=into, env=_env(into), capture_output=True, text=True, check=True,
    )  # fmt: skip
    if not all(line.startswith(str(into)) for line in probe.stdout.split()):
        raise RuntimeError(f"the copy's packages are not the ones imported: {probe.stdout}")
    return into


def run_mutant(copy: Path, mutant: Mutant, equivalent: dict[str, str]) -> Outcome:
    path = copy / mutant.file
    original = path.read_text()
    start = time.monotonic()
    status: schema.MutantStatus = "survived"
    detail = ""
    try:
        path.write_text(mutant.apply(original))
        module = _module_of(original, mutant.start) if mutant.file.endswith(".mlw") else None
        for argv, timeout in checks_for(mutant.file, module):
            verdict, tail = _run(argv, copy, _env(copy), timeout)
            if verdict != "pass":
                status, detail = ("timeout" if verdict == "timeout" else "killed"), tail
                break
    finally:
        path.write_text(original)
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
) -> list[Mutant]:
    """Mutants of every target, or of the ``only`` files and the targets ``under`` folders;
    ``max_py`` None: each file's :data:`MAX_PY_OF` (default 25)."""

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
    return mutants


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sonnx_mul_assurance.mutants")
    parser.add_argument("--root", type=Path, default=Path.cwd())
    parser.add_argument(
        "--max-py", type=int, default=None,
        help="mutants per Python file (default: 25, 12 for models/ and conform/ files)",
    )  # fmt: skip
    parser.add_argument("--max-mlw", type=int, default=6, help="mutants per WhyML file")
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
    mutants = generate(root, args.max_py, args.max_mlw, args.file, args.under)
    if args.key:
        mutants = [m for m in mutants if m.key in args.key]
    if args.list:
        for m in mutants:
            print(f"{m.key} {m.file}:{m.line} {m.original!r} -> {m.replacement!r}  {m.context}")
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
        for j in range(args.jobs):
            copies.put(_make_copy(root, Path(tmp) / f"copy{j}"))
        files = sorted({m.file for m in mutants})
        baseline_copy = copies.get()
        baseline: dict[tuple[str, ...], tuple[str, int]] = {}
        for file in files:  # the unmutated files must pass their checks (each set once)
            for argv_, timeout in checks_for(file, None):
                baseline.setdefault(tuple(argv_), (file, timeout))
        for argv_t, (file, timeout) in baseline.items():
            verdict, tail = _run(list(argv_t), baseline_copy, _env(baseline_copy), timeout)
            if verdict != "pass":
                print(f"baseline fails for {file}: {tail}", file=sys.stderr)
                return 2
        copies.put(baseline_copy)
        print(
            f"{len(mutants)} mutants; baseline passes ({time.monotonic() - start:.0f} s)",
            flush=True,
        )

        def work(mutant: Mutant) -> Outcome:
            copy = copies.get()
            try:
                outcome = run_mutant(copy, mutant, equivalent)
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
    survivors = [o for o in outcomes if o.status == "survived"]
    total = len(outcomes)
    rate = dead / (total - equivalent) if total > equivalent else 1.0
    data = schema.MutantsRecord(
        mutants=total, killed=dead, equivalent=equivalent, survived=len(survivors),
        kill_rate=round(rate, 4), seconds=round(elapsed, 1), by_file=by_file, outcomes=outcomes,
    )  # fmt: skip
    schema.dump(data, root / out)
    for file, counts in sorted(by_file.items()):
        print(f"  {file}: {counts}")
    for o in survivors:
        print(
            f"SURVIVED {o.key} {o.file}:{o.line} {o.original!r} -> {o.replacement!r}  {o.context}"
        )
    print(
        f"mutants: {total}, killed {dead}, equivalent {equivalent}, survived {len(survivors)}; "
        f"kill rate {100 * rate:.1f}% of non-equivalent; {elapsed:.0f} s"
    )
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
