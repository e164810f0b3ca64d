"""Run the Frama-C WP proofs of the native kernel against ``proofs/wp-manifest.json``.

``python -m sonnx_mul_assurance.c.wp check`` runs ``frama-c -wp -wp-rte`` on
every C file the manifest lists (``native/src/*.c`` with the header's ACSL
contracts), parses the per-goal verdicts, writes ``proofs/out/wp.json`` and
exits non-zero when a goal is not proved, when the run yields no goal, when
a manifest goal is missing or a goal is new to the manifest, when Frama-C
fails, when a pinned statement changed, or when a hardware loop is not
proved against the contract of the proved loop it stands in for
(``STANDS_IN``).

What a WP goal states is pinned per function: the SHA-256 of the function
as Frama-C's own printer shows it after ``-wp-rte`` (the ACSL contract, the
loop annotations, the RTE assertions and the code, normalised by Frama-C:
no comments, no layout), with the contract text kept in the manifest for
review.  A weakened ``ensures``, a dropped ``assigns`` or an edited loop
changes the hash even when every goal name stays the same.

Every goal is decided by its pinned prover within its pinned step limit
(``wp_plan``: the prover's deterministic resource count, ``-wp-steps``), so
the verdict does not depend on the machine's load; ``timeout`` is only a
safety net, and a check's is ``CHECK_NET_FACTOR`` times wider (the limits,
the manifest's reading and writing and the comparison rule are the pinned
proofs' core's, :mod:`sonnx_mul_assurance.pinned`; the printed functions
and their hashes are :mod:`.wp_statements`').  The provers
take turns; racing them cost twice the CPU.

``update-manifest`` rewrites the manifest from what the provers prove now
(review the diff).  Provers are reached through Why3 with the project's
configuration ``proofs/wp-why3.conf.in``, rendered into
``proofs/out/wp-why3.conf`` and passed through ``WHY3CONFIG``.

    python -m sonnx_mul_assurance.c.wp check [--function F ...]
    python -m sonnx_mul_assurance.c.wp update-manifest
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sonnx_mul.digest import sha256
from sonnx_mul_assurance import pinned as core
from sonnx_mul_assurance.c import wp_plan
from sonnx_mul_assurance.c.wp_statements import (
    frama_c_argv,
    printed_functions,
    stand_in_errors,
)
from sonnx_mul_assurance.evidence import binding, files, schema

MANIFEST = Path("proofs/wp-manifest.json")
CONF_TEMPLATE = Path("proofs/wp-why3.conf.in")
PROOFS = core.Proofs(MANIFEST, CONF_TEMPLATE, files.WP)
UNIT_JOBS = 2
"""Units ``check`` proves at once."""
INCLUDE = Path("native/include")
HEADER = INCLUDE / "sonnx_mul_kernel.h"
WHY3_SPEC = Path("why3")
"""The Why3 theories the configuration's load path (``@WHY3_SPEC@``) reaches."""

# "[wp] [CVC4 1.8] Goal typed_f_x : Valid (Qed:12ms) (50ms)" and
# "[wp] [Failed] Goal typed_f_x" (verdict on the next line, per prover).
_GOAL_RE = re.compile(r"^\[wp\] \[(?P<prover>[^\]]+)\] Goal (?P<goal>\S+)(?: : (?P<status>\w+))?")
_SCHEDULED_RE = re.compile(r"^\[wp\] (\d+) goals? scheduled", re.M)
_TIME_RE = re.compile(r"\((?:Qed:[0-9.]+m?s\) \()?(?P<t>[0-9.]+)(?P<u>m?s)\)")
_QED_ONLY_RE = re.compile(r": Valid(?: \(Qed:[0-9.]+m?s\))?\s*$")
_STEPS_RE = re.compile(r"\((?P<steps>\d+)\)\s*$")  # "... (50ms) (16734)"


@dataclass
class Goal:
    """One WP goal: its function, the prover that closed it (or the last
    verdicts seen), its status, time in seconds and the prover's step count
    (-1 for Qed, or when a prover reports none)."""

    function: str
    prover: str
    status: str
    seconds: float = 0.0
    steps: int = -1


