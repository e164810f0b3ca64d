"""The audit package: navigation (every link resolves), absent evidence, trusted base, SONNX."""

from __future__ import annotations

import json
import shutil
from html import escape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from test_trace_report import (
    FIXTURE_REGISTRY,
    crosshair_json,
    every_pair,
    exhaustive_json,
    function,
    goal,
    make_tree,
    result,
    why3_json,
)

from sonnx_mul.requirements import REGISTRY
from sonnx_mul_assurance.report import build_report, report_main, write_report
from sonnx_mul_assurance.report.alignment import SONNX_DECISIONS, SONNX_TAGS, tags
from sonnx_mul_assurance.report.objectives import STATUSES, objectives
from sonnx_mul_assurance.report.prose import load_wp_units
from sonnx_mul_assurance.report.render import SECTIONS
from sonnx_mul_assurance.report.trusted import trusted_base

REPO = Path(__file__).resolve().parents[2]


class _Links(HTMLParser):
    """Every href and every id of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag == "a" and a.get("href") is not None:
            self.hrefs.append(str(a["href"]))


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return parser


def follow_links(start: Path) -> tuple[int, list[str]]:
    """Follow every link from ``start`` through every page it reaches inside its folder.

    Returns (links checked, broken links). A link is broken when it leaves the
    folder, points to a missing file, or names an anchor its target lacks.
    """
    folder = start.parent.resolve()
    parsed: dict[Path, _Links] = {}

    def page_of(path: Path) -> _Links:
        if path not in parsed:
            parsed[path] = _parse(path)
        return parsed[path]

    todo, visited = [start.resolve()], set()
    broken: list[str] = []
    checked = 0
    while todo:
        page = todo.pop()
        if page in visited:
            continue
        visited.add(page)
        for link in page_of(page).hrefs:
            checked += 1
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                broken.append(f"{page.name}: external link {link}")
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.is_relative_to(folder) or not target.is_file():
                broken.append(f"{page.relative_to(folder)}: {link} -> no such file")
                continue
            if target.suffix == ".html":
                todo.append(target)
                if parts.fragment and parts.fragment not in page_of(target).ids:
                    broken.append(f"{page.relative_to(folder)}: {link} -> no anchor")
    return checked, broken


@pytest.fixture(scope="module")
def real_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """The report of the real tree (no evidence: every section must still render)."""
    out = tmp_path_factory.mktemp("report")
    report = build_report(REPO, out / "no-evidence", probe_tools=False)
    write_report(report, out, REPO)
    return report, out


def test_every_link_of_the_real_report_finds_its_target(
    real_report: tuple[dict[str, Any], Path],
) -> None:
    report, out = real_report
    checked, broken = follow_links(out / "traceability.html")
    assert broken == []
    # TOC, one link per id and parent, one per hashed file at least.
    assert checked > len(SECTIONS) + 2 * len(REGISTRY) + len(report["artifacts"])
    toc = _parse(out / "traceability.html")
    for sid, _ in SECTIONS:
        assert f"#{sid}" in toc.hrefs and sid in toc.ids
    for rid, req in report["requirements"].items():
        assert f"#detail-{rid}" in toc.hrefs
        for child in req["children"]:
            assert req["parent"] is None or child != rid
            assert f"#detail-{child}" in toc.hrefs
    # Evidence locations link to line anchors of rendered copies in the folder.
    assert any(h.startswith("sources/src/sonnx_mul/") and "#L" in h for h in toc.hrefs)
    assert (out / "sources" / "src" / "sonnx_mul" / "oracle" / "integers.py.html").is_file()


def test_link_checker_catches_a_broken_anchor_and_a_missing_file(
    real_report: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    _, out = real_report
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    html = (copy / "traceability.html").read_text(encoding="utf-8")
    (copy / "traceability.html").write_text(
        html.replace('href="#detail-R1"', 'href="#detail-R1-missing"', 1), encoding="utf-8"
    )
    (copy / "sources" / "src" / "sonnx_mul" / "oracle" / "integers.py.html").unlink()
    _, broken = follow_links(copy / "traceability.html")
    assert any("#detail-R1-missing" in b and "no anchor" in b for b in broken)
    assert any("integers.py.html" in b and "no such file" in b for b in broken)


def test_synthetic_evidence_links_to_test_and_goal_lines(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "tree")
    report = build_report(root, registry=FIXTURE_REGISTRY, probe_tools=False)
    out = tmp_path / "out"
    write_report(report, out, root)
    checked, broken = follow_links(out / "traceability.html")
    assert broken == [] and checked > 0
    hrefs = _parse(out / "traceability.html").hrefs
    assert "sources/tests/test_a.py.html#L1" in hrefs  # test id test_R1_same
    assert "sources/why3/a.mlw.html#L2" in hrefs  # Why3 goal l in a marked range
    assert "sources/src/sonnx_mul/a.py.html#L2" in hrefs  # code marker


NATIVE = "proofs/out/native-exhaustive.json"
TARGETS = "proofs/out/targets.json"


def _formats(out: Path) -> tuple[dict[str, Any], str, str]:
    return (
        json.loads((out / "traceability.json").read_text(encoding="utf-8")),
        (out / "traceability.md").read_text(encoding="utf-8"),
        (out / "traceability.html").read_text(encoding="utf-8"),
    )


def test_absent_exhaustive_shows_in_all_formats_and_require_fails_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_tree(tmp_path / "tree")
    registry = dict(FIXTURE_REGISTRY)
    ev = root / "proofs" / "out"
    # With exhaustive.json present, only the compiled kernel's own runs are absent.
    (ev / "exhaustive.json").write_text(exhaustive_json(*every_pair(["R1"])))
    present = build_report(root, registry=registry, probe_tools=False)
    assert present["evidence_absent"] == [NATIVE, TARGETS] and present["gate"]["passed"]
    assert present["evidence_files"]["exhaustive"]["status"] == "present"
    # Removed: absent in the three formats, the development gate still passes.
    (ev / "exhaustive.json").unlink()
    report = build_report(root, registry=registry, probe_tools=False)
    write_report(report, tmp_path / "dev", root)
    data, md, html = _formats(tmp_path / "dev")
    assert data["gate"]["passed"] is True
    assert data["evidence_files"]["exhaustive"]["status"] == "absent"
    assert "verify-exhaustive" in data["evidence_files"]["exhaustive"]["meaning"]
    assert data["evidence_absent"] == ["proofs/out/exhaustive.json", NATIVE, TARGETS]
    assert "| exhaustive | proofs/out/exhaustive.json | ABSENT | no |" in md
    assert "**Absent evidence**: proofs/out/exhaustive.json" in md
    assert '<span class="absent">ABSENT</span>' in html
    assert "A development gate passes without it" in html
    # --require exhaustive: the release gate fails, in the data and the exit code.
    release = build_report(root, registry=registry, probe_tools=False, require=["exhaustive"])
    assert release["gate"]["passed"] is False
    assert any("exhaustive.json is missing (--require exhaustive)" in p for p in
               release["gate"]["problems"])  # fmt: skip
    args = ["--out", str(tmp_path / "rel"), "--root", str(root), "--no-probe"]
    assert report_main([*args, "--require", "exhaustive"]) == 1
    assert "exhaustive.json is missing" in capsys.readouterr().err
    data, md, _ = _formats(tmp_path / "rel")
    assert data["required_evidence"] == [
        "coq", "coverage", "crosshair", "exhaustive", "misra", "pytest", "why3", "wp",
    ]  # fmt: skip
    assert "| exhaustive | proofs/out/exhaustive.json | ABSENT | yes |" in md
    with pytest.raises(ValueError, match="unknown evidence kinds"):
        build_report(root, registry=registry, probe_tools=False, require=["nonsense"])


def test_absent_exhaustive_is_shown_on_the_ids_it_would_cover(
    real_report: tuple[dict[str, Any], Path],
) -> None:
    report, out = real_report
    _, md, html = _formats(out)
    expected = report["evidence_files"]["exhaustive"]["path"]
    assert expected.endswith("no-evidence/exhaustive.json")
    native = expected.replace("exhaustive.json", "native-exhaustive.json")
    targets = expected.replace("exhaustive.json", "targets.json")
    for rid in ("F-FLOAT", "F-WRAP"):
        assert report["requirements"][rid]["absent_evidence"] == [expected, native, targets]
    assert report["requirements"]["F-CHECKED"]["absent_evidence"] == [expected, targets]
    assert report["requirements"]["R1"]["absent_evidence"] == []
    assert f"**Expected evidence absent:** {expected}" in md
    assert f"Expected evidence absent:</strong> {expected}" in html


def test_proof_entries_say_what_they_are_about(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "tree")
    (root / "proofs/out/exhaustive.json").write_text(exhaustive_json(result("float16", ["R1"])))
    report = build_report(root, registry=FIXTURE_REGISTRY, probe_tools=False)
    abouts = {e["source"]: e["about"] for e in report["requirements"]["R1"]["evidence"]["proof"]}
    assert abouts == {
        "why3": "whyml-model",
        "coq": "whyml-model",  # a goal of the fixture theory, proved in Coq
        "crosshair": "python-contracts-bounded",
        "exhaustive": "native-tested",
    }
    assert report["requirements"]["R1"]["proof_subjects"] == {
        "whyml-model": 2,
        "python-contracts-bounded": 1,
        "native-tested": 1,
    }


def test_kernel_goals_are_about_the_running_kernel_and_model_goals_are_not(
    tmp_path: Path,
) -> None:
    root = make_tree(tmp_path / "tree")
    kernel = root / "src/sonnx_mul/oracle/integers.py"
    kernel.parent.mkdir(parents=True, exist_ok=True)
    kernel.write_text(
        "# @relation(R1, scope=range_start)\ndef prod(x: int, y: int) -> int:\n"
        "    return x * y\n# @relation(R1, scope=range_end)\n"
    )
    (root / "proofs/out/why3.json").write_text(
        why3_json(
            goal("why3/a.mlw", "M", "l"),
            goal("src/sonnx_mul/oracle/integers.py", "Integers", "main'vc#0"),
        )
    )
    report = build_report(root, registry=FIXTURE_REGISTRY, probe_tools=False)
    proofs = report["requirements"]["R1"]["evidence"]["proof"]
    kernel_items = [
        p for p in proofs if p["location"].startswith("src/sonnx_mul/oracle/integers.py")
    ]
    assert [p["about"] for p in kernel_items] == ["python-kernel"]
    out = tmp_path / "out"
    write_report(report, out, root)
    _, md, html = _formats(out)
    assert "oracle 1" in md and "model 2" in md  # Why3's goal l and Coq's goal m
    # R1-X has WP goals of the fixture's C function: proofs of the code that runs.
    assert "Frama-C WP goals of the native C kernel" in md.split("### R1-X")[1]
    assert "some proofs are about oracle/integers.py" in md.split("### R1 ")[1].split("### R1-X")[0]
    # Without wp.json, R1-X is proved only on the model: the running code is not proved.
    (root / "proofs/out/wp.json").unlink()
    write_report(build_report(root, registry=FIXTURE_REGISTRY, probe_tools=False), out, root)
    _, md, html = _formats(out)
    assert "no proof of this id is about the code that runs" in md.split("### R1-X")[1]
    assert "no proof of this id is about the code that runs" in html


def test_real_float_requirement_is_not_presented_as_proved_code(
    real_report: tuple[dict[str, Any], Path],
) -> None:
    report, _ = real_report
    assert "python-kernel" not in report["requirements"]["F-FLOAT"]["proof_subjects"]
    assert "native C kernel" in report["running_code"]
    assert "tested, not proved" in report["running_code"]  # the glue and numpy's iterator


def test_trusted_base_and_objectives_in_all_three_formats(
    real_report: tuple[dict[str, Any], Path],
) -> None:
    _, out = real_report
    data, md, html = _formats(out)
    units = load_wp_units(REPO)
    base, goals = trusted_base(units), objectives(units)
    assert [c["name"] for c in data["trusted_base"]] == [c.name for c in base]
    assert len(data["objectives"]) == len(goals)
    assert {o["status"] for o in data["objectives"]} == set(STATUSES)
    names = {c.name for c in base}
    assert any("Why3 1.5.1" in n for n in names) and any("CrossHair" in n for n in names)
    assert any("Frama-C WP" in n for n in names)
    for component in base:
        assert component.reduced_by, component.name
        assert f"| **{component.name}** |" in md
        assert f"<strong>{escape(component.name)}</strong>" in html
        for issue in component.known_issues:
            assert issue.url.startswith("https://github.com/") and issue.url in md
    for objective in goals:
        assert objective.status in STATUSES
        assert objective.standard in md and escape(objective.standard) in html
    for heading in ("Trusted base and tool qualification data", "Objectives: DO-178C"):
        assert heading in md and heading in html


def test_hashes_cover_every_file_the_claim_depends_on(
    real_report: tuple[dict[str, Any], Path],
) -> None:
    report, out = real_report
    artifacts = report["artifacts"]
    for rel in ("pyproject.toml", "requirements/dev.lock", "proofs/manifest.json",
                "proofs/why3.conf.in", "proofs/drivers/cvc5.drv"):  # fmt: skip
        assert rel in artifacts, rel
    for path in (REPO / "src" / "sonnx_mul").rglob("*.py"):
        assert path.relative_to(REPO).as_posix() in artifacts
    for path in (REPO / "why3").glob("*.mlw"):
        assert path.relative_to(REPO).as_posix() in artifacts
    package = report["package"]["files"]
    assert package["oracle/integers.py"] == artifacts["src/sonnx_mul/oracle/integers.py"]
    from sonnx_mul import _native  # the binary that multiplies is hashed, as are its sources

    binary = Path(_native.__file__).name
    assert package[binary] == artifacts[f"src/sonnx_mul/{binary}"]
    for rel in ("native/flags.mk", "native/include/sonnx_mul_kernel.h", "setup.py"):
        assert rel in artifacts, rel
    assert any(rel.startswith("native/src/") and rel.endswith(".c") for rel in artifacts)
    assert isinstance(report["binaries"], list)
    for entry in report["binaries"]:
        assert entry["sha256"] is None or len(entry["sha256"]) == 64
        assert entry["sha256"] is not None or "ABSENT" in _formats(out)[1]


def test_sonnx_mapping_is_registry_data_and_shown(
    real_report: tuple[dict[str, Any], Path],
) -> None:
    report, out = real_report
    _, md, html = _formats(out)
    for rid in REGISTRY:
        assert report["requirements"][rid]["sonnx"] == list(tags(rid))
        for tag in tags(rid):
            assert tag in SONNX_TAGS, (rid, tag)
    assert tags("F-WRAP") and tags("F-FLOAT") and tags("R1")
    topics = {d.topic for d in SONNX_DECISIONS}
    assert {"float rounding", "NaN", "subnormals"} <= topics
    for decision in SONNX_DECISIONS:
        assert set(decision.ids) <= set(REGISTRY)
        assert decision.topic in md and decision.decision in md
    assert "E_MUL_" in report["sonnx"]["source"]["note"]
    assert 'href="#sonnx"' in html


def test_missing_prover_binary_is_listed_as_absent(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "tree")
    conf = root / "proofs" / "why3.conf.in"
    conf.write_text(
        '[prover]\ncommand = "/nonexistent/prover --x %f"\ndriver = "/nonexistent/d.drv"\n'
        'shortcut = "ghost"\n\n[prover]\ncommand = "@Z3_PYPI@ -smt2 %f"\nshortcut = "z3"\n'
    )
    report = build_report(root, registry=FIXTURE_REGISTRY, probe_tools=False)
    by_name = {n: b for b in report["binaries"] for n in b["names"]}
    assert by_name["ghost"]["sha256"] is None and by_name["ghost"]["resolved"] is None
    assert report["why3_library"]["/nonexistent/d.drv"] is None
    assert "proofs/why3.conf.in" in report["artifacts"]
    write_report(report, tmp_path / "out", root)
    _, md, html = _formats(tmp_path / "out")
    assert "| ghost | /nonexistent/prover | ABSENT | - | ABSENT |" in md
    assert "| /nonexistent/d.drv | ABSENT |" in md and "ABSENT" in html


def _exhaustive(complete: bool, int8_mismatches: int = 0) -> str:
    """An exhaustive.json in the layout sonnx_mul_assurance.python.exhaustive writes."""
    return exhaustive_json(
        result("int8", ["F-WRAP", "F-CHECKED"], int8_mismatches),
        result("uint8", ["F-WRAP", "F-CHECKED"]),
        result("float16", ["F-FLOAT"], pairs=1 << 32),
        result("bfloat16", ["F-FLOAT"], pairs=1 << 32),
        complete=complete,
    )


def test_producer_layout_maps_both_integer_modes_and_a_partial_run_is_not_complete(
    tmp_path: Path,
) -> None:
    registry = {
        **FIXTURE_REGISTRY,
        **{rid: REGISTRY[rid] for rid in ("F", "F-FLOAT", "F-WRAP", "F-CHECKED")},
    }
    root = make_tree(tmp_path / "tree")
    ev = root / "proofs" / "out" / "exhaustive.json"
    ev.write_text(_exhaustive(complete=True))
    full = build_report(root, registry=registry, probe_tools=False, require=["exhaustive"])
    for rid in ("F-WRAP", "F-CHECKED"):
        names = [e["name"] for e in full["requirements"][rid]["evidence"]["proof"]]
        assert names == ["int8 wrap/error", "uint8 wrap/error"], rid
    floats = [e["name"] for e in full["requirements"]["F-FLOAT"]["evidence"]["proof"]]
    assert floats == ["float16", "bfloat16"]
    assert full["evidence_files"]["exhaustive"]["status"] == "present"
    assert not any("exhaustive" in p for p in full["gate"]["problems"])
    # A partial run: listed and marked, not complete; the release gate fails.
    ev.write_text(_exhaustive(complete=False))
    part = build_report(root, registry=registry, probe_tools=False, require=["exhaustive"])
    assert part["evidence_files"]["exhaustive"]["status"] == "partial"
    assert part["evidence_absent"] == ["proofs/out/exhaustive.json (partial)", NATIVE, TARGETS]
    assert any("partial run" in p for p in part["gate"]["problems"])
    item = part["requirements"]["F-FLOAT"]["evidence"]["proof"][0]
    assert item["complete"] is False and "partial run" in item["name"]
    # A mismatch is a failed proof item of both integer ids.
    ev.write_text(_exhaustive(complete=True, int8_mismatches=3))
    bad = build_report(root, registry=registry, probe_tools=False)
    for rid in ("F-WRAP", "F-CHECKED"):
        assert "1 proof check failed" in bad["requirements"][rid]["verdict"]


def test_sonnx_mul_report_require_option_through_the_main_cli(tmp_path: Path) -> None:
    from sonnx_mul.cli import main

    root = make_tree(tmp_path / "tree")
    base = ["report", "--out", str(tmp_path / "o"), "--root", str(root), "--no-probe"]
    # The fixture tree lacks the real registry's evidence: both fail, the release one
    # also names the absent exhaustive.json.
    assert main(base) == 1
    data = json.loads((tmp_path / "o" / "traceability.json").read_text())
    assert not any("exhaustive.json is missing" in p for p in data["gate"]["problems"])
    assert main([*base, "--require", "exhaustive"]) == 1
    data = json.loads((tmp_path / "o" / "traceability.json").read_text())
    assert any("exhaustive.json is missing" in p for p in data["gate"]["problems"])
    assert main([*base, "--require", "nonsense"]) == 2


def test_crosshair_record_without_file_links_to_the_checked_function(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "tree")
    (root / "proofs/out/crosshair.json").write_text(crosshair_json(function("f")))
    report = build_report(root, registry=FIXTURE_REGISTRY, probe_tools=False)
    items = [e for e in report["requirements"]["R1"]["evidence"]["proof"]
             if e["source"] == "crosshair"]  # fmt: skip
    assert [e["location"] for e in items] == ["src/sonnx_mul/a.py:2"]
    write_report(report, tmp_path / "out", root)
    assert 'href="sources/src/sonnx_mul/a.py.html#L2"' in (
        tmp_path / "out" / "traceability.html"
    ).read_text(encoding="utf-8")
