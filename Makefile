# sonnx-mul: two commands on a fresh machine: `make prove` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
NATIVE := $(VENV)/.native-built

.PHONY: install test test-debian-python lint check provers toolchains check-targets verify-targets coverage generate prove verify-exhaustive report-release report-screenshot mutants mutants-glue mutants-report mutants-models mutants-verify mutants-hostile bench fuzz trace-html clean c-kernel

$(STAMP): pyproject.toml assurance/pyproject.toml requirements/dev.lock
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c requirements/dev.lock -e '.[dev]' -e ./assurance
	# coverage.py's wheel installs a start-up hook (a1_coverage.pth starts coverage
	# in any process whose environment names a configuration): verify-install
	# rightly refuses it, and its tests run on this venv.  make coverage measures
	# with an interpreter of its own that carries the hook (build/coverage/venv).
	rm -f $(VENV)/lib/python3*/site-packages/a1_coverage.pth
	touch $(STAMP)

install: $(NATIVE)

# The negative controls of the proofs need why3 and the provers too.
# PYTEST_SELECT narrows the run (test-debian-python's selection).  A whole
# passing run is recorded with the tree's fingerprint (proofs/out/suite/):
# make prove then takes its JUnit as evidence instead of running the same
# tests on the same tree again (sonnx_mul_assurance.suite).
PYTEST_SELECT ?=
test: provers toolchains $(NATIVE)
	$(PY) -m sonnx_mul_assurance.suite test $(PYTEST_SELECT)

# `make test` again with Debian's own python3 first on PATH (any CPython 3.11
# must pass it; Debian's ships a sitecustomize.py of its own, the
# interpreter's start-up hook, and strips ensurepip), but for the files marked
# external_provers: their verdict is Why3's, Frama-C's or cppcheck's (child
# processes) and they import nothing of the product themselves (the tooling
# they call reads its type table and hash helper, which the run tests
# directly), so the interpreter that starts them does not decide it; make test and make prove run them (they
# were 1330 of the suite's 1912 test-seconds).  In a copy of the tree
# under build/, as a fresh clone would be: its venv is made by the `python3`
# that PATH finds, its extension built by that interpreter, and neither the
# default venv nor src/ is touched.  The run refuses to start when that venv's
# interpreter is not the one asked for.
DEBIAN_PYTHON ?= /usr/bin/python3
DEBIAN_TREE   ?= build/debian-python
DEBIAN_FIRST  := PATH="$(dir $(DEBIAN_PYTHON)):$$PATH"
DEBIAN_SELECT := -m "not external_provers"
test-debian-python:
	sh tools/debian-python-prereqs.sh $(DEBIAN_PYTHON)
	rm -rf $(DEBIAN_TREE)
	mkdir -p $(DEBIAN_TREE)
	git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t $(DEBIAN_TREE)
	cd $(DEBIAN_TREE) && $(DEBIAN_FIRST) $(MAKE) --no-print-directory $(VENV)/.installed
	cd $(DEBIAN_TREE) && $(VENV)/bin/python -c 'import os, sys; base = os.path.realpath(sys._base_executable); want = os.path.realpath(sys.argv[1]); print("python", sys.version.split()[0], "from", base); sys.exit(0 if base == want else f"venv interpreter {base} is not {want}")' $(DEBIAN_PYTHON)
	cd $(DEBIAN_TREE) && $(DEBIAN_FIRST) $(MAKE) --no-print-directory test PYTEST_SELECT='$(DEBIAN_SELECT)'

lint: $(NATIVE)
	$(VENV)/bin/ruff check src assurance tests benchmarks examples native scripts/sonnx-mul
	$(VENV)/bin/ruff format --check src assurance tests benchmarks examples native scripts/sonnx-mul
	$(VENV)/bin/mypy
	$(PY) -m sonnx_mul_assurance.report lint

# The edit-test loop, without root and without the provers: lint, then every
# test but those marked needs_prover (they start Why3, Frama-C, cppcheck, clang,
# a cross compiler or qemu-user, which make provers and make toolchains install
# as root).  make test still runs everything; tests/prover_audit.py fails a test
# that starts one of those tools unmarked.  Not recorded as a suite run.
CHECK_SELECT := -m "not needs_prover"
check: lint
	$(PY) -m pytest -q -p no:cacheprovider -n 2 --dist loadfile $(CHECK_SELECT) tests

