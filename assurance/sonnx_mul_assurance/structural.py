"""Structural coverage of the running code by the requirement-based tests (``make coverage``).

What it builds, in ``build/coverage/`` (the venv's gcc build is not touched):

- the extension ``sonnx_mul._native`` by the repository's own ``setup.py``
  (the kernel, its ISA variants, the hardware loops and the glue), every
  compilation and the link through clang-19 with ``-fprofile-instr-generate
  -fcoverage-mapping -fcoverage-mcdc`` (a one-line compiler wrapper, so that
  setup.py's pinned flags stay exactly what they are), installed into a copy
  of ``src/`` that ``PYTHONPATH`` puts before the editable install;
- the portable C harness and the example (``native/verify/portable.c``,
  ``native/example/example.c``) against the kernel compiled the same way.

What it runs: the requirement-based tests (:data:`TESTS`: the operator, the
CLI and the checker; not the proofs' negative controls, the report's or the
documents' tests, which test the tooling, not the product) once under
coverage.py (statements and branches, one context per test) with the CPU's
best ISA variant; :data:`VARIANT_TESTS` again with each other variant the CPU
can run (``SONNX_MUL_ISA``); then the C harnesses.  llvm-cov merges every
run; a line, branch or MC/DC condition of a source compiled several times
(the variants) counts as covered when any of its builds covered it.

What it writes: ``proofs/out/coverage.json`` (:class:`schema.CoverageEvidence`):
per file and per function the statements, branches (decisions) and MC/DC
conditions covered, every uncovered item (a *gap*), and per requirement the
statements and branches of the product's Python covered by the tests that
carry its id (the report's mapping of tests to ids).  coverage.py measures
no MC/DC: Python's MC/DC figures are absent (``None``), not 100 %.

The gate (:func:`gate_problems`, applied by the report): every gap is listed
in :data:`EXEMPTIONS` with its reason, and every exemption still names a gap.

    python -m sonnx_mul_assurance.structural run   [--root DIR]
    python -m sonnx_mul_assurance.structural check [--root DIR]
    python -m sonnx_mul_assurance.structural add-unlisted   # gaps -> exemptions
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from sonnx_mul_assurance.evidence import files, schema

OUT = files.evidence_path(files.COVERAGE)
EXEMPTIONS = Path("proofs/coverage-exemptions.json")
BUILD = Path("build/coverage")
CLANG = "clang-19"
PROFDATA = "llvm-profdata-19"
LLVM_COV = "llvm-cov-19"
COVERAGE_FLAGS = ("-fprofile-instr-generate", "-fcoverage-mapping", "-fcoverage-mcdc")

C_FILES: tuple[str, ...] = (
    "native/src/sonnx_mul_float.c",
    "native/src/sonnx_mul_bf16.c",
    "native/src/sonnx_mul_int.c",
    "native/hw/sonnx_mul_f16c.c",
    "native/hw/sonnx_mul_stream8.c",
    "src/sonnx_mul/_native.c",
    "src/sonnx_mul/_native_module.c",
    "src/sonnx_mul/_native_variants.c",
    "native/include/sonnx_mul_fpenv.h",
    "src/sonnx_mul/_native_isas.h",
)
"""Every C file that runs in the product: the sources, and the headers whose code runs
(the floating-point mode's inline functions, the CPU tests of the variants' macros),
each item counted in the file it is written in."""

PRODUCT = "src/sonnx_mul"
"""The product's Python: every module under it is measured."""

TESTS: tuple[str, ...] = ("tests/operator", "tests/cli", "tests/checker", "tests/ort")
"""The requirement-based tests run against the instrumented build, one pytest
run each: tests/operator puts benchmarks/ on sys.path, whose checker_corpus.py
would shadow the tests' own module of that name in a later checker file."""

DESELECT: tuple[str, ...] = (
    # the flags and the object code of the gcc build the venv installs, not of this one
    "--deselect=tests/operator/test_native.py::test_F_FLOAT_the_build_flags_pin_ieee_semantics",
    "--deselect=tests/operator/test_isa.py::"
    "test_F_CHECKED_only_the_avx512_variant_scans_int64_by_the_binary64_test",
)

SLOW_UNDER_TRACING: tuple[str, ...] = (
    # each runs the checker over ONNX's whole backend node corpus (about 1300
    # models), 60 to 90 s each under coverage.py's tracing, a third of the run's
    # cost; the paths they take are taken by the corpus tests that remain
    "--deselect=tests/checker/test_wire.py::test_verdicts_identical_on_onnx_backend_node_models",
    "--deselect=tests/checker/test_checker_corpus.py::"
    "test_R1_R3_R4_onnx_backend_node_models_agree_with_onnxruntime",
    # a generator run until it has reached every outcome (75 s under tracing)
    "--deselect=tests/checker/test_wire.py::test_exactness_generator_reaches_every_outcome",
)
"""Tests left out of the coverage run for their cost alone (make test runs them);
the items only they would cover are exempted by name (proofs/coverage-exemptions.json)."""

