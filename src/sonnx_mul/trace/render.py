"""Markdown and self-contained HTML renderings of the traceability report.

The HTML has inline CSS only, no script and no external resource: a table
with one row (``<tr class="req">``) per registry requirement and one column
per evidence kind; each row's title cell holds a ``<details>`` element with
the statement and every evidence location.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

KINDS: tuple[str, ...] = ("spec", "code", "test", "proof")


def _cell(items: list[Mapping[str, Any]]) -> tuple[str, str]:
    """(text, css class) of a matrix cell."""
    good = sum(1 for i in items if i.get("ok") is True)
    bad = sum(1 for i in items if i.get("ok") is False)
    if bad:
        return f"✗ {bad} failed / {len(items)}", "bad"
    if good:
        return f"✓ {good}", "good"
    return "— none", "bad"


def _describe(item: Mapping[str, Any]) -> str:
    parts = [str(item.get("location", "?"))]
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
    return [
        ("Verdict", str(report.get("verdict"))),
        ("Date (UTC)", str(report.get("date"))),
        ("Git commit", f"{git.get('commit')}{dirty}"),
        ("Schema", str(report.get("schema"))),
    ]


def render_markdown(report: Mapping[str, Any]) -> str:
    reqs: Mapping[str, Any] = report["requirements"]
    out = ["# sonnx-mul traceability report", ""]
    out += [f"- **{k}**: {v}" for k, v in _header_lines(report)]
    out += ["", "## Matrix", "", "| id | parent | " + " | ".join(KINDS) + " | verdict |"]
    out.append("|---" * (len(KINDS) + 3) + "|")
    for rid, req in reqs.items():
        cells = [_cell(req["evidence"][k])[0] for k in KINDS]
        out.append(
            f"| {rid} | {req['parent'] or ''} | " + " | ".join(cells) + f" | {req['verdict']} |"
        )
    problems = report.get("gate", {}).get("problems", [])
    if problems:
        out += ["", "## Gate problems", ""] + [f"- {p}" for p in problems]
    out += ["", "## Evidence by requirement"]
    for rid, req in reqs.items():
        out += ["", f"### {rid} — {req['title']}", "", f"> {req['statement']}", ""]
        out.append(f"Verdict: **{req['verdict']}**")
        for kind in KINDS:
            items = req["evidence"][kind]
            out += ["", f"{kind}:"]
            out += [f"- {_describe(i)}" for i in items] or ["- (none)"]
        if req.get("skipped_tests"):
            out.append(f"- ({req['skipped_tests']} skipped test cases not listed)")
    out += ["", "## Tools", ""]
    out += [f"- {k}: {v}" for k, v in report.get("tools", {}).items()]
    out += ["", "## Semantics covered", ""]
    out += [f"- {k}: {v}" for k, v in report.get("semantics", {}).items()]
    out += ["", "## Artifacts (SHA-256)", ""]
    out += [f"- `{h}` {p}" for p, h in report.get("artifacts", {}).items()]
    return "\n".join(out) + "\n"


_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;width:100%}
th,td{border:1px solid #ccc;padding:.3em .5em;vertical-align:top;text-align:left}
th{background:#f0f0f0}
td.good{background:#e6f4ea}td.bad{background:#fce8e6}
td.verdict.good{font-weight:bold}
details ul{margin:.3em 0 .3em 1.2em;padding:0}
summary{cursor:pointer}
code,.loc{font-family:ui-monospace,monospace;font-size:.9em}
.kind{font-weight:bold;margin-top:.4em}
"""


def render_html(report: Mapping[str, Any]) -> str:
    reqs: Mapping[str, Any] = report["requirements"]
    h: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>sonnx-mul traceability report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>sonnx-mul traceability report</h1>",
        "<dl>",
    ]
    for key, value in _header_lines(report):
        h.append(f"<dt>{escape(key)}</dt><dd>{escape(value)}</dd>")
    h.append("</dl>")
    h.append('<table id="matrix"><thead><tr><th>id</th><th>requirement</th>')
    h += [f"<th>{k}</th>" for k in KINDS]
    h.append("<th>verdict</th></tr></thead><tbody>")
    for rid, req in reqs.items():
        ok = req["verdict"] == "pass"
        h.append(f'<tr class="req" id="req-{escape(rid)}"><td><code>{escape(rid)}</code>')
        if req.get("parent"):
            h.append(f"<br><small>parent {escape(req['parent'])}</small>")
        h.append(f"</td><td><details><summary>{escape(req['title'])}</summary>")
        h.append(f"<p>{escape(req['statement'])}</p>")
        for kind in KINDS:
            h.append(f'<div class="kind">{kind}</div><ul>')
            items = req["evidence"][kind]
            h += [f'<li class="loc">{escape(_describe(i))}</li>' for i in items] or [
                "<li>(none)</li>"
            ]
            h.append("</ul>")
        if req.get("skipped_tests"):
            h.append(f"<p>{req['skipped_tests']} skipped test cases not listed</p>")
        h.append("</details></td>")
        for kind in KINDS:
            text, css = _cell(req["evidence"][kind])
            h.append(f'<td class="{css}">{escape(text)}</td>')
        css = "good" if ok else "bad"
        h.append(f'<td class="verdict {css}">{escape(req["verdict"])}</td></tr>')
    h.append("</tbody></table>")
    problems = report.get("gate", {}).get("problems", [])
    if problems:
        h.append("<h2>Gate problems</h2><ul>")
        h += [f"<li>{escape(p)}</li>" for p in problems]
        h.append("</ul>")
    for title, key in (("Tools", "tools"), ("Semantics covered", "semantics")):
        h.append(f"<h2>{title}</h2><table>")
        for k, v in report.get(key, {}).items():
            h.append(f"<tr><th>{escape(str(k))}</th><td>{escape(str(v))}</td></tr>")
        h.append("</table>")
    h.append("<h2>Artifacts (SHA-256)</h2><details><summary>")
    h.append(f"{len(report.get('artifacts', {}))} files</summary><table>")
    for path, digest in report.get("artifacts", {}).items():
        h.append(f"<tr><td class='loc'>{escape(path)}</td><td><code>{digest}</code></td></tr>")
    h.append("</table></details></body></html>")
    return "\n".join(h) + "\n"
