"""The report's helpers pinned one behaviour each (against the mutants of ``make mutants``).

Tool and prover identification (``hashes``), the git and tool state
(``report``), the rendered source copies and their size cap (``sources``),
the goal-to-id mapping rules (``evidence.map_goal``), the registry and
test-case readers (``evidence``), function markers in comments
(``markers``), and the records that must stay immutable (``trusted``,
``markers``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from test_trace_report import FIXTURE_REGISTRY, bind, crosshair_json, function, goal, make_tree

from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.report import evidence, hashes, objectives, prose, report, sources, trusted
from sonnx_mul_assurance.report.evidence import exhaustive_items, map_goal
from sonnx_mul_assurance.report.markers import Marker, scan

AT = "@"  # a function marker spelt by concatenation, so that this file holds none


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# ---------------------------------------------------------------- hashes: tools
def test_version_line_from_stdout_or_stderr_whatever_the_exit_code(tmp_path: Path) -> None:
    out = script(tmp_path / "a", 'echo "banner"; echo "Tool version 1.2.3 (x)"')
    err = script(tmp_path / "b", 'echo "tool 4.5" >&2; exit 3')
    none = script(tmp_path / "c", 'echo "no digits here"')
    assert hashes._version(str(out)) == "Tool version 1.2.3 (x)"
    assert hashes._version(str(err)) == "tool 4.5"
    assert hashes._version(str(none)) is None
    assert hashes._version(str(tmp_path / "missing")) is None


CONF = """[main]
[prover]
command = "{a} --x %f"
shortcut = "alpha"
[prover]
command = "@Z3_PYPI@ -smt2"
shortcut = "zed"
[prover]
command = "{a} --other"
[prover]
command = "{b}"
shortcut = "beta"
"""


def prover_tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    a = script(tmp_path / "bin" / "alpha", 'echo "Alpha 1.0"')
    b = tmp_path / "bin" / "beta-missing"
    root = tmp_path / "repo"
    (root / "proofs").mkdir(parents=True)
    (root / "proofs" / "why3.conf.in").write_text(CONF.format(a=a, b=b))
    return root, a, b


def test_prover_executables_reads_every_prover_section(tmp_path: Path) -> None:
    root, a, b = prover_tree(tmp_path)
    found = hashes.prover_executables(root)
    assert found["alpha"] == str(a) and found["beta"] == str(b)
    assert found["zed"].endswith("/z3") and "@Z3_PYPI@" not in found["zed"]
    assert set(found) - {"why3", "gappa", "gcc"} == {"alpha", "zed", "beta"}  # no shortcut: skipped


@pytest.mark.needs_prover  # hashes.binaries probes the installed provers too
def test_binaries_hash_probe_and_absence(tmp_path: Path) -> None:
    root, a, _ = prover_tree(tmp_path)
    by_name = {e["names"][0]: e for e in hashes.binaries(root)}  # probes by default
    assert by_name["alpha"]["sha256"] == hashes.sha256(a) and by_name["alpha"]["version"] == (
        "Alpha 1.0"
    )
    assert by_name["beta"]["sha256"] is None and by_name["beta"]["resolved"] is None
    assert by_name["beta"]["version"] is None
    quiet = {e["names"][0]: e for e in hashes.binaries(root, probe=False)}
    assert quiet["alpha"]["version"] is None and quiet["alpha"]["sha256"] == hashes.sha256(a)


def test_why3_library_follows_driver_imports_once(tmp_path: Path) -> None:
    datadir = tmp_path / "why3data"
    script(datadir / "drivers" / "base.drv", "")
    (datadir / "drivers" / "base.drv").write_text('import "more.drv"\n')
    (datadir / "drivers" / "more.drv").write_text('import "base.drv"\n')  # a cycle
    (datadir / "stdlib").mkdir()
    (datadir / "stdlib" / "ieee_float.mlw").write_text("theory T end\n")
    root = tmp_path / "repo"
    (root / "proofs" / "drivers").mkdir(parents=True)
    (root / "proofs" / "drivers" / "own.gen").write_text('import "base.drv"\n')
    found = hashes.why3_library(root, datadir)
    assert found[str(datadir / "drivers" / "base.drv")] is not None
    assert found[str(datadir / "drivers" / "more.drv")] is not None
    assert found[str(datadir / "stdlib" / "ieee_float.mlw")] is not None
    assert found[str(datadir / "stdlib" / "bv.mlw")] is None  # listed, absent
    assert str(root / "proofs" / "drivers" / "own.gen") not in found  # hashed as a claim file


# ---------------------------------------------------------------- report: git and tools
def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_git_state_commit_and_dirty_files(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "f.txt").write_text("1\n")
    git(tmp_path, "add", "f.txt")
    git(tmp_path, "commit", "-q", "-m", "one")
    head = git(tmp_path, "rev-parse", "HEAD")
    assert report.git_state(tmp_path) == {"commit": head, "dirty": False, "changed": []}
    (tmp_path / "f.txt").write_text("2\n")
    assert report.git_state(tmp_path) == {"commit": head, "dirty": True, "changed": ["f.txt"]}
    (tmp_path / "a b.txt").write_text("new\n")
    changed = report.git_state(tmp_path)["changed"]
    assert changed == ["f.txt", '"a b.txt"'] or changed == ["f.txt", "a b.txt"]


def test_git_state_outside_a_repository(tmp_path: Path) -> None:
    state = report.git_state(tmp_path)
    assert state["commit"] is None


def test_tool_versions_probes_by_default_and_not_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[list[str]] = []

    def fake_run(cmd: list[str], cwd: Path | None = None, timeout: float = 10) -> str:
        calls.append(list(cmd))
        return "Prover 9.9 (build)"

    monkeypatch.setattr(report, "_run", fake_run)
    tools = report.tool_versions()
    assert tools["why3"] == "Prover 9.9 (build)" and calls
    calls.clear()
    assert "why3" not in report.tool_versions(probe=False) and not calls


def test_why3_recorded_tools_are_carried_into_the_report(tmp_path: Path) -> None:
    # Schema era: why3.json records its tools under ``versions`` (a top-level
    # "why3_version" key, which the old reader copied, is off the schema); the
    # report carries them as recorded_by_why3/versions, the path the trusted
    # base's version_keys name.
    root = make_tree(tmp_path)
    path = root / "proofs/out/why3.json"
    data = schema.load(schema.Why3Evidence, path)
    data.versions = {"why3": "1.5.1", "z3": "4.12.2"}
    schema.dump(data, path)
    built = report.build_report(root, registry=FIXTURE_REGISTRY, probe_tools=False)
    assert built["tools"]["recorded_by_why3"] == {"versions": {"why3": "1.5.1", "z3": "4.12.2"}}
    data.versions = {}
    schema.dump(data, path)
    plain = report.build_report(root, registry=FIXTURE_REGISTRY, probe_tools=False)
    assert "recorded_by_why3" not in plain["tools"]
    assert plain["gate"]["problems"] == []


def test_write_report_into_a_new_nested_folder_and_again(tmp_path: Path) -> None:
    built = report.build_report(make_tree(tmp_path / "t"), registry=FIXTURE_REGISTRY,
                                probe_tools=False)  # fmt: skip
    out = tmp_path / "a" / "b" / "c"
    report.write_report(built, out)
    paths = report.write_report(built, out)  # the folder exists now
    assert [p.name for p in paths] == ["traceability.json", "traceability.md", "traceability.html"]
    assert list(json.loads(paths[0].read_text())) == list(built)  # keys in the report's order


# ---------------------------------------------------------------- sources: copies and the cap
def test_source_copies_cap_nested_and_back_links(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "a" / "b").mkdir(parents=True)
    cap = 8 << 20  # the documented cap: a larger file is linked by name only
    assert cap == sources.MAX_BYTES
    (root / "a" / "b" / "at_cap.txt").write_bytes(b"x" * cap)
    (root / "a" / "over_cap.txt").write_bytes(b"x" * (cap + 1))
    (root / "a" / "b" / "small.py").write_text("one\ntwo\n")
    (root / "empty.txt").write_text("")
    (tmp_path / "outside.txt").write_text("no")
    files = ["a/b/at_cap.txt", "a/over_cap.txt", "a/b/small.py", "empty.txt", "../outside.txt"]
    written = sources.write_copies(root, tmp_path / "out", files, "traceability.html")
    assert written == {"a/b/at_cap.txt", "a/b/small.py", "empty.txt"}
    page = (tmp_path / "out" / sources.copy_name("a/b/small.py")).read_text()
    assert 'href="../../../traceability.html"' in page
    assert 'id="L1"' in page and 'id="L2"' in page and 'id="L3"' not in page
    assert '<span class="line" id="L1"><a class="ln" href="#L1">1</a>one</span>' in page
    empty = (tmp_path / "out" / sources.copy_name("empty.txt")).read_text()
    assert 'id="L1"' in empty and 'href="../traceability.html"' in empty
    assert sources.href("a/b/small.py", 2, written) == sources.copy_name("a/b/small.py") + "#L2"
    assert sources.href("a/b/small.py", None, written) == sources.copy_name("a/b/small.py")
    assert sources.href("a/over_cap.txt", 1, written) is None


# ---------------------------------------------------------------- evidence: goal mapping
MLW = """module M
  lemma a: true
  lemma b: true
  (* @relation(R1, scope=range_start) *)
  lemma c: true
  (* @relation(R1, scope=range_end) *)
  lemma d: true
  (* @relation(R2, scope=range_start) *)
  lemma e: true
  (* @relation(R2, scope=range_end) *)
