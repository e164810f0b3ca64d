"""How the benchmarks time a call: batches of calls, cases sampled round-robin.

Every sample is a batch of calls timed together (one call can be shorter
than the clock's resolution); the cases of one measurement are sampled
round-robin, one sample of each per repeat, so a burst of load on the
machine falls on all of them alike.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

Case = Callable[[], object]


def calls_per_sample(case: Case, target_seconds: float) -> int:
    """How many calls of ``case`` take about ``target_seconds`` (one call timed)."""
    start = time.perf_counter()
    case()
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, min(100_000, int(target_seconds / once)))


def sample(
    cases: dict[str, Case],
    repeats: int,
    target: float,
    clock: Callable[[], float] = time.perf_counter,
    prepare: dict[str, Callable[[], None]] | None = None,
) -> dict[str, list[float]]:
    """Per-call seconds of each case, one sample per repeat, the cases
    interleaved; ``prepare[name]``, when given, runs (untimed) before each
    sample of that case and before its batch size is taken."""
    before = prepare or {}

    def ready(name: str) -> None:
        if name in before:
            before[name]()

    numbers = {}
    for name, case in cases.items():
        ready(name)
        numbers[name] = calls_per_sample(case, target)
    samples: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(repeats):
        for name, case in cases.items():
            ready(name)
            number = numbers[name]
            start = clock()
            for _ in range(number):
                case()
            samples[name].append((clock() - start) / number)
    return samples


def median_cpu(case: Case, repeats: int, target: float = 0.02) -> float:
    """Median CPU seconds of one call of ``case`` (this process's CPU time)."""
    return statistics.median(sample({"case": case}, repeats, target, time.process_time)["case"])