# Why3 and the Debian provers (apt-get as root; otherwise it prints the command),
# then Why3's Coq realizations of ieee_float compiled into build/why3-coq
# (from Debian's why3 source package; skipped when already built).
provers:
	sh proofs/install-provers.sh
	sh proofs/build-why3-coq.sh

# Structural coverage (statements, branches, MC/DC) of the kernel, its ISA
# variants, hardware loops and glue (clang-19 instrumented, build/coverage/;
# the venv's gcc build is not touched) and of the product's Python
# (coverage.py) by the requirement-based tests; writes proofs/out/coverage.json,
# then applies its gate (proofs/coverage-exemptions.json).  make prove runs it.
coverage: toolchains $(NATIVE)
	$(PY) -m sonnx_mul_assurance.structural run
	$(PY) -m sonnx_mul_assurance.structural check

# Every generated file, written again by its generator (native/generate.py for
# the C kernel, the registry for the rest); make prove checks them first.
generate: $(STAMP)
	$(PY) -m sonnx_mul_assurance.generate

# The main job: Why3 proofs, CrossHair contracts, Frama-C WP and the MISRA check
# of the C kernel, tests and agreement checks, structural coverage, then the
# traceability report into proofs/out/ with its gate.
prove: provers toolchains $(NATIVE)
	$(PY) -m sonnx_mul_assurance.pipeline

# Every pair of int8/uint8 (both modes) and of float16/bfloat16 (2**32 each)
# against exact oracles; writes proofs/out/exhaustive.json (the report uses it).
# Then the native kernel's compiled float16/bfloat16 code: every binary32
# input of both narrowings and every pair of sonnx_mul_f16/bf16 (2**32 each)
# against independent oracles (proofs/out/native-exhaustive.json).
verify-exhaustive: $(NATIVE)
	$(PY) -m sonnx_mul_assurance.python.exhaustive
	$(PY) -m sonnx_mul_assurance.c.native_exhaustive

# Release gate: the report again, failing when exhaustive.json or
# native-exhaustive.json is absent (run make prove and make verify-exhaustive
# first; see docs/assurance/report.md).
report-release: $(NATIVE)
	$(PY) -m sonnx_mul_assurance.report report --out proofs/out --require exhaustive --require native-exhaustive --same-tools

# The report in a real browser: headless Debian chromium screenshots of the
# table of contents and of the page an evidence link opens (after make prove),
# and docs/report-screenshots/screenshots.json, what they show (checked for
# staleness by tests/report/test_screenshots.py).
report-screenshot:
	PYTHON=$(PY) sh tools/report/screenshot.sh proofs/out docs/report-screenshots

# Mutation testing of the checks (Python, WhyML and C mutants, each against its
# file's fast checks; the C ones in the glue's strided and checked paths, each
# rebuilt glue-only in its copy; see docs/lab/mutation-testing.md for the kill rate and the
# equivalent survivors); the targets and their tests are tests/mutation-targets.toml;
# writes proofs/out/mutants.json, fails on an unexplained survivor.
mutants: provers $(NATIVE)
	$(PY) -m sonnx_mul_assurance.mutants

# The glue's mutants only (src/sonnx_mul/_native.c, in the functions of [glue]
# in tests/mutation-targets.toml, 100 by default, against its tests), one job;
# writes proofs/out/mutants-glue.json.
mutants-glue: $(STAMP)
	$(PY) -m sonnx_mul_assurance.mutants --file src/sonnx_mul/_native.c --jobs 1 \
	  --out proofs/out/mutants-glue.json

# The audit machinery only (the report's modules, the evidence schema and its
# records, and the WhyML reader against their tests): no provers needed; writes
# proofs/out/mutants-report.json.
mutants-report: $(STAMP)
	$(PY) -m sonnx_mul_assurance.mutants --under assurance/sonnx_mul_assurance/report \
	  --file assurance/sonnx_mul_assurance/evidence/schema.py \
	  --under assurance/sonnx_mul_assurance/evidence/records \
	  --file assurance/sonnx_mul_assurance/why3/whyml.py --max-py 10 --out proofs/out/mutants-report.json

