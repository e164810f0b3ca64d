"""Every proof the pipeline runs maps to a requirement of the real tree.

The re-layout moved the CrossHair contracts into the tooling package, out
of the folders the markers were read from: the report listed all 31
conditions as unmapped and the gate, fed by other evidence, still passed.
These tests read the real markers, the real contract functions and the
real manifest's goals, so a proof that stops counting for any id fails
here, not silently in the report.
"""

from __future__ import annotations

import json
from pathlib import Path

from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.python import crosshair
from sonnx_mul_assurance.report import cdefs
from sonnx_mul_assurance.report.evidence import function_markers, map_goal
from sonnx_mul_assurance.report.markers import SCAN_DIRS, Marker, scan

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = "assurance/sonnx_mul_assurance/python/contracts.py"


def _by_file(markers: list[Marker]) -> dict[str, list[Marker]]:
    by_file: dict[str, list[Marker]] = {}
    for m in markers:
        by_file.setdefault(m.path, []).append(m)
    return by_file


def unmapped_goals(root: Path, markers: list[Marker]) -> list[str]:
    manifest = json.loads((root / "proofs/manifest.json").read_text())
    by_file = _by_file(markers)
    lost = []
    for entry in manifest["files"]:
        for g in entry["goals"]:
            goal = schema.Why3Goal(
                entry["path"], g["module"], g["goal"], "z3", 0.0, "Valid", "", 10, 1020
            )
            if not map_goal(goal, root, by_file)[0]:
                lost.append(f"{entry['path']} {g['module']}.{g['goal']}")
    return lost


def test_every_crosshair_contract_maps_to_a_requirement() -> None:
    markers, _ = scan(ROOT)
    functions = crosshair.contract_functions(ROOT / CONTRACTS)
    assert functions
    lost = [f for f in functions if not any(m.ids for m in function_markers(markers, f, CONTRACTS))]
    assert lost == []


def test_negative_control_contracts_outside_the_scan_are_lost() -> None:
    # the tree as it was after the re-layout: contracts.py not read
    markers, _ = scan(ROOT, dirs=[d for d in SCAN_DIRS if d != CONTRACTS])
    functions = crosshair.contract_functions(ROOT / CONTRACTS)
    assert all(not function_markers(markers, f, CONTRACTS) for f in functions)


def test_every_pinned_why3_goal_maps_to_a_requirement() -> None:
    markers, _ = scan(ROOT)
    assert unmapped_goals(ROOT, markers) == []


def test_negative_control_an_unmarked_proof_file_is_lost() -> None:
    # widen.mlw without its F-FLOAT range: its 169 goals count for nothing
    markers, _ = scan(ROOT)
    kept = [m for m in markers if m.path != "why3/widen.mlw"]
    lost = unmapped_goals(ROOT, kept)
    assert len(lost) == 169 and all(x.startswith("why3/widen.mlw ") for x in lost)


def unmapped_c_functions(root: Path, markers: list[Marker]) -> dict[str, list[str]]:
    """Per pinned WP function (``<globals>`` aside): the ids of the markers
    covering its definition; those covering none or missing F-RTE are listed."""
    manifest = json.loads((root / "proofs/wp-manifest.json").read_text())
    lost: dict[str, list[str]] = {}
    for unit in manifest["units"]:
        defs = {d.name: d for d in cdefs.definitions((root / unit["source"]).read_text())}
        for function in unit["functions"]:
            if function == "<globals>":
                continue
            found = defs.get(function)
            ids = sorted(
                {
                    rid
                    for m in markers
                    if found and m.path == unit["source"] and m.start <= found.end
                    and found.start <= m.end
                    for rid in m.ids
                }
            )  # fmt: skip
            if "F-RTE" not in ids or len(ids) < 2:
                lost[f"{unit['source']} {function}"] = ids
    return lost


def test_every_wp_proved_c_function_maps_to_its_requirement_and_f_rte() -> None:
    markers, _ = scan(ROOT)
    assert unmapped_c_functions(ROOT, markers) == {}


def test_negative_control_the_c_kernel_outside_the_scan_is_lost() -> None:
    markers, _ = scan(ROOT, dirs=[d for d in SCAN_DIRS if d != "native"])
    lost = unmapped_c_functions(ROOT, markers)
    manifest = json.loads((ROOT / "proofs/wp-manifest.json").read_text())
    pinned = [f for u in manifest["units"] for f in u["functions"] if f != "<globals>"]
    # every function of the C kernel (its native/ units) is lost; the WP
    # client units (proofs/wp) keep their markers
    kernel = [
        f for u in manifest["units"] if u["source"].startswith("native/") for f in u["functions"]
        if f != "<globals>"
    ]  # fmt: skip
    assert len(kernel) > 80 and len(lost) == len(kernel) < len(pinned)
    assert set(map(tuple, lost.values())) == {()}


def test_a_ghost_function_is_a_definition_its_marker_attaches_to() -> None:
    # WP proves ghost functions (int64's binary64 test has three), so the
    # coverage above must find them: a definition spanning its ACSL block
    text = (
        "/* " + "@" + "relation(F-CHECKED, scope=function) */\n"  # spelt apart: not a marker here
        "/*@ ghost\n  /@ assigns \\nothing; @/\n  void g(int x) { }\n*/\n"
        "int f(int x)\n{\n  /*@ ghost g(x); */\n  return x;\n}\n"
    )
    assert cdefs.definitions(text) == [cdefs.CDef("g", 2, 5), cdefs.CDef("f", 6, 10)]
    # the ghost call inside f defines nothing
    assert [d.name for d in cdefs.ghost_definitions(text)] == ["g"]
