"""Which goals each Frama-C invocation of the WP check tries, with which prover
and which step limit.

Every goal is decided by the prover the manifest pins it to, within its
pinned step limit (``-wp-steps``: the prover's deterministic resource count,
passed through Why3), so that the verdict never depends on the machine's
load; ``-wp-timeout`` is only a safety net.  The provers take turns instead
of racing (``-wp-prover cvc4,z3`` would run both on every goal):

1. the first prover, with the widest step limit of the goals pinned to it,
   on every goal except the named properties the manifest pins to another
   prover (they would only burn that limit);
2. each other prover, with the widest step limit of its goals, on the goals
   pinned to it (the ones skipped in 1, and any it was pinned for that the
   first prover tried).

Each goal is then held to its own limit (``wp.compare``).  Frama-C selects
goals only by function (``-wp-fct``) and by property name (``-wp-prop``,
``-name`` to leave one out), so a pass that cannot name every goal runs
their whole functions.  Pure functions: ``wp.prove`` runs the invocations.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sonnx_mul_assurance import pinned
from sonnx_mul_assurance.why3.config import prover_sections

QED = "Qed"
GLOBALS = "<globals>"
"""The function WP's goals of lemmas (and the manifest's pin of the logic) belong to:
the logic definitions and the declarations' contracts (every function's goals
depend on them)."""

_LABELLED = "assert|check|ensures|requires"
_KINDS = f"{_LABELLED}|invariant|rte"
_LABEL_RE = re.compile(rf"\b(?:{_LABELLED})\s+(\w+)\s*:")


@dataclass(frozen=True)
class Invocation:
    """One Frama-C run: ``provers`` with ``steps`` (and the safety net
    ``timeout``) on the goals of ``functions`` (all when empty) except those
    of ``skip``, selected by ``properties`` (all when empty; ``-name`` leaves
    a property out)."""

    provers: tuple[str, ...]
    steps: int
    timeout: int
    functions: tuple[str, ...] = ()
    properties: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()

    def selection_argv(self) -> list[str]:
        argv = ["-wp-fct", ",".join(self.functions)] if self.functions else []
        argv += ["-wp-skip-fct", ",".join(self.skip)] if self.skip else []
        # "-wp-prop=-x": the value may start with a dash
        return argv + ([f"-wp-prop={','.join(self.properties)}"] if self.properties else [])


def selects(goal: str, properties: Sequence[str]) -> bool:
    """``goal`` is one of the named ``properties`` (``-wp-prop`` names) select:
    its kind, then the name, then the end or a suffix (``assert_finish``, not
    ``assert_nan_finish``; ``loop_invariant_done_preserved``,
    ``assert_rte_mem_access_2``); or the lemma of that name (``typed_lemma_tie32``)."""
    return any(
        re.search(rf"_(?:{_KINDS})_{re.escape(p)}(?:_|$)", goal) or goal == f"typed_lemma_{p}"
        for p in properties
    )


def labels(source_text: str) -> set[str]:
    """The names given to ACSL properties in ``source_text`` (``assert bit6: ...``)."""
    return set(_LABEL_RE.findall(source_text))


def prover_names(conf_text: str) -> dict[str, str]:
    """Why3 shortcut -> the name WP prints for that prover ("cvc4" -> "CVC4 1.8",
    "cvc4-axioms" -> "CVC4 1.8 (axioms)")."""
    return {
        fields["shortcut"]: " ".join(
            part
            for part in (
                fields["name"],
                fields.get("version", ""),
                f"({fields['alternative']})" if "alternative" in fields else "",
            )
            if part
        )
        for fields in prover_sections(conf_text)
        if "shortcut" in fields and "name" in fields
    }


def named_property(goal: str, function: str, known: set[str]) -> str | None:
    """The property name selecting ``goal`` alone in ``function``: a named
    assert or ensures (``typed_f_assert_wrap_elem`` -> ``wrap_elem``), else None."""
    tail = goal.removeprefix("typed_").removeprefix(function + "_")
    kind, _, name = tail.partition("_")
    return name if kind in ("assert", "ensures") and name in known else None


def first_pass(
    functions: Sequence[str],
    skipped: Mapping[str, set[str]],
    prover: str,
    steps: int,
    timeout: int,
    properties: Sequence[str] = (),
    lemmas: bool = False,
) -> list[Invocation]:
    """The first prover on ``functions`` (every function when empty) and
    ``properties`` (every one when empty), leaving out the ``skipped``
    property names of each function: one invocation for the functions
    without any, one per distinct set of names left out; and, on every
    function of a source with ``lemmas`` where some are skipped, one for the
    lemmas (``-wp-skip-fct`` leaves them out with the functions)."""
    groups: dict[frozenset[str], list[str]] = defaultdict(list)
    for function, names in sorted(skipped.items()):
        if names and (not functions or function in functions):
            groups[frozenset(names)].append(function)
    grouped = tuple(sorted(f for members in groups.values() for f in members))
    runs = []
    chosen = tuple(properties)
    if not functions:
        runs.append(Invocation((prover,), steps, timeout, (), chosen, skip=grouped))
        if grouped and lemmas and not chosen:
            runs.append(Invocation((prover,), steps, timeout, (), ("@lemma",)))
    elif rest := tuple(f for f in functions if f not in grouped):
        runs.append(Invocation((prover,), steps, timeout, rest, chosen))
    for left, members in sorted(groups.items(), key=lambda item: item[1]):
        left_out = tuple(f"-{name}" for name in sorted(left))
        runs.append(Invocation((prover,), steps, timeout, tuple(members), chosen + left_out))
    return runs


def retry(
    open_goals: Mapping[str, str],
    known: set[str],
    provers: Sequence[str],
    steps: int,
    timeout: int,
    leave_out: Mapping[str, set[str]] | None = None,
    properties: Sequence[str] = (),
) -> list[Invocation]:
    """``provers`` on ``open_goals`` (goal -> function): the functions' goals by
    name when every one is a named property, else their whole functions but
    for the property names ``leave_out`` gives for each (goals pinned to
    another prover: trying them would only burn the limit; one invocation per
    distinct set, since ``-wp-prop`` applies to every function of a run); the
    lemmas (function ``GLOBALS``, which ``-wp-fct`` cannot select) by their
    names, in a run of their own.  With ``properties`` (the caller's
    selection, which ``open_goals`` lies in), the functions are run on those
    properties only: an open loop invariant has no name of its own, and its
    whole function would try every other goal the prover is pinned to."""
    lemmas = tuple(
        sorted(g.removeprefix("typed_lemma_") for g, f in open_goals.items() if f == GLOBALS)
    )
    rest = {g: f for g, f in open_goals.items() if f != GLOBALS}
    runs = []
    if rest:
        functions = tuple(sorted(set(rest.values())))
        names = {named_property(g, f, known) for g, f in rest.items()}
        if properties:
            runs.append(Invocation(tuple(provers), steps, timeout, functions, tuple(properties)))
        elif None not in names:
            named = tuple(sorted(n for n in names if n))
            runs.append(Invocation(tuple(provers), steps, timeout, functions, named))
        else:
            groups: dict[frozenset[str], list[str]] = defaultdict(list)
            for function in functions:
                groups[frozenset((leave_out or {}).get(function, ()))].append(function)
            for left, members in sorted(groups.items(), key=lambda item: item[1]):
                left_out = tuple(f"-{name}" for name in sorted(left))
                runs.append(Invocation(tuple(provers), steps, timeout, tuple(members), left_out))
    if lemmas:
        runs.append(Invocation(tuple(provers), steps, timeout, (), lemmas))
    return runs


def elsewhere(
    pins: Mapping[str, Mapping[str, str]], prover: str, todo: Mapping[str, str], known: set[str]
) -> dict[str, set[str]]:
    """function -> the property names of goals pinned to neither ``prover``
    (its WP name) nor Qed, and not in ``todo``: a retry pass leaves them out
    (the first pass's :func:`skipped_properties`, but for the open goals)."""
    return skipped_properties({g: p for g, p in pins.items() if g not in todo}, prover, known)


def skipped_properties(
    pins: Mapping[str, Mapping[str, str]], first: str, known: set[str]
) -> dict[str, set[str]]:
    """function -> the property names whose goals the manifest pins to a prover
    other than ``first`` (nor Qed): the first pass leaves them out."""
    skipped: dict[str, set[str]] = defaultdict(set)
    for goal, pin in pins.items():
        if pin.get("prover") in (QED, first):
            continue
        name = named_property(goal, pin["function"], known)
        if name is not None:
            skipped[pin["function"]].add(name)
    return dict(skipped)


def step_budget(pins: Mapping[str, Mapping[str, object]], prover: str) -> int:
    """The widest step limit the manifest pins to a goal of ``prover`` (its WP
    name, "CVC4 1.8"); ``pinned.UNHELD_STEPS`` when it pins none: every goal that
    prover sees is another's (or unpinned, which the check refuses anyway)."""
    limits = [
        int(str(p["steplimit"]))
        for p in pins.values()
        if p.get("prover") == prover and "steplimit" in p
    ]
    return max(limits, default=pinned.UNHELD_STEPS)
