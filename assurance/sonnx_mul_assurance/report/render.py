"""Markdown and self-contained HTML renderings of the traceability report.

Both renderings show the same sections (``SECTIONS``), in the same order.
The HTML has inline CSS only, no script and no external resource: a table
of contents; a matrix with one row (``<tr class="req">``) per registry
requirement whose id links to the requirement's details
(``id="detail-<ID>"``); in the details, links to the parent and children
and, for every evidence location, a link to the rendered copy of the file
in ``sources/`` (see :mod:`sonnx_mul_assurance.report.sources`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from html import escape
from types import MappingProxyType
from typing import Any

from .sources import href, split_location

KINDS: tuple[str, ...] = ("spec", "code", "test", "proof")
SECTIONS: tuple[tuple[str, str], ...] = (
    ("summary", "Summary"),
    ("matrix", "Requirement matrix"),
    ("requirements", "Requirements in detail"),
    ("gate", "Gate problems"),
    ("evidence-files", "Evidence files: present and absent"),
    ("unmapped", "Unmapped evidence"),
    ("proof-subjects", "What the proofs are about"),
    ("sonnx", "SONNX alignment"),
    ("trusted-base", "Trusted base and tool qualification data"),
    ("objectives", "Objectives: DO-178C / DO-330 / ISO 26262-8"),
    ("tools", "Tool versions"),
    ("binaries", "Tool binaries and Why3 library (SHA-256)"),
    ("semantics", "Semantics covered"),
    ("artifacts", "Hashed files (SHA-256)"),
)


def detail_anchor(rid: str) -> str:
    return f"detail-{rid}"


def _cell(items: list[Mapping[str, Any]]) -> tuple[str, str]:
    """(text, css class) of a matrix cell."""
    good = sum(1 for i in items if i.get("ok") is True)
    bad = sum(1 for i in items if i.get("ok") is False)
    if bad:
        return f"✗ {bad} failed / {len(items)}", "bad"
    if good:
        return f"✓ {good}", "good"
    return "— none", "bad"


_SHORT: Mapping[str, str] = MappingProxyType(
    {
        "whyml-model": "model",
        "python-kernel": "kernel",
        "python-contracts-bounded": "bounded",
        "native-tested": "native tested",
    }
)


def _proof_cell(req: Mapping[str, Any]) -> tuple[str, str]:
    """The proof cell: counts by subject, so that a model proof never reads as a code proof."""
    text, css = _cell(req["evidence"]["proof"])
    subjects = req.get("proof_subjects", {})
    if subjects:
        text += " (" + ", ".join(f"{_SHORT.get(k, k)} {n}" for k, n in subjects.items()) + ")"
    if req.get("absent_evidence"):
        text += " · absent: " + ", ".join(p.rsplit("/", 1)[-1] for p in req["absent_evidence"])
        css = "warn" if css == "good" else css
    return text, css


def running_code_note(req: Mapping[str, Any]) -> str:
    """Whether any proof of this id is about code that runs, in words."""
    subjects = req.get("proof_subjects", {})
    if subjects.get("python-kernel"):
        return (
            "some proofs are about kernel.py, the Python kernel mul_reference runs; "
            "the compiled native kernel that sonnx_mul.mul runs is tested here"
        )
    if subjects:
        return (
            "no proof of this id is about the code that runs: the proofs are about the "
            "WhyML model (or bounded contract checks); the running code is tested"
        )
    return "no proof evidence"


def _subject_label(report: Mapping[str, Any], key: str) -> str:
    subjects = report.get("proof_subjects", {})
    return str(subjects.get(key, {}).get("label", key))


def _describe(item: Mapping[str, Any], report: Mapping[str, Any] | None = None) -> str:
    """One line of an evidence item, without its location."""
    parts: list[str] = []
    if item.get("about"):
        parts.append(f"[{_subject_label(report or {}, str(item['about']))}]")
    if item.get("name"):
        parts.append(str(item["name"]))
    if item.get("prover"):
        parts.append(f"prover {item['prover']}")
    if item.get("time") not in (None, ""):
        parts.append(f"{item['time']} s")
    parts.append(str(item.get("status", "")))
    if item.get("message"):
        parts.append(str(item["message"])[:120])
    return " · ".join(parts)


def _header_lines(report: Mapping[str, Any]) -> list[tuple[str, str]]:
    git = report.get("git", {})
    dirty = " (dirty work tree)" if git.get("dirty") else ""
    absent = report.get("evidence_absent", [])
    return [
        ("Verdict", str(report.get("verdict"))),
        ("Date (UTC)", str(report.get("date"))),
        ("Git commit", f"{git.get('commit')}{dirty}"),
        ("Schema", str(report.get("schema"))),
        ("Required evidence", ", ".join(report.get("required_evidence", [])) or "-"),
        ("Absent evidence", ", ".join(absent) + " (see Evidence files)" if absent else "none"),
        ("Running code", str(report.get("running_code", ""))),
    ]


def _flat(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """Rows of a nested mapping: (``a / b``, value)."""
    if isinstance(value, Mapping):
        rows: list[tuple[str, str]] = []
        for k, v in value.items():
            rows += _flat(v, f"{prefix} / {k}" if prefix else str(k))
        return rows
    if isinstance(value, list | tuple):
        return [(prefix, ", ".join(str(v) for v in value))]
    return [(prefix, str(value))]


def linked_files(report: Mapping[str, Any]) -> set[str]:
    """Repository-relative files the HTML links to: evidence locations and hashed files."""
    files = {p for p in report.get("artifacts", {}) if not p.startswith("/")}
    items: list[Mapping[str, Any]] = list(report.get("unmapped", []))
    for req in report.get("requirements", {}).values():
        for kind in KINDS:
            items += req["evidence"][kind]
    for item in items:
        path, _ = split_location(str(item.get("location", "")))
        if path and not path.startswith("/"):
            files.add(path)
    return files


# ----------------------------------------------------------------- Markdown
Table = tuple[list[str], list[list[str]]]
"""A table as header and rows of plain text, rendered by ``_md_table`` or ``_table``."""


def _subjects_table(report: Mapping[str, Any]) -> Table:
    rows = [[s["label"], s["meaning"]] for s in report.get("proof_subjects", {}).values()]
    return ["subject", "meaning"], rows


def _objectives_table(report: Mapping[str, Any]) -> Table:
    rows = [
        [o["standard"], o["objective"], o["output"], o["status"].upper(), o["note"]]
        for o in report.get("objectives", [])
    ]
    return ["standard / objective", "what is asked", "project output", "status", "note"], rows


def _binaries_table(report: Mapping[str, Any]) -> Table:
    rows = [
        [", ".join(b["names"]), b["path"], b.get("resolved") or "ABSENT",
         b.get("version") or "-", b.get("sha256") or "ABSENT"]
        for b in report.get("binaries", [])
    ]  # fmt: skip
    return ["names", "path", "resolved", "version", "sha256"], rows


def _why3_library_table(report: Mapping[str, Any]) -> Table:
    rows = [[p, h or "ABSENT"] for p, h in report.get("why3_library", {}).items()]
    return ["Why3 library file", "sha256"], rows


def _md_table(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> list[str]:
    head = list(header)
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        out.append("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |")
    return out


def render_markdown(report: Mapping[str, Any]) -> str:
    reqs: Mapping[str, Any] = report["requirements"]
    out = ["# sonnx-mul traceability report", "", "## Contents", ""]
    out += [f"- {title}" for _, title in SECTIONS]
    out += ["", "## Summary", ""]
    out += [f"- **{k}**: {v}" for k, v in _header_lines(report)]
    out += ["", "## Requirement matrix", ""]
    out += _md_table(
        ["id", "parent", *KINDS, "verdict"],
        (
            [rid, req["parent"] or "", *(_cell(req["evidence"][k])[0] for k in KINDS[:3]),
             _proof_cell(req)[0], req["verdict"]]
            for rid, req in reqs.items()
        ),
    )  # fmt: skip
    out += ["", "## Requirements in detail"]
    for rid, req in reqs.items():
        out += ["", f"### {rid} — {req['title']}", "", f"> {req['statement']}", ""]
        out.append(f"Verdict: **{req['verdict']}**")
        out.append(f"Parent: {req.get('parent') or '-'}; children: "
                   f"{', '.join(req.get('children', [])) or '-'}")  # fmt: skip
        out.append(f"Proofs and the running code: {running_code_note(req)}")
        if req.get("sonnx"):
            out.append(f"SONNX tags: {', '.join(req['sonnx'])}")
        for path in req.get("absent_evidence", []):
            out.append(f"**Expected evidence absent:** {path}")
        for kind in KINDS:
            items = req["evidence"][kind]
            out += ["", f"{kind}:"]
            out += [f"- {i.get('location', '?')} · {_describe(i, report)}" for i in items] or [
                "- (none)"
            ]
        if req.get("skipped_tests"):
            out.append(f"- ({req['skipped_tests']} skipped test cases not listed)")
    out += ["", "## Gate problems", ""]
    out += [f"- {p}" for p in report.get("gate", {}).get("problems", [])] or ["- none"]
    out += ["", "## Evidence files: present and absent", ""]
    out += _md_table(
        ["kind", "path", "status", "required by the gate", "what absence means"],
        (
            [k, f["path"], f.get("status", "present" if f.get("present") else "absent").upper(),
             "yes" if f.get("required") else "no", f.get("meaning", "") or "-"]
            for k, f in report.get("evidence_files", {}).items()
        ),
    )  # fmt: skip
    out += ["", "## Unmapped evidence", ""]
    unmapped = report.get("unmapped", [])
    out += [f"- {i.get('location', '?')} · {_describe(i, report)}" for i in unmapped] or ["- none"]
    out += ["", "## What the proofs are about", "", str(report.get("running_code", "")), ""]
    out += _md_table(*_subjects_table(report))
    out += ["", "## SONNX alignment", "", *_md_sonnx(report)]
    out += ["", "## Trusted base and tool qualification data", "", *_md_trusted(report)]
    out += ["", "## Objectives: DO-178C / DO-330 / ISO 26262-8", ""]
    out += _md_table(*_objectives_table(report))
    out += ["", "## Tool versions", ""]
    out += _md_table(["tool", "version"], _flat(report.get("tools", {})))
    out += ["", "## Tool binaries and Why3 library (SHA-256)", ""]
    out += _md_table(*_binaries_table(report))
    out.append("")
    out += _md_table(*_why3_library_table(report))
    out += ["", "## Semantics covered", ""]
    out += _md_table(["option", "values"], _flat(report.get("semantics", {})))
    out += ["", "## Hashed files (SHA-256)", ""]
    out += [f"- `{h}` {p}" for p, h in report.get("artifacts", {}).items()]
    return "\n".join(out) + "\n"


def _md_sonnx(report: Mapping[str, Any]) -> list[str]:
    sonnx = report.get("sonnx", {})
    src = sonnx.get("source", {})
    tags = sonnx.get("tags", {})
    out = [
        f"Source: {src.get('repository', '?')} `{src.get('path', '?')}` at commit "
        f"{src.get('commit', '?')}. {src.get('note', '')}",
        "",
    ]
    out += _md_table(
        ["registry id", "SONNX tags"],
        (
            [rid, "; ".join(f"{t} ({tags.get(t, '?')})" for t in req.get("sonnx", [])) or
             "none (project requirement)"]
            for rid, req in report["requirements"].items()
        ),
    )  # fmt: skip
    out += ["", "Decisions where the SONNX text is silent or ambiguous:", ""]
    out += _md_table(
        ["topic", "the profile says", "decision", "why", "ids"],
        (
            [d["topic"], d["profile_says"], d["decision"], d["why"], ", ".join(d["ids"])]
            for d in sonnx.get("decisions", [])
        ),
    )
    return out


def _md_trusted(report: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for c in report.get("trusted_base", []):
        out += ["", f"#### {c['name']}", ""]
        out.append(f"- version: {_version_of(report, c)}")
        out.append(f"- trusted for: {c['trusted_for']}")
        out += [f"- trust reduced by: {r}" for r in c["reduced_by"]]
        out += [
            f"- known issue: [{k['title']}]({k['url']}): {k['relevance']}"
            for k in c.get("known_issues", [])
        ] or ["- known issues: none found in the public trackers searched"]
    return out


def _version_of(report: Mapping[str, Any], component: Mapping[str, Any]) -> str:
    """Versions of a trusted component: its ``version_keys`` looked up in ``tools``.

    A key may be a path into nested entries (``recorded_by_why3/versions/z3``).
    """
    found: list[str] = []
    for key in component.get("version_keys", []):
        value: Any = report.get("tools", {})
        for part in str(key).split("/"):
            value = value.get(part) if isinstance(value, Mapping) else None
        if value is not None:
            found += [f"{k}: {v}" for k, v in _flat(value, str(key))]
    return "; ".join(found) or "see the hashed files"


# --------------------------------------------------------------------- HTML
_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:110em}
table{border-collapse:collapse;width:100%;margin:.5em 0}
th,td{border:1px solid #ccc;padding:.3em .5em;vertical-align:top;text-align:left}
th{background:#f0f0f0}
td.good{background:#e6f4ea}td.bad{background:#fce8e6}td.warn{background:#fff3cd}
td.verdict.good{font-weight:bold}
nav#toc{background:#f7f7f7;border:1px solid #ddd;padding:.5em 1em;display:inline-block}
nav#toc ol{margin:.2em 0 .2em 1.2em;padding:0}
ul.ev{margin:.3em 0 .3em 1.2em;padding:0}
code,.loc{font-family:ui-monospace,monospace;font-size:.9em}
.kind{font-weight:bold;margin-top:.4em}
.absent{color:#a00;font-weight:bold}
section.req{border-top:1px solid #ccc;margin-top:1em}
.tag{display:inline-block;background:#eef;border:1px solid #ccd;border-radius:3px;
 padding:0 .3em;margin:0 .2em .2em 0;font-size:.85em}
"""