@dataclass
class Unit:
    """One C file proved in Frama-C runs: ``provers`` in turn, ``timeout`` the
    safety net in seconds (the step limits decide); ``measure_steps`` caps a
    prover's search in ``update-manifest`` (default ``pinned.MEASURE_STEPS``):
    a quick prover that cannot prove some goals then passes them on after
    that many steps, instead of burning the timeout on each."""

    source: str
    provers: list[str]
    timeout: int
    extra: list[str] = field(default_factory=list)
    measure_steps: dict[str, int] = field(default_factory=dict)

    def safety_net(self, measure: bool) -> int:
        """A goal's wall-clock limit in seconds: ``timeout`` when measuring
        (``update-manifest``: where a prover cannot prove a goal, it stops
        there), ``CHECK_NET_FACTOR`` times that in a check, where the pinned
        step limit decides and the net is never to be reached, however busy
        the machine."""
        return self.timeout if measure else core.check_net(self.timeout)

    def search_steps(self, prover: str) -> int:
        """The step limit of ``prover`` (a shortcut) in ``update-manifest``."""
        return self.measure_steps.get(prover, core.MEASURE_STEPS)


@dataclass
class Run:
    """The outcome of one Frama-C run on one unit."""

    unit: Unit
    exit_code: int
    seconds: float
    scheduled: int
    goals: dict[str, Goal]
    functions: dict[str, str]  # function -> SHA-256 of its printed text
    contracts: dict[str, str]  # function -> its printed ACSL contract
    output: str


def driver_infix(extra: Sequence[str]) -> str:
    """What a ``-wp-driver`` among ``extra`` adds to WP's goal names: the
    model becomes ``typed_<stem>`` (``typed_sonnx_ieee_f_assert_x``)."""
    drivers = [extra[i + 1] for i, arg in enumerate(extra[:-1]) if arg == "-wp-driver"]
    return "_".join(re.sub(r"\W", "_", Path(d).stem) for d in drivers)


def parse_goals(output: str, functions: Sequence[str], infix: str = "") -> dict[str, Goal]:
    """Per-goal verdicts from Frama-C's log: ``Valid`` with the prover that
    proved it, or the failing verdicts of every prover tried.  Goal names
    are kept as without a WP driver (``infix``, see ``driver_infix``,
    removed), so that the pins do not depend on the driver file's name."""
    names = sorted(functions, key=len, reverse=True)
    goals: dict[str, Goal] = {}
    lines = output.splitlines()
    for index, line in enumerate(lines):
        match = _GOAL_RE.match(line)
        if match is None:
            continue
        name = match["goal"]
        if infix:
            name = name.replace(f"typed_{infix}_", "typed_", 1)
        status = match["status"]
        prover = match["prover"]
        if status is None:  # "[Failed] Goal g": prover verdicts follow, indented
            verdicts = []
            for follow in lines[index + 1 :]:
                if not follow.startswith("  "):
                    break
                verdicts.append(follow.strip())
            status = "Failed"
            prover = "; ".join(verdicts) or prover
        seconds = 0.0
        timing = _TIME_RE.search(line)
        if timing is not None:
            seconds = float(timing["t"]) / (1000.0 if timing["u"] == "ms" else 1.0)
        counted = _STEPS_RE.search(line) if match["status"] is not None else None
        steps = int(counted["steps"]) if counted is not None else -1
        if status == core.VALID and timing is None and _QED_ONLY_RE.search(line):
            # "Valid" or "Valid (Qed:11ms)" under a prover's name: Why3's
            # transformations reduced the goal to true before any prover ran
            # (e.g. x = x, or a lemma whose sides unfold to one term)
            steps = 0
        bare = name.removeprefix("typed_")
        function = next((f for f in names if bare.startswith(f + "_")), "?")
        if bare.startswith("lemma_"):  # an ACSL lemma: a global, like the logic it uses
            function = wp_plan.GLOBALS
        goals[name] = Goal(function, _prover_key(prover), status, seconds, steps)
    return goals