SELECTION: tuple[str, ...] = (
    "-m",
    "not slow and not provers and not external_provers",
    # two workers, whole files each (as make test): coverage.py measures the
    # workers (patch = subprocess) with one context per test
    "-n",
    "2",
    "--dist",
    "loadfile",
    *DESELECT,
    *SLOW_UNDER_TRACING,
    # a fresh pip install of the tree each: they test the gcc build the venv
    # installs, not the instrumented copy, and cost minutes
    "--ignore=tests/cli/test_verify_install.py",
    "--ignore=tests/cli/test_verify_attacks.py",
    "--ignore=tests/cli/test_verify_outside.py",
)
"""The pytest arguments of every run of :data:`TESTS`."""

VARIANT_TESTS: tuple[str, ...] = (
    "tests/operator/test_native.py",
    "tests/operator/test_semantics_float.py",
    "tests/operator/test_semantics_int.py",
)
"""The tests run again under each other ISA variant the CPU can run."""

Kind = Literal["line", "branch", "mcdc"]


# --- parsing llvm-cov and coverage.py ------------------------------------------


@dataclass
class _Tally:
    covered: int = 0
    total: int = 0

    def add(self, hit: bool) -> None:
        self.total += 1
        self.covered += int(hit)

    def count(self) -> schema.CoverageCount:
        return schema.CoverageCount(self.covered, self.total)


def _rel(path: str, root: Path, copy: Path | None = None) -> str:
    p = Path(path)
    for base in (copy, root):
        if base is not None and p.is_relative_to(base):
            return p.relative_to(base).as_posix()
    return path


def lcov_lines(text: str, root: Path) -> dict[str, dict[int, int]]:
    """Line -> execution count, per file (relative to ``root``), from
    ``llvm-cov export -format=lcov``."""
    out: dict[str, dict[int, int]] = {}
    current: dict[int, int] | None = None
    for line in text.splitlines():
        if line.startswith("SF:"):
            current = out.setdefault(_rel(line[3:], root), {})
        elif line.startswith("DA:") and current is not None:
            number, count = line[3:].split(",")[:2]
            current[int(number)] = max(current.get(int(number), 0), int(count))
    return out