# The checker's modules and conform's: every module of
# src/sonnx_mul/models/ and assurance/sonnx_mul_assurance/conform/, 12 mutants
# per file (25 for checker, rules, shapes, declared); writes
# proofs/out/mutants-models.json.
mutants-models: $(NATIVE)
	$(PY) -m sonnx_mul_assurance.mutants --under src/sonnx_mul/models \
	  --under assurance/sonnx_mul_assurance/conform --out proofs/out/mutants-models.json

# The verifier of verify-install only (src/sonnx_mul_verify.py, against its
# in-process tests: the test_verify_rules_*.py files, test_wrong_calls.py); writes
# proofs/out/mutants-verify.json.
mutants-verify: $(STAMP)
	$(PY) -m sonnx_mul_assurance.mutants --file src/sonnx_mul_verify.py --max-py 40 \
	  --out proofs/out/mutants-verify.json

# The code that faces hostile input, together: the verifier of verify-install, the
# wire pre-pass (against the set wire of tests/mutation-targets.toml: the test_wire_*.py files and
# the hostile-file tests that read through it) and the evidence schema, 25 mutants each, hypothesis
# derandomized (the same examples in every run); writes
# proofs/out/mutants-hostile.json. A check whose unmutated run takes more than
# half its time limit refuses the run (TIMEOUT_MARGIN in sonnx_mul_assurance.mutants.runner).
mutants-hostile: $(NATIVE)
	HYPOTHESIS_PROFILE=mutants $(PY) -m sonnx_mul_assurance.mutants --file src/sonnx_mul_verify.py \
	  --file src/sonnx_mul/models/wire.py --file assurance/sonnx_mul_assurance/evidence/schema.py \
	  --max-py 25 --out proofs/out/mutants-hostile.json

clean:
	rm -rf $(VENV) proofs/out .pytest_cache .mypy_cache .ruff_cache $(DEBIAN_TREE)

# Side-by-side timings into BENCHMARKS.md (quotes proofs/out/pipeline.json when present).
bench: $(NATIVE)
	$(PY) benchmarks/run.py

fuzz: $(NATIVE)
	HYPOTHESIS_PROFILE=long $(PY) -m pytest -q -p no:cacheprovider tests/operator/test_fuzz_mul.py tests/operator/test_properties.py tests/checker/test_fuzz_models.py tests/checker/test_checker_differential.py tests/checker/test_wire_exactness.py tests/checker/test_wire_encodings.py tests/checker/test_wire_verdicts.py tests/checker/test_wire_bounds.py --hypothesis-show-statistics

STRICTDOC ?= strictdoc
trace-html: $(NATIVE)
	$(PY) -m sonnx_mul_assurance.report strictdoc --out build/strictdoc --strictdoc $(STRICTDOC)