def _loc_link(location: str, copied: set[str]) -> str:
    path, line = split_location(location)
    target = href(path, line, copied)
    text = f'<span class="loc">{escape(location)}</span>'
    return f'<a href="{escape(target)}">{text}</a>' if target else text


def _id_link(rid: str) -> str:
    return f'<a href="#{escape(detail_anchor(rid))}"><code>{escape(rid)}</code></a>'


def _table(header: Iterable[str], rows: Iterable[Iterable[str]], raw: bool = False) -> list[str]:
    """An HTML table; cells are escaped unless ``raw`` (already HTML)."""
    h = ["<table><thead><tr>" + "".join(f"<th>{escape(c)}</th>" for c in header) + "</tr></thead>"]
    h.append("<tbody>")
    for row in rows:
        cells = "".join(f"<td>{c if raw else escape(str(c))}</td>" for c in row)
        h.append(f"<tr>{cells}</tr>")
    h.append("</tbody></table>")
    return h


def render_html(report: Mapping[str, Any], copied: set[str] | None = None) -> str:
    """The HTML page; ``copied`` are the files rendered under ``sources/`` (linked)."""
    files = copied or set()
    reqs: Mapping[str, Any] = report["requirements"]
    h: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>sonnx-mul traceability report</title>",
        f"<style>{_CSS}</style></head><body>",
        '<h1 id="top">sonnx-mul traceability report</h1>',
        '<nav id="toc"><strong>Contents</strong><ol>',
    ]
    h += [f'<li><a href="#{sid}">{escape(title)}</a></li>' for sid, title in SECTIONS]
    h.append("</ol></nav>")
    titles = dict(SECTIONS)

    def section(sid: str) -> None:
        h.append(f'<h2 id="{sid}">{escape(titles[sid])} <small><a href="#toc">↑</a></small></h2>')

    section("summary")
    h.append("<dl>")
    for key, value in _header_lines(report):
        css = ' class="absent"' if key == "Absent evidence" and value != "none" else ""
        h.append(f"<dt>{escape(key)}</dt><dd{css}>{escape(value)}</dd>")
    h.append("</dl>")

    section("matrix")
    h.append('<table id="matrix-table"><thead><tr><th>id</th><th>parent</th><th>title</th>')
    h += [f"<th>{k}</th>" for k in KINDS]
    h.append("<th>verdict</th></tr></thead><tbody>")
    for rid, req in reqs.items():
        parent = _id_link(req["parent"]) if req.get("parent") else ""
        h.append(
            f'<tr class="req" id="req-{escape(rid)}"><td>{_id_link(rid)}</td><td>{parent}</td>'
            f"<td>{escape(req['title'])}</td>"
        )
        for kind in KINDS:
            text, css = _proof_cell(req) if kind == "proof" else _cell(req["evidence"][kind])
            h.append(f'<td class="{css}">{escape(text)}</td>')
        css = "good" if req["verdict"] == "pass" else "bad"
        h.append(f'<td class="verdict {css}">{escape(req["verdict"])}</td></tr>')
    h.append("</tbody></table>")

    section("requirements")
    for rid, req in reqs.items():
        h += _html_requirement(rid, req, report, files)

    section("gate")
    problems = report.get("gate", {}).get("problems", [])
    h.append("<ul>" + "".join(f"<li>{escape(p)}</li>" for p in problems) + "</ul>"
             if problems else "<p>none: the gate passed</p>")  # fmt: skip

    section("evidence-files")
    rows = []
    for kind, f in report.get("evidence_files", {}).items():
        status = str(f.get("status", "present" if f.get("present") else "absent"))
        status_html = (
            f'<span class="absent">{escape(status.upper())}</span>'
            if status != "present"
            else "present"
        )
        path = str(f["path"])
        rows.append([
            escape(kind), _loc_link(path, files) if status == "present" else escape(path),
            status_html, "yes" if f.get("required") else "no",
            escape(str(f.get("meaning", "") or "-")),
        ])  # fmt: skip
    h += _table(
        ["kind", "path", "status", "required by the gate", "what absence means"], rows, True
    )

    section("unmapped")
    unmapped = report.get("unmapped", [])
    h.append('<ul class="ev">' + "".join(
        f"<li>{_loc_link(str(i.get('location', '?')), files)} · {escape(_describe(i, report))}</li>"
        for i in unmapped
    ) + "</ul>" if unmapped else "<p>none</p>")  # fmt: skip

    section("proof-subjects")
    h.append(f"<p>{escape(str(report.get('running_code', '')))}</p>")
    h += _table(*_subjects_table(report))

    section("sonnx")
    h += _html_sonnx(report)
    section("trusted-base")
    h += _html_trusted(report)

    section("objectives")
    h += _table(*_objectives_table(report))
    section("tools")
    h += _table(["tool", "version"], _flat(report.get("tools", {})))
    section("binaries")
    h += _table(*_binaries_table(report))
    h += _table(*_why3_library_table(report))
    section("semantics")
    h += _table(["option", "values"], _flat(report.get("semantics", {})))
    section("artifacts")
    h += _table(
        ["file", "sha256"],
        (
            [_loc_link(p, files), f"<code>{escape(d)}</code>"]
            for p, d in report.get("artifacts", {}).items()
        ),
        raw=True,
    )
    h.append("</body></html>")
    return "\n".join(h) + "\n"


