"""The traceability report as one document, rendered to Markdown and HTML.

:func:`build_document` builds the report once (:mod:`.document`: sections
``SECTIONS`` in order, tables, paragraphs, links); :func:`render_markdown`
and :func:`render_html` render that document.  The HTML has inline CSS
only, no script and no external resource: a table of contents; a matrix
with one row (``<tr class="req">``) per registry requirement whose id
links to the requirement's details (``id="detail-<ID>"``); in the details,
links to the parent and children and, for every evidence location, a link
to the rendered copy of the file in ``sources/``
(:mod:`sonnx_mul_assurance.report.sources`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from sonnx_mul_assurance.report.document import (
    Block,
    BulletList,
    Cell,
    Code,
    Definitions,
    Document,
    Inline,
    Line,
    Link,
    Mark,
    Paragraph,
    Quote,
    Row,
    Section,
    Strong,
    Table,
    cell,
    line,
    row,
    to_html,
    to_markdown,
)
from sonnx_mul_assurance.report.sources import href, split_location

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
    ("coverage", "Structural coverage"),
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
        "python-kernel": "oracle",
        "python-contracts-bounded": "bounded",
        "native-tested": "native tested",
        "native-proved": "C proved",
        "native-misra": "MISRA",
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
    if subjects.get("native-proved"):
        return (
            "some proofs are about the code that runs: Frama-C WP goals of the native C "
            "kernel's functions (native/src) that sonnx_mul.mul calls, up to the compiler "
            "and the hardware"
        )
    if subjects.get("python-kernel"):
        return (
            "some proofs are about oracle/integers.py, the integer oracle mul_reference runs; "
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
        for where in (item.get("location", ""), item.get("proof", "")):
            path, _ = split_location(str(where))
            if path and not path.startswith("/"):
                files.add(path)
    return files


TableRows = tuple[list[str], list[list[str]]]
"""A plain-text table: header and rows."""


def _subjects_table(report: Mapping[str, Any]) -> TableRows:
    rows = [[s["label"], s["meaning"]] for s in report.get("proof_subjects", {}).values()]
    return ["subject", "meaning"], rows


def _objectives_table(report: Mapping[str, Any]) -> TableRows:
    rows = [
        [o["standard"], o["objective"], o["output"], o["status"].upper(), o["note"]]
        for o in report.get("objectives", [])
    ]
    return ["standard / objective", "what is asked", "project output", "status", "note"], rows


def _coverage(report: Mapping[str, Any]) -> list[Block]:
    """Per file, per requirement and how it was measured (coverage.json)."""
    entry = report.get("coverage")
    if not entry:
        return [Paragraph(line("no coverage.json: structural coverage was not measured"))]
    head = ["file", "statements", "branches (decision outcomes)", "MC/DC conditions"]
    per_req = [[rid, str(r[0]), r[1], r[2]] for rid, r in entry["requirements"].items()]
    exempted = ", ".join(f"{v} {k}" for k, v in sorted(entry["exempted_by_reason"].items()))
    blocks: list[Block] = [
        _table(head, [list(r) for r in entry["table"]]),
        Paragraph(
            line(
                f"{entry['gaps']} uncovered items, exempted by reason: {exempted or 'none'}; "
                f"{len(entry['problems'])} gate problem(s)."
            )
        ),
        _table(["requirement", "tests", "product Python statements", "branches"], per_req),
        Paragraph(
            line(
                f"Tests: pytest {entry['tests']}; again under SONNX_MUL_ISA="
                f"{', '.join(entry['isa_variants'][1:]) or '(none)'}: {entry['variant_tests']}; "
                f"C harnesses: {'; '.join(entry['harnesses'])}. Build: {entry['build']}. "
                f"Time: {entry['seconds']} s wall, {entry.get('cpu_seconds', 0)} CPU-s "
                f"({entry['timings']})."
            )
        ),
        Paragraph(line(entry["object_code"])),
        Paragraph(line("A second measure, gcc's own gcov on the kernel as gcc builds it:")),
        _table(
            ["file", "statements (gcov lines)", "branches taken", "run"],
            [list(r) for r in entry.get("gcov", [])],
        ),
    ]
    return blocks


def _test_environment(report: Mapping[str, Any]) -> list[Block]:
    """The platform, compiler and floating-point mode of the suite's run."""
    env = report.get("test_environment")
    head = Paragraph(line(Strong("The test run's environment (pytest.xml's properties):")))
    if not env:
        return [head, Paragraph(line("not recorded: pytest.xml holds no sonnx_mul.* property"))]
    return [head, _table(["property", "value"], [[k, str(v)] for k, v in env.items()])]


