"""The gate refuses evidence that does not prove this tree, built from the real manifests.

Each fixture is the evidence a complete, passing run of its producer on
this checkout would write (every goal of ``proofs/wp-manifest.json`` or
``proofs/manifest.json`` proved, every contract function checked, the
inputs hashed by the producer's own ``inputs``); no prover runs.  The
fixture as built is the negative control (the gate takes it); each test
then plants one fault and asserts the refusal that names it:

- WP: a C source edited after the run; a one-function run (``wp check
  --function sonnx_mul_f32``: that function's goals only); a unit missing; a
  goal or a unit recorded twice;
- Why3 and CrossHair: a recorded hash that is not the tree's (a proof file
  edited after the run, the product code the contracts run); Why3 goals
  missing or recorded twice; MISRA: a source edited after the check;
- the release gate: a tool version other than the one installed.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_trace_report import COQ_VERSIONS, FIXTURE_REGISTRY, make_tree

from sonnx_mul_assurance.c import misra, wp
from sonnx_mul_assurance.evidence import binding, schema
from sonnx_mul_assurance.python import crosshair
from sonnx_mul_assurance.report import build_report, protocol
from sonnx_mul_assurance.why3 import coq, driver

ROOT = Path(__file__).resolve().parents[2]
ONE_FUNCTION = "sonnx_mul_f32"
"""A function of the float unit: a one-function ``wp check`` proves its goals only."""


def wp_run(root: Path = ROOT) -> schema.WpEvidence:
    """The wp.json of a complete, passing ``wp check`` of ``root``."""
    manifest = wp.PROOFS.load_manifest(root)
    units = [
        schema.WpUnit(
            u["source"], "", "", 1.0,
            {
                name: schema.WpGoal(pin["function"], pin["prover"], "Valid", 0.1,
                                    int(pin.get("steps", -1)))
                for name, pin in u["goals"].items()
            },
            [],
        )
        for u in manifest["units"]
    ]  # fmt: skip
    return schema.WpEvidence(
        {"frama-c": "27.1 (Cobalt)"},
        units,
        sum(len(u.goals) for u in units),
        "pass",
        [],
        inputs=binding.digest(root, wp.inputs(root)),
    )


def why3_run(root: Path = ROOT) -> schema.Why3Evidence:
    """The why3.json of a complete, passing ``why3.driver check`` of ``root``."""
    manifest = driver.PROOFS.load_manifest(root)
    goals = [
        schema.Why3Goal(e["path"], g["module"], g["goal"], str(g["prover"]), 0.1, "Valid", "",
                        int(g.get("steps", -1)), int(g.get("steplimit", 0)))
        for e in manifest["files"]
        for g in e["goals"]
    ]  # fmt: skip
    return schema.Why3Evidence(
        True, [], {"why3": "Why3 platform, version 1.5.1"}, {}, 1.0, goals,
        inputs=binding.digest(root, driver.inputs(root)),
    )  # fmt: skip


def crosshair_run(root: Path = ROOT) -> schema.CrossHairEvidence:
    """The crosshair.json of a passing check of every contract function."""
    contracts = ROOT / "assurance/sonnx_mul_assurance/python/contracts.py"
    functions = [
        schema.CrossHairFunction(name, n, "pass", 1.0, 0)
        for name, n in crosshair.contract_functions(contracts).items()
    ]
    return schema.CrossHairEvidence(
        "crosshair", "0.0.112", "3.11.7", "PEP316", 8.0, {}, functions,
        sum(f.conditions for f in functions), 1.0, True,
        source=binding.shown(contracts, root),
        inputs=binding.digest(root, crosshair.inputs()),
    )  # fmt: skip


def misra_run(root: Path = ROOT) -> schema.MisraEvidence:
    """The misra.json of a clean check of every source (findings left out:
    the refusals do not read them)."""
    files = sorted(p.relative_to(root).as_posix() for p in (root / misra.SOURCES).glob("*.c"))
    return schema.MisraEvidence(
        "Cppcheck 2.10", files, [], [], "pass", [],
        inputs=binding.digest(root, misra.inputs(root)),
    )  # fmt: skip


def refused(key: str, data: object, root: Path = ROOT, out: Path | None = None) -> list[str]:
    """What the gate's reader of ``key`` refuses in ``data`` written beside ``root``'s tree."""
    edir = out if out is not None else root / "proofs" / "out"
    path = edir / protocol.BY_KEY[key].file
    schema.dump(data, path)
    context = protocol.Context(root, edir, [], frozenset())
    return protocol.BY_KEY[key].read(path, context).refused


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """An evidence directory outside the tree (the tree's own proofs/out is not touched)."""
    return tmp_path / "out"


def copy_inputs(root: Path, listed: Callable[[Path], list[Path]], to: Path) -> Path:
    """A tree at ``to`` holding the files of ``root`` that ``listed`` names inside it."""
    for path in listed(root):
        if path.is_absolute() and path.is_relative_to(root):
            path = path.relative_to(root)
        if not path.is_absolute():  # the tooling outside the tree stays where it is
            (to / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / path, to / path)
    return to


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write(text)


# ---------------------------------------------------------------- the controls
@pytest.mark.parametrize(
    ("key", "make"),
    [("wp", wp_run), ("why3", why3_run), ("crosshair", crosshair_run), ("misra", misra_run)],
)
def test_a_complete_run_of_this_tree_is_taken(
    key: str, make: Callable[[], object], out: Path
) -> None:
    data = make()
    assert getattr(data, "inputs")  # noqa: B009 - every one records its inputs
    assert refused(key, data, out=out) == []


def manifest_goals(root: Path = ROOT) -> int:
    """The number of goals ``proofs/wp-manifest.json`` pins, counted from the file."""
    return sum(len(u["goals"]) for u in wp.PROOFS.load_manifest(root)["units"])


def one_function_goals() -> int:
    return sum(g.function == ONE_FUNCTION for u in wp_run().units for g in u.goals.values())


def test_the_real_manifest_has_the_goal_counts_the_refusals_name() -> None:
    whole = wp_run()
    assert whole.goals == manifest_goals() and len(whole.units) == len(
        wp.PROOFS.load_manifest(ROOT)["units"]
    )
    # the one-function run is a real part of the manifest, not all of it
    assert 0 < one_function_goals() < whole.goals


# ---------------------------------------------------------------- WP
def test_wp_a_source_edited_after_the_run_is_refused(tmp_path: Path) -> None:
    tree = copy_inputs(ROOT, wp.inputs, tmp_path / "tree")
    data = wp_run(tree)
    assert refused("wp", data, tree) == []  # the copy is the tree the run proved
    append(tree / "native/src/sonnx_mul_int.c", "/* edited after the proof */\n")
    assert refused("wp", data, tree) == [
        "evidence file proofs/out/wp.json is stale: native/src/sonnx_mul_int.c changed"
        " since its run (run its producer again)"
    ]


def test_wp_a_header_or_manifest_edited_after_the_run_is_refused(tmp_path: Path) -> None:
    tree = copy_inputs(ROOT, wp.inputs, tmp_path / "tree")
    data = wp_run(tree)
    append(tree / "native/include/sonnx_mul_kernel.h", "\n")
    append(tree / "proofs/wp-why3.conf.in", "\n")
    (found,) = refused("wp", data, tree)
    assert "native/include/sonnx_mul_kernel.h changed" in found
    assert "proofs/wp-why3.conf.in changed" in found


def test_wp_a_new_input_is_refused(tmp_path: Path) -> None:
    tree = copy_inputs(ROOT, wp.inputs, tmp_path / "tree")
    data = wp_run(tree)
    (tree / "native/include/sonnx_mul_new.h").write_text("#define X 1\n")
    assert refused("wp", data, tree) == [
        "evidence file proofs/out/wp.json is stale: native/include/sonnx_mul_new.h is an input"
        " the run did not record since its run (run its producer again)"
    ]


def test_wp_a_one_function_run_is_refused(out: Path) -> None:
    data = wp_run()
    for unit in data.units:
        unit.goals = {n: g for n, g in unit.goals.items() if g.function == ONE_FUNCTION}
    data.goals = sum(len(u.goals) for u in data.units)
    # what wp check --function writes
    assert data.goals == one_function_goals() and data.verdict == "pass"
    total = manifest_goals()
    (found,) = refused("wp", data, out=out)
    assert found.startswith(
        f"{out / 'wp.json'} against proofs/wp-manifest.json: a partial run:"
        f" {total - data.goals} of {total} manifest goals absent ("
    ), found


def test_wp_a_missing_unit_is_refused(out: Path) -> None:
    data = wp_run()
    data.units = [u for u in data.units if u.source != "native/src/sonnx_mul_int.c"]
    data.goals = sum(len(u.goals) for u in data.units)
    assert refused("wp", data, out=out) == [
        f"{out / 'wp.json'}: a partial run: unit native/src/sonnx_mul_int.c of"
        " proofs/wp-manifest.json absent"
    ]


def test_wp_a_goal_count_that_is_not_the_records_is_refused(out: Path) -> None:
    data = wp_run()
    data.goals += 1
    total = manifest_goals()
    assert refused("wp", data, out=out) == [
        f"{out / 'wp.json'}: says {total + 1} goals, records {total}"
    ]


def test_wp_a_unit_recorded_twice_is_refused(out: Path) -> None:
    data = wp_run()
    data.units.append(dataclasses.replace(data.units[-1]))
    data.goals = sum(len(u.goals) for u in data.units)
    found = refused("wp", data, out=out)
    assert f"{out / 'wp.json'}: unit {data.units[-1].source} recorded more than once" in found
    assert any("goals recorded more than once" in line for line in found)


def test_wp_a_goal_recorded_twice_is_refused(out: Path) -> None:
    data = wp_run()
    path = out / "wp.json"
    refused("wp", data, out=out)  # written as the producer writes it
    name = next(iter(data.units[0].goals))
    text = path.read_text()
    first = text.index(f'"{name}": {{')
    end = text.index("}", first) + 1
    # the goal's entry once more, just after itself: Python's JSON reader keeps one
    path.write_text(text[:end] + "," + text[first:end] + text[end:])
    assert len(json.loads(path.read_text())["units"][0]["goals"]) == len(data.units[0].goals)
    with pytest.raises(schema.SchemaError, match=f"wp.json: duplicated key\\(s\\) {name}"):
        protocol.BY_KEY["wp"].read(path, protocol.Context(ROOT, out, [], frozenset()))


# ---------------------------------------------------------------- Why3
def test_why3_a_stale_hash_is_refused(out: Path) -> None:
    data = why3_run()
    data.inputs["why3/widen.mlw"] = "0" * 64  # the file as it was before an edit
    assert refused("why3", data, out=out) == [
        f"evidence file {out / 'why3.json'} is stale: why3/widen.mlw changed since its run"
        " (run its producer again)"
    ]


def test_why3_an_input_no_longer_listed_is_refused(out: Path) -> None:
    # a proof file the run read, since dropped from the manifest's load path
    data = why3_run()
    data.inputs["why3/gone.mlw"] = "0" * 64
    (found,) = refused("why3", data, out=out)
    assert "why3/gone.mlw was an input and is no longer one" in found


def test_why3_a_proof_file_edited_after_the_run_is_refused(tmp_path: Path) -> None:
    tree = copy_inputs(ROOT, driver.inputs, tmp_path / "tree")
    data = why3_run(tree)
    assert refused("why3", data, tree) == []
    append(tree / "why3/floats.mlw", "(* edited after the proof *)\n")
    (found,) = refused("why3", data, tree)
    assert "is stale: why3/floats.mlw changed" in found


def test_why3_missing_and_repeated_goals_are_refused(out: Path) -> None:
    data = why3_run()
    total = len(data.goals)  # every goal of proofs/manifest.json
    dropped = data.goals.pop()
    key = f"{dropped.file}/{dropped.module}/{dropped.goal}"
    assert refused("why3", data, out=out) == [
        f"{out / 'why3.json'} against proofs/manifest.json: a partial run:"
        f" 1 of {total} manifest goals absent ({key})"
    ]
    data.goals.append(dropped)
    data.goals.append(dataclasses.replace(dropped, status="Valid"))
    assert refused("why3", data, out=out) == [
        f"{out / 'why3.json'} against proofs/manifest.json: goals recorded more than once: {key}"
    ]


def test_why3_a_one_file_run_is_refused(out: Path) -> None:
    data = why3_run()
    total = len(data.goals)
    data.goals = [g for g in data.goals if g.file == "why3/widen.mlw"]
    assert 0 < len(data.goals) < total
    (found,) = refused("why3", data, out=out)
    assert f"a partial run: {total - len(data.goals)} of {total} manifest goals absent" in found


# ---------------------------------------------------------------- CrossHair, MISRA
def test_crosshair_a_stale_hash_is_refused(out: Path) -> None:
    data = crosshair_run()
    validation = binding.shown(ROOT / "src/sonnx_mul/validation.py", ROOT)
    assert validation in data.inputs  # the contracts run the product's validation
    data.inputs[validation] = "0" * 64
    assert refused("crosshair", data, out=out) == [
        f"evidence file {out / 'crosshair.json'} is stale: {validation} changed since its run"
        " (run its producer again)"
    ]


def test_crosshair_without_inputs_is_refused(out: Path) -> None:
    data = crosshair_run()
    data.inputs = {}
    assert refused("crosshair", data, out=out) == [
        f"evidence file {out / 'crosshair.json'} records no input hashes: it is bound to no tree"
    ]


def test_misra_a_source_edited_after_the_check_is_refused(tmp_path: Path) -> None:
    tree = copy_inputs(ROOT, misra.inputs, tmp_path / "tree")
    data = misra_run(tree)
    assert refused("misra", data, tree) == []
    append(tree / "native/src/sonnx_mul_float.c", "\n")
    (found,) = refused("misra", data, tree)
    assert "is stale: native/src/sonnx_mul_float.c changed" in found


# ---------------------------------------------------------------- the gate itself
def test_the_gate_fails_on_a_wp_json_of_the_source_before_an_edit(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    report = build_report(tree, registry=FIXTURE_REGISTRY, probe_tools=False)
    assert report["gate"]["problems"] == []  # the negative control
    append(tree / "native/src/k.c", "/* edited after the proof */\n")
    report = build_report(tree, registry=FIXTURE_REGISTRY, probe_tools=False)
    problems = report["gate"]["problems"]
    # the edit makes every evidence of that source stale: WP's and MISRA's
    assert [p for p in problems if "is stale" in p] == [
        "evidence file proofs/out/wp.json is stale: native/src/k.c changed since its run"
        " (run its producer again)",
        "evidence file proofs/out/misra.json is stale: native/src/k.c changed since its run"
        " (run its producer again)",
    ]
    assert report["evidence_files"]["wp"]["status"] == "refused"


# ---------------------------------------------------------------- the release gate
RECORDED = {
    "why3": {"why3": "1.5.1"},
    "coq": COQ_VERSIONS,
    "wp": {"frama-c": "27.1"},
    "misra": "Cppcheck 2.10",
    "crosshair": ("0.0.112", "3.11"),
}
"""The tool versions the fixture tree's evidence records (test_trace_report)."""


def installed(monkeypatch: pytest.MonkeyPatch, **change: Any) -> None:
    """Make the probes of the installed tools answer the recorded versions, but ``change``."""
    versions = {**RECORDED, **change}
    monkeypatch.setattr(driver, "tool_versions", lambda root: dict(versions["why3"]))
    monkeypatch.setattr(coq, "tool_versions", lambda root: dict(versions["coq"]))
    monkeypatch.setattr(wp, "tool_versions", lambda: dict(versions["wp"]))
    monkeypatch.setattr(misra, "tool_version", lambda: versions["misra"])
    monkeypatch.setattr(crosshair, "crosshair_version", lambda: versions["crosshair"][0])
    monkeypatch.setattr(protocol.platform, "python_version", lambda: versions["crosshair"][1])


def release_problems(tree: Path) -> list[str]:
    report = build_report(tree, registry=FIXTURE_REGISTRY, probe_tools=False, same_tools=True)
    return list(report["gate"]["problems"])


def test_the_release_gate_takes_evidence_of_the_installed_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed(monkeypatch)
    assert release_problems(make_tree(tmp_path)) == []


@pytest.mark.parametrize(
    ("change", "expect"),
    [
        ({"wp": {"frama-c": "28.0"}}, "wp.json was made with frama-c '27.1'; installed now: '28"),
        ({"why3": {"why3": "1.6.0"}}, "why3.json was made with why3 '1.5.1'; installed now: '1.6"),
        ({"coq": {**COQ_VERSIONS, "coqc": "8.18.0"}},
         "coq.json was made with coqc '8.16.1'; installed now: '8.18.0'"),
        ({"misra": "Cppcheck 2.13"}, "misra.json was made with cppcheck 'Cppcheck 2.10'"),
        ({"crosshair": ("0.0.113", "3.11")}, "crosshair.json was made with crosshair-tool"),
        ({"why3": {"why3": "1.5.1", "z3": "4.13"}}, "why3.json was made with z3 '(not recorded)'"),
    ],
    ids=["frama-c", "why3", "coqc", "cppcheck", "crosshair", "a-tool-not-recorded"],
)  # fmt: skip
def test_the_release_gate_refuses_evidence_of_other_tool_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: dict[str, Any], expect: str
) -> None:
    tree = make_tree(tmp_path)
    installed(monkeypatch, **change)
    (found,) = release_problems(tree)
    assert found.startswith(f"evidence file proofs/out/{expect}"), found
    # the development gate does not compare versions
    report = build_report(tree, registry=FIXTURE_REGISTRY, probe_tools=False)
    assert report["gate"]["problems"] == []


@pytest.mark.parametrize(
    ("module", "call"),
    [
        ("sonnx_mul_assurance.c.wp", lambda g: g["inputs"](ROOT)),
        ("sonnx_mul_assurance.why3.driver", lambda g: g["inputs"](ROOT)),
        ("sonnx_mul_assurance.why3.coq", lambda g: g["inputs"](ROOT)),
        ("sonnx_mul_assurance.c.misra", lambda g: g["inputs"](ROOT)),
        ("sonnx_mul_assurance.python.crosshair", lambda g: g["inputs"]()),
    ],
)
def test_a_producer_run_as_a_script_lists_the_inputs_the_gate_lists(
    module: str, call: Callable[[dict[str, Any]], list[Path]]
) -> None:
    """make prove runs each producer with `python -m` (its __name__ is then
    __main__), the gate imports it: both must list the same files, the
    producer's own code among them."""
    import importlib
    import runpy

    as_script = runpy.run_module(module, run_name="__not_imported__", alter_sys=True)
    imported = vars(importlib.import_module(module))
    listed = binding.digest(ROOT, call(as_script))
    assert listed == binding.digest(ROOT, call(imported))
    own = module.replace(".", "/").replace("sonnx_mul_assurance", "assurance/sonnx_mul_assurance")
    assert f"{own}.py" in listed and "assurance/sonnx_mul_assurance/evidence/binding.py" in listed