# The native kernel (C99 + ACSL, native/) without Python: a static library,
# the example (known answers) and the portable harness (every float type's
# edge rows x every 16-bit pattern and the integer edges against an
# integer-only oracle, native/verify/portable.c), both run.  KERNEL_CC may be
# gcc, clang or a cross compiler (aarch64-linux-gnu-gcc, arm-linux-gnueabihf-
# gcc, riscv64-linux-gnu-gcc, i686-linux-gnu-gcc): native/flags.py picks its
# rows of native/flags.mk from what the compiler says of itself (the Python
# build takes the same); a target that is not the host's is linked statically
# and run under qemu-user.  KERNEL_EXTRA_CFLAGS adds flags (-mfpu=neon);
# PORTABLE_ARGS the harness's (--full f16).  make toolchains installs them.
include native/flags.mk
KERNEL_CC   ?= gcc
KERNEL_DIR  ?= build/c-kernel/$(notdir $(KERNEL_CC))
KERNEL_SRC  := $(wildcard native/src/*.c)
GLUE_SRC    := src/sonnx_mul/_native.c src/sonnx_mul/_native.h src/sonnx_mul/_native_module.c src/sonnx_mul/_native_variants.c src/sonnx_mul/_native_variants.h src/sonnx_mul/_native_kinds.h src/sonnx_mul/_native_isas.h src/sonnx_mul/_native_isa_builds.h
KERNEL_OBJ  := $(patsubst native/src/%.c,$(KERNEL_DIR)/%.o,$(KERNEL_SRC))
KERNEL_HDR  := native/include/sonnx_mul_kernel.h native/include/sonnx_mul_config.h
KERNEL_CFLAGS = $$(cat $(KERNEL_DIR)/cflags) $(KERNEL_EXTRA_CFLAGS) $(SONNX_WARNFLAGS) -Inative/include
HOST_ARCH   := $(shell uname -m)
KERNEL_ARCH  = $(shell $(PYTHON) native/flags.py --target $(KERNEL_CC))
QEMU_aarch64 = qemu-aarch64
QEMU_arm     = qemu-arm
QEMU_riscv64 = qemu-riscv64
QEMU_i686    = $(if $(filter x86_64,$(HOST_ARCH)),,qemu-i386)
KERNEL_CROSS = $(filter-out $(HOST_ARCH),$(KERNEL_ARCH))
KERNEL_RUN   = $(if $(KERNEL_CROSS),$(QEMU_$(KERNEL_ARCH)))
KERNEL_LINK  = $(if $(KERNEL_CROSS),-static)

# The selected flags, written once: a compiler flags.mk has no row for stops here.
$(KERNEL_DIR)/cflags: native/flags.mk native/flags.py
	@mkdir -p $(KERNEL_DIR)
	$(PYTHON) native/flags.py $(KERNEL_CC) > $@.tmp
	mv $@.tmp $@

$(KERNEL_DIR)/%.o: native/src/%.c $(KERNEL_HDR) $(KERNEL_DIR)/cflags
	$(KERNEL_CC) $(KERNEL_CFLAGS) -c $< -o $@

$(KERNEL_DIR)/libsonnx_mul_kernel.a: $(KERNEL_OBJ)
	rm -f $@
	ar rcs $@ $^

$(KERNEL_DIR)/example: native/example/example.c $(KERNEL_DIR)/libsonnx_mul_kernel.a
	$(KERNEL_CC) $(KERNEL_CFLAGS) $(KERNEL_LINK) $< $(KERNEL_DIR)/libsonnx_mul_kernel.a -lm -o $@

# The harness is portable.c alone (one translation unit); its parts, by job,
# are the headers under native/verify/portable/ that it includes.
$(KERNEL_DIR)/portable: native/verify/portable.c $(wildcard native/verify/portable/*.h) $(KERNEL_DIR)/libsonnx_mul_kernel.a
	$(KERNEL_CC) $(KERNEL_CFLAGS) $(KERNEL_LINK) $< $(KERNEL_DIR)/libsonnx_mul_kernel.a -lm -o $@

c-kernel: $(KERNEL_DIR)/example $(KERNEL_DIR)/portable
	$(KERNEL_RUN) $(abspath $(KERNEL_DIR))/example
	$(KERNEL_RUN) $(abspath $(KERNEL_DIR))/portable $(PORTABLE_ARGS) > $(KERNEL_DIR)/portable.jsonl
	cat $(KERNEL_DIR)/portable.jsonl

# Debian's cross compilers, clang and qemu-user (apt-get as root; otherwise
# it prints the command).
toolchains:
	sh tools/install-toolchains.sh

# Every target of native/flags.mk built and checked bit for bit against
# x86-64 gcc (sonnx_mul_assurance.c.targets; proofs/out/targets.json);
# verify-targets adds all 2^32 float16 and bfloat16 pairs on each target.
check-targets: toolchains $(STAMP)
	$(PY) -m sonnx_mul_assurance.c.targets

verify-targets: toolchains $(STAMP)
	$(PY) -m sonnx_mul_assurance.c.targets --full

# sonnx_mul._native (the kernel and its numpy glue, setup.py) is rebuilt
# in place whenever the kernel, its flags or the glue change.
$(NATIVE): $(STAMP) setup.py scripts/sonnx-mul $(GLUE_SRC) $(KERNEL_SRC) $(KERNEL_HDR) native/flags.mk native/flags.py native/isa.toml \
  native/hw/sonnx_mul_f16c.c native/include/sonnx_mul_f16c.h native/include/sonnx_mul_rename.h native/include/sonnx_mul_fpenv.h \
  native/hw/sonnx_mul_stream8.c native/include/sonnx_mul_stream8.h
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@
