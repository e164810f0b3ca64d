"""Run the Why3 proofs of the project against ``proofs/manifest.json``.

``python -m sonnx_mul_assurance.why3.driver check`` proves every goal of every proof
file the manifest lists (``.mlw`` theories; Why3 Python-frontend files can
be added the same way) with the prover the manifest pins and within the
goal's **step limit** (``steplimit``: the prover's own deterministic
resource count, Z3's ``rlimit``, CVC4's and cvc5's resource units), writes
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
with each goal's steps and the limit ``step_limit`` derives from them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sonnx_mul.digest import sha256
from sonnx_mul_assurance.evidence import binding, schema
from sonnx_mul_assurance.why3 import config as prover_config
from sonnx_mul_assurance.why3 import statements, whyml

MANIFEST = Path("proofs/manifest.json")
CONF_TEMPLATE = Path("proofs/why3.conf.in")
DRIVERS = prover_config.DRIVERS
OUT_DIR = prover_config.OUT_DIR
PORTFOLIO: tuple[str, ...] = ("z3", "cvc5", "cvc5-axioms", "cvc4", "z3-debian", "gappa")
VALID = "Valid"
TIME_ONLY: frozenset[str] = frozenset({"gappa"})
"""Provers without a deterministic step count: their goals keep a time limit."""
SAFETY_NET = 60
"""Seconds per goal: ends a hung prover, never decides a goal its steps prove
(the slowest goal takes 1.8 s with both cores saturated; ``why3/README.md``)."""
SAFETY_FACTOR = 20
"""A goal that takes more than SAFETY_NET / SAFETY_FACTOR seconds when it is
pinned gets a safety net of its own, SAFETY_FACTOR times that (whole
minutes): the net must never be what decides, on a loaded machine either."""
CHECK_NET_FACTOR = 6
"""A check's wall-clock net over the one a goal is pinned with (WP's too,
``c/wp.py``). With four busy loops and a second ``make test`` beside ``make
prove`` (2026-12-01), ``f16_bits.mlw``'s ``bf16_mul_is_ieee#3`` (1.43M cvc5
steps, net 1260 s) reached its net after 103 CPU-s: cvc5's ``--tlimit-per``
(the net, wall-clock) aborted it and Why3 reported a HighFailure on a true
goal. Time-only provers keep their limit: there it decides."""
MEASURE_STEPS = 2_000_000_000
"""The step limit of ``update-manifest``'s search (below every prover's maximum)."""
PARALLEL_FILES = max(1, min(os.cpu_count() or 1, 4))

Key = tuple[str, str, str]  # (file, module, goal#k)


@dataclass
class Result:
    prover: str
    status: str
    time: float
    steps: int = -1  # the prover's resource count; -1 when it reports none


@dataclass(frozen=True)
class Limit:
    """A run's limits: ``steps`` decides (None for a time-only prover), ``seconds``
    is the safety net (the limit itself for a time-only prover)."""

    steps: int | None
    seconds: int = SAFETY_NET


def goal_limit(goal: dict[str, Any]) -> Limit:
    """A check's limit for one goal: its pinned steps, and its pinned net
    widened by CHECK_NET_FACTOR (a time-only prover: its pinned time)."""
    if "steplimit" in goal:
        net = int(goal.get("safetynet", SAFETY_NET))
        return Limit(int(goal["steplimit"]), net * CHECK_NET_FACTOR)
    return Limit(None, int(goal.get("timelimit", SAFETY_NET)))


def widest(limits: Iterable[Limit]) -> Limit:
    """One run's limit for several goals: the largest of theirs (each goal is
    then held to its own by ``proved``)."""
    chosen = list(limits)
    steps = [lim.steps for lim in chosen if lim.steps is not None]
    return Limit(
        max(steps) if steps else None, max((lim.seconds for lim in chosen), default=SAFETY_NET)
    )


def proved(result: Result, pinned: dict[str, Any] | None) -> bool:
    """A proof counts when Valid and, by the goal's pinned prover, within the
    goal's own step limit (a run's limit is the widest of its goals')."""
    if result.status != VALID:
        return False
    if pinned is None or result.prover != pinned.get("prover") or "steplimit" not in pinned:
        return True
    return 0 <= result.steps <= int(pinned["steplimit"])


def verdict(result: Result, pinned: dict[str, Any] | None) -> str:
    """Why a goal is not proved, for the error line."""
    where = f"{result.prover}, {result.steps} steps"
    if pinned is not None and "steplimit" in pinned:
        where += f" of {pinned['steplimit']}"
    if result.status == VALID:
        return f"over its step limit: {where}"
    return f"{result.status}: {where}"


@dataclass
class Report:
    results: dict[Key, Result] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    limits: dict[Key, int] = field(default_factory=dict)  # the pinned step limits

    def largest_ratio(self) -> tuple[float, Key | None]:
        """The largest steps / limit of a goal proved by its pinned prover."""
        ratios = [
            (r.steps / self.limits[k], k)
            for k, r in self.results.items()
            if self.limits.get(k) and r.steps >= 0 and r.status == VALID
        ]
        return max(ratios, default=(0.0, None))


