"""Evidence readers: spec text, registry, JUnit XML, Why3, CrossHair, exhaustive runs.

Every reader returns :class:`Item` objects tagged with the requirement ids
they are evidence for. Statuses are normalised: ``ok`` is True (passed,
proved, valid), False (anything else that ran: failed, error, timeout,
unknown, ...) or None (neutral: skipped, xfail; not evidence, not failure).
Readers are tolerant about the layout of the producers' JSON but strict
about statuses: only the words in ``PASS_STATUSES`` count as a pass.
"""

from __future__ import annotations

import ast
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .markers import Marker, module_spans

PASS_STATUSES: frozenset[str] = frozenset(
    {"proved", "valid", "passed", "pass", "ok", "agree", "confirmed"}
)
"""Statuses (case-insensitive) that count as a pass; any other is a failure."""

NEUTRAL_STATUSES: frozenset[str] = frozenset({"skipped", "xfailed", "xfail"})


@dataclass
class Item:
    """One piece of evidence for ``ids``."""

    kind: str  # spec | code | test | proof
    source: str  # profile | registry | whyml | marker | pytest | why3 | crosshair | exhaustive
    location: str
    ids: tuple[str, ...]
    status: str
    ok: bool | None
    name: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    files: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "source": self.source,
            "location": self.location,
            "status": self.status,
            "ok": self.ok,
        }
        if self.name:
            out["name"] = self.name
        out.update(self.detail)
        return out


def status_ok(status: str) -> bool | None:
    s = status.strip().lower()
    if s in PASS_STATUSES:
        return True
    if s in NEUTRAL_STATUSES:
        return None
    return False


def _rel(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


# --- spec -----------------------------------------------------------------

EXTRA_SPEC_PATTERNS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"F": ("C[i] = A[i] * B[i]", "value = fun i -> a.value[i] * b.value[i]")}
)
"""Statements located by text rather than by an ``[ID]`` / ``(ID)`` tag."""


def spec_text_items(spec_file: Path, root: Path, ids: Iterable[str]) -> list[Item]:
    """Lines of the normative text that state an id: ``[ID]``, ``(ID)`` or a formula."""
    if not spec_file.is_file():
        return []
    lines = spec_file.read_text(encoding="utf-8").splitlines()
    rel = _rel(spec_file, root)
    items: list[Item] = []
    for rid in ids:
        tags = (f"[{rid}]", f"({rid})", *EXTRA_SPEC_PATTERNS.get(rid, ()))
        for number, text in enumerate(lines, start=1):
            if any(t in text for t in tags):
                items.append(
                    Item(
                        "spec",
                        "profile",
                        f"{rel}:{number}",
                        (rid,),
                        "stated",
                        True,
                        detail={"text": text.strip()[:200]},
                        files=(rel,),
                    )
                )
    return items


def registry_items(registry_file: Path, root: Path, ids: Collection[str]) -> list[Item]:
    """The ``Requirement("ID", ...)`` line of each id in the registry module."""
    if not registry_file.is_file():
        return []
    rel = _rel(registry_file, root)
    tree = ast.parse(registry_file.read_text(encoding="utf-8"))
    items: list[Item] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "Requirement"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in ids
        ):
            rid = str(node.args[0].value)
            items.append(
                Item(
                    "spec",
                    "registry",
                    f"{rel}:{node.lineno}",
                    (rid,),
                    "stated",
                    True,
                    files=(rel,),
                )
            )
    return items


def marker_items(markers: Iterable[Marker], kind: str, source: str) -> list[Item]:
    return [
        Item(
            kind,
            source,
            m.location,
            m.ids,
            "linked",
            True,
            name=m.name or m.module,
            detail={"scope": m.scope},
            files=(m.path,),
        )
        for m in markers
    ]


# --- tests ----------------------------------------------------------------


