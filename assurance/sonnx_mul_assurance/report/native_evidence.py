"""Evidence readers for the native C kernel: Frama-C WP (``wp.json``) and MISRA (``misra.json``).

A WP proof item is one C function: every goal Frama-C proved about it (the
contract, the loop annotations and the ``-wp-rte`` assertions), located at the
function's definition (:mod:`.cdefs`) and evidence for the ids of the markers
that cover it (its ``scope=function`` marker, and ``scope=file`` markers of
its file, such as F-RTE). A MISRA item is one analysed C file: its findings
against the recorded deviations, evidence for the ids of that file's
``scope=file`` markers. Both readers raise
:class:`~sonnx_mul_assurance.evidence.schema.SchemaError` on a file off its
schema; what the producer recorded as failed (``errors``, ``verdict: fail``,
no goal or no file at all) is returned unmapped, so the gate fails on it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection
from dataclasses import asdict
from pathlib import Path

from sonnx_mul_assurance.c import misra
from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.report import cdefs
from sonnx_mul_assurance.report.evidence import Item, _rel
from sonnx_mul_assurance.report.markers import Marker


def _failures(source: str, where: str, errors: list[str], verdict: str) -> list[Item]:
    items = [Item("proof", source, where, (), "error", False, name=e[:300]) for e in errors]
    if verdict != "pass" and not errors:
        items.append(Item("proof", source, where, (), f"verdict: {verdict}", False))
    return items


def _covering(markers: list[Marker], path: str, first: int, last: int) -> tuple[str, ...]:
    hits = [
        r for m in markers if m.path == path and m.start <= last and first <= m.end for r in m.ids
    ]
    return tuple(dict.fromkeys(hits))


def wp_items(path: Path, root: Path, markers: list[Marker]) -> tuple[list[Item], list[Item]]:
    """(mapped, unmapped) proof items of a ``wp.json``, one per C function."""
    data = schema.load(schema.WpEvidence, path)
    evidence_file = _rel(path, root)
    mapped: list[Item] = []
    unmapped = _failures("wp", evidence_file, data.errors, data.verdict)
    if not any(unit.goals for unit in data.units):
        unmapped.append(Item("proof", "wp", evidence_file, (), "no goals recorded", False))
    for unit in data.units:
        source = root / unit.source
        text = source.read_text(encoding="utf-8") if source.is_file() else ""
        defs = {d.name: d for d in cdefs.definitions(text)}
        by_function: dict[str, list[tuple[str, schema.WpGoal]]] = {}
        for name, goal in unit.goals.items():
            by_function.setdefault(goal.function, []).append((name, goal))
        for function, goals in sorted(by_function.items()):
            found = defs.get(function)
            if found is not None:
                ids = _covering(markers, unit.source, found.start, found.end)
                where = f"{unit.source}:{found.start}"
            else:  # a goal of no definition (lemmas, globals): the file's own ids only
                ids = tuple(
                    dict.fromkeys(
                        r
                        for m in markers
                        if m.path == unit.source and m.scope == "file"
                        for r in m.ids
                    )
                )
                where = unit.source
            failed = [f"{n} ({g.status})" for n, g in goals if not g.ok]
            provers = Counter(g.prover for _, g in goals)
            item = Item(
                "proof",
                "wp",
                where,
                ids,
                f"{len(goals) - len(failed)}/{len(goals)} goals Valid",
                not failed,
                name=f"{function}()",
                detail={
                    "goals": len(goals),
                    "rte_goals": sum("_rte_" in n for n, _ in goals),
                    "prover": ", ".join(f"{p} {k}" for p, k in sorted(provers.items())),
                    "time": round(sum(g.seconds for _, g in goals), 3),
                    "evidence": evidence_file,
                    **({"unproved": failed[:20]} if failed else {}),
                },
                files=(unit.source, evidence_file) if source.is_file() else (evidence_file,),
            )
            (mapped if ids else unmapped).append(item)
    return mapped, unmapped


def misra_items(
    path: Path, root: Path, markers: list[Marker], deviations_file: Path
) -> tuple[list[Item], list[Item]]:
    """(mapped, unmapped) proof items of a ``misra.json``, one per analysed C file.

    The reader does not take the file's verdict on trust: it compares the
    recorded findings with the recorded deviations again (``misra.compare``),
    and the recorded deviations with ``deviations_file`` (the reviewed ones).
    """
    data = schema.load(schema.MisraEvidence, path)
    evidence_file = _rel(path, root)
    unmapped = _failures("misra", evidence_file, data.errors, data.verdict)
    recorded = [asdict(d) for d in data.deviations]
    errors = misra.compare([(f.file, f.rule) for f in data.findings], recorded)
    reviewed = json.loads(deviations_file.read_text(encoding="utf-8"))["deviations"]
    if recorded != reviewed:
        errors.append(f"the deviations recorded differ from {_rel(deviations_file, root)}")
    if not data.files:
        unmapped.append(Item("proof", "misra", evidence_file, (), "no file analysed", False))
    mapped: list[Item] = []
    for rel in data.files:
        own = [e for e in errors if e.startswith(rel + ":")]
        rules = Counter(f.rule for f in data.findings if f.file == rel)
        status = ", ".join(f"rule {r} x{n}" for r, n in sorted(rules.items()))
        ids = tuple(
            dict.fromkeys(r for m in markers if m.path == rel and m.scope == "file" for r in m.ids)
        )
        item = Item(
            "proof",
            "misra",
            rel,
            ids,
            "; ".join(own)[:300] if own else (f"as deviated: {status}" if rules else "clean"),
            not own,
            name=f"MISRA C:2012 {rel}",
            detail={"findings": sum(rules.values()), "tool": data.tool, "evidence": evidence_file},
            files=(rel, evidence_file) if (root / rel).is_file() else (evidence_file,),
        )
        (mapped if ids else unmapped).append(item)
    # errors about no analysed file (a deviation list edited by hand) fail the gate too
    stray = [e for e in errors if not any(e.startswith(f + ":") for f in data.files)]
    unmapped += [Item("proof", "misra", evidence_file, (), "error", False, name=e) for e in stray]
    return mapped, unmapped


NATIVE_CHECK_IDS: dict[str, str] = {"wrap8": "F-WRAP"}
"""The id a check of ``native-exhaustive.json`` gives evidence for, by the
prefix of its name (``wrap8-stream8``); every other check is a float16 or
bfloat16 conversion or product (F-FLOAT)."""


def native_check_id(check: str) -> str:
    """The requirement a check of the compiled kernel gives evidence for."""
    return NATIVE_CHECK_IDS.get(check.split("-", 1)[0], "F-FLOAT")


def native_exhaustive_items(
    path: Path, root: Path, ids: Collection[str]
) -> tuple[list[Item], list[Item]]:
    """(mapped, unmapped) proof items of a ``native-exhaustive.json``: one per
    check of the compiled kernel, and a failed item when the harness's
    negative control did not catch every planted fault."""
    data = schema.load(schema.NativeExhaustiveEvidence, path)
    evidence_file = _rel(path, root)
    mapped: list[Item] = []
    unmapped = _failures("native-exhaustive", evidence_file, data.errors, data.verdict)
    if not data.selftest or any(s.caught <= 0 for s in data.selftest.values()):
        unmapped.append(
            Item(
                "proof", "native-exhaustive", evidence_file, (), "a planted fault not caught", False
            )
        )
    for name, check in sorted(data.checks.items()):
        found = tuple(r for r in (native_check_id(name),) if r in ids)
        status = "agree" if check.ok else f"{check.mismatches} mismatches"
        item = Item(
            "proof",
            "native-exhaustive",
            evidence_file,
            found,
            status,
            check.ok,
            name=f"{name} on {data.cpu}",
            detail={"inputs": check.inputs, "time": check.seconds},
            files=(evidence_file,),
        )
        (mapped if found else unmapped).append(item)
    return mapped, unmapped


TARGET_TYPE_IDS: dict[str, tuple[str, ...]] = {
    "f16": ("F-FLOAT",),
    "bf16": ("F-FLOAT",),
    "f32": ("F-FLOAT",),
    "f64": ("F-FLOAT",),
}
"""The ids a type of ``targets.json`` gives evidence for; every integer type
runs wrap, first-overflow and checked (F-WRAP and F-CHECKED)."""


def targets_items(path: Path, root: Path, ids: Collection[str]) -> tuple[list[Item], list[Item]]:
    """(mapped, unmapped) proof items of a ``targets.json``: one per target and
    requirement, passing when every type of it agrees with the oracle and has
    the reference target's hash, NaNs included."""
    data = schema.load(schema.TargetsEvidence, path)
    evidence_file = _rel(path, root)
    mapped: list[Item] = []
    unmapped = _failures("targets", evidence_file, data.errors, data.verdict)
    for label, runs in sorted(data.runs.items()):
        want = runs[data.reference].types if data.reference in runs else {}
        for name, run in sorted(runs.items()):
            by_id: dict[str, list[schema.TargetType]] = {}
            for type_name, row in run.types.items():
                for rid in TARGET_TYPE_IDS.get(type_name, ("F-WRAP", "F-CHECKED")):
                    by_id.setdefault(rid, []).append(row)
            for rid, rows in sorted(by_id.items()):
                ok = (
                    run.exit == 0
                    and run.known_answers
                    and all(
                        r.mismatches == 0 and r.type in want and r.hash == want[r.type].hash
                        for r in rows
                    )
                )
                item = Item(
                    "proof",
                    "targets",
                    evidence_file,
                    (rid,) if rid in ids else (),
                    "same bits as the reference" if ok else "differs or failed",
                    ok,
                    name=f"{name} ({run.cc}), {label}",
                    detail={"inputs": sum(r.pairs for r in rows), "time": run.seconds},
                    files=(evidence_file,),
                )
                (mapped if item.ids else unmapped).append(item)
    return mapped, unmapped
