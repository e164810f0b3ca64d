"""Run the Why3 proofs of the project against ``proofs/manifest.json``.

``python -m sonnx_mul_assurance.why3.driver check`` proves every goal of every proof
file the manifest lists (``.mlw`` theories; Why3 Python-frontend files can
be added the same way) with the prover the manifest pins and within the
goal's **step limit** (``steplimit``: the prover's own deterministic
resource count, Z3's ``rlimit``, CVC4's and cvc5's resource units; the
limits are the pinned proofs' core's, :mod:`sonnx_mul_assurance.pinned`,
and :mod:`.plan` says which run gets which), writes
``proofs/out/why3.json`` and exits non-zero when a goal is unproved, a
manifest goal disappeared, a new goal is missing from the manifest, a file
yields no goal, or a prover is missing.  The verdict of a goal is a function
of the goal, the prover binary and the limit: never of the machine's load.
A wall-clock limit (``SAFETY_NET``) stays only to end a run that hangs; it is
many times the slowest goal's time (``why3/README.md``), and a check's is
``CHECK_NET_FACTOR`` times wider.  Gappa has no
step count: its goals keep a time limit (``timelimit``), far above its
measured times at full load.

``update-manifest`` rewrites the manifest from what the provers prove now,
with each goal's steps and the limit ``pinned.step_limit`` derives from them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sonnx_mul.digest import sha256
from sonnx_mul_assurance import pinned as core
from sonnx_mul_assurance.evidence import binding, files, schema
from sonnx_mul_assurance.why3 import statements
from sonnx_mul_assurance.why3.plan import (
    Limit,
    Result,
    discovery_limit,
    goal_limit,
    pin,
    proved,
    verdict,
    widest,
)
from sonnx_mul_assurance.why3.runner import (
    base_name,
    file_statements,
    modules_of,
    needed_provers,
    prover_versions,
    run_why3,
    tool_version,
)

MANIFEST = Path("proofs/manifest.json")
CONF_TEMPLATE = Path("proofs/why3.conf.in")
PROOFS = core.Proofs(MANIFEST, CONF_TEMPLATE, files.WHY3)
PORTFOLIO: tuple[str, ...] = ("z3", "cvc5", "cvc5-axioms", "cvc4", "z3-debian", "gappa")
PARALLEL_FILES = max(1, min(os.cpu_count() or 1, 4))

Key = tuple[str, str, str]  # (file, module, goal#k)


@dataclass
class Report:
    results: dict[Key, Result] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    limits: dict[Key, int] = field(default_factory=dict)  # the pinned step limits

    def largest_ratio(self) -> tuple[float, Key | None]:
        """The largest steps / limit of a goal proved by its pinned prover."""
        return core.largest_ratio(
            (r.steps, self.limits.get(k, 0), k)
            for k, r in self.results.items()
            if r.status == core.VALID
        )


def inputs(root: Path) -> list[Path]:
    """Every file a check's verdict depends on, from the manifest: the
    manifest, each proof file it lists and every theory of their load paths
    (``.mlw``, and the Python-frontend files), the drivers and configuration
    it pins (``pinned``: the project's and the Why3 library drivers they
    import), the project's drivers folder, and this checker's own code.
    ``why3.json`` records their SHA-256; the gate compares them with the
    tree's (:mod:`..evidence.binding`)."""
    manifest = PROOFS.load_manifest(root)
    listed = PROOFS.config_inputs(root)
    for entry in manifest["files"]:
        listed.add(Path(entry["path"]))
        for folder in entry.get("loadpath", []):
            for pattern in ("*.mlw", "*.py"):
                listed |= {p.relative_to(root) for p in (root / folder).rglob(pattern)}
    listed |= {Path(p) for p in manifest.get("pinned", {})}
    listed |= set(binding.own_code(__spec__, __name__))
    return sorted(listed)


def goal_keys(manifest: dict[str, Any]) -> set[tuple[str, str, str]]:
    """The goals a complete check proves: (file, module, goal#k) of every manifest goal."""
    return {
        (str(e["path"]), str(g["module"]), str(g["goal"]))
        for e in manifest["files"]
        for g in e["goals"]
    }