def ids_in_test_name(name: str, ids: Collection[str]) -> tuple[str, ...]:
    """Ids a test name carries: ``test_`` then ids in a row (``-`` written ``_``).

    Matching is case-sensitive and greedy (the longest registry id first), an
    id ends at ``_`` or at the end of the name, and ``and`` may join two ids:
    ``test_F_WRAP_and_F_CHECKED_x`` carries F-WRAP and F-CHECKED,
    ``test_C1_result_shape`` carries C1 only.
    """
    base = name.split("[", 1)[0]
    if not base.startswith("test_"):
        return ()
    rest = base[len("test_") :]
    by_token = sorted(((i.replace("-", "_"), i) for i in ids), key=lambda p: -len(p[0]))
    found: list[str] = []
    while rest:
        for token, rid in by_token:
            if rest == token or rest.startswith(token + "_"):
                found.append(rid)
                rest = rest[len(token) + 1 :]
                break
        else:
            if found and rest.startswith("and_"):
                nxt = rest[4:]
                if any(nxt == t or nxt.startswith(t + "_") for t, _ in by_token):
                    rest = nxt
                    continue
            break
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class JUnitCase:
    classname: str
    name: str
    status: str  # passed | failed | error | skipped
    time: float
    message: str
    report: str


def read_junit(paths: Iterable[Path]) -> list[tuple[str, JUnitCase]]:
    """Test cases of JUnit XML files, as (report file, case)."""
    cases: list[tuple[str, JUnitCase]] = []
    for path in paths:
        root = ET.parse(path).getroot()
        for tc in root.iter("testcase"):
            status, message = "passed", ""
            for child in tc:
                if child.tag in ("failure", "error"):
                    status, message = (
                        "failed" if child.tag == "failure" else "error",
                        child.get("message", ""),
                    )
                    break
                if child.tag == "skipped":
                    xfail = "xfail" in (child.get("type", "") + child.get("message", ""))
                    status, message = ("xfailed" if xfail else "skipped"), child.get("message", "")
            cases.append(
                (
                    str(path),
                    JUnitCase(
                        tc.get("classname", ""),
                        tc.get("name", ""),
                        status,
                        float(tc.get("time", "0") or 0),
                        message[:300],
                        str(path),
                    ),
                )
            )
    return cases


def _test_file(classname: str, root: Path) -> tuple[str | None, str | None]:
    """(test file relative to root, class name) of a JUnit classname."""
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):
        candidate = root / Path(*parts[:cut]).with_suffix(".py")
        if candidate.is_file():
            cls = ".".join(parts[cut:]) or None
            return candidate.relative_to(root).as_posix(), cls
    return None, None


def _function_lines(path: Path) -> dict[str, tuple[int, int]]:
    """Line range of every function (``name`` and ``Class.name``) of a module."""
    out: dict[str, tuple[int, int]] = {}
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, OSError):
        return out

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                out[prefix + node.name] = (node.lineno, node.end_lineno or node.lineno)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, prefix + node.name + ".")

    visit(tree.body, "")
    return out


def testcase_items(
    junit_paths: Iterable[Path], root: Path, markers: list[Marker], ids: Collection[str]
) -> tuple[list[Item], dict[str, int]]:
    """Test evidence from JUnit, and per-id counts of skipped cases (not listed).

    A test case is evidence for the ids its function name carries
    (:func:`ids_in_test_name`) and for the ids of markers in its test file
    that cover its function (``scope=function`` on it, a range around it) or
    the whole file (``scope=file``; also applies to generated tests, such as
    ONNX backend tests, whose function is not in the file). A failed case
    that maps to no id is returned too, with empty ``ids`` (the gate fails).
    """
    by_file: dict[str, list[Marker]] = {}
    for m in markers:
        by_file.setdefault(m.path, []).append(m)
    functions: dict[str, dict[str, tuple[int, int]]] = {}
    items: list[Item] = []
    skipped: dict[str, int] = {}
    for report, case in read_junit(junit_paths):
        rel, cls = _test_file(case.classname, root)
        found = list(ids_in_test_name(case.name, ids))
        line: int | None = None
        if rel is not None:
            if rel not in functions:
                functions[rel] = _function_lines(root / rel)
            func = case.name.split("[", 1)[0]
            span = functions[rel].get(f"{cls}.{func}" if cls else func)
            line = span[0] if span else None
            for m in by_file.get(rel, []):
                if m.scope == "file" or (span is not None and m.covers(span[0])):
                    found.extend(m.ids)
        found = list(dict.fromkeys(found))
        ok = status_ok(case.status)
        if not found and ok is not False:
            continue
        if ok is None:
            for rid in found:
                skipped[rid] = skipped.get(rid, 0) + 1
            continue
        where = f"{rel}:{line}" if rel and line else (rel or case.classname)
        detail: dict[str, Any] = {"time": case.time, "report": _rel(Path(report), root)}
        if case.message:
            detail["message"] = case.message
        items.append(
            Item(
                "test",
                "pytest",
                where,
                tuple(found),
                case.status,
                ok,
                name=f"{case.classname}::{case.name}",
                detail=detail,
                files=tuple(f for f in (rel, _rel(Path(report), root)) if f),
            )
        )
    return items, skipped


