# sonnx-mul: two commands on a fresh machine: `make prove` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install test lint prove bench fuzz clean

$(STAMP): pyproject.toml requirements/dev.lock
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c requirements/dev.lock -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -n 2 -q

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/ruff format --check src tests
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) proofs/out .pytest_cache .mypy_cache .ruff_cache

bench: $(STAMP)
	$(PY) benchmarks/run.py $(if $(PROVE_SECONDS),--prove-seconds $(PROVE_SECONDS))

fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=long $(PY) -m pytest -q -p no:cacheprovider tests/test_fuzz_mul.py tests/test_properties.py tests/test_fuzz_models.py --hypothesis-show-statistics
