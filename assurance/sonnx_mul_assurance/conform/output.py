"""Renderings of a conformance result: text, Markdown, HTML (the traceability
report's style: its CSS and table helpers) and JUnit XML.

Every renderer takes the dict of :func:`run.run_conformance` and returns a
string; :func:`write_all` writes ``conformance.json``, ``.md``, ``.html`` and
``conformance.junit.xml`` into a directory.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sonnx_mul_assurance.conform.runtimes import describe
from sonnx_mul_assurance.report.document import (
    Block,
    Code,
    Definitions,
    Document,
    Section,
    Strong,
    Table,
    cell,
    line,
    row,
    to_html,
    to_markdown,
)
from sonnx_mul_assurance.report.render import CSS

EXPLAIN: Mapping[str, str] = {
    "F-FLOAT": "IEEE 754 product in the operand format, round to nearest ties to even, "
    "subnormals kept, NaN as NaN (SONNX profile; ONNX Mul-14 defers to numpy semantics)",
    "F-WRAP": "the exact product reduced modulo 2^n into the type's range (two's complement)",
    "R1": "A and B have the same shape: other shapes must be refused",
    "R4": "no broadcasting, even between broadcastable shapes: must be refused",
    "R1-DIMS": "every dimension >= 1: zero-sized dims must be refused",
}


def _type_rows(result: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for t in result["types"]:
        if t["status"] == "not supported":
            rows.append([t["type"], t["requirement"], "not supported", "-", "-",
                         f"{t['seconds']:.1f}", t.get("reason", "")])  # fmt: skip
            continue
        findings = []
        for v in t["variants"]:
            if v["error"]:
                findings.append(f"{v['variant']}: {v['error']}")
            elif v["mismatches"]:
                top, n = next(iter(v["diagnoses"].items()), ("", 0))
                of = f" ({n:,} of {v['diagnosed']:,} diagnosed)" if v["diagnosed"] else ""
                ex = v["examples"][0] if v["examples"] else None
                first = (f"; first: {ex['a']} * {ex['b']} = {ex['got']} ({ex['got_bits']}), "
                         f"certified {ex['expected']} ({ex['expected_bits']}): "
                         f"{ex['diagnosis']}") if ex else ""  # fmt: skip
                top += of
                repro = f"; reproducer {v['reproducer']}" if v["reproducer"] else ""
                findings.append(f"{v['variant']}: {top}{first}{repro}")
        if t.get("fpu_note"):
            findings.append(f"note: {t['fpu_note']}")
        rows.append([
            t["type"], t["requirement"], t["status"], f"{t['pairs']:,} ({t['mode']})",
            f"{t['mismatches']:,}", f"{t['seconds']:.1f}", " | ".join(findings) or "-",
        ])  # fmt: skip
    return rows


_TYPE_HEADER = ["type", "requirement", "verdict", "pairs tried", "mismatches", "time (s)",
                "findings"]  # fmt: skip


def _req_rows(result: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for rid, r in result["requirements"].items():
        if rid.startswith("F-"):
            detail = (f"{r['pairs']:,} pairs, {r['mismatches']:,} mismatches; violated by: "
                      f"{', '.join(r['violated_by']) or '-'}; not supported: "
                      f"{', '.join(r['not_supported']) or '-'}")  # fmt: skip
        else:
            acc = r.get("accepted", {})
            detail = f"{r['cases']} forbidden inputs offered; accepted: " + (
                "; ".join(f"{case} ({', '.join(ts)})" for case, ts in acc.items()) or "none"
            )
        rows.append([rid, EXPLAIN.get(rid, ""), r["verdict"], detail])
    return rows


def _settings(result: Mapping[str, Any]) -> str:
    return describe(result["settings"])


def _run_line(result: Mapping[str, Any]) -> str:
    budget = "none" if result["budget"] is None else f"{result['budget']:,} pairs per type"
    return (f"opset {result['opset']} (Mul-{result['mul_version']}), seed {result['seed']}, "
            f"budget {budget}, model variants {', '.join(result['variants'])}, "
            f"refusals {'checked' if result['refusals_checked'] else 'not checked'}, "
            f"{result['seconds']:.1f} s")  # fmt: skip


def render_text(result: Mapping[str, Any]) -> str:
    """The terminal summary: one line per type, per requirement, then the verdict."""
    out = [f"sonnx-mul conform: {result['runtime']} ({_settings(result)})",
           f"  {_run_line(result)}"]  # fmt: skip
    for t, req, status, pairs, mism, secs, findings in _type_rows(result):
        out.append(f"{req:<8} {t:<9} {status:<15} {pairs} pairs, {mism} mismatches, {secs} s")
        if findings not in ("-", ""):
            out.append(f"{'':<9}{findings}")
    for rid, _, verdict, detail in _req_rows(result):
        if not rid.startswith("F-"):
            out.append(f"{rid:<8} {verdict:<15} {detail}")
    bad = ", ".join(result["violated"])
    out.append(f"verdict: {result['verdict']}" + (f" ({bad})" if bad else ""))
    return "\n".join(out) + "\n"


def build_document(result: Mapping[str, Any]) -> Document:
    """The conformance result as the report's document model (one build, two renderings)."""
    violated = ", ".join(result["violated"])
    verdict_css = "good" if result["verdict"] == "conforming" else "bad"
    summary = Definitions(
        (
            ("Verdict", line(Strong(str(result["verdict"]), verdict_css), f" {violated}"), ""),
            ("Date (UTC)", line(str(result["date"])), ""),
            ("Settings", line(Code(_settings(result))), ""),
            ("Run", line(_run_line(result)), ""),
        )
    )
    mismatches: list[Block] = []
    for t in result["types"]:
        for v in t.get("variants", []):
            if v["examples"]:
                rows = tuple(
                    row(
                        cell(f"{e['a']} ", Code(str(e["a_bits"]))),
                        cell(f"{e['b']} ", Code(str(e["b_bits"]))),
                        cell(f"{e['expected']} ", Code(str(e["expected_bits"]))),
                        cell(f"{e['got']} ", Code(str(e["got_bits"]))),
                        str(e["diagnosis"]),
                    )
                    for e in v["examples"]
                )
                header = ("a", "b", "certified", "runtime", "diagnosis")
                mismatches.append(
                    Section(
                        f"{t['type']}-{v['variant']}",
                        f"{t['type']} ({v['variant']} model)",
                        [Table(header, rows)],
                    )
                )
    req_header = ("id", "the profile says", "verdict", "detail")
    sections = [
        Section("summary", "Summary", [summary]),
        Section("types", "Per type", [_plain_table(_TYPE_HEADER, _type_rows(result))]),
        Section("requirements", "Per requirement", [_plain_table(req_header, _req_rows(result))]),
        Section("mismatches", "First mismatches", mismatches),
        Section(
            "tools",
            "Tools",
            [_plain_table(("tool", "version"), [[k, str(v)] for k, v in result["tools"].items()])],
        ),
    ]
    return Document(f"sonnx-mul conformance: {result['runtime']}", sections, CSS)