def _prover_key(prover: str) -> str:
    """A stable prover name: 'Qed', 'CVC4 1.8', 'CVC4 1.8 (axioms)' (timings
    and step counts dropped, a Why3 alternative kept)."""
    return re.sub(r"\s*\((?:Qed|[0-9])[^)]*\).*$", "", prover).strip()


def prove(
    root: Path,
    unit: Unit,
    *,
    functions: Sequence[str] = (),
    source: Path | None = None,
    include: Path | None = None,
    parallel: int = 2,
    pins: Mapping[str, Mapping[str, Any]] | None = None,
    measure: bool = False,
    properties: Sequence[str] = (),
) -> Run:
    """Run WP on ``unit`` (or on ``source``, a planted copy), on every
    function or only on ``functions``; never raises on failed goals.

    The provers take turns as ``wp_plan`` says: each goal the manifest
    ``pins`` (the unit's goals) is tried by its pinned prover within the
    widest step limit of that prover's goals (``compare`` then holds it to
    its own).  With ``measure`` (``update-manifest``), the limits are the
    unit's ``search_steps`` (``pinned.MEASURE_STEPS`` unless capped) and every
    open goal goes to the next prover; the pins only say which named
    properties the first prover need not try.
    ``properties`` (names or categories, as ``-wp-prop`` takes them) narrow
    the goals further, in every pass; the first prover then tries every
    selected goal, within the widest limit of the selected goals pinned to it
    (none: ``pinned.UNHELD_STEPS``, it passes them on to their own provers).
    """
    conf = PROOFS.render_config(root)
    src = source if source is not None else root / unit.source
    inc = include if include is not None else root / INCLUDE
    hashes, contracts = printed_functions(src, inc)
    # the manifest names files (a WP driver) relative to the repository
    extra = [str(root / arg) if (root / arg).is_file() else arg for arg in unit.extra]
    infix = driver_infix(unit.extra)
    text = src.read_text()
    known = wp_plan.labels(text)
    names_of = wp_plan.prover_names(conf.read_text())
    first = unit.provers[0]
    pinned = {g: p for g, p in (pins or {}).items() if not functions or p["function"] in functions}
    # the widest limit of a prover's goals among the selected ones: the
    # property filter's when it names pinned goals (a planted fault's false
    # goal burns it all), else the functions'; a prover none of them is
    # pinned to only passes its goals on (as the check's first pass skips
    # them), it decides none
    chosen = {g: p for g, p in pinned.items() if wp_plan.selects(g, properties)}
    held = chosen or pinned

    def budget(prover: str) -> int:
        if measure:
            return unit.search_steps(prover)
        return wp_plan.step_budget(held, names_of.get(prover, prover))

    # a property filter and the pins' exclusions cannot be combined in one
    # -wp-prop (it takes a union): with a filter, the first prover tries all
    skipped = (
        {} if properties else wp_plan.skipped_properties(pinned, names_of.get(first, first), known)
    )
    env = dict(os.environ, WHY3CONFIG=str(conf))
    net = unit.safety_net(measure)
    names = list(hashes)
    start = time.perf_counter()
    goals: dict[str, Goal] = {}
    outputs: list[str] = []
    exit_code = lost = 0  # lost: verdicts scheduled but not read, over every run

    def run(invocation: wp_plan.Invocation) -> dict[str, Goal]:
        nonlocal exit_code, lost
        argv = [*frama_c_argv(src, inc), *_wp_options(invocation, parallel, extra)]
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
        output = proc.stdout + proc.stderr
        outputs.append(output)
        exit_code = exit_code or proc.returncode
        found = parse_goals(output, names, infix)
        lost += sum(int(m) for m in _SCHEDULED_RE.findall(output)) - len(found)
        return found

    lemmas = re.search(r"\blemma\s+\w+\s*:", text) is not None
    passes = wp_plan.first_pass(functions, skipped, first, budget(first), net, properties, lemmas)
    for invocation in passes:
        goals.update(run(invocation))
    for prover in unit.provers[1:]:
        if not goals and not pinned:  # Frama-C failed: nothing to retry
            break
        name = names_of.get(prover, prover)
        todo = {
            g: p["function"]
            for g, p in pinned.items()
            if p.get("prover") == name and (g not in goals or goals[g].status != core.VALID)
        }
        if measure:
            todo.update({g: v.function for g, v in goals.items() if v.status != core.VALID})
        if properties:  # only the selected goals
            todo = {g: f for g, f in todo.items() if g in goals or wp_plan.selects(g, properties)}
        leave_out = wp_plan.elsewhere(pinned, name, todo, known)
        for invocation in wp_plan.retry(
            todo, known, (prover,), budget(prover), net, leave_out, properties
        ):
            found = run(invocation)
            goals.update({g: v for g, v in found.items() if g in todo})
    seconds = time.perf_counter() - start
    scheduled = len(goals) + lost
    return Run(unit, exit_code, seconds, scheduled, goals, hashes, contracts, "".join(outputs))


