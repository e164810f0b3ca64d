"""The Why3 driver's limits: steps decide, and the wall-clock safety net of a
slow goal is wide enough never to be what stops it (issue 28: the bfloat16
product lemma takes about 160 s of cvc5 on an idle machine, beyond the
default 60 s net)."""

from __future__ import annotations

from sonnx_mul_assurance.why3 import driver


def test_a_fast_goal_keeps_the_default_net() -> None:
    pinned = driver.pin(driver.Result("cvc5", "Valid", 1.5, 1000))
    assert "safetynet" not in pinned
    assert driver.goal_limit(pinned) == driver.Limit(
        pinned["steplimit"], driver.SAFETY_NET * driver.CHECK_NET_FACTOR
    )


def test_a_slow_goal_gets_a_net_of_its_own() -> None:
    pinned = driver.pin(driver.Result("cvc5", "Valid", 163.67, 3_143_201))
    assert pinned["safetynet"] == 3300  # 20 x 163.67 s in whole minutes
    assert driver.goal_limit(pinned).seconds == 3300 * driver.CHECK_NET_FACTOR


def test_a_check_widens_the_pinned_net_and_a_time_only_prover_keeps_its_limit() -> None:
    # bf16_mul_is_ieee#3: 63 s idle, pinned net 1260 s; with four busy loops
    # and a second make test beside make prove, cvc5 reached 1260 s of wall
    # clock after 103 CPU-s of the 131 it needs, and its --tlimit-per (the
    # net) aborted a true goal
    pinned = driver.pin(driver.Result("cvc5", "Valid", 63.0, 1_432_449))
    assert pinned["safetynet"] == 1260
    assert driver.goal_limit(pinned).seconds >= 6 * 1260
    assert driver.goal_limit(pinned).steps == pinned["steplimit"]  # the steps still decide
    gappa = driver.pin(driver.Result("gappa", "Valid", 0.02))
    assert driver.goal_limit(gappa) == driver.Limit(None, driver.SAFETY_NET)


def test_the_first_pass_carries_the_net_of_the_goals_it_must_prove() -> None:
    fast = driver.Limit(1000)
    slow = driver.Limit(6_000_000, 3300)
    assert driver.discovery_limit([fast, fast, slow]) == slow
    # a pass whose steps stop below the slow goal does not need its net
    many = [fast] * 10 + [slow]
    assert driver.discovery_limit(many) == driver.Limit(1000, driver.SAFETY_NET)