# --- proofs ---------------------------------------------------------------


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def records_of(data: Any) -> list[dict[str, Any]]:
    """The list of records of a producer's JSON: a list, or a list under a usual key."""
    if isinstance(data, list):
        return [r for r in data if isinstance(r, dict)]
    if isinstance(data, dict):
        for key in ("goals", "functions", "records", "results", "checks", "cases", "items"):
            value = data.get(key)
            if isinstance(value, list):
                return [r for r in value if isinstance(r, dict)]
    return []


def _first(record: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if record.get(key) not in (None, ""):
            return record[key]
    return None


def _status(record: Mapping[str, Any]) -> str:
    value = _first(record, "status", "answer", "result", "verdict")
    if isinstance(value, dict):
        value = _first(value, "answer", "status")
    return str(value) if value is not None else "missing status"


_DECL = re.compile(
    r"^\s*(?:lemma|goal|axiom|predicate|function|val|let)"
    r"(?:\s+(?:rec|ghost|function|predicate|lemma|constant))*\s+([A-Za-z_][A-Za-z0-9_']*)"
)


def _declarations(lines: list[str]) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for number, text in enumerate(lines, start=1):
        m = _DECL.match(text)
        if m:
            out.append((m.group(1), number))
    return out


def _mlw_file(value: Any, root: Path) -> str | None:
    if not value:
        return None
    path = Path(str(value))
    candidates = [path] if path.is_absolute() else [root / path, root / "why3" / path.name]
    for c in candidates:
        if c.is_file():
            return _rel(c, root)
    return None


def map_goal(
    record: Mapping[str, Any], root: Path, markers_by_file: Mapping[str, list[Marker]]
) -> tuple[tuple[str, ...], str, int | None]:
    """Ids a Why3 goal record is evidence for, its file and line.

    Rule, first that applies: (1) the record's line (``line``, or ``loc`` /
    ``term.loc`` as ``[file, line, ...]``) lies in a marked range of its file;
    (2) the goal's declaration (``lemma``/``goal``/``let``... named as the
    goal, module prefix and ``'vc`` suffix dropped) overlaps a marked range,
    its extent running to the next declaration or the module's end; (3) the
    goal's module overlaps a marked range (a range around the module or in
    it; a Why3 Python-frontend file, such as ``oracle/integers.py``, is one module
    spanning the whole file). Otherwise the goal is unmapped. A ``#k`` suffix (the k-th goal of
    that name, as the proof driver numbers them) is ignored.
    """
    loc = record.get("loc")
    term = record.get("term")
    if loc is None and isinstance(term, dict):
        loc = term.get("loc")
    file_value = _first(record, "file", "path")
    line: int | None = None
    if isinstance(loc, list | tuple) and len(loc) >= 2:
        file_value = file_value or loc[0]
        line = int(loc[1]) if str(loc[1]).isdigit() else None
    elif isinstance(loc, dict):
        file_value = file_value or loc.get("file")
        line = loc.get("line") if isinstance(loc.get("line"), int) else None
    if isinstance(record.get("line"), int):
        line = record["line"]
    rel = _mlw_file(file_value, root)
    if rel is None:
        return (), str(file_value or "?"), line
    markers = markers_by_file.get(rel, [])

    def covering(first: int, last: int) -> tuple[str, ...]:
        hits = [rid for m in markers if m.start <= last and first <= m.end for rid in m.ids]
        return tuple(dict.fromkeys(hits))

    if line is not None:
        found = covering(line, line)
        if found:
            return found, rel, line
    lines = (root / rel).read_text(encoding="utf-8").splitlines()
    spans = module_spans(lines)
    module = _first(record, "module", "theory")
    goal = str(_first(record, "goal", "goal_name", "name") or "")
    if not goal and isinstance(term, dict):
        goal = str(term.get("goal_name") or "")
    if "." in goal and not module:
        module = goal.split(".", 1)[0]
    goal_name = goal.split("#", 1)[0].rsplit(".", 1)[-1].split("'", 1)[0]
    span = next(((s, e) for n, s, e in spans if n == module), None)
    if span is None and rel.endswith(".py"):
        span = (1, len(lines))  # a Why3 Python-frontend file is one module
    lo, hi = span if span else (1, len(lines))
    decls = [(n, ln) for n, ln in _declarations(lines) if lo <= ln <= hi]
    for index, (name, number) in enumerate(decls):
        if name == goal_name:
            end = decls[index + 1][1] - 1 if index + 1 < len(decls) else hi
            found = covering(number, end)
            if found:
                return found, rel, line or number
    if span is not None:
        return covering(*span), rel, line
    return (), rel, line


def producer_errors(data: Any, source: str, evidence_file: str) -> list[Item]:
    """Failures a producer recorded outside its records: ``errors``, ``ok: false``."""
    if not isinstance(data, dict):
        return []
    errors = data.get("errors")
    items = [
        Item("proof", source, evidence_file, (), "error", False, name=str(e)[:300])
        for e in (errors if isinstance(errors, list) else [])
    ]
    if data.get("ok") is False and not items:
        items.append(Item("proof", source, evidence_file, (), "ok: false", False))
    return items


def why3_items(path: Path, root: Path, markers: list[Marker]) -> tuple[list[Item], list[Item]]:
    """(mapped, unmapped) proof items of a ``why3.json``."""
    by_file: dict[str, list[Marker]] = {}
    for m in markers:
        by_file.setdefault(m.path, []).append(m)
    data = load_json(path)
    mapped: list[Item] = []
    unmapped: list[Item] = []
    records = records_of(data)
    evidence_file = _rel(path, root)
    if not records:
        unmapped.append(
            Item(
                "proof",
                "why3",
                evidence_file,
                (),
                "no goals recorded",
                False,
                files=(evidence_file,),
            )
        )
    unmapped += producer_errors(data, "why3", evidence_file)
    for record in records:
        ids, rel, line = map_goal(record, root, by_file)
        status = _status(record)
        prover = _first(record, "prover", "provers")
        time = _first(record, "time", "seconds")
        goal = str(_first(record, "goal", "goal_name", "name") or "?")
        module = _first(record, "module", "theory")
        item = Item(
            "proof",
            "why3",
            f"{rel}:{line}" if line else rel,
            ids,
            status,
            status_ok(status) is True,
            name=f"{module}.{goal}" if module and not goal.startswith(f"{module}.") else goal,
            detail={"prover": prover, "time": time, "evidence": evidence_file},
            files=(rel, evidence_file) if (root / rel).is_file() else (evidence_file,),
        )
        (mapped if ids else unmapped).append(item)
    return mapped, unmapped


def _function_markers(
    markers: list[Marker], function: str, file_rel: str | None
) -> tuple[str, ...]:
    name = function.split("(", 1)[0].rsplit(".", 1)[-1].rsplit(":", 1)[-1]
    hits = [
        rid
        for m in markers
        if m.name == name and m.scope in ("function", "class") and (file_rel in (None, m.path))
        for rid in m.ids
    ]
    return tuple(dict.fromkeys(hits))


def crosshair_items(
    path: Path, root: Path, markers: list[Marker], ids: Collection[str]
) -> tuple[list[Item], list[Item]]:
    """(mapped, unmapped) proof items of a ``crosshair.json``.

    A record names its ids directly (``requirements``/``ids``), or is mapped
    through the ``scope=function`` markers of the function it checked (in
    its ``file`` when given, else in any scanned source).
    """
    data = load_json(path)
    evidence_file = _rel(path, root)
    mapped: list[Item] = []
    unmapped: list[Item] = []
    records = records_of(data)
    if not records:
        unmapped.append(
            Item("proof", "crosshair", evidence_file, (), "no conditions recorded", False)
        )
    unmapped += producer_errors(data, "crosshair", evidence_file)
    for record in records:
        function = str(_first(record, "function", "target", "qualname", "name") or "?")
        file_value = _first(record, "file", "path", "module_file")
        file_rel = None
        if file_value:
            p = Path(str(file_value))
            p = p if p.is_absolute() else root / p
            file_rel = _rel(p, root) if p.is_file() else None
        direct = _first(record, "requirements", "ids", "requirement")
        if isinstance(direct, str):
            direct = [direct]
        found = tuple(r for r in (direct or []) if r in ids) or _function_markers(
            markers, function, file_rel
        )
        status = _status(record)
        line = record.get("line")
        where = file_rel or str(file_value or function)
        if file_rel is None and not isinstance(line, int):
            # No file in the record: locate the checked function by its marker.
            short = function.split("(", 1)[0].rsplit(".", 1)[-1].rsplit(":", 1)[-1]
            defs = [m for m in markers if m.name == short and m.scope in ("function", "class")]
            if defs:
                file_rel, line, where = defs[0].path, defs[0].start, defs[0].path
        item = Item(
            "proof",
            "crosshair",
            f"{where}:{line}" if isinstance(line, int) else where,
            found,
            status,
            status_ok(status) is True,
            name=function + (f" [{record['condition']}]" if record.get("condition") else ""),
            detail={"time": _first(record, "time", "seconds"), "evidence": evidence_file},
            files=tuple(f for f in (file_rel, evidence_file) if f),
        )
        (mapped if found else unmapped).append(item)
    return mapped, unmapped


def exhaustive_items(path: Path, root: Path, ids: Collection[str]) -> tuple[list[Item], list[Item]]:
    """(mapped, unmapped) proof items of an ``exhaustive.json``.

    A record names its ids (``requirements``/``ids``), or is mapped by its
    element type and mode(s): float types to F-FLOAT, integers with
    ``overflow="error"`` to F-CHECKED, other integers to F-WRAP; an integer
    record with ``modes: ["wrap", "error"]`` maps to both. A run with
    ``complete: false`` (fewer rows than every pair) is marked partial.
    """
    data = load_json(path)
    evidence_file = _rel(path, root)
    partial = isinstance(data, dict) and data.get("complete") is False
    mapped: list[Item] = []
    unmapped: list[Item] = []
    for record in records_of(data):
        direct = _first(record, "requirements", "ids", "requirement")
        if isinstance(direct, str):
            direct = [direct]
        found = tuple(r for r in (direct or []) if r in ids)
        dtype = str(_first(record, "dtype", "type", "element_type") or "")
        modes = record.get("modes")
        mode_list = [str(m) for m in modes] if isinstance(modes, list) and modes else []
        if not mode_list:
            mode_list = [str(_first(record, "overflow", "mode") or "wrap")]
        if not found and dtype:
            guesses = (
                ["F-FLOAT"]
                if "float" in dtype
                else ["F-CHECKED" if m == "error" else "F-WRAP" for m in mode_list]
            )
            found = tuple(r for r in dict.fromkeys(guesses) if r in ids)
        status = _status(record)
        if status == "missing status" and isinstance(record.get("mismatches"), int):
            status = "agree" if record["mismatches"] == 0 else f"{record['mismatches']} mismatches"
        mode = "/".join(mode_list) if "float" not in dtype else ""
        label = " ".join(str(x) for x in (dtype, mode, _first(record, "name", "check")) if x)
        detail: dict[str, Any] = {k: record[k] for k in ("count", "pairs", "time") if k in record}
        if partial:
            detail["complete"] = False
            label += " (partial run: not every pair)"
        item = Item(
            "proof",
            "exhaustive",
            evidence_file,
            found,
            status,
            status_ok(status) is True,
            name=label or None,
            detail=detail,
            files=(evidence_file,),
        )
        (mapped if found else unmapped).append(item)
    return mapped, unmapped