def _wp_options(invocation: wp_plan.Invocation, parallel: int, extra: Sequence[str]) -> list[str]:
    return [
        "-wp",
        "-wp-rte",
        "-warn-special-float",
        "none",
        "-wp-prover",
        ",".join(invocation.provers),
        "-wp-steps",
        str(invocation.steps),
        "-wp-timeout",
        str(invocation.timeout),
        "-wp-par",
        str(parallel),
        "-wp-no-cache-env",
        "-wp-cache",
        "none",
        *extra,
        *invocation.selection_argv(),
    ]


def units(manifest: dict[str, Any]) -> list[Unit]:
    """The units of a manifest, in its order."""
    return [
        Unit(
            u["source"],
            list(u["provers"]),
            int(u["timeout"]),
            list(u.get("extra", [])),
            {p: int(n) for p, n in u.get("measure_steps", {}).items()},
        )
        for u in manifest["units"]
    ]


def compare(run: Run, pinned: dict[str, Any], functions: Sequence[str] = ()) -> list[str]:
    """Every reason the run does not match the manifest entry ``pinned`` (on
    ``functions`` only, when given): empty means proved and as pinned."""
    errors: list[str] = []
    src = run.unit.source
    if run.exit_code != 0:
        errors.append(f"{src}: frama-c exited {run.exit_code}:\n{run.output[-2000:]}")
    if not run.goals:
        errors.append(f"{src}: no WP goal at all")
    if run.scheduled != len(run.goals):
        errors.append(f"{src}: {run.scheduled} goals scheduled but {len(run.goals)} verdicts read")
    selected = set(functions) if functions else None

    def chosen(function: str) -> bool:
        return selected is None or function in selected or function == wp_plan.GLOBALS

    for name, goal in sorted(run.goals.items()):
        pin = pinned["goals"].get(name, {})
        if goal.status != core.VALID:
            limit = f", limit {pin['steplimit']} steps" if "steplimit" in pin else ""
            errors.append(f"{src}: goal {name} not proved: {goal.status} ({goal.prover}{limit})")
        # a run's limit is the widest of its goals': each is held to its own
        elif goal.prover == pin.get("prover") and not core.within(goal.steps, pin):
            errors.append(
                f"{src}: goal {name} proved by {goal.prover} in {goal.steps} steps,"
                f" over its limit of {pin['steplimit']}"
            )
    want_goals: dict[str, Any] = {g: v for g, v in pinned["goals"].items() if chosen(v["function"])}
    have = {g for g, v in run.goals.items() if chosen(v.function)}
    for name in sorted(set(want_goals) - have):
        errors.append(f"{src}: manifest goal {name} is missing from the run")
    for name in sorted(have - set(want_goals)):
        errors.append(f"{src}: goal {name} is new (not in the manifest)")
    for function, digest in sorted(pinned["functions"].items()):
        if not chosen(function):
            continue
        now = run.functions.get(function)
        if now is None:
            errors.append(f"{src}: function {function} is gone")
        elif now != digest["sha256"]:
            errors.append(
                f"{src}: the statement of {function} changed (printed text SHA-256 {now},"
                f" pinned {digest['sha256']}); contract now: {run.contracts.get(function, '')}"
            )
    for function in sorted(set(run.functions) - set(pinned["functions"])):
        if chosen(function):
            errors.append(f"{src}: function {function} is new (not in the manifest)")
    return errors