def _binaries_table(report: Mapping[str, Any]) -> TableRows:
    rows = [
        [", ".join(b["names"]), b["path"], b.get("resolved") or "ABSENT",
         b.get("version") or "-", b.get("sha256") or "ABSENT"]
        for b in report.get("binaries", [])
    ]  # fmt: skip
    return ["names", "path", "resolved", "version", "sha256"], rows


def _why3_library_table(report: Mapping[str, Any]) -> TableRows:
    rows = [[p, h or "ABSENT"] for p, h in report.get("why3_library", {}).items()]
    return ["Why3 library file", "sha256"], rows


# ----------------------------------------------------------------- document

CSS = """
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


class _Links:
    """Link targets: ids to their details, locations to copies under ``sources/``."""

    def __init__(self, copied: set[str]) -> None:
        self.copied = copied

    def location(self, location: str) -> Link:
        path, number = split_location(location)
        return Link(location, href(path, number, self.copied) or None, code=True)

    @staticmethod
    def rid(rid: str) -> Link:
        return Link(rid, f"#{detail_anchor(rid)}", code=True)


def _table(header: list[str], rows: list[list[str]]) -> Table:
    return Table(tuple(header), tuple(row(*r) for r in rows))


def _evidence_line(item: Mapping[str, Any], report: Mapping[str, Any], links: _Links) -> Line:
    parts: list[Inline | str] = [
        links.location(str(item.get("location", "?"))),
        " · " + _describe(item, report),
    ]
    if item.get("proof"):  # a proof checked apart from its statement's file (Coq)
        parts += [" · proof ", links.location(str(item["proof"]))]
    return line(*parts)


def _summary(report: Mapping[str, Any]) -> list[Block]:
    items = tuple(
        (k, line(v), "absent" if k == "Absent evidence" and v != "none" else "")
        for k, v in _header_lines(report)
    )
    return [Definitions(items)]


def _matrix(reqs: Mapping[str, Any], links: _Links) -> list[Block]:
    rows = []
    for rid, req in reqs.items():
        parent = cell(links.rid(req["parent"])) if req.get("parent") else cell("")
        kinds = [
            _proof_cell(req) if kind == "proof" else _cell(req["evidence"][kind]) for kind in KINDS
        ]
        verdict_css = "verdict good" if req["verdict"] == "pass" else "verdict bad"
        cells = (
            cell(links.rid(rid)),
            parent,
            cell(req["title"]),
            *(cell(text, css=css) for text, css in kinds),
            cell(req["verdict"], css=verdict_css),
        )
        rows.append(Row(cells, id=f"req-{rid}", css="req"))
    header = ("id", "parent", "title", *KINDS, "verdict")
    return [Table(header, tuple(rows), id="matrix-table")]


def _requirement(
    rid: str, req: Mapping[str, Any], report: Mapping[str, Any], links: _Links
) -> Section:
    parent: Link | str = links.rid(req["parent"]) if req.get("parent") else "none (SONNX top level)"
    children: list[Link | str] = []
    for child in req.get("children", []):
        children += [", ", links.rid(child)] if children else [links.rid(child)]
    css = "good" if req["verdict"] == "pass" else "bad"
    blocks: list[Block] = [
        Quote(req["statement"]),
        Paragraph(line("Verdict: ", Strong(req["verdict"], css))),
        Paragraph(
            line(
                "Parent: ",
                parent,
                "; children: ",
                *(children or ["none"]),
                "; ",
                Link("matrix row", f"#req-{rid}"),
            )
        ),
        Paragraph(
            line(
                "Proofs and the running code: ",
                running_code_note(req),
                " (",
                Link("subjects", "#proof-subjects"),
                ")",
            )
        ),
    ]
    if req.get("sonnx"):
        tags: list[Code | str] = []
        for tag in req["sonnx"]:
            tags += [", ", Code(tag)] if tags else [Code(tag)]
        blocks.append(
            Paragraph(line("SONNX tags: ", *tags, " (", Link("alignment", "#sonnx"), ")"))
        )
    if req.get("sonnx_alignment"):
        al = req["sonnx_alignment"]
        blocks.append(
            Paragraph(
                line(
                    "Newest SONNX text: ",
                    Strong(str(al["status"])),
                    f": {al['note']}; followed: {al['follows']}",
                )
            )
        )
    for path in req.get("absent_evidence", []):
        blocks.append(
            Paragraph(
                line(
                    Strong("Expected evidence absent:"),
                    f" {path} (",
                    Link("what it means", "#evidence-files"),
                    ")",
                ),
                css="absent",
            )
        )
    for kind in KINDS:
        blocks.append(Paragraph(line(f"{kind}:"), css="kind"))
        items = tuple(_evidence_line(i, report, links) for i in req["evidence"][kind])
        blocks.append(BulletList(items, css="ev", empty="(none)"))
    if req.get("skipped_tests"):
        blocks.append(Paragraph(line(f"{req['skipped_tests']} skipped test cases not listed")))
    return Section(detail_anchor(rid), f"{rid} — {req['title']}", blocks, css="req")


def _evidence_files(report: Mapping[str, Any], links: _Links) -> list[Block]:
    rows = []
    for kind, f in report.get("evidence_files", {}).items():
        status = str(f.get("status", "present" if f.get("present") else "absent"))
        path = str(f["path"])
        rows.append(
            row(
                kind,
                cell(links.location(path)) if status == "present" else cell(path),
                cell(Mark(status.upper(), "absent")) if status != "present" else cell("PRESENT"),
                "yes" if f.get("required") else "no",
                str(f.get("meaning", "") or "-"),
                str(f.get("origin", "") or "-"),
            )
        )
    header = (
        "kind",
        "path",
        "status",
        "required by the gate",
        "what absence means",
        "written by (when not this run)",
    )
    return [Table(header, tuple(rows))]


def _sonnx(report: Mapping[str, Any], links: _Links) -> list[Block]:
    sonnx = report.get("sonnx", {})
    src = sonnx.get("source", {})
    tags = sonnx.get("tags", {})
    rows = []
    for rid, req in report["requirements"].items():
        lines = tuple(line(Code(t), f": {tags.get(t, '?')}") for t in req.get("sonnx", []))
        rows.append(
            Row((cell(links.rid(rid)), Cell(lines or (line("none (project requirement)"),))))
        )
    decisions = []
    for d in sonnx.get("decisions", []):
        ids: list[Link | Code | str] = []
        for i in d["ids"]:
            ids += [", "] if ids else []
            ids.append(links.rid(i) if i in report["requirements"] else Code(i))
        decisions.append(
            Row((*(cell(d[k]) for k in ("topic", "profile_says", "decision", "why")), cell(*ids)))
        )
    return [
        Paragraph(
            line(
                "Source: ",
                str(src.get("repository", "?")),
                " ",
                Code(str(src.get("path", "?"))),
                " at commit ",
                Code(str(src.get("commit", "?"))),
                ".",
            )
        ),
        Paragraph(line(str(src.get("note", "")))),
        Table(("registry id", "SONNX tags"), tuple(rows)),
        Paragraph(
            line(
                Strong(f"The profile and the newest SONNX text ({_newest(src)}), per requirement:")
            )
        ),
        _newest_table(report, links),
        Paragraph(line(Strong("Decisions where the SONNX text is silent or ambiguous:"))),
        Table(("topic", "the profile says", "decision", "why", "ids"), tuple(decisions)),
        Paragraph(line(Strong("The working group's test classes (tests-part2), per E_MUL tag:"))),
        _wg_table(report),
    ]


def _wg_table(report: Mapping[str, Any]) -> Table:
    """Per E_MUL tag and class: what a case checks, and its cases by outcome."""
    rows = []
    for tag, classes in report.get("wg_classes", {}).items():
        for c in classes:
            passed = [n for n, status in c["cases"] if status == "passed"]
            other = [f"{n} ({status})" for n, status in c["cases"] if status != "passed"]
            tests = sorted({n.split("::", 1)[-1].split("[", 1)[0] for n, _ in c["cases"]})
            shown = (
                f"{len(passed)}/{len(c['cases'])} passed: {', '.join(tests)} "
                f"[{', '.join(n.rsplit('-', 1)[-1].rstrip(']') for n, _ in c['cases'])}]"
                if c["cases"]
                else "no test case in the results"
            )
            rows.append(
                Row((cell(Code(tag)), cell(c["class"]), cell(c["holds"]),
                     cell(shown, *(f"; {o}" for o in other))))
            )  # fmt: skip
    return Table(("E_MUL tag", "class", "a case checks", "cases (types)"), tuple(rows))


def _newest(src: Mapping[str, Any]) -> str:
    commit = str(src.get("newest_commit", "?"))[:12]
    return (
        f"{src.get('newest_repository', '?')} {src.get('newest_path', '?')} at commit "
        f"{commit}, {src.get('newest_revision', '?')}"
    )


def _newest_table(report: Mapping[str, Any], links: _Links) -> Table:
    """Per requirement: its E_MUL tags, agree/differ and where, the text followed."""
    rows = []
    for rid, req in report["requirements"].items():
        al = req.get("sonnx_alignment") or {}
        tags = [t for t in req.get("sonnx", []) if t.startswith("E_MUL_")]
        rows.append(
            row(
                cell(links.rid(rid)),
                ", ".join(tags) or "-",
                str(al.get("status", "-")),
                str(al.get("note", "-")),
                str(al.get("follows", "-")),
            )
        )
    header = ("registry id", "E_MUL tags", "newest text", "where they agree or differ",
              "text followed")  # fmt: skip
    return Table(header, tuple(rows))


def _trusted(report: Mapping[str, Any]) -> list[Block]:
    rows = []
    for c in report.get("trusted_base", []):
        issues = tuple(
            line(k["title"], " ", Code(k["url"]), f": {k['relevance']}")
            for k in c.get("known_issues", [])
        ) or (line("none found in the public trackers searched"),)
        rows.append(
            Row(
                (
                    cell(Strong(c["name"])),
                    cell(_version_of(report, c)),
                    cell(c["trusted_for"]),
                    Cell(tuple(line(r) for r in c["reduced_by"])),
                    Cell(issues),
                )
            )
        )
    header = ("component", "version", "trusted for", "trust reduced by", "known public issues")
    return [Table(header, tuple(rows))]


def _artifacts(report: Mapping[str, Any], links: _Links) -> list[Block]:
    rows = tuple(
        Row((cell(links.location(p)), cell(Code(d))))
        for p, d in report.get("artifacts", {}).items()
    )
    return [Table(("file", "sha256"), rows)]


def build_document(report: Mapping[str, Any], copied: set[str] | None = None) -> Document:
    """The report as one document; ``copied`` are the files rendered under
    ``sources/`` (the HTML links evidence locations to them)."""
    links = _Links(copied or set())
    reqs: Mapping[str, Any] = report["requirements"]
    unmapped = report.get("unmapped", [])
    problems = report.get("gate", {}).get("problems", [])
    blocks: dict[str, list[Block]] = {
        "summary": _summary(report),
        "matrix": _matrix(reqs, links),
        "requirements": [_requirement(rid, req, report, links) for rid, req in reqs.items()],
        "gate": [BulletList(tuple(line(p) for p in problems), empty="none: the gate passed")],
        "evidence-files": _evidence_files(report, links),
        "unmapped": [
            BulletList(tuple(_evidence_line(i, report, links) for i in unmapped), css="ev")
        ],
        "proof-subjects": [
            Paragraph(line(str(report.get("running_code", "")))),
            _table(*_subjects_table(report)),
        ],
        "sonnx": _sonnx(report, links),
        "trusted-base": _trusted(report),
        "coverage": _coverage(report),
        "objectives": [_table(*_objectives_table(report))],
        "tools": [
            _table(["tool", "version"], [list(r) for r in _flat(report.get("tools", {}))]),
            *_test_environment(report),
        ],
        "binaries": [_table(*_binaries_table(report)), _table(*_why3_library_table(report))],
        "semantics": [
            _table(["option", "values"], [list(r) for r in _flat(report.get("semantics", {}))])
        ],
        "artifacts": _artifacts(report, links),
    }
    sections = [Section(sid, title, blocks[sid]) for sid, title in SECTIONS]
    return Document("sonnx-mul traceability report", sections, CSS)


def render_markdown(report: Mapping[str, Any]) -> str:
    return to_markdown(build_document(report))


def render_html(report: Mapping[str, Any], copied: set[str] | None = None) -> str:
    """The HTML page; ``copied`` are the files rendered under ``sources/`` (linked)."""
    return to_html(build_document(report, copied))


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