def c_coverage(
    export: Mapping[str, Any],
    lines: Mapping[str, Mapping[int, int]],
    root: Path,
    files: Iterable[str],
) -> tuple[list[schema.CoverageFile], list[schema.CoverageGap]]:
    """Per-file and per-function figures and the gaps of ``files``, from llvm-cov's
    JSON export and its lcov lines.  A branch or MC/DC condition at one source
    location is merged over every function compiled from it (the ISA variants).

    An item is counted in the file it is written in: a condition of a macro of a
    measured header (``_native_isas.h``'s CPU tests) in that header, never at the
    same line numbers of the function's own file; an item of a header outside the
    product (Python's, numpy's) is not counted."""
    wanted = list(files)
    data = export["data"][0]
    # location -> [true taken, false taken]; location -> per-condition covered
    branches: dict[str, dict[tuple[int, int, int, int], list[bool]]] = {f: {} for f in wanted}
    mcdc: dict[str, dict[tuple[int, int, int, int], list[bool]]] = {f: {} for f in wanted}
    # function extent -> names (one per build of the source)
    extents: dict[str, dict[tuple[int, int], set[str]]] = {f: {} for f in wanted}
    # a header's items written in macros: line -> the functions expanding them
    expanded_in: dict[str, dict[int, set[str]]] = {f: {} for f in wanted}
    for fn in data["functions"]:
        names = [_rel(n, root) for n in fn["filenames"]]
        if not names or names[0] not in extents or not fn["regions"]:
            continue
        home = names[0]
        short = fn["name"].split(":")[-1]
        first = fn["regions"][0]
        extents[home].setdefault((first[0], first[2]), set()).add(short)
        written: list[tuple[str, tuple[int, int]]] = []  # each branch's file and start
        for b in fn["branches"]:
            # [line, col, end line, end col, true count, false count, file id, expanded id, kind]
            where = names[b[6]]
            written.append((where, (b[0], b[1])))
            if where not in branches:
                continue
            if where != home:
                expanded_in[where].setdefault(b[0], set()).add(short)
            seen = branches[where].setdefault((b[0], b[1], b[2], b[3]), [False, False])
            seen[0] |= b[4] > 0
            seen[1] |= b[5] > 0
        for m in fn.get("mcdc_records", []):
            # [line, col, end line, end col, expanded file id, kind, [condition covered ...]]:
            # no file id; the decision is in the file of the conditions (branches) it spans
            span = ((m[0], m[1]), (m[2], m[3]))
            inside = [w for w, at in written if span[0] <= at <= span[1]]
            where = max(dict.fromkeys(inside), key=inside.count) if inside else home
            if where not in mcdc:
                continue
            conds = m[6]
            seen = mcdc[where].setdefault((m[0], m[1], m[2], m[3]), [False] * len(conds))
            for i, hit in enumerate(conds[: len(seen)]):
                seen[i] |= bool(hit)
    files_out: list[schema.CoverageFile] = []
    gaps: list[schema.CoverageGap] = []
    for rel in wanted:
        if rel not in lines:
            continue
        per_line = lines[rel]
        functions = []
        for (first, last), builds in sorted(extents[rel].items()):
            name = min(builds, key=lambda n: (len(n), n))
            ln, br, mc = _Tally(), _Tally(), _Tally()
            for number, count in per_line.items():
                if first <= number <= last:
                    ln.add(count > 0)
            for loc, seen in branches[rel].items():
                if first <= loc[0] <= last:
                    br.add(seen[0])
                    br.add(seen[1])
            for loc, conds in mcdc[rel].items():
                if first <= loc[0] <= last:
                    for hit in conds:
                        mc.add(hit)
            functions.append(
                schema.CoverageFunction(name, first, ln.count(), br.count(), mc.count())
            )

        def owner(
            number: int,
            functions: list[schema.CoverageFunction] = functions,
            expanded: dict[int, set[str]] = expanded_in[rel],
        ) -> str:
            inside = [f for f in functions if f.line <= number]
            if inside:
                return inside[-1].name
            return min(expanded.get(number, {""}), key=lambda n: (len(n), n))

        ln, br, mc = _Tally(), _Tally(), _Tally()
        for number, count in sorted(per_line.items()):
            ln.add(count > 0)
            if count == 0:
                gaps.append(schema.CoverageGap(rel, owner(number), "line", number, ""))
        for loc, seen in sorted(branches[rel].items()):
            for outcome, hit in zip(("true", "false"), seen, strict=True):
                br.add(hit)
                if not hit:
                    what = f"col {loc[1]}: {outcome} never taken"
                    gaps.append(schema.CoverageGap(rel, owner(loc[0]), "branch", loc[0], what))
        for loc, conds in sorted(mcdc[rel].items()):
            for i, hit in enumerate(conds):
                mc.add(hit)
                if not hit:
                    what = f"col {loc[1]}: condition {i + 1} of {len(conds)} not shown independent"
                    gaps.append(schema.CoverageGap(rel, owner(loc[0]), "mcdc", loc[0], what))
        files_out.append(
            schema.CoverageFile(rel, "c", ln.count(), br.count(), mc.count(), functions)
        )
    return files_out, gaps


def python_coverage(
    report: Mapping[str, Any], root: Path, copy: Path
) -> tuple[list[schema.CoverageFile], list[schema.CoverageGap]]:
    """Per-file and per-function figures and the gaps, from ``coverage json``
    (files measured in the copy ``copy`` are named by their path in ``root``)."""
    files_out: list[schema.CoverageFile] = []
    gaps: list[schema.CoverageGap] = []
    for path, entry in sorted(report["files"].items()):
        rel = _rel(str((root / path) if not Path(path).is_absolute() else path), root, copy)
        rel = rel if rel.startswith(PRODUCT) else f"{PRODUCT}/{rel.split('sonnx_mul/', 1)[-1]}"
        functions = []
        owners: list[tuple[int, int, str]] = []
        for name, fn in entry.get("functions", {}).items():
            if not name:
                continue  # the module's top level
            statements = fn["executed_lines"] + fn["missing_lines"]
            if not statements:
                continue
            arcs = len(fn.get("executed_branches", [])) + len(fn.get("missing_branches", []))
            functions.append(
                schema.CoverageFunction(
                    name,
                    min(statements),
                    schema.CoverageCount(len(fn["executed_lines"]), len(statements)),
                    schema.CoverageCount(len(fn.get("executed_branches", [])), arcs),
                    None,
                )
            )
            owners.append((min(statements), max(statements), name))
        functions.sort(key=lambda f: f.line)

        def owner(number: int, owners: list[tuple[int, int, str]] = owners) -> str:
            inside = [o for o in owners if o[0] <= number <= o[1]]
            return min(inside, key=lambda o: o[1] - o[0])[2] if inside else ""

        for number in entry["missing_lines"]:
            gaps.append(schema.CoverageGap(rel, owner(number), "line", number, ""))
        for start, end in entry.get("missing_branches", []):
            what = f"to {end}" if end > 0 else "to exit"
            gaps.append(schema.CoverageGap(rel, owner(start), "branch", start, what))
        summary = entry["summary"]
        files_out.append(
            schema.CoverageFile(
                rel,
                "python",
                schema.CoverageCount(summary["covered_lines"], summary["num_statements"]),
                schema.CoverageCount(summary["covered_branches"], summary["num_branches"]),
                None,
                functions,
            )
        )
    return files_out, gaps