def inputs(root: Path) -> list[Path]:
    """Every file a check's verdict depends on, from the manifest: the
    manifest, each unit's source and the files its options name (a WP
    driver), the headers the sources are compiled with, the configuration
    template and the drivers and theories it reaches, and this checker's own
    code.  ``wp.json`` records their SHA-256; the gate compares them with the
    tree's (:mod:`..evidence.binding`)."""
    listed = PROOFS.config_inputs(root)
    for unit in units(PROOFS.load_manifest(root)):
        listed.add(Path(unit.source))
        listed |= {Path(arg) for arg in unit.extra if (root / arg).is_file()}
    for folder, pattern in ((INCLUDE, "*.h"), (WHY3_SPEC, "*.mlw")):
        listed |= {p.relative_to(root) for p in (root / folder).glob(pattern) if p.is_file()}
    listed |= set(binding.own_code(__spec__, __name__))
    return sorted(listed)


def goal_names(manifest: Mapping[str, Any]) -> dict[str, set[str]]:
    """The goals a complete check proves: unit source -> its pinned goal names."""
    return {u["source"]: set(u["goals"]) for u in manifest["units"]}


def tool_versions() -> dict[str, str]:
    """Frama-C, Why3 and prover versions, as the tools print them."""
    return {
        name: core.version_line(argv, timeout=30, absent="not found", empty="not found")
        for name, argv in {
            "frama-c": ["frama-c", "-version"],
            "why3": ["why3", "--version"],
            "cvc4": ["cvc4", "--version"],
            "z3-debian": ["/usr/bin/z3", "--version"],
            "cvc5": ["cvc5", "--version"],
        }.items()
    }


def manifest_entry(run: Run) -> dict[str, Any]:
    """The manifest entry pinning ``run`` (all goals must be proved)."""
    caps = {"measure_steps": run.unit.measure_steps} if run.unit.measure_steps else {}
    return {
        "source": run.unit.source,
        "provers": run.unit.provers,
        "timeout": run.unit.timeout,
        "extra": run.unit.extra,
        **caps,
        "functions": {
            f: {"sha256": h, "contract": run.contracts.get(f, "")}
            for f, h in sorted(run.functions.items())
        },
        "goals": {g: _goal_pin(v) for g, v in sorted(run.goals.items())},
    }


def _goal_pin(goal: Goal) -> dict[str, Any]:
    """A goal's manifest entry: Qed's goals need no limit; a prover's carry
    the steps their proof took and the limit they are held to."""
    pin: dict[str, Any] = {"function": goal.function, "prover": goal.prover}
    if goal.prover != wp_plan.QED:
        pin.update(core.step_pin(goal.prover, goal.steps, "a WP goal"))
    return pin


