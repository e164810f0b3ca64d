"""Trusted base, tool qualification data and objectives: DATA for the report.

One place for what the report's "Trusted base" and "Proof subjects" sections
say (the "Objectives" one is :mod:`sonnx_mul_assurance.report.objectives`);
:mod:`sonnx_mul_assurance.report.render` renders them into Markdown and HTML and
:mod:`sonnx_mul_assurance.report.report` copies them into the JSON (:func:`as_json`).
Known issues are public bug reports found by searching the tools' trackers;
each is cited by its address, none is invented. An assessor must still check
the trackers for issues filed later.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from types import MappingProxyType
from typing import Any

from sonnx_mul_assurance.report.objectives import objectives
from sonnx_mul_assurance.report.prose import WpUnit, wp_summary


@dataclass(frozen=True)
class KnownIssue:
    """A public report of a soundness (or correctness) problem in a trusted tool."""

    title: str
    url: str
    relevance: str


@dataclass(frozen=True)
class Component:
    """One trusted component: what the claim relies on it for, and how trust is reduced."""

    name: str
    version_keys: tuple[str, ...]  # keys of the report's "tools" that give its version
    trusted_for: str
    reduced_by: tuple[str, ...]
    known_issues: tuple[KnownIssue, ...] = ()


CVC4 = "CVC4 1.8 (Debian)"
WP_MANIFEST_NAME = "proofs/wp-manifest.json"

TRUSTED_BASE: tuple[Component, ...] = (
    Component(
        "CPython",
        ("python", "python_implementation"),
        "runs the validation, the pure-Python reference kernel (oracle/integers.py, "
        "oracle/softfloat.py) and every check; unbounded int arithmetic of the kernel",
        (
            "the test suite and the agreement tests run on it",
            "oracle/integers.py is the very file Why3 proves (the Python frontend reads what "
            "CPython imports), so only CPython's execution of that subset is trusted",
            "the multiply itself does not run in CPython: one call of the native extension "
            "writes every element (no threads, no buffer arena, no reference counts read)",
        ),
    ),
    Component(
        "gcc (Debian) and the pinned compile flags",
        ("gcc", "native_build"),
        "compiles the native kernel (native/src/*.c) and its glue "
        "(src/sonnx_mul/_native.c) into sonnx_mul._native, the code sonnx_mul.mul runs: "
        "the proofs are about the C source, so the compiler's translation of it is "
        "trusted; the flags pinned in native/flags.mk (-std=c99 -O2 -fno-fast-math "
        "-ffp-contract=off -fexcess-precision=standard, SSE2 arithmetic on x86-64) give "
        "one IEEE rounding per `*`, no contraction into fused multiply-add, float "
        "expressions in their own type; on x86-64 the same proved sources are compiled "
        "twice more with the AVX2 and AVX-512 flags of native/flags.mk (symbols renamed "
        "by the preprocessor, sonnx_mul_rename.h) and one of the three builds is chosen "
        "at run time (the dispatch rule is under 'F16C conversion instructions'); the "
        "exact commands are recorded in the module "
        "(sonnx_mul._native.BUILD_FLAGS) and in this report",
        (
            "compile-time checks in the sources: FLT_EVAL_METHOD == 0, no __FAST_MATH__, "
            "IEEE binary32/binary64 (native/include/sonnx_mul_config.h, _native.c)",
            "the compiled binary is tested bit for bit against numpy's multiply (a "
            "dissimilar implementation) and exact oracles: every int8/uint8 pair and every "
            "float16/bfloat16 pair (make verify-exhaustive), edge and random sets for the "
            "other types, every memory layout (tests/operator/test_native.py)",
            "the binary is hashed in this report and by `sonnx-mul verify-install`; it "
            "is built without debug information (-g0, no build paths in it); that two "
            "builds give the same bytes is not tested",
            "the AVX2/AVX-512 builds are run back to back with the portable build, bit "
            "for bit, on edge and random sets of every type (tests/operator/test_isa.py) "
            "and on every bfloat16 pair (make verify-exhaustive); the built extension "
            "is disassembled and holds no fused multiply-add instruction",
        ),
    ),
    Component(
        "F16C conversion instructions (vcvtph2ps, vcvtps2ph) and the run-time dispatch",
        ("machine",),
        "on an x86-64 CPU with AVX2 and F16C, float16 Mul runs the hardware loop "
        "native/hw/sonnx_mul_f16c.c: the F16C conversions widen the magnitudes exactly, "
        "vmulps multiplies once, vcvtps2ph rounds to nearest even (rounding given in the "
        "instruction), the operands' sign is put back, a NaN becomes the canonical NaN "
        "as in the proved loop. WP proves the loop against sonnx_mul_f16's contract "
        "(vectors, zero-padded tail, bounds, what is written, the NaN rule) from the "
        "admitted contract of its vector operation (mul_block: Frama-C has no model of "
        "the instructions); the values rest on the exhaustive check below. Dispatch "
        "rule, at import (src/sonnx_mul/_native_variants.c): "
        "SONNX_MUL_ISA=portable|avx2|avx512 if set (ImportError if the CPU lacks it), "
        "otherwise the widest the CPU supports per __builtin_cpu_supports: avx512 "
        "(AVX-512 F/BW/VL/DQ, AVX2, F16C), else avx2 (AVX2, F16C), else portable (SSE2); "
        "sonnx_mul._native.isa() names the one in use",
        (
            "verified by exhaustion on the build machine's CPU: all 2^32 float16 pairs "
            "through the compiled hardware loop bit for bit against the proved portable "
            "loop (NaN payloads and signs included) and on a sample against the exact "
            "oracle, the loops' tails included, with planted faults (rounding toward "
            "zero, a NaN's sign) caught first (make verify-exhaustive, "
            "proofs/out/native-exhaustive.json records the CPU)",
            "checked at import on another machine: before a hardware variant is used, "
            "its float16 loop must agree bit for bit with the portable loop on every "
            "signed pair of 40 edge values (ImportError otherwise); the known-answer "
            "self-test runs the selected variant and compares it with the portable "
            "build (`sonnx-mul selftest`)",
            "SONNX_MUL_ISA=portable runs the proved sources only, compiled for SSE2",
        ),
    ),
    Component(
        "The streaming int8/uint8 wrap loop (AVX2 / AVX-512BW, non-temporal stores)",
        ("machine",),
        "on an x86-64 CPU with AVX2 (avx2 variant, 32-byte stores) or AVX-512 F/BW/VL/DQ "
        "(avx512 variant, 64-byte stores), int8 and uint8 Mul in wrap mode with at least "
        "SONNX_MUL_STREAM8_MIN_ELEMENTS (786432) elements in one kernel call runs "
        "native/hw/sonnx_mul_stream8.c: the products are computed by the variant's "
        "WP-proved sonnx_mul_wrap_u8, 2048 at a time into a buffer, which the loop copies "
        "to the result with streaming stores then sfence; WP proves the loop from that "
        "contract and the admitted contracts of its three machine operations (block "
        "copy, head length, fence: intrinsics and non-temporal stores, outside Frama-C's "
        "model); below the threshold, in checked mode and under SONNX_MUL_ISA=portable, "
        "the proved loop writes the result itself",
        (
            "verified by exhaustion on the compiled objects (the extension's own compile "
            "commands): all 2^16 (a, b) pairs of int8 and of uint8, each at every byte "
            "position of a vector, through a buffer longer than the threshold, bit for bit "
            "against the proved portable wrap loops, and every length 1..193 (3 vectors "
            "+ 1) and from 64 before to 193 after one and two whole blocks, at every output "
            "misalignment 0..63 and in place, the bytes around the output unchanged; "
            "planted faults (a block's last vector not copied, the tail skipped) caught "
            "first (make verify-exhaustive, proofs/out/native-exhaustive.json)",
            "checked at import: before a hardware variant is used, its streaming loop, "
            "called directly, must agree bit for bit with the portable loop on all 2^16 "
            "byte pairs with a misaligned output (ImportError otherwise); "
            "tests/operator/test_isa.py runs sizes around the threshold on every variant",
        ),
    ),
    Component(
        "The hardware multiply (CPU floating-point unit and integer multiplier)",
        ("machine",),
        "executes the compiled float32/float64 multiplications (also the one float32 "
        "product of the float16 kernels) as IEEE 754 round-to-nearest-even, with "
        "subnormals kept, and the integer multiplications modulo 2^n (also the "
        "bfloat16 kernel's, which is integer code only)",
        (
            "known-answer self-test at run time, through the native kernel "
            "(`sonnx-mul selftest`, `sonnx_mul.selftest()`: ties to even, subnormal "
            "operands and products, overflow, NaN, signed zero, wrap, checked overflow); "
            "it fails in a process switched to flush-to-zero/denormals-are-zero",
            "the exhaustive float16/bfloat16 runs exercise every product of those types "
            "on this machine's unit",
        ),
    ),
    Component(
        "numpy (C API: array metadata, buffered iterator, dtype casts)",
        ("numpy",),
        "the glue uses numpy's NpyIter to present strided, Fortran-ordered and "
        "byte-swapped operands to the kernel as contiguous native blocks (copying "
        "and byte-swapping into and out of small buffers) and numpy's allocator for "
        "the result; numpy's multiply loops are not used by sonnx_mul.mul",
        (
            "the glue checks on every block that it is contiguous (NPY_ITER_CONTIG) "
            "before the kernel sees it, and re-checks the kernel's preconditions "
            "(element type, shape, out exactly A or B or disjoint) itself",
            "every layout (strided, negative strides, Fortran, byte-swapped, out= of "
            "each layout, aliasing) is tested against numpy's multiply on the same "
            "logical operands, across several buffer blocks",
            "numpy's multiply stays as the second, dissimilar implementation of the "
            "back-to-back tests (SONNX_MUL_KERNEL=numpy selects it for diagnosis only)",
        ),
    ),
    Component(
        "ml_dtypes (the bfloat16 dtype)",
        ("ml_dtypes",),
        "the bfloat16 dtype: its storage (2 bytes, the bit pattern the kernel reads) and "
        "its copy functions when numpy buffers a strided bfloat16 operand",
        (
            "exhaustive bfloat16 run against an exact oracle, through sonnx_mul.mul",
            "known-answer vectors for bfloat16 in the self-test",
        ),
    ),
    Component(
        "Why3 1.5.1 (front end, VC generator, transformations)",
        ("recorded_by_why3/versions/why3", "why3"),
        "turns the WhyML model and oracle/integers.py into verification conditions; a bug here "
        "could make a false statement provable or drop a goal",
        (
            "negative controls: planted faults in copies of the .mlw files and oracle/integers.py "
            "must make the proof fail (the test_why3_negative_*.py files of tests/assurance)",
            "the proof driver fails on a file with zero goals and on any goal missing "
            "from, or added to, proofs/manifest.json",
            "every goal is re-proved from scratch by `make prove` (replay of the manifest)",
        ),
    ),
    Component(
        "Why3 standard library: ieee_float and bv theories",
        ("recorded_by_why3/versions/why3",),
        "the axioms of IEEE 754 floats (ieee_float.Float32/Float64/GenericFloat) and of "
        "bit-vectors (bv.BV8..BV64, BVConverter); an inconsistent axiom would prove anything",
        (
            "the float and bit-vector facts are also checked by execution: exhaustive runs "
            "and known-answer vectors compare against exact oracles",
            "provers that keep Why3's axioms (cvc5-axioms, z3 noBV) and provers that "
            "translate to native SMT floats/bit-vectors are both used, per goal",
        ),
    ),
    Component(
        "Coq (Debian coqc), Flocq (Debian libcoq-flocq) and Why3's Coq realizations",
        (
            "recorded_by_coq/versions/coqc",
            "recorded_by_coq/versions/flocq",
            "recorded_by_coq/versions/realizations",
        ),
        "checks the Coq proofs of the goals of why3/f64_round.mlw (float64's rounding and "
        "the whole binary64 product as an integer function, F-FLOAT): Why3's Coq printer "
        "states each goal in Coq, its realizations (built by proofs/build-why3-coq.sh from "
        "Debian's why3 source) give ieee_float's round its meaning through Flocq's, and "
        "coqc's kernel checks each committed proof in proofs/coq",
        (
            "the check prints every goal again and requires the committed statement and "
            "declarations verbatim, refuses holes and assumptions in the proofs and their "
            "library, and admits no axiom Print Assumptions lists beyond Coq's classical "
            "reals and the theory's own definitions",
            "negative controls: faults planted in the theory's rounding and product make "
            "coqc refuse the committed proofs (tests/assurance/test_coq_proofs.py)",
            "the product function is executed through its computable twin, which the proof "
            "shows equal to it, and compared bit for bit with numpy and the kernel "
            "(tests/assurance/test_f64_mul_bits.py)",
            "the report refuses a coq.json of other inputs, a partial run and, with "
            "--same-tools, other coqc, Flocq or realization versions",
        ),
    ),
    Component(
        "Z3 (PyPI z3-solver binary, and Debian 4.8.12)",
        ("recorded_by_why3/versions/z3", "recorded_by_why3/versions/z3-debian", "z3-solver"),
        "the pinned prover of the Why3 goals proofs/manifest.json pins to `z3` (the PyPI "
        "z3-solver binary of the Python environment, the version requirements/dev.lock "
        "pins) or to `z3-debian` (Debian's 4.8.12), and of the WP goals "
        "proofs/wp-manifest.json pins to 'Z3 4.8.12' (Debian's) or 'Z3 pypi (opaque)'",
        (
            "each goal is decided by the one prover the manifest pins it to, within its "
            "step limit: the check never falls back to another prover",
            "fixed random seeds in proofs/why3.conf.in; binary hashed in this report",
            "negative controls: planted faults in the Why3 files, the C sources and the "
            "header leave their goals unproved with the pinned prover",
        ),
        (
            KnownIssue(
                "Soundness bug in QF_FP (Z3Prover/z3#2827, closed 2020)",
                "https://github.com/Z3Prover/z3/issues/2827",
                "wrong 'unsat' on floating-point formulas: a false float goal could be proved",
            ),
            KnownIssue(
                "Soundness bug in QF_FP (Z3Prover/z3#2925, closed 2020)",
                "https://github.com/Z3Prover/z3/issues/2925",
                "same class, float theory",
            ),
            KnownIssue(
                "soundness bug in fp.to_real (Z3Prover/z3#9471, closed 2026)",
                "https://github.com/Z3Prover/z3/issues/9471",
                "wrong answer with subnormal floats and fp.to_real, as used by t'real",
            ),
            KnownIssue(
                "Incorrect UNSAT in Float32 FP/Real round-trip arithmetic (Z3Prover/z3#9953, open)",
                "https://github.com/Z3Prover/z3/issues/9953",
                "refutational unsoundness mixing Float32 and reals, the shape of the "
                "rounding lemma; reported on a debug build of a development commit",
            ),
        ),
    ),
    Component(
        "Gappa 1.4.1 (Debian)",
        ("recorded_by_why3/versions/gappa",),
        "proves the exactness and range goals of why3/widen.mlw on Why3's real-valued "
        "rounding: float16 and bfloat16 products exact in binary32, float32 products in "
        "binary64, bfloat16 tiny products and overflow threshold",
        (
            "negative controls: a wrong wide format and a lowered bfloat16 bound make the "
            "Gappa goals fail (tests/assurance/test_why3_negative_floats.py)",
            "native-float provers, whose overflowing `round` has an unspecified value, "
            "never prove or back up widen.mlw's float lemmas "
            "(tests/assurance/test_widen_models.py)",
            "the exhaustive float16/bfloat16 runs check the same algorithm by execution",
        ),
    ),
    Component(
        "cvc5 1.0.3 (Debian), native FP and axiom-keeping drivers",
        ("recorded_by_why3/versions/cvc5", "cvc5"),
        "discharges float goals (native SMT floats with --fp-exp) and goals that need "
        "Why3's axioms",
        (
            "each goal is decided by the one prover the manifest pins it to, within its "
            "step limit: the check never falls back to another prover",
            "negative controls; exhaustive runs for the narrow floats",
        ),
        (
            KnownIssue(
                "Add regression filter_soundness_issue.smt2 (cvc5/cvc5#11257, merged 2024)",
                "https://github.com/cvc5/cvc5/pull/11257",
                "a benchmark answered incorrectly 'unsat' since cvc5 1.0.1, fixed later: "
                "the Debian 1.0.3 used here predates the fix",
            ),
            KnownIssue(
                "Incorrect UNSAT without --check-proofs (cvc5/cvc5#12354, closed 2026)",
                "https://github.com/cvc5/cvc5/issues/12354",
                "refutational unsoundness with fp.to_ubv of NaN (floating-point theory)",
            ),
            KnownIssue(
                "CVC4 refutation and solution soundness bugs in QF_FP (cvc5/cvc5#5504)",
                "https://github.com/cvc5/cvc5/issues/5504",
                "wrong answers on fp.mul; the FP solver (SymFPU) is cvc5's ancestor",
            ),
        ),
    ),
    Component(
        CVC4,
        ("recorded_by_why3/versions/cvc4", "cvc4"),
        "the pinned prover of most WP goals that Qed does not close (loop invariants, "
        "bounds, the integer contracts), through WP's driver ('CVC4 1.8') or keeping "
        "Why3's axioms ('CVC4 1.8 (axioms)'); Debian's build has no floating-point "
        "theory. No Why3 goal is pinned to it",
        (
            "each goal is decided by the one prover the manifest pins it to, within its "
            "step limit: the check never falls back to another prover",
            "negative controls: faults planted in copies of the C sources and of the "
            "header leave their goals unproved (tests/assurance/test_wp_negative*.py, "
            "test_spec_clients.py)",
            "the compiled code is tested bit for bit against independent oracles",
        ),
    ),
    Component(
        "C99's modular unsigned conversions and uint64_t product, where WP's model is silent",
        (),
        "WP's model of C integers (Cint) states a conversion to an unsigned type only in "
        "range. The 64-bit wrap contracts are why3/wrap.mlw's bit-vector product under the "
        "axiom to_u64_modular (proofs/wp/spec_clients.c); int64's binary64 checked test "
        "(native/int64_binary64.py, the avx512 build's scan) proves its congruence from the "
        "admitted clauses `modular` of the ghost functions u64_of_i64 and u64_mul, and "
        "int16's block scan (the high and low halves of each product in 16-bit lanes) reads "
        "the bits of negative values through those of u32_of_i32 and u16_of_i16: "
        "C99 6.3.1.3p2 and 6.2.5p9",
        (
            "consistent: the modular function satisfies every Cint axiom of the conversion",
            "each admitted clause is stated at the call that needs it, not as an axiom "
            "over the whole integer unit",
            "the binary64 test's verdict is compared with the halves test's (no such "
            "assumption) on every edge pair and 10^7 random pairs in each x86-64 build "
            "(benchmarks/int64_scan.py, tests/operator/test_int64_scan_probe.py)",
            "the 16-bit block scans' verdicts are compared with the exact products on every "
            "one of the 2^32 pairs of int16 and of uint16, in every x86-64 build "
            "(tests/operator/test_scan16_exhaustive.py, with a planted fault)",
        ),
    ),
    Component(
        "The project's prover drivers and configuration",
        (),
        "proofs/drivers/*.drv, narrowfloat.gen and proofs/why3.conf.in map Why3 symbols to "
        "SMT-LIB; a wrong mapping (e.g. of float16 literals) is a soundness hole",
        (
            "hashed in this report (Artifacts)",
            "goals proved both with native translation and with Why3's axioms where it "
            "matters; negative controls run through the same drivers",
        ),
    ),
    Component(
        "CrossHair (bounded symbolic execution)",
        ("crosshair-tool",),
        "checks PEP 316 contracts on the integer oracle and validators; a BOUNDED search "
        "within per-condition time budgets, not a proof",
        (
            "planted-bug negative controls must be found (tests/assurance/test_crosshair.py)",
            "any counterexample is re-run as plain Python before it is trusted",
        ),
    ),
    Component(
        "onnxruntime and onnxruntime-extensions (the `[onnxruntime]` extra)",
        ("onnxruntime", "onnxruntime-extensions"),
        "when the extra is installed, `sonnx-mul run` runs a model on onnxruntime by "
        "default (sonnx_mul.models.ort): every operator but Mul is onnxruntime's, and "
        "each Mul node is rewritten to a Python custom op of onnxruntime-extensions "
        "(PyOp) that calls sonnx_mul.mul; the Mul inputs and outputs pass through "
        "onnxruntime's tensors and the engine's own dispatcher, which uses the private "
        "module onnxruntime_extensions._ocos. Not used by sonnx_mul.mul itself",
        (
            "the Mul that runs is sonnx_mul.mul: the engine's tests compare every Mul "
            "output with sonnx_mul.mul's and a mixed model's outputs with the reference "
            "engine's, bit for bit (NaN payloads, denormals-as-zero sessions, threads, "
            "feeds in the other byte order; tests/ort/test_ort_engine.py)",
            "types the custom op cannot carry (float16, bfloat16) are refused before any "
            "session exists; `--engine reference` runs other operators on onnx.reference",
            "a new release of either package must be re-measured: tests/ort/ fails if "
            "the bits change",
        ),
    ),
    Component(
        "pytest, hypothesis, onnx reference",
        ("pytest", "hypothesis", "onnx"),
        "run the requirements-based tests and produce the JUnit evidence",
        (
            "each verification step has a planted-fault negative control in the suite",
            "the report fails the gate on any failed or unmapped failed test",
        ),
    ),
)
"""Every component the claim trusts, in the order the report lists them."""


@dataclass(frozen=True)
class Subject:
    """What a proof entry is about."""

    key: str
    label: str
    meaning: str


PROOF_SUBJECTS: Mapping[str, Subject] = MappingProxyType(
    {
        s.key: s
        for s in (
            Subject(
                "whyml-model",
                "WhyML model",
                "a theorem about the Why3 model of Mul (why3/*.mlw): a specification, not "
                "the code that runs",
            ),
            Subject(
                "python-kernel",
                "integer oracle (mul_reference)",
                "a verification condition of src/sonnx_mul/oracle/integers.py, the integer "
                "oracle that mul_reference runs (mul runs the C kernel): Why3's Python "
                "frontend proves the file CPython imports",
            ),
            Subject(
                "python-contracts-bounded",
                "Python contracts (bounded)",
                "a CrossHair contract check on Python code: no counterexample found within "
                "the budget; bounded, not a proof",
            ),
            Subject(
                "native-tested",
                "native kernel (tested)",
                "an exhaustive agreement run of sonnx_mul.mul (the compiled native kernel "
                "that runs) against an exact oracle: every input pair of the type on the "
                "binary itself, tested, not a proof",
            ),
            Subject(
                "native-proved",
                "native C (proved)",
                "the Frama-C WP goals of one C function of native/src, the kernel that "
                "sonnx_mul.mul runs (its ACSL contract, loop annotations and -wp-rte "
                "assertions): a proof of the running code's source, up to the compiler and "
                "the hardware",
            ),
            Subject(
                "native-misra",
                "native C (MISRA)",
                "the MISRA C:2012 check of one C file of native/src or native/hw by "
                "cppcheck's addon: every finding is a recorded, reviewed deviation; a static "
                "check, not a proof",
            ),
            Subject("unknown", "unknown subject", "a proof record of an unrecognised source"),
        )
    }
)
"""Proof subjects by key; every proof item of the report carries one."""


def subject_of(source: str, location: str) -> str:
    """The proof subject key of a proof item from its source and location."""
    path = location.split(":", 1)[0]
    if source == "why3":
        if path.endswith(".mlw"):
            return "whyml-model"
        if path.endswith(".py"):
            return "python-kernel"
    if source == "crosshair":
        return "python-contracts-bounded"
    if source == "exhaustive":
        return "native-tested"
    return "unknown"


def wp_component(units: Sequence[WpUnit]) -> Component:
    """Frama-C WP as a trusted component, with what the manifest says it proves."""
    return Component(
        "Frama-C WP (Debian frama-c-base) and the project's WP driver",
        ("frama-c",),
        "turns the C kernel's ACSL contracts, loop annotations and -wp-rte assertions into "
        "goals and sends each to its pinned prover through Why3 (proofs/wp-why3.conf.in, "
        "proofs/drivers/sonnx_ieee.driver). " + wp_summary(units),
        (
            "every goal is pinned with its prover and step limit, and every function's "
            "statement by the SHA-256 of its printed text (proofs/wp-manifest.json): a "
            "missing, new or changed goal fails the check",
            "contract clients (proofs/wp/spec_clients.c, proofs/wp/float_tie.c): WP proves "
            "the specification's statement of a call from the callee's contract alone (the "
            "integer wrap, checked and first-overflow functions, the float32/float64 "
            "products, the float16/bfloat16 NaN rule, the exported narrowings): against a "
            "weakened contract a client's goal fails, and "
            "update-manifest pins no goal that fails",
            "negative controls: faults planted in copies of the C sources and of the header "
            "leave their goals unproved (tests/assurance/test_wp_negative*.py, "
            "test_spec_clients.py)",
            "the compiled code is tested bit for bit against independent oracles (make "
            "test; every binary32 input of the narrowings and every 16-bit pair in make "
            "verify-exhaustive)",
        ),
    )


def wp_prover_counts(units: Sequence[WpUnit]) -> dict[str, int]:
    """The WP manifest's goals by pinned prover (as the manifest names it)."""
    out: dict[str, int] = {}
    for unit in units:
        for prover, n in unit.provers:
            out[prover] = out.get(prover, 0) + n
    return dict(sorted(out.items()))