def render_config(root: Path) -> Path:
    """Write proofs/out/why3.conf from the committed template (absolute paths)."""
    return prover_config.render(root, CONF_TEMPLATE, "why3.conf")


def prover_commands(conf: Path) -> dict[str, str]:
    """Shortcut -> executable of every [prover] section of the config."""
    return {
        fields["shortcut"]: fields["command"].split()[0]
        for fields in prover_config.prover_sections(conf.read_text())
        if fields.get("shortcut") and fields.get("command", "").strip()
    }


def tool_version(exe: str) -> str:
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20)
    except OSError:
        return "missing"
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[0] if lines else "unknown"


def modules_of(root: Path, entry: dict[str, Any]) -> list[str]:
    listed = entry.get("modules")
    if isinstance(listed, list):
        return [str(m) for m in listed]
    return whyml.module_names((root / entry["path"]).read_text())


def parse_json_stream(text: str) -> list[dict[str, Any]]:
    decoder = json.JSONDecoder()
    objs: list[dict[str, Any]] = []
    pos = 0
    while True:
        start = text.find("{", pos)
        if start < 0:
            return objs
        obj, pos = decoder.raw_decode(text, start)
        objs.append(obj)


def transformations_of(entry: dict[str, Any], module: str) -> list[str]:
    # "transformations" (per module, in order) replaces the plain split_vc flag:
    # the Python kernel's products need eliminate_definition after split_vc.
    listed = entry.get("transformations", {}).get(module)
    if listed is None:
        listed = ["split_vc"] if module in entry.get("split_vc", []) else []
    return [str(t) for t in listed]


def run_why3(
    root: Path,
    conf: Path,
    entry: dict[str, Any],
    module: str,
    prover: str,
    limit: Limit,
    goals: Iterable[str] = (),
) -> list[tuple[str, Result]]:
    """Prove one module (optionally some goals) with one prover: [(goal#k, result)]."""
    cmd = ["why3", "-C", str(conf), "prove", "--json", "-P", prover, "-t", str(limit.seconds)]
    if limit.steps is not None and prover not in TIME_ONLY:
        cmd += ["-s", str(limit.steps)]
    cmd += [a for lp in entry.get("loadpath", []) for a in ("-L", str(root / lp))]
    for transformation in transformations_of(entry, module):
        cmd += ["-a", transformation]
    cmd.append(str(root / entry["path"]))
    if module != "*":
        cmd += ["-T", module]
        # a goal a module gets by cloning a theory's axiom as a lemma is
        # selected by its qualified name (the entry's "qualified" table)
        qualified = entry.get("qualified", {}).get(module, {})
        for g in sorted(set(goals)):
            cmd += ["-G", qualified.get(g, g)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
    # why3 1.5.1 exits 2 when a goal is not proved (its results are on stdout)
    if proc.returncode not in (0, 2) or (proc.returncode and "{" not in proc.stdout):
        raise RuntimeError(f"why3 failed on {entry['path']} ({module}): {proc.stderr.strip()}")
    seen: Counter[str] = Counter()
    out: list[tuple[str, Result]] = []
    for obj in parse_json_stream(proc.stdout):
        name = str(obj["term"]["goal_name"])
        key = f"{name}#{seen[name]}"
        seen[name] += 1
        res = obj["prover-result"]
        status = " ".join(str(res["answer"]).split())
        out.append((key, Result(prover, status, float(res["time"]), int(res.get("step", -1)))))
    return out


def base_name(goal: str) -> str:
    return goal.rsplit("#", 1)[0]


def load_manifest(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / MANIFEST).read_text())
    return data


def inputs(root: Path) -> list[Path]:
    """Every file a check's verdict depends on, from the manifest: the
    manifest, each proof file it lists and every theory of their load paths
    (``.mlw``, and the Python-frontend files), the drivers and configuration
    it pins (``pinned``: the project's and the Why3 library drivers they
    import), the project's drivers folder, and this checker's own code.
    ``why3.json`` records their SHA-256; the gate compares them with the
    tree's (:mod:`..evidence.binding`)."""
    manifest = load_manifest(root)
    files: set[Path] = {MANIFEST, CONF_TEMPLATE}
    for entry in manifest["files"]:
        files.add(Path(entry["path"]))
        for folder in entry.get("loadpath", []):
            for pattern in ("*.mlw", "*.py"):
                files |= {p.relative_to(root) for p in (root / folder).rglob(pattern)}
    files |= {Path(p) for p in manifest.get("pinned", {})}
    files |= {p.relative_to(root) for p in (root / DRIVERS).glob("*") if p.is_file()}
    files |= set(binding.own_code(__spec__, __name__))
    return sorted(files)


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
    commands = prover_commands(render_config(root))
    needed = set(portfolio) | {
        str(g["prover"])
        for e in load_manifest(root)["files"]
        for g in e["goals"]
        if g.get("prover")
    }
    for prover in sorted(needed):
        exe = commands.get(prover)
        versions[prover] = tool_version(exe) if exe and shutil.which(exe) else "missing"
    return versions


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


