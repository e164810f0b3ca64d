"""One Why3 run of the project's proofs: the command, its answers, the provers and their versions.

:func:`run_why3` proves one module of a manifest entry (optionally some
of its goals) with one prover within one :class:`~.plan.Limit` and reads
Why3's JSON answers, naming each goal ``name#k`` (its k-th task);
:func:`file_statements` prints what each goal states
(:mod:`.statements`).  The provers are found through the rendered
configuration (:func:`prover_commands`).  :mod:`.driver` decides which
runs to make.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sonnx_mul_assurance import pinned as core
from sonnx_mul_assurance.why3 import config as prover_config
from sonnx_mul_assurance.why3 import statements, whyml
from sonnx_mul_assurance.why3.plan import Limit, Result


def prover_commands(conf: Path) -> dict[str, str]:
    """Shortcut -> executable of every [prover] section of the config."""
    return {
        fields["shortcut"]: fields["command"].split()[0]
        for fields in prover_config.prover_sections(conf.read_text())
        if fields.get("shortcut") and fields.get("command", "").strip()
    }


def tool_version(exe: str) -> str:
    """``exe --version``'s first line, as ``why3.json`` records it."""
    return core.version_line([exe, "--version"], timeout=20, absent="missing", empty="unknown")


def modules_of(root: Path, entry: dict[str, Any]) -> list[str]:
    """The modules of a manifest entry: its ``modules`` list, else every
    module of its file, in the file's order."""
    listed = entry.get("modules")
    if isinstance(listed, list):
        return [str(m) for m in listed]
    return whyml.module_names((root / entry["path"]).read_text())


def parse_json_stream(text: str) -> list[dict[str, Any]]:
    """Every JSON object of ``text`` (``why3 prove --json``'s answers, with
    whatever lines Why3 prints between them), in order."""
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
    """The transformations Why3 applies to ``module``'s goals, in order."""
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
    if limit.steps is not None and prover not in core.TIME_ONLY:
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
    """A goal's name without its task number (``lemma#2`` -> ``lemma``)."""
    return goal.rsplit("#", 1)[0]


def needed_provers(portfolio: Iterable[str], entries: Iterable[dict[str, Any]]) -> list[str]:
    """The portfolio's provers and those the manifest ``entries`` pin, sorted."""
    pinned = {str(g["prover"]) for e in entries for g in e["goals"] if g.get("prover")}
    return sorted(set(portfolio) | pinned)


def prover_versions(conf: Path, needed: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """The version line of each ``needed`` prover installed (by ``conf``'s
    command), and a "prover missing" error for each of the others."""
    commands = prover_commands(conf)
    versions: dict[str, str] = {}
    missing: list[str] = []
    for prover in needed:
        exe = commands.get(prover)
        if exe is None or shutil.which(exe) is None:
            missing.append(f"prover missing: {prover} ({exe or 'not configured'})")
        else:
            versions[prover] = tool_version(exe)
    return versions, missing


def file_statements(
    root: Path, entry: dict[str, Any], order: list[tuple[str, str]]
) -> dict[tuple[str, str], statements.Statement]:
    """What each goal of ``order`` ((module, goal#k) of the entry's file)
    states, as Why3 prints its task after the module's transformations."""
    modules = {m for m, _ in order}
    trans = {m: transformations_of(entry, m) for m in modules}
    return statements.print_tasks(root, entry, order, trans)
