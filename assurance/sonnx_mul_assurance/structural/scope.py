"""What structural coverage builds, runs and measures: the tools, the files, the
test selections and the C harnesses (read by every other module of the package)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from sonnx_mul_assurance.evidence import files

OUT = files.evidence_path(files.COVERAGE)
EXEMPTIONS = Path("proofs/coverage-exemptions.json")
BUILD = Path("build/coverage")
CLANG = "clang-19"
PROFDATA = "llvm-profdata-19"
LLVM_COV = "llvm-cov-19"
COVERAGE_FLAGS = ("-fprofile-instr-generate", "-fcoverage-mapping", "-fcoverage-mcdc")

C_FILES: tuple[str, ...] = (
    "native/src/sonnx_mul_bf16.c",
    "native/src/sonnx_mul_float.c",
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
    "--deselect=tests/checker/test_wire_verdicts.py::"
    "test_verdicts_identical_on_onnx_backend_node_models",
    "--deselect=tests/checker/test_checker_corpus.py::"
    "test_R1_R3_R4_onnx_backend_node_models_agree_with_onnxruntime",
    # a generator run until it has reached every outcome (75 s under tracing)
    "--deselect=tests/checker/test_wire_exactness.py::"
    "test_exactness_generator_reaches_every_outcome",
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


PORTABLE_HARNESS = "native/verify/portable.c"
HARNESSES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {PORTABLE_HARNESS: ("--stride", "61"), "native/example/example.c": ()}
)
"""The C programs run against the instrumented kernel, with their arguments (each
built as ``bin/<stem>``)."""


GCOV_RUN = "native/verify/portable.c --stride 61"
