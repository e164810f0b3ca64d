"""The int64 scan probe (benchmarks/int64_scan.c) compares what it claims to:
int64's binary64 test and its halves test (both the product's) give the same verdict on every edge
pair and on random pairs, in each x86-64 build this CPU runs, and the
comparison fails when the test's limit is planted wrong.  No time is
asserted (timing is the benchmark's business)."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import int64_scan
import probe_build

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="the probe's builds are the x86-64 variants"
)


@pytest.mark.parametrize("name", sorted(probe_build.builds()))
def test_the_binary64_test_agrees_with_the_halves_test(name: str) -> None:
    if not probe_build.supported(name):
        pytest.skip(f"this CPU does not run the {name} build")
    dll = int64_scan.build(name, probe_build.builds()[name])
    edges = int64_scan.edge_pairs()
    assert edges[0].size > 2000
    assert int64_scan.disagreements(dll, *edges) == 0
    randoms = int64_scan.random_pairs(np.random.default_rng(28), 200_000)
    assert int64_scan.disagreements(dll, *randoms) == 0


def test_both_scans_see_an_overflow_and_only_then() -> None:
    dll = int64_scan.build("portable", probe_build.builds()["portable"])
    small = np.arange(-1000, 1000, dtype=np.int64)
    for which in (1, 2):  # the halves scan, the binary64 scan
        assert dll.probe_time(which, small.ctypes.data, small.ctypes.data, 0, small.size, 1,
                              np.zeros(1, np.uint64).ctypes.data) == 0  # fmt: skip
        big = small.copy()
        big[1234] = 2**40
        assert dll.probe_time(which, big.ctypes.data, big.ctypes.data, 0, big.size, 1,
                              np.zeros(1, np.uint64).ctypes.data) == 1  # fmt: skip


@pytest.mark.parametrize("limit", ["36893488147419103232.0", "1.0"])
def test_negative_control_a_wrong_limit_disagrees(limit: str) -> None:
    # 2^65: overflows by one multiple of 2^64 pass as fits; 1: the rounding
    # gap of a product that fits, with an operand above 2^53, is taken for
    # an overflow
    dll = int64_scan.build("portable", probe_build.builds()["portable"], planted=limit)
    randoms = int64_scan.random_pairs(np.random.default_rng(28), 200_000)
    assert int64_scan.disagreements(dll, *randoms) > 0