def python_by_requirement(
    data_file: Path,
    report: Mapping[str, Any],
    contexts_of: Mapping[str, list[str]],
    copy: Path,
) -> dict[str, schema.CoverageRequirement]:
    """Per id: the product's statements and branches covered by the tests carrying it."""
    from coverage import CoverageData

    data = CoverageData(basename=str(data_file))
    data.read()
    out: dict[str, schema.CoverageRequirement] = {}
    for rid, contexts in sorted(contexts_of.items()):
        data.set_query_contexts([f"^{re.escape(c)}$" for c in contexts] or ["^$nothing"])
        lines, branches = _Tally(), _Tally()
        for path, entry in report["files"].items():
            measured = (
                str(copy / path.split("src/", 1)[-1]) if not Path(path).is_absolute() else path
            )
            statements = set(entry["executed_lines"]) | set(entry["missing_lines"])
            arcs = {tuple(a) for a in entry.get("executed_branches", [])} | {
                tuple(a) for a in entry.get("missing_branches", [])
            }
            hit_lines = set(data.lines(measured) or ())
            hit_arcs = set(data.arcs(measured) or ())
            lines.covered += len(statements & hit_lines)
            lines.total += len(statements)
            branches.covered += len(arcs & hit_arcs)
            branches.total += len(arcs)
        out[rid] = schema.CoverageRequirement(len(contexts), lines.count(), branches.count())
    return out


# --- the gate -----------------------------------------------------------------


def gap_key(gap: schema.CoverageGap | schema.CoverageExemption) -> tuple[str, str, int, str]:
    return (gap.file, gap.kind, gap.line, gap.what)


def load_exemptions(path: Path) -> list[schema.CoverageExemption]:
    return schema.load(schema.CoverageExemptions, path).exemptions


def gate_problems(
    evidence: schema.CoverageEvidence, exemptions: list[schema.CoverageExemption]
) -> list[str]:
    """What fails the coverage gate: a run that did not pass, a gap no exemption
    lists, an exemption that lists no gap (stale: the item is now covered or
    gone), an exemption without a reason."""
    problems = [f"coverage run: {e}" for e in evidence.errors]
    if not evidence.files:
        problems.append("coverage run measured no file")
    listed = {gap_key(e): e for e in exemptions}
    gaps = {gap_key(g): g for g in evidence.gaps}
    for key, gap in gaps.items():
        if key not in listed:
            where = f"{gap.file}:{gap.line}" + (f" ({gap.function})" if gap.function else "")
            problems.append(
                f"coverage gap not exempted: {where} {gap.kind}"
                + (f" {gap.what}" if gap.what else "")
            )
    for key, ex in listed.items():
        # the run is deterministic (the same items covered on every run of a
        # tree: Hypothesis derandomized, each test its own context), so an
        # exemption of a covered item is stale whatever its class
        if key not in gaps:
            problems.append(
                f"stale coverage exemption: {ex.file}:{ex.line} {ex.kind} {ex.what} "
                "is covered now or no longer exists"
            )
        if not ex.reason.strip():
            problems.append(f"coverage exemption without a reason: {ex.file}:{ex.line} {ex.kind}")
    return problems


# --- the run ------------------------------------------------------------------


def _run(
    argv: list[str], cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    print("==", " ".join(argv), flush=True)
    return subprocess.run(
        argv, cwd=cwd, env=dict(env) if env else None, text=True, capture_output=True
    )


def _version(exe: str) -> str:
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False).stdout
    return next((line.strip() for line in out.splitlines() if re.search(r"\d+\.\d+", line)), "")


def _isa_variants(root: Path, env: Mapping[str, str]) -> list[str]:
    """The variants this CPU runs (the instrumented module answers), best first."""
    probe = "import sonnx_mul._native as n; print(n.isa(), *n.isas())"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=root, env=dict(env), capture_output=True, text=True
    )
    words = done.stdout.split()
    return list(dict.fromkeys(words))  # the one in use (auto) first


