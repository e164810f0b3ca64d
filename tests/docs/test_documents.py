"""The documents keep their rules: links resolve, figures agree with the evidence.

Each rule is applied to every Markdown file git lists, and each has a negative
control here: a small planted fixture the rule must refuse.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import doc_figures as figures
import documents as docs
import tree_files

ROOT = tree_files.ROOT
MARKDOWN = tree_files.markdown_files()


def names() -> list[str]:
    return [tree_files.rel(p) for p in MARKDOWN]


def test_the_documents_are_found() -> None:
    assert {"README.md", "SECURITY.md", "BENCHMARKS.md", "why3/README.md"} <= set(names())
    assert any(n.startswith("docs/lab/") for n in names())


def test_a_copy_of_the_tree_finds_the_same_documents() -> None:
    """Where git lists nothing (the copy make test-debian-python runs in), the
    walk that skips .gitignore's folders finds what git lists here."""
    assert tree_files._walked(ROOT, ("*.md",)) == tree_files.listed_files(ROOT, "*.md")
    # folders and whole trees too (the ISA-table and generated-files tests list them)
    for specs in (("src", "native", "setup.py", "Makefile"), ()):
        assert tree_files._walked(ROOT, specs) == tree_files.listed_files(ROOT, *specs), specs


# ------------------------------------------------------------------ links
def test_every_relative_link_resolves() -> None:
    problems = [p for path in MARKDOWN for p in docs.broken_links(path)]
    assert problems == []


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "there.md").write_text("# A heading\n\ntext\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[fine](sub/there.md) [fine too](sub/there.md#a-heading) [web](https://example.org)\n"
        "[gone](sub/missing.md)\n"
        "[no anchor](sub/there.md#another-heading)\n"
        "[outside](../shared/SPEC.md)\n"
        "```\n[in code](not/checked.md)\n```\n"
        "[ref]: sub/also-missing.md\n"
    )
    found = docs.broken_links(page, tmp_path)
    assert [p.split(": ", 1)[1] for p in found] == [
        "sub/missing.md does not exist",
        "sub/there.md#another-heading has no heading #another-heading",
        "../shared/SPEC.md leaves the repository",
        "sub/also-missing.md does not exist",
    ]


def test_github_anchors() -> None:
    assert docs.slug("The `make prove` job: 1. Why3 (proved)") == "the-make-prove-job-1-why3-proved"
    assert docs.slug("What is proven, tested, trusted") == "what-is-proven-tested-trusted"


# ------------------------------------------------------------------ dates and issues
def test_no_date_or_issue_number_outside_the_lab_and_the_decisions() -> None:
    found = [
        hit for path in MARKDOWN if docs.issue_rule_applies(tree_files.rel(path))
        for hit in docs.dated_mentions(path, dates=docs.date_rule_applies(tree_files.rel(path)))
    ]  # fmt: skip
    assert found == []


@pytest.mark.parametrize(
    "line",
    [
        "measured on 2026-12-02",
        "in November 2026 the copy",
        "on Dec 3, 2026",
        "since issue 28",
        "the targets (issues 20 and 28)",
        "fixed in #41",
        "the seed's text",
        "The seed's Mul",
        "the faults the issue names",
        "see ../shared/SPEC.md",
    ],
)
def test_a_date_or_an_issue_number_is_found(tmp_path: Path, line: str) -> None:
    page = tmp_path / "p.md"
    page.write_text(f"text\n{line}\n")
    assert len(docs.dated_mentions(page, tmp_path)) == 1


def test_no_date_or_issue_number_in_the_makefile_comments() -> None:
    found = [hit for name in docs.COMMENTED for hit in docs.comment_mentions(ROOT / name)]
    assert found == []


def test_a_date_or_an_issue_number_in_a_makefile_comment_is_found(tmp_path: Path) -> None:
    makefile = tmp_path / "Makefile"
    makefile.write_text(
        "# The glue's mutants (issue 28: the glue)\n"
        "target:\n\techo issue 28 is a command, not a comment\n"
        "  # measured on 2026-12-02\n"
        "# the issues of the checker are its own\n"
    )
    assert [p.split(": ", 1)[1] for p in docs.comment_mentions(makefile, tmp_path)] == [
        "'issue 28'",
        "'2026-12-02'",
    ]


