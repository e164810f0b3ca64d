import os
import sys

import pytest
from hypothesis import settings

sys.path.insert(0, os.path.dirname(__file__))  # tests/support.py

settings.register_profile("ci", max_examples=150, deadline=None)
settings.register_profile("long", max_examples=5000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Files whose tests run provers or CrossHair to their time limits, longest
# first (CPU and wall measured per test under load). They start first and
# ``-n 2 --maxschedchunk 1`` (make test, make prove) hands tests out one at a
# time as workers free up, so the long ones are spread over both workers
# and short ones fill the end (measured: without it, xdist's first chunk of
# 118 consecutive tests gave every prover test to one worker; with
# ``--dist worksteal`` the 23 Why3 controls still stayed on one worker).
# Only the order changes: every test runs, each file in its own order.
SLOW_FIRST = (
    "test_why3_negative.py",
    "test_kernel_why3.py",
    "test_trace_verify_install.py",
    "test_hostile_files.py",
    "test_crosshair_real.py",
    "test_semantics_int.py",
    "test_checker_differential.py",
    "test_crosshair.py",
    "test_fuzz_models.py",
    "test_interruption.py",
    "test_native.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(SLOW_FIRST)))