def _html_requirement(
    rid: str, req: Mapping[str, Any], report: Mapping[str, Any], files: set[str]
) -> list[str]:
    h = [f'<section class="req" id="{escape(detail_anchor(rid))}">']
    h.append(f"<h3><code>{escape(rid)}</code> — {escape(req['title'])}</h3>")
    h.append(f"<blockquote>{escape(req['statement'])}</blockquote>")
    parent = _id_link(req["parent"]) if req.get("parent") else "none (SONNX top level)"
    children = ", ".join(_id_link(c) for c in req.get("children", [])) or "none"
    h.append(f'<p>Parent: {parent}; children: {children}; <a href="#req-{escape(rid)}">'
             "matrix row</a></p>")  # fmt: skip
    css = "good" if req["verdict"] == "pass" else "bad"
    h.append(f'<p>Verdict: <strong class="{css}">{escape(req["verdict"])}</strong></p>')
    h.append(f"<p>Proofs and the running code: {escape(running_code_note(req))} "
             '(<a href="#proof-subjects">subjects</a>)</p>')  # fmt: skip
    if req.get("sonnx"):
        tags = report.get("sonnx", {}).get("tags", {})
        h.append("<p>SONNX tags: " + "".join(
            f'<span class="tag" title="{escape(str(tags.get(t, "")))}">{escape(t)}</span>'
            for t in req["sonnx"]) + ' (<a href="#sonnx">alignment</a>)</p>')  # fmt: skip
    for path in req.get("absent_evidence", []):
        h.append(f'<p class="absent">Expected evidence absent: {escape(path)} '
                 '(<a href="#evidence-files">what it means</a>)</p>')  # fmt: skip
    for kind in KINDS:
        items = req["evidence"][kind]
        h.append(f'<div class="kind">{kind}</div><ul class="ev">')
        h += [
            f"<li>{_loc_link(str(i.get('location', '?')), files)} · "
            f"{escape(_describe(i, report))}</li>"
            for i in items
        ] or ["<li>(none)</li>"]
        h.append("</ul>")
    if req.get("skipped_tests"):
        h.append(f"<p>{req['skipped_tests']} skipped test cases not listed</p>")
    h.append("</section>")
    return h


