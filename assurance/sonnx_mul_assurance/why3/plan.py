"""Which limits each Why3 run of the check gets, and when its answer proves a goal.

Every goal is decided by its pinned prover within its pinned step limit
(the limits are :mod:`sonnx_mul_assurance.pinned`'s); a run proves several
goals with the widest limit of theirs (:func:`widest`), and each answer is
then held to its own goal's (:func:`proved`).  The first pass over a module
takes the 90th percentile of its main prover's limits
(:func:`discovery_limit`).  A goal's pin (:func:`pin`) records the steps of
the proof ``update-manifest`` found and the limit a check holds it to.
Pure functions: :mod:`.driver` runs Why3.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sonnx_mul_assurance import pinned as core


@dataclass
class Result:
    """One goal's answer from one prover: the status Why3 prints, the time in
    seconds and the prover's resource count (-1 when it reports none)."""

    prover: str
    status: str
    time: float
    steps: int = -1


@dataclass(frozen=True)
class Limit:
    """A run's limits: ``steps`` decides (None for a time-only prover), ``seconds``
    is the safety net (the limit itself for a time-only prover)."""

    steps: int | None
    seconds: int = core.SAFETY_NET


def goal_limit(goal: dict[str, Any]) -> Limit:
    """A check's limit for one goal: its pinned steps, and its pinned net
    widened by CHECK_NET_FACTOR (a time-only prover: its pinned time)."""
    if "steplimit" in goal:
        net = int(goal.get("safetynet", core.SAFETY_NET))
        return Limit(int(goal["steplimit"]), core.check_net(net))
    return Limit(None, int(goal.get("timelimit", core.SAFETY_NET)))


def widest(limits: Iterable[Limit]) -> Limit:
    """One run's limit for several goals: the largest of theirs (each goal is
    then held to its own by ``proved``)."""
    chosen = list(limits)
    steps = [lim.steps for lim in chosen if lim.steps is not None]
    return Limit(
        max(steps) if steps else None,
        max((lim.seconds for lim in chosen), default=core.SAFETY_NET),
    )


def discovery_limit(limits: list[Limit]) -> Limit:
    """The first pass's limit: the 90th percentile of the main prover's pinned
    step limits (its few slow goals get their own limit in the next pass;
    the goals pinned to other provers cost it no more than this)."""
    steps = sorted(lim.steps for lim in limits if lim.steps is not None)
    if not steps:
        return Limit(None, max((lim.seconds for lim in limits), default=core.SAFETY_NET))
    chosen = steps[min(len(steps) - 1, (len(steps) * 9) // 10)]
    # the widest safety net of the goals the pass must prove, so that it is
    # not the net that stops a slow one
    nets = [lim.seconds for lim in limits if lim.steps is not None and lim.steps <= chosen]
    return Limit(chosen, max(nets, default=core.SAFETY_NET))


def proved(result: Result, pinned: dict[str, Any] | None) -> bool:
    """A proof counts when Valid and, by the goal's pinned prover, within the
    goal's own step limit (a run's limit is the widest of its goals')."""
    if result.status != core.VALID:
        return False
    if pinned is None or result.prover != pinned.get("prover"):
        return True
    return core.within(result.steps, pinned)


def verdict(result: Result, pinned: dict[str, Any] | None) -> str:
    """Why a goal is not proved, for the error line."""
    where = f"{result.prover}, {result.steps} steps"
    if pinned is not None and "steplimit" in pinned:
        where += f" of {pinned['steplimit']}"
    if result.status == core.VALID:
        return f"over its step limit: {where}"
    return f"{result.status}: {where}"


def pin(result: Result) -> dict[str, Any]:
    """The manifest fields of a goal proved by ``result``: its steps and their
    limit (and a wider safety net for a slow goal), or (a time-only prover)
    a time limit of ``SAFETY_NET`` seconds."""
    if result.prover in core.TIME_ONLY:
        return {"prover": result.prover, "timelimit": core.SAFETY_NET}
    steps = core.step_pin(result.prover, result.steps, "a Why3 goal: check its driver's regex")
    net = core.safety_net(result.time)
    return {
        "prover": result.prover,
        **steps,
        **({"safetynet": net} if net > core.SAFETY_NET else {}),
    }
