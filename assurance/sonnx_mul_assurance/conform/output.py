"""Renderings of a conformance result: text, Markdown, HTML (the traceability
report's style: its CSS and table helpers) and JUnit XML.

Every renderer takes the dict of :func:`run.run_conformance` and returns a
string; :func:`write_all` writes ``conformance.json``, ``.md``, ``.html`` and
``conformance.junit.xml`` into a directory.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from html import escape
from pathlib import Path
from typing import Any

from ..report.render import _CSS, _md_table, _table
from .runtimes import describe

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
    for row in _type_rows(result):
        t, req, status, pairs, mism, secs, findings = row
        line = f"{req:<8} {t:<9} {status:<15} {pairs} pairs, {mism} mismatches, {secs} s"
        out.append(line)
        if findings not in ("-", ""):
            out.append(f"{'':<9}{findings}")
    for rid, _, verdict, detail in _req_rows(result):
        if not rid.startswith("F-"):
            out.append(f"{rid:<8} {verdict:<15} {detail}")
    bad = ", ".join(result["violated"])
    out.append(f"verdict: {result['verdict']}" + (f" ({bad})" if bad else ""))
    return "\n".join(out) + "\n"


def render_markdown(result: Mapping[str, Any]) -> str:
    out = [f"# sonnx-mul conformance: {result['runtime']}", "",
           f"- **Verdict**: {result['verdict']}" + (
               f" ({', '.join(result['violated'])})" if result["violated"] else ""),
           f"- **Date (UTC)**: {result['date']}",
           f"- **Settings**: {_settings(result)}",
           f"- **Run**: {_run_line(result)}", "", "## Per type", ""]  # fmt: skip
    out += _md_table(_TYPE_HEADER, _type_rows(result))
    out += ["", "## Per requirement", ""]
    out += _md_table(["id", "the profile says", "verdict", "detail"], _req_rows(result))
    out += ["", "## First mismatches", ""]
    for t in result["types"]:
        for v in t.get("variants", []):
            if v["examples"]:
                out += [f"### {t['type']} ({v['variant']} model)", ""]
                out += _md_table(
                    ["a", "b", "certified", "runtime", "diagnosis"],
                    ([f"{e['a']} `{e['a_bits']}`", f"{e['b']} `{e['b_bits']}`",
                      f"{e['expected']} `{e['expected_bits']}`", f"{e['got']} `{e['got_bits']}`",
                      e["diagnosis"]] for e in v["examples"]),
                )  # fmt: skip
                out.append("")
    out += ["## Tools", ""]
    out += _md_table(["tool", "version"], result["tools"].items())
    return "\n".join(out) + "\n"


def render_html(result: Mapping[str, Any]) -> str:
    """A self-contained page (inline CSS of the traceability report, no script)."""
    title = f"sonnx-mul conformance: {result['runtime']}"
    css = "good" if result["verdict"] == "conforming" else "bad"
    h = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
         f"<title>{escape(title)}</title>", f"<style>{_CSS}</style></head><body>",
         f"<h1>{escape(title)}</h1>", "<dl>",
         f'<dt>Verdict</dt><dd><strong class="{css}">{escape(result["verdict"])}</strong> '
         f"{escape(', '.join(result['violated']))}</dd>",
         f"<dt>Date (UTC)</dt><dd>{escape(result['date'])}</dd>",
         f"<dt>Settings</dt><dd><code>{escape(_settings(result))}</code></dd>",
         f"<dt>Run</dt><dd>{escape(_run_line(result))}</dd></dl>",
         "<h2>Per type</h2>"]  # fmt: skip
    h += _table(_TYPE_HEADER, _type_rows(result))
    h.append("<h2>Per requirement</h2>")
    h += _table(["id", "the profile says", "verdict", "detail"], _req_rows(result))
    h.append("<h2>First mismatches</h2>")
    for t in result["types"]:
        for v in t.get("variants", []):
            if v["examples"]:
                h.append(f"<h3>{escape(t['type'])} ({escape(v['variant'])} model)</h3>")
                h += _table(
                    ["a", "b", "certified", "runtime", "diagnosis"],
                    ([f"{e['a']} {e['a_bits']}", f"{e['b']} {e['b_bits']}",
                      f"{e['expected']} {e['expected_bits']}", f"{e['got']} {e['got_bits']}",
                      e["diagnosis"]] for e in v["examples"]),
                )  # fmt: skip
    h.append("<h2>Tools</h2>")
    h += _table(["tool", "version"], ([k, v] for k, v in result["tools"].items()))
    h.append("</body></html>")
    return "\n".join(h) + "\n"


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
