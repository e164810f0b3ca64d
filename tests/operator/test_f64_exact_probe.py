"""The float64 exact-product probes (benchmarks/f64_exact.c) compare what they
claim to: each candidate's bits (integer limbs; scaled operands with and
without a fused multiply-add) are the proved hardware loop's on every edge
pair and on pairs of every comparison class, ties included, in each x86-64
build this CPU runs; flush-to-zero and denormals-are-zero change none of
them (and no directed rounding changes the integer one), while they do
change the hardware loop's (so the environment really was set); and a
planted fault in each candidate is seen.  No time is asserted (timing is
the benchmark's business)."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import f64_exact
import probe_build

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="the probe's builds are the x86-64 variants"
)


@pytest.mark.parametrize("name", sorted(probe_build.builds()))
def test_every_candidate_has_the_hardware_loops_bits(name: str) -> None:
    if not f64_exact.runs(name):
        pytest.skip(f"this CPU does not run the {name} build")
    dll = f64_exact.build(name, probe_build.builds()[name])
    edges = f64_exact.edge_pairs()
    assert edges[0].size > 150_000
    pairs = f64_exact.all_classes(np.random.default_rng(64), 20_000)
    for which in f64_exact.CANDIDATES:
        assert f64_exact.differences(dll, which, *edges) == 0, f64_exact.LOOPS[which]
        assert f64_exact.differences(dll, which, *pairs) == 0, f64_exact.LOOPS[which]


def test_no_subnormal_reaches_the_fpu_and_the_integer_loop_ignores_the_rounding_mode() -> None:
    dll = f64_exact.build("portable", probe_build.builds()["portable"])
    pairs = f64_exact.all_classes(np.random.default_rng(65), 20_000)
    assert f64_exact.environment_differences(dll, 1, *pairs) == [0, 0, 0, 0]
    for which in (2, 3):
        counts = f64_exact.environment_differences(dll, which, *pairs)
        assert counts[0] == 0 and f64_exact.required(which, counts)
        # what they do not claim: a directed rounding changes their bits
        assert not f64_exact.required(1, counts)
    # the control: every environment changes the hardware loop's bits
    assert all(count > 0 for count in f64_exact.environment_differences(dll, 0, *pairs))


@pytest.mark.parametrize("candidate", sorted(f64_exact.FAULTS))
def test_negative_control_a_planted_rounding_fault_differs(candidate: str) -> None:
    fault = f64_exact.FAULTS[candidate]
    dll = f64_exact.build("portable", probe_build.builds()["portable"], fault=fault)
    which = f64_exact.LOOPS.index(candidate)
    pairs = f64_exact.all_classes(np.random.default_rng(66), 20_000)
    found = f64_exact.differences(dll, which, *f64_exact.edge_pairs())
    assert found + f64_exact.differences(dll, which, *pairs) > 0