def discovery_limit(limits: list[Limit]) -> Limit:
    """The first pass's limit: the 90th percentile of the main prover's pinned
    step limits (its few slow goals get their own limit in the next pass;
    the goals pinned to other provers cost it no more than this)."""
    steps = sorted(lim.steps for lim in limits if lim.steps is not None)
    if not steps:
        return Limit(None, max((lim.seconds for lim in limits), default=SAFETY_NET))
    chosen = steps[min(len(steps) - 1, (len(steps) * 9) // 10)]
    # the widest safety net of the goals the pass must prove, so that it is
    # not the net that stops a slow one
    nets = [lim.seconds for lim in limits if lim.steps is not None and lim.steps <= chosen]
    return Limit(chosen, max(nets, default=SAFETY_NET))


def prove_module(
    root: Path, conf: Path, entry: dict[str, Any], module: str, mine: dict[str, dict[str, Any]]
) -> tuple[dict[str, Result], dict[str, Result]]:
    """Every goal of ``module`` (found) and those proved (best), each by its
    pinned prover within its pinned limit (or by the first pass's prover
    within that pass's limit): deterministic whatever the load."""
    by_prover: dict[str, list[str]] = defaultdict(list)
    for goal, g in mine.items():
        by_prover[str(g.get("prover") or PORTFOLIO[0])].append(goal)
    stepped = [p for p in by_prover if p not in TIME_ONLY] or list(by_prover) or [PORTFOLIO[0]]
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


def file_statements(
    root: Path, entry: dict[str, Any], order: list[tuple[str, str]]
) -> dict[tuple[str, str], statements.Statement]:
    modules = {m for m, _ in order}
    trans = {m: transformations_of(entry, m) for m in modules}
    return statements.print_tasks(root, entry, order, trans)


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
    manifest = load_manifest(root)
    bound = binding.digest(root, inputs(root))
    entries = [e for e in manifest["files"] if files is None or e["path"] in files]
    versions: dict[str, str] = {}
    if shutil.which("why3") is None:
        report.errors.append("prover missing: why3 is not installed (proofs/install-provers.sh)")
    else:
        versions["why3"] = tool_version("why3")
        conf = render_config(root)
        commands = prover_commands(conf)
        needed = set(portfolio) | {
            str(g["prover"]) for e in entries for g in e["goals"] if g.get("prover")
        }
        for prover in sorted(needed):
            exe = commands.get(prover)
            if exe is None or shutil.which(exe) is None:
                report.errors.append(f"prover missing: {prover} ({exe or 'not configured'})")
            else:
                versions[prover] = tool_version(exe)
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
    changed = binding.stale("why3.json", bound, binding.digest(root, inputs(root)))
    report.errors += [f"inputs changed during the run: {line}" for line in changed]
    elapsed = time.monotonic() - start
    write_report(
        root, out or root / OUT_DIR / "why3.json", entries, report, versions, elapsed, bound
    )
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
    proved = Counter(r.prover for r in report.results.values() if r.status == VALID)
    for f, n in sorted(per_file.items()):
        print(f"{f}: {n} goals")
    for p, n in sorted(proved.items()):
        print(f"  proved by {p}: {n}")
    print(f"total: {len(report.results)} goals, {sum(proved.values())} proved, {elapsed:.1f} s")
    ratio, worst = report.largest_ratio()
    if worst is not None:
        print(f"largest steps/limit of a goal: {ratio:.3f} ({' '.join(worst)})")
    for err in report.errors:
        print(f"ERROR: {err}", file=sys.stderr)
    print("why3 proofs: " + ("FAILED" if report.errors else "OK"))


def pin(result: Result) -> dict[str, Any]:
    """The manifest fields of a goal proved by ``result``: its steps and their
    limit (and a wider safety net for a slow goal), or (a time-only prover)
    a time limit of ``SAFETY_NET`` seconds."""
    if result.prover in TIME_ONLY:
        return {"prover": result.prover, "timelimit": SAFETY_NET}
    if result.steps < 0:
        raise RuntimeError(f"{result.prover} reported no step count: check its driver's regex")
    net = safety_net(result.time)
    return {
        "prover": result.prover,
        "steps": result.steps,
        "steplimit": prover_config.step_limit(result.steps),
        **({"safetynet": net} if net > SAFETY_NET else {}),
    }


def safety_net(seconds: float) -> int:
    """The wall-clock net of a goal proved in ``seconds``: SAFETY_NET, or
    SAFETY_FACTOR times its time in whole minutes for a slow goal."""
    return max(SAFETY_NET, 60 * math.ceil(seconds * SAFETY_FACTOR / 60))


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
    measure = Limit(MEASURE_STEPS, limit)
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
        best = {k: r for k, r in found if r.status == VALID and r.steps >= 0}
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
                    if k in todo and r.status == VALID and k not in best:
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
    conf = render_config(root)
    manifest = load_manifest(root)
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
    (root / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
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
