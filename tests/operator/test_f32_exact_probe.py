"""The float32 exact-product probe (benchmarks/f32_exact.c) compares what it
claims to: the candidate's bits are the proved hardware loop's on every edge
pair and on pairs of every value class, in each x86-64 build this CPU runs;
no foreign floating-point environment changes them, while it does change the
hardware loop's (so the environment really was set); a planted rounding
fault is seen; and the two loops that take the kernel's apart (without the
NaN rule, the binary32 product) give its bits on every product that is not a
NaN, while without the rule NaN products do differ (so the rule is what the
difference in time pays for).  No time is asserted (timing is the benchmark's business)."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import f32_exact
import probe_build

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="the probe's builds are the x86-64 variants"
)


@pytest.mark.parametrize("name", sorted(probe_build.builds()))
def test_the_exact_product_has_the_hardware_loops_bits(name: str) -> None:
    if not probe_build.supported(name):
        pytest.skip(f"this CPU does not run the {name} build")
    dll = f32_exact.build(name, probe_build.builds()[name])
    edges = f32_exact.edge_pairs()
    assert edges[0].size > 90_000
    assert f32_exact.differences(dll, *edges) == 0
    pairs = f32_exact.all_classes(np.random.default_rng(28), 20_000)
    assert f32_exact.differences(dll, *pairs) == 0


def test_no_foreign_environment_changes_the_exact_product() -> None:
    dll = f32_exact.build("portable", probe_build.builds()["portable"])
    pairs = f32_exact.all_classes(np.random.default_rng(29), 20_000)
    assert f32_exact.environment_differences(dll, 1, *pairs) == [0, 0, 0, 0]
    # the control: the same environments do change the hardware loop's bits
    assert all(count > 0 for count in f32_exact.environment_differences(dll, 0, *pairs))


def test_negative_control_ties_rounded_down_differ() -> None:
    dll = f32_exact.build("portable", probe_build.builds()["portable"], planted=True)
    assert f32_exact.differences(dll, *f32_exact.edge_pairs()) > 0


@pytest.mark.parametrize("name", sorted(probe_build.builds()))
def test_the_kernels_parts_give_its_bits_but_for_nan_payloads(name: str) -> None:
    if not probe_build.supported(name):
        pytest.skip(f"this CPU does not run the {name} build")
    dll = f32_exact.build(name, probe_build.builds()[name])
    edges = f32_exact.edge_pairs()
    pairs = f32_exact.all_classes(np.random.default_rng(30), 20_000)
    for which in (2, 3):
        assert f32_exact.non_nan_differences(dll, which, *edges) == 0, f32_exact.LOOPS[which]
        assert f32_exact.non_nan_differences(dll, which, *pairs) == 0, f32_exact.LOOPS[which]
    # the control: without the NaN rule the signalling and negative NaN of the
    # edge set come out with their own payloads and signs
    kernel = probe_build.run(dll, 0, 0, *edges)
    assert np.count_nonzero(probe_build.run(dll, 2, 0, *edges) != kernel) > 0


def test_negative_control_a_part_with_the_wrong_operand_differs() -> None:
    dll = f32_exact.build("portable", probe_build.builds()["portable"], part_fault=True)
    assert f32_exact.non_nan_differences(dll, 2, *f32_exact.edge_pairs()) > 0