def _html_sonnx(report: Mapping[str, Any]) -> list[str]:
    sonnx = report.get("sonnx", {})
    src = sonnx.get("source", {})
    tags = sonnx.get("tags", {})
    h = [
        f"<p>Source: {escape(str(src.get('repository', '?')))} "
        f"<code>{escape(str(src.get('path', '?')))}</code> at commit "
        f"<code>{escape(str(src.get('commit', '?')))}</code>.</p>",
        f"<p>{escape(str(src.get('note', '')))}</p>",
    ]
    rows = []
    for rid, req in report["requirements"].items():
        cell = "<br>".join(
            f"<code>{escape(t)}</code>: {escape(str(tags.get(t, '?')))}"
            for t in req.get("sonnx", [])
        )
        rows.append([_id_link(rid), cell or "none (project requirement)"])
    h += _table(["registry id", "SONNX tags"], rows, raw=True)
    h.append("<h3>Decisions where the SONNX text is silent or ambiguous</h3>")
    h += _table(
        ["topic", "the profile says", "decision", "why", "ids"],
        (
            [escape(d["topic"]), escape(d["profile_says"]), escape(d["decision"]),
             escape(d["why"]), ", ".join(
                 _id_link(i) if i in report["requirements"] else f"<code>{escape(i)}</code>"
                 for i in d["ids"])]
            for d in sonnx.get("decisions", [])
        ),
        raw=True,
    )  # fmt: skip
    return h


def _html_trusted(report: Mapping[str, Any]) -> list[str]:
    rows = []
    for c in report.get("trusted_base", []):
        issues = "<br>".join(
            f"{escape(k['title'])} <code>{escape(k['url'])}</code>: {escape(k['relevance'])}"
            for k in c.get("known_issues", [])
        )
        rows.append([
            f"<strong>{escape(c['name'])}</strong>", escape(_version_of(report, c)),
            escape(c["trusted_for"]),
            "<ul>" + "".join(f"<li>{escape(r)}</li>" for r in c["reduced_by"]) + "</ul>",
            issues or "none found in the public trackers searched",
        ])  # fmt: skip
    return _table(
        ["component", "version", "trusted for", "trust reduced by", "known public issues"],
        rows,
        raw=True,
    )
