"""What the Markdown and HTML renderings say, checked against the JSON they render.

Counts in the requirement matrix, the summary's required evidence, the
artifact table's markup and the SONNX alignment table (against the mutants
of ``report/render.py``; the assertions read the rendered text, so they
hold whatever document model renders it); then the document model itself
(``report/document.py``): its exact Markdown and HTML, and its values immutable.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from test_trace_report import make_tree, report_of

from sonnx_mul.requirements import REGISTRY
from sonnx_mul_assurance.report import alignment, build_report
from sonnx_mul_assurance.report.document import (
    BulletList,
    Code,
    Definitions,
    Document,
    Link,
    Mark,
    Paragraph,
    Quote,
    Section,
    Strong,
    Table,
    Text,
    cell,
    line,
    row,
    to_html,
    to_markdown,
)
from sonnx_mul_assurance.report.render import _describe, linked_files, render_html, render_markdown

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def green(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    report = report_of(make_tree(tmp_path_factory.mktemp("render")))
    assert report["gate"]["passed"]
    return report


def passing(report: dict[str, Any], rid: str, kind: str) -> int:
    return sum(1 for e in report["requirements"][rid]["evidence"][kind] if e["ok"] is True)


def test_matrix_rows_count_the_passing_evidence(green: dict[str, Any]) -> None:
    md = render_markdown(green)
    for rid, parent in (("R1", ""), ("R1-X", "`R1`")):
        counts = [passing(green, rid, k) for k in ("spec", "code", "test")]
        assert all(counts)
        # The document model renders ids as code and adds the title column.
        title = green["requirements"][rid]["title"]
        row = f"| `{rid}` | {parent} | {title} | ✓ {counts[0]} | ✓ {counts[1]} | ✓ {counts[2]} | "
        assert row in md, (row, md)


def test_a_failed_item_shows_in_its_cell(tmp_path: Path) -> None:
    report = report_of(make_tree(tmp_path, test_outcome="failed"))
    tests = report["requirements"]["R1"]["evidence"]["test"]
    assert f"✗ 1 failed / {len(tests)}" in render_markdown(report)


def test_summary_names_the_required_evidence(green: dict[str, Any]) -> None:
    required = ", ".join(green["required_evidence"])
    assert required == "coq, coverage, crosshair, misra, pytest, why3, wp"
    assert f"- **Required evidence**: {required}" in render_markdown(green)
    assert "- **Required evidence**: -" in render_markdown({**green, "required_evidence": []})


def test_artifact_table_links_and_hashes_are_markup_not_text(green: dict[str, Any]) -> None:
    html = render_html(green, {"src/sonnx_mul/a.py"})
    digest = green["artifacts"]["src/sonnx_mul/a.py"]
    assert f"<td><code>{digest}</code></td>" in html
    assert (
        '<td><a href="sources/src/sonnx_mul/a.py.html"><code>src/sonnx_mul/a.py</code></a></td>'
        in html
    )
    assert "&lt;code&gt;" not in html and "&lt;a href" not in html


def test_sonnx_alignment_rows_show_tags_or_say_none() -> None:
    report = build_report(REPO, REPO / "no-such-evidence-dir", probe_tools=False)
    html = render_html(report)
    tagged = next(rid for rid in REGISTRY if alignment.tags(rid))
    untagged = next(rid for rid in REGISTRY if not alignment.tags(rid))
    rows = dict(
        re.findall(
            # two-cell rows only: the table of tags (the newest-text table has five)
            r'<tr><td><a href="#detail-([^"]+)"><code>[^<]*</code></a></td>'
            r"<td>((?:(?!</td>).)*)</td></tr>",
            html,
        )
    )
    assert f"<code>{alignment.tags(tagged)[0]}</code>: " in rows[tagged]
    assert rows[untagged] == "none (project requirement)"


def test_matrix_verdict_cell_is_good_only_for_pass(tmp_path: Path) -> None:
    report = report_of(make_tree(tmp_path, test_outcome="failed"))
    html = render_html(report)
    r1, r1x = report["requirements"]["R1"], report["requirements"]["R1-X"]
    assert r1x["verdict"] == "pass" and r1["verdict"] != "pass"
    assert '<td class="verdict good">pass</td></tr>' in html
    assert f'<td class="verdict bad">{r1["verdict"]}</td></tr>' in html


def test_summary_marks_only_absent_evidence(green: dict[str, Any]) -> None:
    verdict = green["verdict"]
    html = render_html({**green, "evidence_absent": []})
    assert f"<dt>Verdict</dt><dd>{verdict}</dd>" in html
    assert "<dt>Absent evidence</dt><dd>none</dd>" in html
    html = render_html({**green, "evidence_absent": ["why3.json"]})
    assert f"<dt>Verdict</dt><dd>{verdict}</dd>" in html
    assert '<dt>Absent evidence</dt><dd class="absent">why3.json (see Evidence files)</dd>' in html


def test_linked_files_are_the_relative_paths_only() -> None:
    item = {"status": "passed", "ok": True}
    report = {
        "artifacts": {"src/b.py": "0" * 64, "/usr/lib/x.so": "1" * 64},
        "unmapped": [
            {**item, "location": "src/a.py:4"},
            {**item, "location": "/opt/tool/t.py:3"},
            {**item, "location": ""},
            {**item},
        ],
    }
    assert linked_files(report) == {"src/a.py", "src/b.py"}


def test_describe_keeps_the_first_120_characters_of_a_message() -> None:
    message = "".join(f"{i % 10}" for i in range(200))
    item = {"name": "t", "status": "failed", "message": message}
    assert _describe(item) == f"t · failed · {message[:120]}"
    assert _describe({**item, "message": message[:120]}) == f"t · failed · {message[:120]}"


# --- the document model, rendered directly ------------------------------------


def test_bullet_lists_in_markdown_show_their_items_or_the_empty_word() -> None:
    doc = Document(
        "T",
        [
            Section("a", "A", [BulletList((line("x"), line(Code("y"))), empty="nothing")]),
            Section("b", "B", [BulletList((), empty="nothing")]),
        ],
    )
    assert to_markdown(doc) == (
        "# T\n\n## Contents\n\n- A\n- B\n\n## A\n\n- x\n- `y`\n\n## B\n\n- nothing\n"
    )


def test_html_sections_nest_and_close() -> None:
    doc = Document(
        "T",
        [
            Section(
                "top",
                "Top",
                [
                    Paragraph(line("p")),
                    Section("sub", "Sub", [Section("", "Deep", [Quote("q")], css="c")]),
                    Paragraph(line("after"), css="warn"),
                ],
            ),
        ],
    )
    body = to_html(doc).split('<nav id="toc">', 1)[1].split("</nav>\n", 1)[1]
    assert body == (
        '<h2 id="top">Top <small><a href="#toc">↑</a></small></h2>\n'
        "<p>p</p>\n"
        '<section id="sub">\n<h3>Sub</h3>\n'
        '<section class="c">\n<h4>Deep</h4>\n<blockquote>q</blockquote>\n</section>\n'
        "</section>\n"
        '<p class="warn">after</p>\n'
        "</body></html>\n"
    )


@pytest.mark.parametrize(
    "value",
    [
        Text("t"),
        Strong("s"),
        Code("c"),
        Mark("m", "good"),
        Link("l", "#a"),
        Paragraph(line("p")),
        Quote("q"),
        Definitions((("k", line("v"), ""),)),
        BulletList((line("i"),)),
        cell("c"),
        row("r"),
        Table(("h",), ()),
    ],
    ids=lambda v: type(v).__name__,
)
def test_inlines_and_leaf_blocks_are_immutable_values(value: object) -> None:
    # shared between the Markdown and the HTML rendering: neither may change them
    field = dataclasses.fields(value)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field, getattr(value, field))
    assert hash(value) == hash(dataclasses.replace(value))  # type: ignore[type-var]
