# sonnx-mul: two commands on a fresh machine: `make prove` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install test lint provers prove verify-exhaustive report-release report-screenshot mutants mutants-report bench fuzz trace-html clean

$(STAMP): pyproject.toml assurance/pyproject.toml requirements/dev.lock
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c requirements/dev.lock -e '.[dev]' -e ./assurance
	touch $(STAMP)

install: $(STAMP)

# The negative controls of the proofs need why3 and the provers too.
test: provers $(STAMP)
	$(PY) -m pytest -n 2 --maxschedchunk 1 -q

lint: $(STAMP)
	$(VENV)/bin/ruff check src assurance tests benchmarks examples
	$(VENV)/bin/ruff format --check src assurance tests benchmarks examples
	$(VENV)/bin/mypy
	$(PY) -m sonnx_mul_assurance.report lint

# Why3 and the Debian provers (apt-get as root; otherwise it prints the command).
provers:
	sh proofs/install-provers.sh

# The main job: Why3 proofs, CrossHair contracts, tests and agreement checks,
# then the traceability report into proofs/out/ with its gate.
prove: provers $(STAMP)
	$(PY) -m sonnx_mul_assurance.pipeline

# Every pair of int8/uint8 (both modes) and of float16/bfloat16 (2**32 each)
# against exact oracles; writes proofs/out/exhaustive.json (the report uses it).
verify-exhaustive: $(STAMP)
	$(PY) -m sonnx_mul_assurance.exhaustive

# Release gate: the report again, failing when exhaustive.json is absent
# (run make prove and make verify-exhaustive first; see docs/report.md).
report-release: $(STAMP)
	$(PY) -m sonnx_mul_assurance.report report --out proofs/out --require exhaustive

# The report in a real browser: headless Debian chromium screenshots of the
# table of contents and of the page an evidence link opens (after make prove).
report-screenshot:
	sh tools/report/screenshot.sh proofs/out docs/report-screenshots

# Mutation testing of the checks (Python and WhyML mutants, each against its
# file's fast checks; see the README for the kill rate and the equivalent
# survivors); writes proofs/out/mutants.json, fails on an unexplained survivor.
mutants: provers $(STAMP)
	$(PY) -m sonnx_mul_assurance.mutants

# The audit machinery only (the report's modules, the evidence schema and the
# WhyML reader against their tests): no provers needed; writes
# proofs/out/mutants-report.json.
mutants-report: $(STAMP)
	$(PY) -m sonnx_mul_assurance.mutants --under assurance/sonnx_mul_assurance/report \
	  --file assurance/sonnx_mul_assurance/evidence_schema.py \
	  --file assurance/sonnx_mul_assurance/whyml.py --max-py 10 --out proofs/out/mutants-report.json

clean:
	rm -rf $(VENV) proofs/out .pytest_cache .mypy_cache .ruff_cache

# Side-by-side timings into BENCHMARKS.md (quotes proofs/out/pipeline.json when present).
bench: $(STAMP)
	$(PY) benchmarks/run.py

fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=long $(PY) -m pytest -q -p no:cacheprovider tests/operator/test_fuzz_mul.py tests/operator/test_properties.py tests/checker/test_fuzz_models.py tests/checker/test_checker_differential.py --hypothesis-show-statistics

STRICTDOC ?= strictdoc
trace-html: $(STAMP)
	$(PY) -m sonnx_mul_assurance.report strictdoc --out build/strictdoc --strictdoc $(STRICTDOC)
