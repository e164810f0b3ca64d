"""Run the Why3 proofs of the project against ``proofs/manifest.json``.

``python -m sonnx_mul_assurance.why3 check`` proves every goal of every proof
file the manifest lists (``.mlw`` theories; Why3 Python-frontend files can
be added the same way), first with the prover and limit the manifest pins
(``time_limit``), then with that prover at ``FALLBACK_LIMIT``, then with a
portfolio of the other provers, writes ``proofs/out/why3.json`` and exits
non-zero when a goal is unproved, a manifest goal disappeared, a new goal is
missing from the manifest, a file yields no goal, or a prover is missing.
``update-manifest`` rewrites the manifest from what the provers prove now.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
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
from sonnx_mul_assurance import evidence_schema as schema
from sonnx_mul_assurance import statements, whyml

MANIFEST = Path("proofs/manifest.json")
CONF_TEMPLATE = Path("proofs/why3.conf.in")
DRIVERS = Path("proofs/drivers")
OUT_DIR = Path("proofs/out")
PORTFOLIO: tuple[str, ...] = ("z3", "cvc5", "cvc5-axioms", "cvc4", "z3-debian", "gappa")
VALID = "Valid"
DISCOVERY_LIMIT = 1
FALLBACK_LIMIT = 5  # seconds per goal once the pinned limits have failed
PARALLEL_FILES = max(1, min(os.cpu_count() or 1, 4))

Key = tuple[str, str, str]  # (file, module, goal#k)


@dataclass
class Result:
    prover: str
    status: str
    time: float


@dataclass
class Report:
    results: dict[Key, Result] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def _z3_pypi() -> str | None:
    candidate = Path(sys.executable).parent / "z3"
    return str(candidate) if candidate.exists() else shutil.which("z3", path=None)


def render_config(root: Path) -> Path:
    """Write proofs/out/why3.conf from the committed template (absolute paths)."""
    z3 = _z3_pypi() or "z3-pypi-not-found"
    text = (root / CONF_TEMPLATE).read_text()
    text = text.replace("@DRIVERS@", str((root / DRIVERS).resolve()))
    text = text.replace("@Z3_PYPI@", z3)
    conf = root / OUT_DIR / "why3.conf"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text(text)
    return conf


def prover_sections(conf_text: str) -> list[dict[str, str]]:
    """The ``key = "value"`` fields of every [prover] section of a Why3 config."""
    return [
        dict(re.findall(r'^(\w+) = "([^"]*)"', section, re.M))
        for section in re.split(r"^\[prover\]$", conf_text, flags=re.M)[1:]
    ]


def prover_commands(conf: Path) -> dict[str, str]:
    """Shortcut -> executable of every [prover] section of the config."""
    return {
        fields["shortcut"]: fields["command"].split()[0]
        for fields in prover_sections(conf.read_text())
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
    timelimit: int,
    goals: Iterable[str] = (),
) -> list[tuple[str, Result]]:
    """Prove one module (optionally some goals) with one prover: [(goal#k, result)]."""
    cmd = ["why3", "-C", str(conf), "prove", "--json", "-P", prover, "-t", str(timelimit)]
    cmd += [a for lp in entry.get("loadpath", []) for a in ("-L", str(root / lp))]
    for transformation in transformations_of(entry, module):
        cmd += ["-a", transformation]
    cmd.append(str(root / entry["path"]))
    if module != "*":
        cmd += ["-T", module]
        for g in sorted(set(goals)):
            cmd += ["-G", g]
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
        out.append((key, Result(prover, str(res["answer"]), float(res["time"]))))
    return out


def base_name(goal: str) -> str:
    return goal.rsplit("#", 1)[0]


def load_manifest(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / MANIFEST).read_text())
    return data


def prove_file(
    root: Path,
    conf: Path,
    entry: dict[str, Any],
    portfolio: tuple[str, ...],
    report: Report,
    only: list[str] | None = None,
    selected: frozenset[tuple[str, str]] | None = None,
) -> None:
    path = str(entry["path"])
    expected: dict[tuple[str, str], dict[str, Any]] = {
        (g["module"], g["goal"]): g for g in entry.get("goals", [])
    }
    # A file may narrow the fallback provers (widen.mlw: none whose native
    # floats give an overflowing `round` an arbitrary value; tests/assurance/test_widen_models.py).
    portfolio = tuple(p for p in portfolio if p in entry.get("fallback", portfolio))
    if selected is not None:
        prove_selected(root, conf, entry, portfolio, report, expected, selected)
        return
    total = 0
    order: list[tuple[str, str]] = []
    for module in modules_of(root, entry):
        if only is not None and module not in only:
            continue
        mine = {goal: g for (m, goal), g in expected.items() if m == module}
        by_prover: dict[str, list[str]] = defaultdict(list)
        for goal, g in mine.items():
            by_prover[str(g.get("prover") or portfolio[0])].append(goal)
        main = max(by_prover, key=lambda p: len(by_prover[p])) if by_prover else portfolio[0]
        # One pass over the whole module with a short limit finds every goal
        # (new ones included) and proves the easy ones; the rest is retried
        # with the manifest's prover and time limit, then the portfolio.
        found = dict(run_why3(root, conf, entry, module, main, DISCOVERY_LIMIT))
        total += len(found)
        order += [(module, goal) for goal in found]
        best: dict[str, Result] = {k: r for k, r in found.items() if r.status == VALID}
        # The main prover's retry comes last: a split goal's subgoals share one
        # name, so a retry re-runs them all, and the main prover would wait out
        # its long limit on every subgoal pinned to another prover (Integers:
        # 11 x 8 s); another prover's proof of any open goal counts.
        for prover in sorted(by_prover, key=lambda p: p == main):
            todo = [g for g in by_prover[prover] if g in found and g not in best]
            limit = max((int(mine[g].get("timelimit", 5)) for g in todo), default=0)
            if todo and (prover != main or limit > DISCOVERY_LIMIT):  # else tried already
                names = [base_name(g) for g in todo]
                for k, r in run_why3(root, conf, entry, module, prover, limit, names):
                    if k in found and k not in best and r.status == VALID:
                        best[k] = r
        # Then FALLBACK_LIMIT for what is still open: each goal's own prover
        # first (a goal missed under load; another prover would wait out the
        # limit on every subgoal of a split goal it cannot prove: z3 on
        # Integers, 11 x 5 s), then the portfolio's.
        own = [p for p in portfolio if p in by_prover]
        for prover, owned in [(p, True) for p in own] + [(p, False) for p in portfolio]:
            # each goal once per prover: its own prover already had its turn
            todo = [g for g in found if g not in best and owned == (g in by_prover.get(prover, []))]
            if not todo:
                continue
            for k, r in run_why3(
                root, conf, entry, module, prover, FALLBACK_LIMIT, [base_name(g) for g in todo]
            ):
                if k in found and k not in best and r.status == VALID:
                    best[k] = r
        for goal, r in found.items():
            report.results[(path, module, goal)] = best.get(goal, r)
            if goal not in mine:
                report.errors.append(f"new goal not in the manifest: {path} {module} {goal}")
            elif goal not in best:
                report.errors.append(f"goal not proved: {path} {module} {goal} ({r.status})")
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


def prove_selected(
    root: Path,
    conf: Path,
    entry: dict[str, Any],
    portfolio: tuple[str, ...],
    report: Report,
    expected: dict[tuple[str, str], dict[str, Any]],
    selected: frozenset[tuple[str, str]],
) -> None:
    """Prove only the ``selected`` manifest goals, as the full check first tries
    them (the manifest's prover and time limit), then with ``portfolio``.

    No discovery pass: the statements of every goal of the modules concerned
    are compared with the manifest, in the manifest's order.  For the negative
    controls, whose planted faults make known goals false.
    """
    path = str(entry["path"])
    for module, goal in sorted(selected - set(expected)):
        report.errors.append(f"selected goal not in the manifest: {path} {module} {goal}")
    chosen = sorted(selected & set(expected))
    best: dict[tuple[str, str], Result] = {}  # the first result, replaced by a proof

    def attempt(module: str, prover: str, limit: int, goals: list[str]) -> None:
        for k, r in run_why3(root, conf, entry, module, prover, limit, map(base_name, goals)):
            if k in goals and ((module, k) not in best or r.status == VALID):
                best[(module, k)] = r

    for module in dict.fromkeys(m for m, _ in chosen):
        todo = [goal for m, goal in chosen if m == module]
        by_prover: dict[str, list[str]] = defaultdict(list)
        for goal in todo:
            by_prover[str(expected[(module, goal)].get("prover") or PORTFOLIO[0])].append(goal)
        for prover, goals in by_prover.items():
            attempt(
                module, prover, max(int(expected[(module, g)]["timelimit"]) for g in goals), goals
            )
        for prover in portfolio:
            left = [g for g in todo if (module, g) in best and best[(module, g)].status != VALID]
            if left:
                attempt(module, prover, FALLBACK_LIMIT, left)
    for key in chosen:
        result = best.get(key)
        if result is None:
            report.errors.append(f"manifest goal no longer exists: {path} {key[0]} {key[1]}")
            continue
        report.results[(path, *key)] = result
        if result.status != VALID:
            report.errors.append(f"goal not proved: {path} {key[0]} {key[1]} ({result.status})")
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
                    prove_file(root, conf, entry, portfolio, mine, modules, goals)
                except RuntimeError as exc:
                    mine.errors.append(str(exc))
                return mine

            with ThreadPoolExecutor(max_workers=PARALLEL_FILES) as pool:
                for part in pool.map(prove, entries):
                    report.results.update(part.results)
                    report.errors.extend(part.errors)
    # The drivers and configuration the goals are proved with are pinned too:
    # a driver mapping float16 to a wider SMT format must not pass unnoticed.
    try:
        pins = statements.pinned_files(root)
    except (OSError, RuntimeError) as exc:
        report.errors.append(f"cannot hash the drivers: {exc}")
    else:
        report.errors += statements.compare_pins(manifest.get("pinned", {}), pins)
    elapsed = time.monotonic() - start
    write_report(root, out or root / OUT_DIR / "why3.json", entries, report, versions, elapsed)
    print_summary(report, elapsed)
    return 1 if report.errors else 0


def write_report(
    root: Path,
    out: Path,
    entries: list[dict[str, Any]],
    report: Report,
    versions: dict[str, str],
    elapsed: float,
) -> None:
    hashes = {str(e["path"]): sha256(root / e["path"]) for e in entries}
    goals = [
        schema.Why3Goal(f, m, g, r.prover, r.time, r.status, hashes.get(f, ""))
        for (f, m, g), r in sorted(report.results.items())
    ]
    evidence = schema.Why3Evidence(
        ok=not report.errors,
        errors=report.errors,
        versions=versions,
        files=hashes,
        total_time=round(elapsed, 2),
        goals=goals,
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
    for err in report.errors:
        print(f"ERROR: {err}", file=sys.stderr)
    print("why3 proofs: " + ("FAILED" if report.errors else "OK"))


def time_limit(prover: str, seconds: float) -> int:
    """The limit pinned for a goal ``prover`` proved in ``seconds``: four times
    that plus half a second, rounded up (a goal proved in 0.1 s gets 1 s).

    The check first tries every goal at 1 s; this limit is its retry (then
    the portfolio's provers get 5 s each), and what a negative control waits
    out on each goal its planted fault makes false.  Gappa proves its goals in
    milliseconds; its limit is also what every retry of a split goal costs on
    each sibling subgoal it cannot prove (``wide_product'vc``: 4 of 8)."""
    if prover == "gappa":
        return max(1, math.ceil(4 * seconds))
    return max(1, math.ceil(4 * seconds + 0.5))


def prove_goals(
    root: Path, conf: Path, entry: dict[str, Any], portfolio: tuple[str, ...], limit: int
) -> tuple[list[dict[str, Any]], int]:
    """Each goal of the file with the first prover proving it: the entry's
    ``prefer`` provers first, then the portfolio's."""
    prefer = tuple(str(p) for p in entry.get("prefer", []))
    portfolio = prefer + tuple(p for p in portfolio if p not in prefer)
    goals: list[dict[str, Any]] = []
    failed = 0
    for module in modules_of(root, entry):
        best: dict[str, Result] = {}
        order: list[str] = []
        for prover in portfolio:
            todo = [base_name(k) for k in order if k not in best]
            if order and not todo:
                break
            for k, r in run_why3(root, conf, entry, module, prover, limit, todo):
                if k not in order:
                    order.append(k)
                if r.status == VALID and k not in best:
                    best[k] = r
        for k in order:
            found = best.get(k)
            if found is None:
                failed += 1
                print(f"unproved: {entry['path']} {module} {k}", file=sys.stderr)
            tl = time_limit(found.prover, found.time) if found else limit
            goals.append(
                {
                    "module": module,
                    "goal": k,
                    "prover": found.prover if found else None,
                    "timelimit": tl,
                }
            )
    return goals, failed


def update_manifest(
    root: Path,
    portfolio: tuple[str, ...] = PORTFOLIO,
    limit: int = 5,
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
            entry["goals"], unproved = prove_goals(root, conf, entry, portfolio, limit)
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
    parser = argparse.ArgumentParser(prog="python -m sonnx_mul_assurance.why3")
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
