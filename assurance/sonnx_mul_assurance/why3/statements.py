"""What each Why3 goal states, and what it was proved with: pinned in the manifest.

A goal name says nothing about its content: ``ensures { true }`` keeps the
name ``f'vc``.  So the manifest pins, per goal, the task Why3 hands to the
provers, printed by Why3's own printer (``proofs/drivers/statement.drv``,
no prover transformation) after the transformations the goal is proved
with (``split_vc`` ...):

* ``statement``: the goal formula, normalised (comments and ``[@...]``
  attributes removed, which carry source locations and explanations but no
  meaning; whitespace collapsed).  Kept as text so that ``update-manifest``
  can print a reviewable diff.
* ``task``: the SHA-256 of the whole normalised task: the goal *and* every
  hypothesis it is proved from (premises introduced by ``split_vc``,
  definitions such as the float instance's rounding mode, earlier lemmas,
  the library theories).  A weakened ``requires``/``invariant``, a changed
  definition or an added axiom changes it even when the goal text does not.

Both are stable across runs and machines for one Why3 version (the printer
is deterministic and, attributes removed, prints no path).  Tasks are
matched to goals by order, and the printed goal name must agree.

The driver and configuration files the goals are proved with
(``proofs/drivers/*``, ``proofs/why3.conf.in``, and every Why3 library
driver they import) are pinned by SHA-256 as well.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sonnx_mul.digest import sha256
from sonnx_mul_assurance.why3 import whyml

STATEMENT_DRIVER = Path("proofs/drivers/statement.drv")
CONF_TEMPLATE = Path("proofs/why3.conf.in")
DRIVERS = Path("proofs/drivers")
WHY3_DRIVERS = Path("/usr/share/why3/drivers")

_ATTRIBUTE_RE = re.compile(r"\[[@#][^\]]*\]")
_TASK_RE = re.compile(r"^theory Task\n(.*?)^end\n", re.S | re.M)
_GOAL_RE = re.compile(r"\bgoal\s+(\S+)\s*:")
_IMPORT_RE = re.compile(r'^\s*import\s+"([^"]+)"', re.M)
_CONF_DRIVER_RE = re.compile(r'^driver\s*=\s*"([^"]+)"', re.M)


@dataclass(frozen=True)
class Statement:
    goal: str  # the normalised goal formula
    task: str  # SHA-256 of the normalised task


def normalise(text: str) -> str:
    text = whyml.strip_comments(text)
    text = _ATTRIBUTE_RE.sub(" ", text)
    return " ".join(text.split())


def parse_tasks(stdout: str) -> list[tuple[str, Statement]]:
    """[(printed goal name, statement)] of a ``why3 prove -D statement.drv`` output."""
    found: list[tuple[str, Statement]] = []
    for body in _TASK_RE.findall(stdout):
        text = normalise(body)
        goals = list(_GOAL_RE.finditer(text))
        if not goals:
            raise RuntimeError("a printed Why3 task has no goal")
        last = goals[-1]
        digest = hashlib.sha256(text.encode()).hexdigest()
        found.append((last.group(1), Statement(text[last.start() :], digest)))
    return found


def printed_name(goal: str) -> str:
    """The name Why3's printer gives a goal (``f'vc#0`` -> ``fqtvc``)."""
    return goal.rsplit("#", 1)[0].replace("'", "qt")


def print_tasks(
    root: Path,
    entry: dict[str, Any],
    expected: list[tuple[str, str]],
    transformations: dict[str, list[str]],
) -> dict[tuple[str, str], Statement]:
    """The statement of every goal in ``expected`` ([(module, goal#k)], in proof order).

    One Why3 run per group of modules sharing their transformations;
    raises RuntimeError when the printed tasks do not line up with the goals.
    """
    modules = list(dict.fromkeys(m for m, _ in expected))
    groups: dict[tuple[str, ...], list[str]] = {}
    for module in modules:
        groups.setdefault(tuple(transformations.get(module, [])), []).append(module)
    out: dict[tuple[str, str], Statement] = {}
    for trans, mods in groups.items():
        cmd = ["why3", "prove", "-D", str(root / STATEMENT_DRIVER)]
        cmd += [a for lp in entry.get("loadpath", []) for a in ("-L", str(root / lp))]
        cmd += [a for t in trans for a in ("-a", t)]
        # a path relative to root: no absolute path reaches the printed task
        cmd.append(str(entry["path"]))
        for module in mods:
            cmd += ["-T", module]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=root, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"why3 could not print the tasks of {entry['path']}: {proc.stderr}")
        tasks = parse_tasks(proc.stdout)
        wanted = [(m, g) for m, g in expected if m in mods]
        if len(tasks) != len(wanted):
            raise RuntimeError(
                f"{entry['path']}: {len(tasks)} printed tasks for {len(wanted)} goals"
            )
        out.update(_match(str(entry["path"]), wanted, tasks))
    return out