def tool_versions(root: Path, portfolio: tuple[str, ...] = PORTFOLIO) -> dict[str, str]:
    """why3's and every needed prover's version line (the portfolio's and
    those the manifest pins), as the check records them in ``why3.json``."""
    versions = {"why3": tool_version("why3")}
    needed = needed_provers(portfolio, PROOFS.load_manifest(root)["files"])
    found, _ = prover_versions(PROOFS.render_config(root), needed)
    return versions | {prover: found.get(prover, "missing") for prover in needed}


def prove_file(
    root: Path,
    conf: Path,
    entry: dict[str, Any],
    report: Report,
    only: list[str] | None = None,
    selected: frozenset[tuple[str, str]] | None = None,
) -> None:
    path = str(entry["path"])
    expected: dict[tuple[str, str], dict[str, Any]] = {
        (g["module"], g["goal"]): g for g in entry.get("goals", [])
    }
    if selected is not None:
        prove_selected(root, conf, entry, report, expected, selected)
        return
    total = 0
    order: list[tuple[str, str]] = []
    for module in modules_of(root, entry):
        if only is not None and module not in only:
            continue
        mine = {goal: g for (m, goal), g in expected.items() if m == module}
        found, best = prove_module(root, conf, entry, module, mine)
        total += len(found)
        order += [(module, goal) for goal in found]
        for goal, r in found.items():
            report.results[(path, module, goal)] = best.get(goal, r)
            if goal in mine and report.results[(path, module, goal)].prover == mine[goal]["prover"]:
                report.limits[(path, module, goal)] = int(mine[goal].get("steplimit", 0))
            if goal not in mine:
                report.errors.append(f"new goal not in the manifest: {path} {module} {goal}")
            elif goal not in best:
                report.errors.append(
                    f"goal not proved: {path} {module} {goal} ({verdict(r, mine[goal])})"
                )
        for goal in mine:
            if goal not in found:
                report.errors.append(f"manifest goal no longer exists: {path} {module} {goal}")
    if total == 0:
        report.errors.append(f"proof file yields zero goals: {path}")
        return
    # Same names are not enough: the statement and hypotheses of every goal
    # must be those the manifest pins.
    now = file_statements(root, entry, order)
    report.errors.extend(statements.compare(path, expected, now))


def prove_module(
    root: Path, conf: Path, entry: dict[str, Any], module: str, mine: dict[str, dict[str, Any]]
) -> tuple[dict[str, Result], dict[str, Result]]:
    """Every goal of ``module`` (found) and those proved (best), each by its
    pinned prover within its pinned limit (or by the first pass's prover
    within that pass's limit): deterministic whatever the load."""
    by_prover: dict[str, list[str]] = defaultdict(list)
    for goal, g in mine.items():
        by_prover[str(g.get("prover") or PORTFOLIO[0])].append(goal)
    stepped = [p for p in by_prover if p not in core.TIME_ONLY] or list(by_prover) or [PORTFOLIO[0]]
    main = max(stepped, key=lambda p: len(by_prover[p]))
    first = discovery_limit([goal_limit(mine[g]) for g in by_prover[main]])
    # One pass over the whole module finds every goal (new ones included) and
    # proves most of them; the rest get their pinned prover and limit.
    found = dict(run_why3(root, conf, entry, module, main, first))
    best = {k: r for k, r in found.items() if proved(r, mine.get(k))}
    for prover in sorted(by_prover, key=lambda p: p == main):
        todo = [g for g in by_prover[prover] if g in found and g not in best]
        limit = widest(goal_limit(mine[g]) for g in todo)
        if not todo or (
            prover == main
            and limit.steps is not None
            and limit.steps <= (first.steps or 0)
            and limit.seconds <= first.seconds
        ):
            continue  # tried already with at least this limit
        for k, r in run_why3(root, conf, entry, module, prover, limit, map(base_name, todo)):
            if k in found and k not in best:
                found[k] = r  # the answer of a later, pinned run names the failure
                if proved(r, mine.get(k)):
                    best[k] = r
    return found, best