def check(root: Path, functions: Sequence[str] = ()) -> int:
    """Prove every unit, compare with the manifest, write proofs/out/wp.json
    (:class:`~sonnx_mul_assurance.evidence.schema.WpEvidence`, through ``schema.dump``)."""
    manifest = PROOFS.load_manifest(root)
    bound = binding.digest(root, inputs(root))
    errors: list[str] = []
    records: list[schema.WpUnit] = []
    total_goals = 0
    contracts: dict[str, str] = {}
    pairs = list(zip(units(manifest), manifest["units"], strict=True))
    # Two units at a time: Frama-C computes a unit's goals on one core, so a
    # unit alone leaves the other core idle once Why3 and CrossHair are done
    # (make prove: WP alone for 400 of its 950 s).  Step limits decide every
    # goal, so the verdicts do not depend on what else runs.
    with ThreadPoolExecutor(max_workers=UNIT_JOBS) as pool:
        runs = pool.map(
            lambda pair: prove(root, pair[0], functions=functions, pins=pair[1]["goals"]), pairs
        )
    for (unit, pinned), run in zip(pairs, runs, strict=True):
        unit_errors = compare(run, pinned, functions)
        errors += unit_errors
        contracts.update(run.contracts)
        by_prover: dict[str, int] = {}
        for goal in run.goals.values():
            by_prover[goal.prover] = by_prover.get(goal.prover, 0) + 1
        total_goals += len(run.goals)
        print(
            f"wp: {unit.source}: {sum(g.status == core.VALID for g in run.goals.values())}"
            f"/{len(run.goals)} goals proved in {run.seconds:.1f} s"
            f" ({', '.join(f'{p} {n}' for p, n in sorted(by_prover.items()))})",
            flush=True,
        )
        records.append(evidence_unit(root, run, unit_errors))
    stand_in = stand_in_errors(contracts)
    errors += stand_in
    # the record says what was proved: files edited while the provers ran are not
    errors += binding.changed_during(PROOFS.evidence, root, bound, inputs(root))
    verdict = "yes" if not stand_in else "NO"
    print(f"wp: hardware loops under the proved loops' contracts: {verdict}")
    record = schema.WpEvidence(
        tools=tool_versions(),
        units=records,
        goals=total_goals,
        verdict="pass" if not errors else "fail",
        errors=errors,
        inputs=bound,
    )
    schema.dump(record, PROOFS.evidence_path(root))
    ratio, worst = largest_ratio(manifest, records)
    print(f"wp: largest steps/limit of a goal: {ratio:.3f} ({worst})")
    for error in errors:
        print(f"wp: FAIL {error}", file=sys.stderr)
    print(f"wp: {total_goals} goals, {'all proved and as pinned' if not errors else 'FAILED'}")
    return 0 if not errors else 1


def largest_ratio(manifest: Mapping[str, Any], units: Sequence[schema.WpUnit]) -> tuple[float, str]:
    """The largest steps / pinned limit of a goal proved by its pinned prover
    (goals are named per unit: two files may both have a function ``loop``)."""
    pins = {(u["source"], g): p for u in manifest["units"] for g, p in u["goals"].items()}
    ratio, worst = core.largest_ratio(
        (goal.steps, int(pin["steplimit"]), f"{unit.source}: {name}")
        for unit in units
        for name, goal in unit.goals.items()
        if "steplimit" in (pin := pins.get((unit.source, name), {}))
        and goal.prover == pin["prover"]
    )
    return ratio, worst or "-"


def evidence_unit(root: Path, run: Run, errors: list[str]) -> schema.WpUnit:
    """The ``wp.json`` record of one run (``errors``: its differences from the manifest)."""
    return schema.WpUnit(
        source=run.unit.source,
        source_sha256=sha256(root / run.unit.source),
        header_sha256=sha256(root / HEADER),
        seconds=run.seconds,
        goals={g: schema.WpGoal(**asdict(v)) for g, v in sorted(run.goals.items())},
        errors=errors,
    )


def update_manifest(root: Path, only: Sequence[str] = ()) -> int:
    """Rewrite the manifest from a fresh run (of the units whose source is in
    ``only``, when given; the others keep their entries); refuses while a
    goal is unproved."""
    manifest = PROOFS.load_manifest(root)
    entries = []
    failed = False
    for unit, pinned in zip(units(manifest), manifest["units"], strict=True):
        if only and unit.source not in only:
            entries.append(pinned)
            continue
        run = prove(root, unit, pins=pinned["goals"], measure=True)
        bad = [g for g, v in run.goals.items() if v.status != core.VALID]
        print(f"wp: {unit.source}: {len(run.goals)} goals in {run.seconds:.1f} s, unproved: {bad}")
        if run.exit_code != 0 or not run.goals or bad:
            print(run.output[-3000:])
            failed = True
            continue  # an unproved goal has no pin (nor, often, a step count)
        entries.append(manifest_entry(run))
    if failed:
        return 1
    manifest["units"] = entries
    PROOFS.write_manifest(root, manifest)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("command", choices=("check", "update-manifest"))
    parser.add_argument("--root", type=Path, default=Path.cwd())
    parser.add_argument("--function", action="append", default=[], help="only this function")
    parser.add_argument(
        "--unit", action="append", default=[], help="update-manifest: only this source"
    )
    args = parser.parse_args(argv)
    if args.command == "check":
        return check(args.root, args.function)
    return update_manifest(args.root, args.unit)


if __name__ == "__main__":
    sys.exit(main())