end
"""


def goal_tree(tmp_path: Path) -> tuple[Path, dict[str, list[Marker]]]:
    (tmp_path / "why3").mkdir()
    (tmp_path / "why3" / "m.mlw").write_text(MLW)
    markers, problems = scan(tmp_path, {"R1", "R2"}, ("why3",))
    assert problems == []
    by_file: dict[str, list[Marker]] = {}
    for m in markers:
        by_file.setdefault(m.path, []).append(m)
    return tmp_path, by_file


def test_map_goal_locates_a_goal_at_its_declaration(tmp_path: Path) -> None:
    # Schema era: a goal record has no ``loc``/``line`` (the old reader's first
    # rule, a two-element loc, is gone with them): a goal is located at the
    # first line of its declaration when that declaration maps it.
    root, by_file = goal_tree(tmp_path)
    assert map_goal(goal("why3/m.mlw", "M", "c#0"), root, by_file) == (
        ("R1",), "why3/m.mlw", 5,
    )  # fmt: skip
    assert map_goal(goal("why3/m.mlw", "M", "e'vc#3"), root, by_file) == (
        ("R2",), "why3/m.mlw", 9,
    )  # fmt: skip


def test_map_goal_by_declaration_extent(tmp_path: Path) -> None:
    """A declaration runs to the line before the next one; the module is the last resort."""
    root, by_file = goal_tree(tmp_path)
    expected = {
        "a": ("R1", "R2"),  # its extent (line 2) overlaps no range: the whole module's ids
        "b": ("R1",),  # lines 3-4 hold R1's start marker
        "c": ("R1",),
        "d": ("R2",),  # lines 7-8: R2's start marker is on 8
        "e": ("R2",),
    }
    for name, ids in expected.items():
        # goal names as the producer writes them: "name#k", 'vc for a let
        found = map_goal(goal("why3/m.mlw", "M", f"{name}'vc#0"), root, by_file)
        assert set(found[0]) == set(ids), (name, found)


def test_map_goal_without_a_declaration_of_its_name(tmp_path: Path) -> None:
    # Schema era: every goal has a name (the old reader also took records
    # without one); a name no declaration carries maps through its module.
    root, by_file = goal_tree(tmp_path)
    found = map_goal(goal("why3/m.mlw", "M", "zzz#0"), root, by_file)
    assert found == (("R1", "R2"), "why3/m.mlw", None)  # the module overlaps both ranges
    assert map_goal(goal("why3/m.mlw", "N", "c#0"), root, by_file) == ((), "why3/m.mlw", None)
    assert map_goal(goal("why3/gone.mlw", "M", "c#0"), root, by_file) == ((), "why3/gone.mlw", None)


def test_exhaustive_ids_are_the_ones_the_run_names_never_a_dtype_guess(tmp_path: Path) -> None:
    # Schema era: the old reader guessed ids from the element type when a record
    # named none (float -> F-FLOAT); a result now carries its ``requirements``
    # and nothing else maps it: a float16 run naming F-WRAP is evidence for
    # F-WRAP only, and one naming no id is unmapped, whatever its type.
    path = tmp_path / "proofs/out/exhaustive.json"

    def run(etype: str, requirements: list[str]) -> schema.ExhaustiveResult:
        pairs, modes = schema.EXHAUSTIVE_SCOPE[etype]
        return schema.ExhaustiveResult(etype, requirements, pairs, 0, [], 1.0, None, [*modes])

    data = schema.ExhaustiveEvidence(
        "sonnx_mul_assurance.python.exhaustive", "2.0", True,
        [run("float16", ["F-WRAP"]), run("bfloat16", []), run("int8", ["F-NOPE"])], True,
    )  # fmt: skip
    schema.dump(data, path)
    mapped, lost = exhaustive_items(path, tmp_path, {"F-WRAP", "F-FLOAT"})
    assert [(i.name, i.ids) for i in mapped] == [("float16", ("F-WRAP",))]
    assert [(i.name, i.ids, i.ok) for i in lost] == [
        ("bfloat16", (), True),
        ("int8 wrap/error", (), True),
    ]
    assert {i.location for i in mapped + lost} == {"proofs/out/exhaustive.json"}


# ---------------------------------------------------------------- immutable records
def test_trusted_records_and_markers_are_immutable() -> None:
    records = [
        trusted.TRUSTED_BASE[0],
        trusted.PROOF_SUBJECTS["unknown"],
        trusted.KnownIssue("t", "u", "r"),
        objectives.OBJECTIVES[0],
        Marker("p", 1, ("R1",), "file", 1, 1),
    ]
    for record in records:
        field = dataclasses.fields(record)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, field, None)


@pytest.mark.parametrize("spelling", ["f", "sonnx_mul.a.f", "sonnx_mul.a:f", "f(x=1)"])
def test_crosshair_function_names_in_every_spelling_map_to_the_marker(
    tmp_path: Path, spelling: str
) -> None:
    root = make_tree(tmp_path)
    (root / "proofs/out/crosshair.json").write_text(crosshair_json(function(spelling)))
    bind(root)
    built = report.build_report(root, registry=FIXTURE_REGISTRY, probe_tools=False)
    assert built["gate"]["problems"] == []
    crosshair = [
        e for e in built["requirements"]["R1"]["evidence"]["proof"] if e["source"] == "crosshair"
    ]
    assert [(e["name"], e["location"]) for e in crosshair] == [(spelling, "src/sonnx_mul/a.py:2")]


def test_a_line_marker_on_its_own_line_names_the_next_non_blank_line(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    text = "# @relation(R1, scope=line)\n\nx = 1\ny = 2\n\nz = 3\n"
    (tmp_path / "src" / "m.py").write_text(text)
    markers, problems = scan(tmp_path, {"R1"}, ("src",))
    assert problems == []
    assert [(m.start, m.end) for m in markers] == [(3, 3)]


def test_a_function_marker_in_a_comment_skips_blank_and_comment_lines(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    text = (
        "# " + AT + "relation(R1, scope=function)\n"  # 1
        "\n"
        "# a comment between the marker and its function\n"
        "@staticmethod\n"  # 4
        "def f():\n"
        "    return 1\n"  # 6
    )
    (tmp_path / "src" / "m.py").write_text(text)
    markers, problems = scan(tmp_path, {"R1"}, ("src",))
    assert problems == []
    assert [(m.ids, m.scope, m.start, m.end, m.name) for m in markers] == [
        (("R1",), "function", 4, 6, "f")
    ]


# ---------------------------------------------------------------- evidence: registry and tests
def test_registry_items_need_only_a_literal_id(tmp_path: Path) -> None:
    registry = tmp_path / "src" / "reqs.py"
    registry.parent.mkdir()
    registry.write_text(
        "TITLE = 'Same shape'\n"
        "ALL = (\n"
        "    Requirement('R1', TITLE, 'A and B [R1]', None, 's'),\n"  # 3
        "    Requirement(\n        'R4', f'{TITLE}!', 'x', None, 's'\n    ),\n"  # 4
        "    Requirement(ID, 'not literal', 'x', None, 's'),\n"
        "    Requirement('R9', 'not asked', 'x', None, 's'),\n"
        ")\n"
    )
    items = evidence.registry_items(registry, tmp_path, {"R1", "R4"})
    assert sorted((i.ids, i.location, i.kind, i.source) for i in items) == [
        (("R1",), "src/reqs.py:3", "spec", "registry"),
        (("R4",), "src/reqs.py:4", "spec", "registry"),
    ]


def test_function_lines_are_the_def_to_the_last_line(tmp_path: Path) -> None:
    path = tmp_path / "test_t.py"
    path.write_text(
        "def test_a():\n    x = 1\n    assert x\n\n\n"  # 1-3
        "class TestC:\n    async def test_m(self):\n        pass\n"  # 6-8
    )
    assert evidence._function_lines(path) == {"test_a": (1, 3), "TestC.test_m": (7, 8)}
    assert evidence._function_lines(tmp_path / "absent.py") == {}


def test_a_line_marker_counts_for_the_test_whose_def_line_it_is_on(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_t.py").write_text(
        "def test_a():\n    assert True\n\n\n"  # 1-2
        "def test_b():\n    assert True\n"  # 5-6
    )
    markers = [
        Marker("tests/test_t.py", 1, ("R1",), "line", 1, 1),  # on test_a's def line
        Marker("tests/test_t.py", 6, ("R4",), "line", 6, 6),  # on test_b's last line
    ]
    xml = tmp_path / "pytest.xml"
    xml.write_text(
        "<testsuite>"
        '<testcase classname="tests.test_t" name="test_a" time="0.1"/>'
        '<testcase classname="tests.test_t" name="test_b" time="0.1"/>'
        "</testsuite>"
    )
    items, skipped = evidence.testcase_items([xml], tmp_path, markers, {"R1", "R4"})
    assert skipped == {}
    assert [(i.ids, i.location, i.name, i.ok) for i in items] == [
        (("R1",), "tests/test_t.py:1", "tests.test_t::test_a", True)
    ]


# ---------------------------------------------------------------- provers in the trusted base
def test_each_prover_entry_counts_the_wp_goals_pinned_to_it() -> None:
    """The provers' entries say how many WP goals the manifest pins to them,
    counted from the manifest, and none calls itself a fallback."""
    repo = Path(__file__).resolve().parents[2]
    units = prose.load_wp_units(repo)
    manifest = json.loads((repo / "proofs/wp-manifest.json").read_text())
    cvc4 = sum(
        1 for u in manifest["units"] for g in u["goals"].values() if g["prover"] == "CVC4 1.8"
    )
    base = {c.name: c for c in trusted.trusted_base(units)}
    assert f"{cvc4} goals to 'CVC4 1.8'" in base[trusted.CVC4].trusted_for
    assert all("portfolio" not in " ".join((c.trusted_for, *c.reduced_by)) for c in base.values())
    # no Why3 goal is pinned to CVC4, as its entry says
    why3 = json.loads((repo / "proofs/manifest.json").read_text())
    assert not any(g["prover"].startswith("cvc4") for f in why3["files"] for g in f["goals"])


def test_a_component_without_pinned_goals_is_unchanged() -> None:
    unit = prose.WpUnit("a.c", 3, 1, (("CVC4 1.8", 2), ("Qed", 1)))
    cvc4 = next(c for c in trusted.TRUSTED_BASE if c.name == trusted.CVC4)
    assert trusted.with_wp_counts(cvc4, [unit]).trusted_for.endswith("pins 2 goals to 'CVC4 1.8'")
    gappa = next(c for c in trusted.TRUSTED_BASE if c.name.startswith("Gappa"))
    assert trusted.with_wp_counts(gappa, [unit]) == gappa