def prove_selected(
    root: Path,
    conf: Path,
    entry: dict[str, Any],
    report: Report,
    expected: dict[tuple[str, str], dict[str, Any]],
    selected: frozenset[tuple[str, str]],
) -> None:
    """Prove only the ``selected`` manifest goals, each by its pinned prover
    within its pinned limit, as the full check does.

    No discovery pass: the statements of every goal of the modules concerned
    are compared with the manifest, in the manifest's order.  For the negative
    controls, whose planted faults make known goals false.
    """
    path = str(entry["path"])
    for module, goal in sorted(selected - set(expected)):
        report.errors.append(f"selected goal not in the manifest: {path} {module} {goal}")
    chosen = sorted(selected & set(expected))
    best: dict[tuple[str, str], Result] = {}  # the pinned prover's answer

    for module in dict.fromkeys(m for m, _ in chosen):
        todo = [goal for m, goal in chosen if m == module]
        by_prover: dict[str, list[str]] = defaultdict(list)
        for goal in todo:
            by_prover[str(expected[(module, goal)].get("prover") or PORTFOLIO[0])].append(goal)
        for prover, goals in by_prover.items():
            limit = widest(goal_limit(expected[(module, g)]) for g in goals)
            for k, r in run_why3(root, conf, entry, module, prover, limit, map(base_name, goals)):
                if k in goals:
                    best[(module, k)] = r
    for key in chosen:
        result = best.get(key)
        if result is None:
            report.errors.append(f"manifest goal no longer exists: {path} {key[0]} {key[1]}")
            continue
        report.results[(path, *key)] = result
        if result.prover == expected[key]["prover"]:
            report.limits[(path, *key)] = int(expected[key].get("steplimit", 0))
        if not proved(result, expected[key]):
            report.errors.append(
                f"goal not proved: {path} {key[0]} {key[1]} ({verdict(result, expected[key])})"
            )
    modules = {m for m, _ in chosen}
    order = [key for key in expected if key[0] in modules]
    try:
        now = file_statements(root, entry, order)
    except RuntimeError as exc:
        report.errors.append(str(exc))
    else:
        report.errors.extend(statements.compare(path, expected, now))


def run_check(
    root: Path,
    files: list[str] | None = None,
    portfolio: tuple[str, ...] = PORTFOLIO,
    out: Path | None = None,
    modules: list[str] | None = None,
    goals: frozenset[tuple[str, str]] | None = None,
) -> int:
    """Prove the manifest's files (or a subset, or some modules, or only the
    ``goals`` (module, goal#k) of the manifest: see ``prove_selected``) under ``root``.

    Returns 0 when every goal is proved and the goals match the manifest.
    """
    root = root.resolve()
    start = time.monotonic()
    report = Report()
    manifest = PROOFS.load_manifest(root)
    bound = binding.digest(root, inputs(root))
    entries = [e for e in manifest["files"] if files is None or e["path"] in files]
    # a file asked for but not in the manifest would be proved by no run: a check
    # that cannot fail (a mutant of a theory the manifest does not list survived it)
    listed = {e["path"] for e in manifest["files"]}
    report.errors += [f"not in {MANIFEST.as_posix()}: {f}" for f in files or () if f not in listed]
    versions: dict[str, str] = {}
    if shutil.which("why3") is None:
        report.errors.append("prover missing: why3 is not installed (proofs/install-provers.sh)")
    else:
        versions["why3"] = tool_version("why3")
        conf = PROOFS.render_config(root)
        found, missing = prover_versions(conf, needed_provers(portfolio, entries))
        versions.update(found)
        report.errors += missing
        if not report.errors:
            # Files are proved concurrently (why3 spends most of its time parsing,
            # one core per run); each gets its own Report, merged in manifest order.
            def prove(entry: dict[str, Any]) -> Report:
                mine = Report()
                try:
                    prove_file(root, conf, entry, mine, modules, goals)
                except RuntimeError as exc:
                    mine.errors.append(str(exc))
                return mine

            with ThreadPoolExecutor(max_workers=PARALLEL_FILES) as pool:
                for part in pool.map(prove, entries):
                    report.results.update(part.results)
                    report.errors.extend(part.errors)
                    report.limits.update(part.limits)
    # The drivers and configuration the goals are proved with are pinned too:
    # a driver mapping float16 to a wider SMT format must not pass unnoticed.
    try:
        pins = statements.pinned_files(root)
    except (OSError, RuntimeError) as exc:
        report.errors.append(f"cannot hash the drivers: {exc}")
    else:
        report.errors += statements.compare_pins(manifest.get("pinned", {}), pins)
    # the record says what was proved: files edited while the provers ran are not
    report.errors += binding.changed_during(PROOFS.evidence, root, bound, inputs(root))
    elapsed = time.monotonic() - start
    out = out or PROOFS.evidence_path(root)
    write_report(root, out, entries, report, versions, elapsed, bound)
    print_summary(report, elapsed)
    return 1 if report.errors else 0


