import os
import sys

import pytest
from hypothesis import HealthCheck, Phase, settings

sys.path.insert(0, os.path.dirname(__file__))  # tests/support.py

# Every test that starts an external prover or toolchain must carry needs_prover.
pytest_plugins = ["prover_audit"]

# No verdict of the clock: no deadline, and no "too slow" health check (generating
# examples on a loaded machine must not fail a test that passes on an idle one).
NOT_TIMED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("ci", max_examples=150, **NOT_TIMED)
settings.register_profile("long", max_examples=5000, **NOT_TIMED)
# Mutation runs (make mutants-hostile): the same examples every run and no saved
# failures, so a mutant's verdict is the same whenever and however loaded it runs;
# 60 examples (not 150): a check's unmutated run must stay within half its time limit
# on the shared machine (mutants.runner.TIMEOUT_MARGIN); no shrinking: the first failing
# example kills the mutant (shrinking it ran a killed mutant past the limit).
settings.register_profile(
    "mutants",
    max_examples=60,
    derandomize=True,
    database=None,
    phases=(Phase.explicit, Phase.generate),
    **NOT_TIMED,
)
# make coverage: the same examples on every run, so that the covered items do
# not change between two runs of the same tree (the coverage gate compares them)
settings.register_profile("coverage", max_examples=150, derandomize=True, **NOT_TIMED)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The slowest files first, by their measured test time (make prove,
# 2026-11-24: 108 s for the Why3 controls down to 3.5 s; 2026-11-28: the WP
# controls of the float unit about 1200 s, the spec clients 450 s).  ``-n 2 --dist
# loadfile`` (make test, make prove) hands whole files to the two workers as
# they free up, so each module-scoped fixture (a fresh install, the built
# report, ONNX's node corpus, a proof tree copy) is built once and not once per
# worker (measured: 274 CPU-s against 294 with tests dealt one at a time);
# long files first let the short ones even out the end.  Only the order
# changes: every test runs, each file in its own order.
SLOW_FIRST = (
    "test_wp_negative_float.py",
    "test_spec_clients.py",
    "test_wp_negative.py",
    "test_why3_negative_floats.py",
    "test_why3_negative_programs.py",
    "test_why3_negative_pins.py",
    "test_verify_install.py",
    "test_verify_attacks.py",
    "test_hostile_models.py",
    "test_kernel_why3.py",
    "test_crosshair_real.py",
    "test_checker_differential.py",
    "test_checker_corpus.py",
    "test_contracts_real.py",
    "test_hostile_files.py",
    "test_cli_hardening.py",
    "test_overflow_boundaries.py",
    "test_sonnx_newest.py",
    "test_crosshair.py",
    "test_interruption.py",
    "test_gate_rules.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(SLOW_FIRST)))


def _import_the_product() -> None:
    """Under make coverage: every module of the product imported before the first test,
    so that its module-level lines count for no test (the empty context) instead of
    the test during which this worker happens to import it first, which depends on how
    the workers share the files (the per-requirement figures would move between runs)."""
    if "coverage" not in sys.modules:
        return
    import coverage

    if coverage.Coverage.current() is None:
        return
    import importlib
    import pkgutil

    import sonnx_mul

    for found in pkgutil.walk_packages(sonnx_mul.__path__, "sonnx_mul."):
        if found.name.endswith(".__main__"):  # a command: running it is not importing it
            continue
        try:
            importlib.import_module(found.name)
        except ImportError:  # an optional extra's module; a test that needs it says so
            continue


def pytest_sessionstart(session: pytest.Session) -> None:
    """The run's environment (platform, compiler, floating-point mode, denormal
    policy: evidence/environment.py) as testsuite properties of the JUnit XML,
    written by the process that writes that file (not an xdist worker); under make
    coverage, the product imported first (:func:`_import_the_product`)."""
    _import_the_product()
    from _pytest.junitxml import xml_key

    config = session.config
    xml = config.stash.get(xml_key, None)
    if xml is None or hasattr(config, "workerinput"):
        return
    from sonnx_mul_assurance.evidence import environment

    for name, value in environment.junit_properties(environment.probe()):
        xml.add_global_property(name, value)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    """Under make coverage (coverage.py running in this process): the test's node
    id as coverage.py's context, so that each covered line names the tests that
    ran it, a Hypothesis test included (its body runs inside Hypothesis's own
    frames, which a test_function dynamic context names instead)."""
    current = None
    if "coverage" in sys.modules:
        import coverage

        current = coverage.Coverage.current()
    if current is not None:
        current.switch_context(item.nodeid)
    yield
    if current is not None:
        current.switch_context("")
