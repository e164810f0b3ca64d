"""What the Markdown and HTML renderings say, checked against the JSON they render.

Counts in the requirement matrix, the summary's required evidence, the
artifact table's markup and the SONNX alignment table (against the mutants
of ``report/render.py``; the assertions read the rendered text, so they
hold whatever document model renders it).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from test_trace_report import make_tree, report_of

from sonnx_mul.requirements import REGISTRY
from sonnx_mul_assurance.report import build_report
from sonnx_mul_assurance.report.render import render_html, render_markdown

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
    assert required == "crosshair, pytest, why3"
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
    tagged = next(rid for rid in REGISTRY if REGISTRY[rid].sonnx)
    untagged = next(rid for rid in REGISTRY if not REGISTRY[rid].sonnx)
    rows = dict(
        re.findall(
            # two-cell rows only: the table of tags (the newest-text table has five)
            r'<tr><td><a href="#detail-([^"]+)"><code>[^<]*</code></a></td>'
            r"<td>((?:(?!</td>).)*)</td></tr>",
            html,
        )
    )
    assert f"<code>{REGISTRY[tagged].sonnx[0]}</code>: " in rows[tagged]
    assert rows[untagged] == "none (project requirement)"