def _plain_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> Table:
    return Table(tuple(header), tuple(row(*(str(c) for c in r)) for r in rows))


def render_markdown(result: Mapping[str, Any]) -> str:
    return to_markdown(build_document(result))


def render_html(result: Mapping[str, Any]) -> str:
    """A self-contained page (inline CSS of the traceability report, no script)."""
    return to_html(build_document(result))


def render_junit(result: Mapping[str, Any]) -> str:
    """JUnit XML: one test case per (type, model variant) and per refusal case;
    a non-conforming one is a ``failure``, an unsupported type ``skipped``."""
    suites = ET.Element("testsuites", name="sonnx-mul conform")
    suite = ET.SubElement(suites, "testsuite", name=f"sonnx-mul conform {result['runtime']}")
    props = ET.SubElement(suite, "properties")
    flat = {
        **{f"setting.{k}": v for k, v in result["settings"].items()},
        "opset": result["opset"],
        "seed": result["seed"],
        "budget": result["budget"],
    }
    for k, v in flat.items():
        ET.SubElement(props, "property", name=str(k), value=str(v))
    tests = failures = skipped = 0
    for t in result["types"]:
        cls = f"conform.{result['runtime']}.{t['requirement']}"
        if t["status"] == "not supported":
            case = ET.SubElement(suite, "testcase", classname=cls, name=t["type"], time="0")
            ET.SubElement(case, "skipped", message=f"not supported: {t.get('reason', '')}")
            tests, skipped = tests + 1, skipped + 1
            continue
        for v in t["variants"]:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=cls,
                name=f"{t['type']}[{v['variant']}]",
                time=f"{v['seconds']:.3f}",
            )
            tests += 1
            if v["error"] or v["mismatches"]:
                failures += 1
                msg = v["error"] or (f"{t['requirement']}: {v['mismatches']} of {v['pairs']} "
                                     f"pairs differ from sonnx_mul.mul")  # fmt: skip
                fail = ET.SubElement(case, "failure", message=msg, type=t["requirement"])
                fail.text = json.dumps({"diagnoses": v["diagnoses"], "examples": v["examples"],
                                        "reproducer": v["reproducer"]}, indent=1)  # fmt: skip
    for r in result["refusals"]:
        ids = "_".join(r["requirements"])
        case = ET.SubElement(suite, "testcase", classname=f"conform.{result['runtime']}.{ids}",
                             name=f"{r['type']}[{r['case']}]", time="0")  # fmt: skip
        tests += 1
        if r["status"] == "accepted":
            failures += 1
            ET.SubElement(
                case,
                "failure",
                type=ids,
                message=f"{', '.join(r['requirements'])}: A {r['shape_a']} and B "
                f"{r['shape_b']} accepted ({r['detail']}); the profile refuses them",
            )
    for el in (suite, suites):
        el.set("tests", str(tests))
        el.set("failures", str(failures))
        el.set("errors", "0")
    suite.set("skipped", str(skipped))
    suite.set("time", f"{result['seconds']:.3f}")
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )


def render_json(result: Mapping[str, Any]) -> str:
    return json.dumps(result, indent=2) + "\n"


def write_all(result: Mapping[str, Any], out_dir: Path) -> list[Path]:
    """Write the four renderings into ``out_dir``; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in (
        ("conformance.json", render_json(result)),
        ("conformance.md", render_markdown(result)),
        ("conformance.html", render_html(result)),
        ("conformance.junit.xml", render_junit(result)),
    ):
        path = out_dir / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