def write_report(
    root: Path,
    out: Path,
    entries: list[dict[str, Any]],
    report: Report,
    versions: dict[str, str],
    elapsed: float,
    inputs: dict[str, str] | None = None,
) -> None:
    """Write ``why3.json``; ``inputs``: the files the verdict depends on and
    their SHA-256 when the check started (:func:`inputs`)."""
    hashes = {str(e["path"]): sha256(root / e["path"]) for e in entries}
    goals = [
        schema.Why3Goal(
            f,
            m,
            g,
            r.prover,
            r.time,
            r.status,
            hashes.get(f, ""),
            r.steps,
            report.limits.get((f, m, g), 0),
        )
        for (f, m, g), r in sorted(report.results.items())
    ]
    evidence = schema.Why3Evidence(
        ok=not report.errors,
        errors=report.errors,
        versions=versions,
        files=hashes,
        total_time=round(elapsed, 2),
        goals=goals,
        inputs=dict(inputs or {}),
    )
    schema.dump(evidence, out)


def print_summary(report: Report, elapsed: float) -> None:
    per_file = Counter(k[0] for k in report.results)
    valid = Counter(r.prover for r in report.results.values() if r.status == core.VALID)
    for f, n in sorted(per_file.items()):
        print(f"{f}: {n} goals")
    for p, n in sorted(valid.items()):
        print(f"  proved by {p}: {n}")
    print(f"total: {len(report.results)} goals, {sum(valid.values())} proved, {elapsed:.1f} s")
    ratio, worst = report.largest_ratio()
    if worst is not None:
        print(f"largest steps/limit of a goal: {ratio:.3f} ({' '.join(worst)})")
    for err in report.errors:
        print(f"ERROR: {err}", file=sys.stderr)
    print("why3 proofs: " + ("FAILED" if report.errors else "OK"))


def prove_goals(
    root: Path,
    conf: Path,
    entry: dict[str, Any],
    portfolio: tuple[str, ...],
    limit: int,
    pinned: dict[tuple[str, str], str],
) -> tuple[list[dict[str, Any]], int]:
    """Each goal of the file with the first prover proving it within ``limit``
    seconds: its ``pinned`` prover first when it has one, then the entry's
    ``prefer`` provers, then the portfolio's (narrowed by the entry's
    ``fallback``: widen.mlw keeps out provers whose native floats give an
    overflowing ``round`` an arbitrary value)."""
    prefer = tuple(str(p) for p in entry.get("prefer", []))
    allowed = [str(p) for p in entry.get("fallback", portfolio)]
    portfolio = prefer + tuple(p for p in portfolio if p not in prefer and p in allowed)
    measure = Limit(core.MEASURE_STEPS, limit)
    goals: list[dict[str, Any]] = []
    failed = 0
    for module in modules_of(root, entry):
        old = {g: p for (m, g), p in pinned.items() if m == module}
        first = (
            max(portfolio, key=lambda p: sum(v == p for v in old.values())) if old else portfolio[0]
        )
        # list the goals at a step limit that proves none but the trivial
        # ones (a real search here would burn the time limit on every goal
        # pinned to another prover)
        found = run_why3(root, conf, entry, module, first, Limit(1, limit))
        order = [k for k, _ in found]
        best = {k: r for k, r in found if r.status == core.VALID and r.steps >= 0}
        tried: dict[str, set[str]] = {k: set() for k in order}
        while True:
            # each open goal's next prover: its pinned one, then the portfolio's
            nexts: dict[str, list[str]] = defaultdict(list)
            for k in order:
                if k not in best:
                    queue = [p for p in (old.get(k), *portfolio) if p and p not in tried[k]]
                    if queue:
                        nexts[queue[0]].append(k)
            if not nexts:
                break
            for prover, todo in nexts.items():
                for k in todo:
                    tried[k].add(prover)
                for k, r in run_why3(
                    root, conf, entry, module, prover, measure, map(base_name, todo)
                ):
                    if k in todo and r.status == core.VALID and k not in best:
                        best[k] = r
        for k in order:
            result = best.get(k)
            if result is None:
                failed += 1
                print(f"unproved: {entry['path']} {module} {k}", file=sys.stderr)
                goals.append({"module": module, "goal": k, "prover": None, "timelimit": limit})
            else:
                goals.append({"module": module, "goal": k, **pin(result)})
    return goals, failed