def build(root: Path, work: Path) -> tuple[Path, list[str]]:
    """The instrumented extension in a copy of ``src/`` (returned) and errors."""
    from sonnx_mul_assurance.c.glue_build import DRIVER

    errors: list[str] = []
    if work.exists():
        shutil.rmtree(work)
    (work / "bin").mkdir(parents=True)
    wrapper = work / "bin" / "cc"
    # the coverage flags go last: setup.py's pinned flags stay as they are
    wrapper.write_text(f'#!/bin/sh\nexec {CLANG} "$@" {" ".join(COVERAGE_FLAGS)}\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "CC": str(wrapper), "LDSHARED": f"{wrapper} -shared"}
    record = work / "commands.json"
    done = _run(
        [sys.executable, "-c", DRIVER, str(work / "lib"), str(work / "temp"), str(record)],
        root,
        env,
    )
    if done.returncode != 0:
        return work / "src", [f"instrumented build failed: {done.stderr.strip()[-400:]}"]
    built = Path(json.loads(record.read_text())["output"])
    copy = work / "src"
    shutil.copytree(root / "src", copy, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    shutil.copy2(
        root / built if not built.is_absolute() else built, copy / "sonnx_mul" / built.name
    )
    # the C harnesses, with the kernel compiled the same way (base build)
    flags = subprocess.run(
        [sys.executable, "native/flags.py", CLANG], cwd=root, capture_output=True, text=True
    ).stdout.split()
    kernel = sorted(str(source) for source in (root / "native" / "src").glob("*.c"))
    for harness in HARNESSES:
        exe = work / "bin" / Path(harness).stem
        done = _run(
            [
                CLANG,
                *flags,
                *COVERAGE_FLAGS,
                "-Inative/include",
                harness,
                *kernel,
                "-lm",
                "-o",
                str(exe),
            ],
            root,
        )
        if done.returncode != 0:
            errors.append(f"{harness}: build failed: {done.stderr.strip()[-300:]}")
    return copy, errors


GCOV_RUN = "native/verify/portable.c --stride 61"


def parse_gcov(text: str, root: Path) -> dict[str, schema.CoverageGcov]:
    """``gcov -b`` summaries: per file, lines executed and branches taken."""
    out: dict[str, schema.CoverageGcov] = {}
    name = ""
    counts: dict[str, schema.CoverageCount] = {}
    for line in text.splitlines():
        if line.startswith("File '"):
            name, counts = _rel(line[6:].rstrip("'"), root), {}
        found = re.match(r"(Lines executed|Taken at least once):([\d.]+)% of (\d+)", line)
        if found and name:
            total = int(found.group(3))
            covered = round(float(found.group(2)) * total / 100)
            counts[found.group(1)] = schema.CoverageCount(covered, total)
            if "Lines executed" in counts and "Taken at least once" in counts:
                out[name] = schema.CoverageGcov(
                    counts["Lines executed"], counts["Taken at least once"], GCOV_RUN
                )
                name = ""  # gcov's closing total of every file is no file's
    return out


def gcc_kernel(root: Path, work: Path) -> tuple[dict[str, schema.CoverageGcov], list[str]]:
    """The kernel as gcc builds it (its pinned flags), with ``--coverage``,
    under the portable harness: gcov's statement and branch figures."""
    gdir = work / "gcov"
    gdir.mkdir(parents=True, exist_ok=True)
    flags = subprocess.run(
        [sys.executable, "native/flags.py", "gcc"], cwd=root, capture_output=True, text=True
    ).stdout.split()
    kernel = sorted(str(source) for source in (root / "native" / "src").glob("*.c"))
    harness = str(root / PORTABLE_HARNESS)
    exe = gdir / Path(harness).stem
    steps = [
        ["gcc", *flags, "--coverage", f"-I{root / 'native' / 'include'}", harness, *kernel,
         "-lm", "-o", str(exe)],
        [str(exe), "--stride", "61"],
        ["gcov", "-b", "-n", *(f"portable-{Path(k).stem}.gcda" for k in kernel)],
    ]  # fmt: skip
    done = None
    for argv in steps:
        done = subprocess.run(argv, cwd=gdir, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return {}, [f"gcov run: {argv[0]} exit {done.returncode}: {done.stderr[-300:]}"]
    assert done is not None
    return parse_gcov(done.stdout, root), []


COVERAGE_HOOK = (
    'import os, sys; exec(\'if os.getenv("COVERAGE_PROCESS_CONFIG") '
    'or os.getenv("COVERAGE_PROCESS_START"):\\n import coverage\\n '
    "coverage.process_startup()')\n"
)
"""The start-up hook of the run's interpreter (a ``.pth`` line): in each Python child
of the tests, whose environment names the configuration (``patch = subprocess``),
coverage starts."""


def measuring_venv(work: Path) -> Path:
    """The interpreter the run measures with (``work/venv/bin/python``): a venv of its
    own that reads the product venv's packages (its site directory added first, its
    ``.pth`` files processed) and carries coverage.py's start-up hook, which the
    product venv must not carry (verify-install refuses it, and its tests run on
    that venv, possibly beside this run)."""
    venv = work / "venv"
    if venv.exists():
        shutil.rmtree(venv)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site_dir = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    product = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    (Path(site_dir) / "a0_product.pth").write_text(
        "".join(f"import site; site.addsitedir({p!r})\n" for p in product)
    )
    (Path(site_dir) / "a1_measure.pth").write_text(COVERAGE_HOOK)
    # the product venv's scripts (sonnx-mul, which tests start beside their
    # interpreter), started by this interpreter instead of the product's
    product_bin = Path(sys.executable).parent
    shebang = f"#!{product_bin / 'python'}"
    for script in sorted(product_bin.iterdir()):
        if script.name.startswith("python") or not script.is_file():
            continue
        head, _, body = script.read_bytes().partition(b"\n")
        if head.decode("utf-8", "replace") == shebang:
            copy = venv / "bin" / script.name
            copy.write_bytes(f"#!{python}\n".encode() + body)
            copy.chmod(0o755)
    return python


PORTABLE_HARNESS = "native/verify/portable.c"
HARNESSES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {PORTABLE_HARNESS: ("--stride", "61"), "native/example/example.c": ()}
)
"""The C programs run against the instrumented kernel, with their arguments (each
built as ``bin/<stem>``)."""


def run(root: Path, out: Path = OUT, tests: tuple[str, ...] = TESTS) -> int:
    """Build, run and write ``out``; 1 when any step failed (the file says which)."""
    start = time.perf_counter()
    work = root / BUILD
    copy, errors = build(root, work)
    prof = work / "profiles"
    prof.mkdir(parents=True, exist_ok=True)
    python = measuring_venv(work)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(copy), os.environ.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        ),
        "LLVM_PROFILE_FILE": str(prof / "py-%p-%m.profraw"),
        "COVERAGE_FILE": str(work / ".coverage"),
        # derandomized hypothesis (tests/conftest.py): the same items covered each run
        "HYPOTHESIS_PROFILE": "coverage",
    }
    rc = work / "coveragerc"
    rc.write_text(
        "[run]\nbranch = True\nparallel = True\n"
        f"source = {copy / 'sonnx_mul'}\n"
        # the tests' contexts are their node ids (tests/conftest.py switches them);
        # the tests' Python children are measured too (patch = subprocess)
        "patch = subprocess\n"
    )
    timings: dict[str, float] = {}
    variants = _isa_variants(root, env)
    junits: list[Path] = []
    runs: list[tuple[str, list[str], dict[str, str]]] = []
    for index, selection in enumerate(tests):
        junits.append(work / f"pytest-{index}.xml")
        runs.append((selection, [selection, *SELECTION, f"--junitxml={junits[-1]}"], env))
    for variant in variants[1:]:
        junits.append(work / f"pytest-{variant}.xml")
        runs.append(
            (
                f"SONNX_MUL_ISA={variant}",
                [*VARIANT_TESTS, *DESELECT, f"--junitxml={junits[-1]}"],
                {**env, "SONNX_MUL_ISA": variant},
            )
        )
    for name, args, run_env in runs:
        t0 = time.perf_counter()
        done = _run(
            [
                str(python),
                "-m",
                "coverage",
                "run",
                f"--rcfile={rc}",
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                *args,
            ],
            root,
            run_env,
        )
        timings[name] = time.perf_counter() - t0
        print(done.stdout[-1500:], flush=True)
        if done.returncode != 0:
            errors.append(f"{name}: pytest exit {done.returncode}: {done.stdout.strip()[-300:]}")
    t0 = time.perf_counter()
    for source, harness_args in HARNESSES.items():
        harness = Path(source).stem
        exe = work / "bin" / harness
        if not exe.is_file():
            continue
        done = _run(
            [str(exe), *harness_args],
            root,
            {**os.environ, "LLVM_PROFILE_FILE": str(prof / f"{harness}.profraw")},
        )
        if done.returncode != 0:
            errors.append(f"{harness}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
    timings["C harnesses"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    gcov, gcov_errors = gcc_kernel(root, work)
    errors += gcov_errors
    timings["gcc gcov"] = time.perf_counter() - t0
    return collect(root, out, _Run(tests, variants, junits, timings, errors, gcov, start))


@dataclass
class _Run:
    """What the runs of :func:`run` leave for :func:`collect`."""

    tests: tuple[str, ...]
    variants: list[str]
    junits: list[Path]
    timings: dict[str, float]
    errors: list[str]
    gcov: dict[str, schema.CoverageGcov]
    start: float


def collect(root: Path, out: Path, state: _Run) -> int:
    """Merge the profiles and coverage.py's data of ``build/coverage`` and write ``out``."""
    work = root / BUILD
    copy, prof = work / "src", work / "profiles"
    tests, variants, junits = state.tests, state.variants, state.junits
    timings, errors, gcov, start = state.timings, state.errors, state.gcov, state.start
    env = {**os.environ, "COVERAGE_FILE": str(work / ".coverage")}
    rc = work / "coveragerc"
    # merge and export
    t0 = time.perf_counter()
    merged = work / "merged.profdata"
    raws = sorted(str(p) for p in prof.glob("*.profraw"))
    done = _run([PROFDATA, "merge", "-sparse", "-o", str(merged), *raws], root)
    if done.returncode != 0:
        errors.append(f"llvm-profdata merge: {done.stderr.strip()[-300:]}")
    module = next((copy / "sonnx_mul").glob("_native*.so"))
    objects = [
        str(module),
        *(
            f"-object={work / 'bin' / Path(h).stem}"
            for h in HARNESSES
            if (work / "bin" / Path(h).stem).is_file()
        ),
    ]
    sources = [str(root / f) for f in C_FILES]
    export = subprocess.run(
        [LLVM_COV, "export", *objects, f"-instr-profile={merged}", *sources],
        capture_output=True,
        text=True,
        check=False,
    )
    lcov = subprocess.run(
        [LLVM_COV, "export", "-format=lcov", *objects, f"-instr-profile={merged}", *sources],
        capture_output=True,
        text=True,
        check=False,
    )
    c_files: list[schema.CoverageFile] = []
    c_gaps: list[schema.CoverageGap] = []
    if export.returncode != 0 or lcov.returncode != 0:
        errors.append(f"llvm-cov export: {(export.stderr + lcov.stderr).strip()[-300:]}")
    else:
        c_files, c_gaps = c_coverage(
            json.loads(export.stdout), lcov_lines(lcov.stdout, root), root, C_FILES
        )
        missing = sorted(set(C_FILES) - {f.path for f in c_files})
        errors += [f"{m}: no coverage recorded (not built or never linked)" for m in missing]
    # Python
    cov = [sys.executable, "-m", "coverage"]
    subprocess.run([*cov, "combine", f"--rcfile={rc}", "-q"], cwd=root, env=env, check=False)
    pyjson = work / "python.json"
    done = _run([*cov, "json", f"--rcfile={rc}", "-o", str(pyjson), "-q"], root, env)
    py_files: list[schema.CoverageFile] = []
    py_gaps: list[schema.CoverageGap] = []
    requirements: dict[str, schema.CoverageRequirement] = {}
    if done.returncode != 0:
        errors.append(f"coverage json: {done.stderr.strip()[-300:]}")
    else:
        report = json.loads(pyjson.read_text())
        py_files, py_gaps = python_coverage(report, root, copy)
        contexts = _contexts_by_requirement(root, work / ".coverage", junits)
        requirements = python_by_requirement(work / ".coverage", report, contexts, copy)
    timings["merge and export"] = time.perf_counter() - t0
    evidence = schema.CoverageEvidence(
        tools={
            "clang": _version(CLANG),
            "llvm-cov": _version(LLVM_COV),
            "coverage.py": _coverage_version(),
            "python": platform.python_version(),
        },
        build=f"{CLANG} with {' '.join(COVERAGE_FLAGS)} after the pinned flags (native/flags.mk); "
        "the product as installed is built by gcc",
        tests=f"{' '.join(tests)}, each run {' '.join(SELECTION)}",
        isa_variants=variants,
        variant_tests=" ".join(VARIANT_TESTS),
        harnesses=[" ".join((source, *args)) for source, args in HARNESSES.items()],
        files=[*c_files, *py_files],
        gaps=[*c_gaps, *py_gaps],
        requirements=requirements,
        seconds=time.perf_counter() - start,
        timings=timings,
        errors=errors,
        cpu_seconds=_children_cpu(),
        gcov=gcov,
        environment=next((e for e in map(schema.junit_environment, junits) if e is not None), None),
    )
    schema.dump(evidence, root / out)
    print(summary(evidence))
    return 0 if not errors else 1


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return round(usage.ru_utime + usage.ru_stime, 1)


def _coverage_version() -> str:
    import coverage

    return str(coverage.__version__)


def _contexts_by_requirement(
    root: Path, data_file: Path, junit: list[Path]
) -> dict[str, list[str]]:
    """Per id, the coverage contexts (tests) that carry it, mapped as the report
    maps test cases to ids (their names and the markers of their files)."""
    from coverage import CoverageData

    from sonnx_mul.requirements import REGISTRY
    from sonnx_mul_assurance.report.evidence import testcase_items
    from sonnx_mul_assurance.report.markers import scan

    markers, _ = scan(root, set(REGISTRY))
    items, _ = testcase_items([p for p in junit if p.is_file()], root, markers, list(REGISTRY))
    by_case: dict[str, set[str]] = {}
    for item in items:
        by_case.setdefault(item.name or "", set()).update(item.ids)
    data = CoverageData(basename=str(data_file))
    data.read()
    out: dict[str, list[str]] = {}
    for context in sorted(data.measured_contexts()):
        for rid in sorted(by_case.get(junit_name(context), ())):
            out.setdefault(rid, []).append(context)
    return out


def junit_name(nodeid: str) -> str:
    """A pytest node id as the report names its JUnit case (``classname::name``):
    ``tests/operator/test_isa.py::Class::test_y[1]`` is
    ``tests.operator.test_isa.Class::test_y[1]``."""
    path, _, rest = nodeid.partition("::")
    parts = rest.split("::") if rest else [""]
    module = path.removesuffix(".py").replace("/", ".")
    return "::".join([".".join([module, *parts[:-1]]), parts[-1]])


def summary(evidence: schema.CoverageEvidence) -> str:
    def pct(c: schema.CoverageCount | None) -> str:
        if c is None:
            return "n/a"
        return f"{c.covered}/{c.total}" + (
            f" ({100 * c.covered / c.total:.1f} %)" if c.total else ""
        )

    lines = ["== coverage (statements | branches | MC/DC conditions)"]
    for f in evidence.files:
        lines.append(f"  {f.path:<45} {pct(f.lines):>20} {pct(f.branches):>20} {pct(f.mcdc):>16}")
    lines.append(
        f"  gaps: {len(evidence.gaps)}; {evidence.seconds:.0f} s (CPU {evidence.cpu_seconds:.0f} s)"
    )
    lines += [f"  ERROR {e}" for e in evidence.errors]
    return "\n".join(lines)


def check(root: Path, out: Path = OUT) -> int:
    """The gate alone on an existing coverage.json (what the report applies)."""
    evidence = schema.load(schema.CoverageEvidence, root / out)
    problems = gate_problems(evidence, load_exemptions(root / EXEMPTIONS))
    for p in problems:
        print(p)
    print(summary(evidence))
    return 1 if problems else 0


def add_unlisted(root: Path, out: Path = OUT) -> int:
    """Add every gap no exemption lists to the exemption file, as ``not-analysed``
    (never removes one: a stale exemption is for a person to delete).  The
    report's A-7 row counts these as missing until someone states the reason."""
    evidence = schema.load(schema.CoverageEvidence, root / out)
    path = root / EXEMPTIONS
    current = load_exemptions(path) if path.is_file() else []
    listed = {gap_key(e) for e in current}
    added = [
        schema.CoverageExemption(
            g.file,
            g.function,
            g.kind,
            g.line,
            g.what,
            "not-analysed",
            "uncovered when listed; not yet analysed (a test to write, or a reason to state)",
        )
        for g in evidence.gaps
        if gap_key(g) not in listed
    ]
    merged = sorted([*current, *added], key=lambda e: (e.file, e.line, e.kind, e.what))
    schema.dump(schema.CoverageExemptions(1, merged), path)
    print(f"{len(added)} exemption(s) added as not-analysed; {len(merged)} in {EXEMPTIONS}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("command", choices=("run", "collect", "check", "add-unlisted"))
    parser.add_argument("--root", type=Path, default=Path.cwd())
    parser.add_argument(
        "tests", nargs="*", help="run: other test paths than TESTS (recorded in the file)"
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.command == "check":
        return check(root)
    if args.command == "add-unlisted":
        return add_unlisted(root)
    if args.command == "collect":  # again from build/coverage, without running anything
        work = root / BUILD
        junits = sorted(work.glob("pytest*.xml"))
        # the probe imports the instrumented module: its profile goes aside
        probe = str(work / "probe.profraw")
        env = {**os.environ, "PYTHONPATH": str(work / "src"), "LLVM_PROFILE_FILE": probe}
        state = _Run(TESTS, _isa_variants(root, env), junits, {}, [], {}, time.perf_counter())
        return collect(root, OUT, state)
    return run(root, tests=tuple(args.tests) or TESTS)


if __name__ == "__main__":
    sys.exit(main())