def with_wp_counts(component: Component, units: Sequence[WpUnit]) -> Component:
    """``component`` saying how many WP goals the manifest pins to it (the
    provers whose name starts with the component's first word)."""
    word = component.name.split()[0].lower()
    counts = [
        f"{n} goals to '{prover}'"
        for prover, n in wp_prover_counts(units).items()
        if prover.lower().startswith(word)
    ]
    if not counts:
        return component
    said = f"; {WP_MANIFEST_NAME} pins " + ", ".join(counts)
    return replace(component, trusted_for=component.trusted_for + said)


def trusted_base(units: Sequence[WpUnit]) -> tuple[Component, ...]:
    """The trusted base, Frama-C WP's entry rendered from the WP manifest's
    ``units``, and each prover's entry with the WP goals pinned to it."""
    return (*(with_wp_counts(c, units) for c in TRUSTED_BASE), wp_component(units))


def as_json(units: Sequence[WpUnit] = ()) -> dict[str, Any]:
    """The trusted base, proof subjects and objectives as JSON-ready data
    (``units``: the WP manifest's, which the WP entries are rendered from)."""
    return {
        "trusted_base": [asdict(c) for c in trusted_base(units)],
        "proof_subjects": {k: asdict(s) for k, s in PROOF_SUBJECTS.items()},
        "objectives": [asdict(o) for o in objectives(units)],
    }