def update_manifest(
    root: Path,
    portfolio: tuple[str, ...] = PORTFOLIO,
    limit: int = 10,
    files: list[str] | None = None,
    statements_only: bool = False,
) -> int:
    """Rewrite the manifest: for each goal, the first prover of the portfolio
    proving it, its statement and task hash; the driver/configuration hashes.

    With ``files``, only those entries are recomputed (a file not yet in the
    manifest is appended with the ``why3`` load path); the others are kept.
    With ``statements_only``, goals and provers are kept and only statements
    and hashes are pinned again (the goals must be the same).  Prints every
    statement, hypothesis and driver change for review.
    """
    root = root.resolve()
    conf = PROOFS.render_config(root)
    manifest = PROOFS.load_manifest(root)
    listed = {str(e["path"]) for e in manifest["files"]}
    for path in files or []:
        if path not in listed:
            manifest["files"].append(
                {"path": path, "loadpath": ["why3"], "split_vc": [], "goals": []}
            )
    failed = 0
    changes: list[str] = []
    for entry in manifest["files"]:
        if files is not None and entry["path"] not in files:
            continue
        old = {(g["module"], g["goal"]): g for g in entry["goals"]}
        if not statements_only:
            provers = {key: str(g["prover"]) for key, g in old.items() if g.get("prover")}
            entry["goals"], unproved = prove_goals(root, conf, entry, portfolio, limit, provers)
            failed += unproved
        order = [(str(g["module"]), str(g["goal"])) for g in entry["goals"]]
        now = file_statements(root, entry, order) if order else {}
        changes += statements.statement_diff(str(entry["path"]), old, now)
        for g in entry["goals"]:
            pinned = now[(str(g["module"]), str(g["goal"]))]
            g["statement"], g["task"] = pinned.goal, pinned.task
    pins = statements.pinned_files(root)
    changes += [f"~ {e}" for e in statements.compare_pins(manifest.get("pinned", {}), pins)]
    manifest["pinned"] = pins
    PROOFS.write_manifest(root, manifest)
    print("\n".join(changes) if changes else "no statement, hypothesis or driver changed")
    print(f"wrote {MANIFEST}; {failed} goal(s) unproved")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sonnx_mul_assurance.why3.driver")
    parser.add_argument("command", choices=("check", "update-manifest"))
    parser.add_argument("--root", type=Path, default=Path.cwd())
    parser.add_argument(
        "--file", action="append", help="only this manifest file (check, update-manifest)"
    )
    parser.add_argument(
        "--statements-only",
        action="store_true",
        help="update-manifest: pin statements and hashes again without re-proving",
    )
    args = parser.parse_args(argv)
    if args.command == "check":
        return run_check(args.root, args.file)
    return update_manifest(args.root, files=args.file, statements_only=args.statements_only)


if __name__ == "__main__":
    sys.exit(main())
