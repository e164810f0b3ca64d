"""The Why3 check's limits (``why3.plan`` on the pinned proofs' core): steps
decide, and the wall-clock safety net of a slow goal is wide enough never to
be what stops it (the bfloat16 product lemma takes about 160 s of cvc5 on an
idle machine, beyond the default 60 s net)."""

from __future__ import annotations

from sonnx_mul_assurance import pinned as core
from sonnx_mul_assurance.why3 import plan


def test_a_fast_goal_keeps_the_default_net() -> None:
    pinned = plan.pin(plan.Result("cvc5", "Valid", 1.5, 1000))
    assert "safetynet" not in pinned
    assert plan.goal_limit(pinned) == plan.Limit(
        pinned["steplimit"], core.SAFETY_NET * core.CHECK_NET_FACTOR
    )


def test_a_slow_goal_gets_a_net_of_its_own() -> None:
    pinned = plan.pin(plan.Result("cvc5", "Valid", 163.67, 3_143_201))
    assert pinned["safetynet"] == 3300  # 20 x 163.67 s in whole minutes
    assert plan.goal_limit(pinned).seconds == 3300 * core.CHECK_NET_FACTOR


def test_a_check_widens_the_pinned_net_and_a_time_only_prover_keeps_its_limit() -> None:
    # bf16_mul_is_ieee#3: 63 s idle, pinned net 1260 s; with four busy loops
    # and a second make test beside make prove, cvc5 reached 1260 s of wall
    # clock after 103 CPU-s of the 131 it needs, and its --tlimit-per (the
    # net) aborted a true goal
    pinned = plan.pin(plan.Result("cvc5", "Valid", 63.0, 1_432_449))
    assert pinned["safetynet"] == 1260
    assert plan.goal_limit(pinned).seconds >= 6 * 1260
    assert plan.goal_limit(pinned).steps == pinned["steplimit"]  # the steps still decide
    gappa = plan.pin(plan.Result("gappa", "Valid", 0.02))
    assert plan.goal_limit(gappa) == plan.Limit(None, core.SAFETY_NET)


def test_the_first_pass_carries_the_net_of_the_goals_it_must_prove() -> None:
    fast = plan.Limit(1000)
    slow = plan.Limit(6_000_000, 3300)
    assert plan.discovery_limit([fast, fast, slow]) == slow
    # a pass whose steps stop below the slow goal does not need its net
    many = [fast] * 10 + [slow]
    assert plan.discovery_limit(many) == plan.Limit(1000, core.SAFETY_NET)