def test_names_are_not_issue_numbers(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("goal `bf16_mul_is_ieee#3`, Z3Prover/z3#2827, 1.6·10^7 elements, 2^32 pairs\n")
    assert docs.dated_mentions(page, tmp_path) == []


def test_the_rule_spares_the_lab_and_the_decisions() -> None:
    assert not docs.date_rule_applies("docs/lab/measurements.md")
    assert not docs.date_rule_applies("docs/decisions/stream8.md")
    assert docs.date_rule_applies("docs/manual.md")
    assert docs.date_rule_applies("README.md")
    # a measurement record keeps the date of its run, never an issue number
    assert not docs.date_rule_applies("BENCHMARKS.md")
    assert docs.issue_rule_applies("BENCHMARKS.md")
    assert not docs.issue_rule_applies("docs/lab/measurements.md")


# ------------------------------------------------------------------ section names
def test_every_quoted_section_name_is_a_heading() -> None:
    found = [p for path in MARKDOWN if docs.date_rule_applies(tree_files.rel(path))
             for p in docs.missing_sections(path, MARKDOWN)]  # fmt: skip
    assert found == []


def test_a_quoted_section_name_without_a_heading_is_found(tmp_path: Path) -> None:
    other = tmp_path / "other.md"
    other.write_text("# Other\n\n## Trusted base and tool data\n")
    page = tmp_path / "p.md"
    page.write_text(
        "# Page\n\n## Targets (`make check-targets`)\n\n"
        'the harness (below, "Targets"), the values (below,\n"What is checked exhaustively"),\n'
        'see "What WP proves"; the "Trusted base" section; section "Gone away"\n'
    )
    assert [p.split(": ", 1)[1] for p in docs.missing_sections(page, [page, other], tmp_path)] == [
        "'What is checked exhaustively'",
        "'What WP proves'",
        "'Gone away'",
    ]


# ------------------------------------------------------------------ named tests
def test_every_test_named_beside_its_file_is_in_that_file() -> None:
    found = [p for path in MARKDOWN if docs.date_rule_applies(tree_files.rel(path))
             for p in docs.missing_tests(path)]  # fmt: skip
    assert found == []


def test_a_test_named_beside_the_wrong_file_is_found(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_a.py").write_text(
        "def test_here() -> None:\n    pass\n\n\nclass TestK:\n    def test_method(self) -> None:\n"
        "        pass\n"
    )
    (tmp_path / "tests/test_b.py").write_text("def test_elsewhere() -> None:\n    pass\n")
    page = tmp_path / "p.md"
    page.write_text(
        "`tests/test_a.py`: `test_here`, test_method; `tests/test_b.py::test_elsewhere`\n"
        "`tests/test_a.py` (test_elsewhere_planted) and test_b.py's tests\n"
        "`tests/test_a.py::test_gone`\n"
        "test_alone without a file is not checked\n"
        "```\n`tests/test_a.py` test_in_code\n```\n"
    )
    assert [p.split(": ", 1)[1] for p in docs.missing_tests(page, tmp_path)] == [
        "test_elsewhere_planted",
        "test_gone",
    ]


# ------------------------------------------------------------------ README
def test_the_readme_is_at_most_250_lines() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= docs.README_MAX_LINES


def test_the_readme_names_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make prove" in text and "make test" in text


# ------------------------------------------------------------------ goal counts
COUNTS = figures.manifest_counts()


def test_goal_counts_agree_with_the_manifests() -> None:
    found = [p for path in MARKDOWN if docs.date_rule_applies(tree_files.rel(path))
             for p in figures.goal_count_mismatches(path, COUNTS)]  # fmt: skip
    assert found == []


def test_the_manifests_give_counts() -> None:
    assert COUNTS.why3_total > 0 and COUNTS.wp_total > 0
    assert "why3/widen.mlw" in COUNTS.why3 and "native/src/sonnx_mul_int.c" in COUNTS.wp


def test_a_wrong_goal_count_is_found(tmp_path: Path) -> None:
    counts = figures.Counts(why3={"why3/widen.mlw": 169, "why3/mul.mlw": 4}, wp={"hw/f16c.c": 81})
    page = tmp_path / "p.md"
    page.write_text(
        "`widen.mlw` has 169 goals; all 173 goals proved; the F16C loop (`f16c.c`): 81 WP goals\n"
        "`widen.mlw` has 153 goals\n"
        "the F16C loop `f16c.c`, 63 WP goals\n"
        "Why3 proves 265 goals\n"
        "```\n999 goals in a transcript are not prose\n```\n"
    )
    assert [p.split(": ", 1)[1] for p in figures.goal_count_mismatches(page, counts, tmp_path)] == [
        "'153 goals', widen.mlw has 169",
        "'63 WP goals', f16c.c has 81",
        "'265 goals' is no manifest's count",
    ]


# ------------------------------------------------------------------ assumptions
def test_the_trusted_base_names_every_axiom_and_admitted_clause() -> None:
    assert docs.unnamed_assumptions() == []


def test_the_assumptions_are_found() -> None:
    names = {name for _, name in docs.assumptions()}
    assert {"mul_through_float64", "to_u64_modular", "u32_of_i32", "f64_pattern"} <= names


def test_an_unnamed_assumption_is_found(tmp_path: Path) -> None:
    for sub in ("why3", "native/src", "native/hw", "proofs/wp", "docs/assurance"):
        (tmp_path / sub).mkdir(parents=True)
    (tmp_path / "why3/a.mlw").write_text(
        "theory T\n  (* an axiom here is prose *)\n  axiom named : true\n"
        "  clone C with axiom .\n  axiom planted_axiom: false\nend\n"
    )
    (tmp_path / "native/src/k.c").write_text(
        "/*@ assigns \\nothing;\n    admit ensures modular: f(x) == 0;\n*/\n"
        "static int known(int x)\n{\n    return x;\n}\n"
        "/*@ ghost\n  /@ admit ensures wrap: (unsigned)x == 0;\n  @/\n"
        "  void planted_ghost(int x) { }\n*/\n"
    )
    (tmp_path / "native/hw/h.c").write_text("/*@ axiomatic A { axiom planted_acsl: \\true; } */\n")
    (tmp_path / "proofs/wp/c.c").write_text("/*@ axiomatic B { axiom covered: \\true; } */\n")
    (tmp_path / docs.TRUSTED_BASE).write_text("`named`, `known`, `covered`; planted_ghost\n")
    assert docs.unnamed_assumptions(tmp_path) == [
        "why3/a.mlw:5: planted_axiom",
        "native/hw/h.c:1: planted_acsl",
        "native/src/k.c:9: planted_ghost",
    ]


def test_the_trusted_base_names_the_c_files_misra_does_not_check() -> None:
    from sonnx_mul_assurance.c import misra

    checked = (misra.SOURCES.as_posix(), misra.HARDWARE.as_posix())
    assert docs.misra_unnamed(checked=checked) == []


def test_a_c_file_misra_skips_unnamed_is_found(tmp_path: Path) -> None:
    for sub in ("native/src", "native/hw", "docs/assurance"):
        (tmp_path / sub).mkdir(parents=True)
    for name in ("native/src/k.c", "native/hw/named.c", "native/hw/planted.c"):
        (tmp_path / name).write_text("int x;\n")
    (tmp_path / docs.TRUSTED_BASE).write_text("not checked: `native/hw/named.c`\n")
    assert docs.misra_unnamed(tmp_path) == ["native/hw/planted.c"]
    # were the check to cover only native/hw, native/src would have to be named
    assert docs.misra_unnamed(tmp_path, ("native/hw",)) == ["native/src/k.c"]
    assert docs.misra_unnamed(tmp_path, ("native/src", "native/hw")) == []


# ------------------------------------------------------------------ generated blocks
def test_every_generated_block_is_current() -> None:
    stale = [p for path in MARKDOWN for p in figures.stale_blocks(path)]
    assert stale == [], "run: python tests/doc_figures.py --write"


def test_generated_blocks_are_used() -> None:
    used = {m.group("name") for p in MARKDOWN for m in figures.BLOCK.finditer(p.read_text())}
    assert used == set(figures.BLOCKS)


def test_a_stale_block_is_found(tmp_path: Path) -> None:
    (tmp_path / "proofs").mkdir()
    for name in ("manifest.json", "wp-manifest.json"):
        (tmp_path / "proofs" / name).write_text((ROOT / "proofs" / name).read_text())
    page = tmp_path / "p.md"
    page.write_text("<!-- generated: goal-totals -->\nWhy3: 1 goals\n<!-- end generated -->\n")
    assert figures.stale_blocks(page, tmp_path) == ["p.md: generated block 'goal-totals' is stale"]
    assert figures.rewrite_blocks(page, tmp_path)
    assert figures.stale_blocks(page, tmp_path) == []
    # a manifest that changes makes the block stale again
    why3 = json.loads((tmp_path / "proofs/manifest.json").read_text())
    why3["files"][0]["goals"] = why3["files"][0]["goals"][1:]
    (tmp_path / "proofs/manifest.json").write_text(json.dumps(why3))
    assert figures.stale_blocks(page, tmp_path) == ["p.md: generated block 'goal-totals' is stale"]


def test_a_stale_exemption_count_is_found(tmp_path: Path) -> None:
    """The coverage page's class counts are generated from the exemption file: one
    exemption reclassified (a test written for it, a reason stated) makes them stale."""
    (tmp_path / "proofs").mkdir()
    listed = json.loads((ROOT / "proofs" / "coverage-exemptions.json").read_text())
    (tmp_path / "proofs" / "coverage-exemptions.json").write_text(json.dumps(listed))
    page = tmp_path / "p.md"
    page.write_text("<!-- generated: coverage-exemptions -->\n<!-- end generated -->\n")
    assert figures.rewrite_blocks(page, tmp_path)
    assert figures.stale_blocks(page, tmp_path) == []
    assert "| **total** |" in page.read_text()
    first = listed["exemptions"][0]
    first["why"] = "harness" if first["why"] != "harness" else "defensive"
    (tmp_path / "proofs" / "coverage-exemptions.json").write_text(json.dumps(listed))
    assert figures.stale_blocks(page, tmp_path) == [
        "p.md: generated block 'coverage-exemptions' is stale"
    ]


# ------------------------------------------------------------------ ratios
RESULTS = figures.bench_results()


def test_ratios_agree_with_the_last_bench() -> None:
    allowed = figures.bench_ratios(RESULTS)
    found = [p for path in MARKDOWN if docs.date_rule_applies(tree_files.rel(path))
             for p in figures.ratio_mismatches(path, allowed)]  # fmt: skip
    assert found == []


def test_a_stale_ratio_is_found(tmp_path: Path) -> None:
    allowed = figures.bench_ratios(RESULTS)
    bf16 = next(t for t in RESULTS["targets"] if "bfloat16" in t["name"])
    now = f"{bf16['ratio']['median']:.2f}"
    page = tmp_path / "p.md"
    page.write_text(f"bfloat16 {now}× `np.copyto`\nbfloat16 19.2× on another day\nalso 1.82×\n")
    assert [p.split(": ", 1)[1] for p in figures.ratio_mismatches(page, allowed, tmp_path)] == [
        "'19.2×'",
        "'1.82×'",
    ]


def test_benchmarks_md_is_the_last_bench_rendered() -> None:
    """BENCHMARKS.md is what benchmarks/run.py renders from benchmarks/results.json,
    so the ratios checked above are the ones the last ``make bench`` printed."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        run = importlib.import_module("run")  # benchmarks/run.py
        rendered = run.render(RESULTS)
    finally:
        sys.path.pop(0)
    assert (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8") == rendered


def test_the_tool_reports_current_blocks() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "doc_figures.py")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout


# ------------------------------------------------------------------ provers named in prose
def test_the_evidence_names_the_prover_of_the_integer_oracle() -> None:
    """evidence.md says every goal of oracle/integers.py is pinned to cvc5:
    true of the manifest (a re-pin to another prover fails here)."""
    why3 = json.loads((ROOT / "proofs/manifest.json").read_text())
    (oracle,) = [f for f in why3["files"] if f["path"] == "src/sonnx_mul/oracle/integers.py"]
    assert {g["prover"] for g in oracle["goals"]} == {"cvc5"}
    text = " ".join((ROOT / "docs/assurance/evidence.md").read_text(encoding="utf-8").split())
    assert f"has {len(oracle['goals'])} goals, each pinned to cvc5" in text