def _match(
    path: str, wanted: list[tuple[str, str]], tasks: list[tuple[str, Statement]]
) -> dict[tuple[str, str], Statement]:
    """Tasks come module by module in file order; within a module, each is
    the first remaining goal of that module with the printed name."""
    remaining: dict[str, list[str]] = {}
    for module, goal in wanted:
        remaining.setdefault(module, []).append(goal)
    modules = list(remaining)
    out: dict[tuple[str, str], Statement] = {}
    for name, statement in tasks:
        while modules and not remaining[modules[0]]:
            modules.pop(0)
        module = modules[0]
        for goal in remaining[module]:
            if re.fullmatch(re.escape(printed_name(goal)) + r"\d*", name):
                remaining[module].remove(goal)
                out[(module, goal)] = statement
                break
        else:
            raise RuntimeError(f"{path}: printed task {name} is no goal of {module}")
    return out


def compare(
    path: str,
    pinned: dict[tuple[str, str], dict[str, Any]],
    now: dict[tuple[str, str], Statement],
) -> list[str]:
    """Errors for every goal whose statement or task differs from the manifest's."""
    errors = []
    for (module, goal), st in sorted(now.items()):
        g = pinned.get((module, goal))
        if g is None:
            continue  # reported as a new goal by the prover run
        if "statement" not in g or "task" not in g:
            errors.append(f"statement not pinned in the manifest: {path} {module} {goal}")
        elif g["statement"] != st.goal:
            errors.append(f"statement changed: {path} {module} {goal}")
        elif g["task"] != st.task:
            errors.append(
                f"hypotheses changed (definitions, premises, lemmas or theories the goal"
                f" is proved from): {path} {module} {goal}"
            )
    return errors


def statement_diff(
    path: str,
    old: dict[tuple[str, str], dict[str, Any]],
    new: dict[tuple[str, str], Statement],
) -> list[str]:
    """Human-readable diff of the pinned statements for ``update-manifest``."""
    lines: list[str] = []
    for key in sorted(set(old) | set(new)):
        module, goal = key
        before, after = old.get(key), new.get(key)
        label = f"{path} {module} {goal}"
        if after is None:
            lines.append(f"- removed goal {label}")
        elif before is None or "statement" not in before:
            lines.append(f"+ new statement {label}: {after.goal}")
        elif before["statement"] != after.goal:
            lines.append(f"~ statement changed {label}:")
            lines += difflib.unified_diff(
                textwrap.wrap(str(before["statement"]), 88),
                textwrap.wrap(after.goal, 88),
                "pinned",
                "now",
                lineterm="",
            )
        elif before.get("task") != after.task:
            lines.append(f"~ hypotheses changed {label} (same goal formula)")
    return lines


def _driver_closure(start: Path, seen: dict[str, str]) -> None:
    key = str(start)
    if key in seen:
        return
    seen[key] = sha256(start)
    for name in _IMPORT_RE.findall(start.read_text()):
        target = Path(name)
        if not target.is_absolute():
            local = start.parent / target
            target = local if local.exists() else WHY3_DRIVERS / target
        _driver_closure(target, seen)


def pinned_files(root: Path) -> dict[str, str]:
    """SHA-256 of the configuration template, every project driver and every
    Why3 driver they or the configuration import (project paths relative)."""
    root = root.resolve()
    seen: dict[str, str] = {}
    conf = root / CONF_TEMPLATE
    seen[str(conf)] = sha256(conf)
    for drv in sorted((root / DRIVERS).iterdir()):
        if drv.is_file():
            _driver_closure(drv, seen)
    for name in _CONF_DRIVER_RE.findall(conf.read_text()):
        target = Path(name.replace("@DRIVERS@", str(root / DRIVERS)))
        if not target.exists():
            raise RuntimeError(f"driver of {CONF_TEMPLATE} not found: {name}")
        _driver_closure(target, seen)
    rel: dict[str, str] = {}
    for path, digest in seen.items():
        p = Path(path)
        rel[str(p.relative_to(root)) if p.is_relative_to(root) else path] = digest
    return dict(sorted(rel.items()))


def compare_pins(pinned: dict[str, str], now: dict[str, str]) -> list[str]:
    errors = []
    for path in sorted(set(pinned) | set(now)):
        if path not in now:
            errors.append(f"pinned driver/configuration file is gone: {path}")
        elif path not in pinned:
            errors.append(f"driver/configuration file not pinned in the manifest: {path}")
        elif pinned[path] != now[path]:
            errors.append(f"driver/configuration file changed: {path}")
    return errors
