"""Evidence readers: spec text, registry, JUnit XML, Why3, Coq, CrossHair, exhaustive runs.

Every reader returns :class:`Item` objects tagged with the requirement ids
they are evidence for. ``ok`` is True (passed, proved), False (anything
else that ran: failed, error, timeout, unknown, ...) or None (neutral:
skipped, xfail; not evidence, not failure).  The files the pipeline writes
are read through :mod:`sonnx_mul_assurance.evidence.schema`: fields, never
guessed keys, and each record's own ``ok``; a file that does not match its
schema raises :class:`~sonnx_mul_assurance.evidence.schema.SchemaError`.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.report.markers import Marker
from sonnx_mul_assurance.why3 import coq, whyml


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


def _test_file(classname: str, root: Path) -> tuple[str | None, str | None]:
    """(test file relative to root, class name) of a JUnit classname."""
    parts = [p for p in classname.split(".") if p]  # "" for a collection error
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


def _by_file(markers: list[Marker]) -> dict[str, list[Marker]]:
    """The markers of each file (the test files and theories an item is looked up in)."""
    by_file: dict[str, list[Marker]] = {}
    for m in markers:
        by_file.setdefault(m.path, []).append(m)
    return by_file


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
    by_file = _by_file(markers)
    functions: dict[str, dict[str, tuple[int, int]]] = {}
    items: list[Item] = []
    skipped: dict[str, int] = {}
    for case in schema.read_junit(junit_paths):
        report = case.report
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
        ok = case.ok
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


def map_goal(
    goal: schema.Why3Goal | schema.CoqGoal,
    root: Path,
    markers_by_file: Mapping[str, list[Marker]],
) -> tuple[tuple[str, ...], str, int | None]:
    """Ids a Why3 goal (proved by a prover of why3.json, or in Coq) is
    evidence for, its file and the line it maps through.

    Rule, first that applies: (1) the goal's declaration (``lemma``/``goal``/
    ``let``... named as the goal, ``'vc`` and ``#k`` dropped) in its module
    overlaps a marked range (:mod:`sonnx_mul_assurance.why3.whyml` gives the
    spans); (2) the goal's module overlaps a marked range (a Why3
    Python-frontend file, such as ``oracle/integers.py``, is one module
    spanning the whole file). Otherwise the goal is unmapped.
    """
    rel = goal.file
    path = root / rel
    if not path.is_file():
        return (), rel, None
    markers = markers_by_file.get(rel, [])

    def covering(first: int, last: int) -> tuple[str, ...]:
        hits = [rid for m in markers if m.start <= last and first <= m.end for rid in m.ids]
        return tuple(dict.fromkeys(hits))

    text = path.read_text(encoding="utf-8")
    module = next((m for m in whyml.parse(text) if m.name == goal.module), None)
    if module is None:
        if rel.endswith(".py"):
            return covering(1, len(text.splitlines())), rel, None
        return (), rel, None
    name = goal.goal.split("#", 1)[0].split("'", 1)[0]
    decl = module.declaration(name)
    if decl is not None:
        found = covering(decl.start, decl.end)
        if found:
            return found, rel, decl.start
    return covering(module.start, module.end), rel, None


def _producer_failed(source: str, evidence_file: str, errors: list[str]) -> list[Item]:
    return [Item("proof", source, evidence_file, (), "error", False, name=e[:300]) for e in errors]


def why3_items(path: Path, root: Path, markers: list[Marker]) -> tuple[list[Item], list[Item]]:
    """(mapped, unmapped) proof items of a ``why3.json``; SchemaError if malformed."""
    by_file = _by_file(markers)
    data = schema.load(schema.Why3Evidence, path)
    evidence_file = _rel(path, root)
    mapped: list[Item] = []
    unmapped = _producer_failed("why3", evidence_file, data.errors)
    if not data.ok and not data.errors:
        unmapped.append(Item("proof", "why3", evidence_file, (), "ok: false", False))
    if not data.goals:
        unmapped.append(
            Item("proof", "why3", evidence_file, (), "no goals recorded", False,
                 files=(evidence_file,))
        )  # fmt: skip
    for goal in data.goals:
        ids, rel, line = map_goal(goal, root, by_file)
        item = Item(
            "proof",
            "why3",
            f"{rel}:{line}" if line else rel,
            ids,
            goal.status,
            goal.ok,
            name=f"{goal.module}.{goal.goal}",
            detail={"prover": goal.prover, "time": goal.time, "evidence": evidence_file},
            files=(rel, evidence_file) if (root / rel).is_file() else (evidence_file,),
        )
        (mapped if ids else unmapped).append(item)
    return mapped, unmapped


COQ_TOOLS = ("coqc", "flocq")
"""The tools of coq.json's ``tool_versions`` a Coq item names as its prover:
the proof checker and the library whose ``round`` the theorems are about."""


def coq_items(path: Path, root: Path, markers: list[Marker]) -> tuple[list[Item], list[Item]]:
    """(mapped, unmapped) proof items of a ``coq.json``, one per goal, mapped
    as :func:`map_goal` maps Why3's (the lemma's declaration in its module of
    the theory); SchemaError if malformed.  An item names the committed proof
    file and the coqc and Flocq versions; a record of no goal is a failed item."""
    by_file = _by_file(markers)
    data = schema.load(schema.CoqEvidence, path)
    evidence_file = _rel(path, root)
    mapped: list[Item] = []
    unmapped: list[Item] = []
    if not data.goals:
        unmapped.append(
            Item("proof", "coq", evidence_file, (), "no goals recorded", False,
                 files=(evidence_file,))
        )  # fmt: skip
    prover = "; ".join(data.tool_versions.get(k, f"{k} not recorded") for k in COQ_TOOLS)
    for goal in data.goals:
        ids, rel, line = map_goal(goal, root, by_file)
        proof = (coq.PROOF_DIR / goal.proof).as_posix()
        detail: dict[str, Any] = {"prover": prover, "proof": proof, "evidence": evidence_file}
        if goal.errors:
            detail["errors"] = [e[:300] for e in goal.errors[:5]]
        item = Item(
            "proof",
            "coq",
            f"{rel}:{line}" if line else rel,
            ids,
            "proved (coqc)" if goal.ok else "not proved",
            goal.ok,
            name=f"{goal.module}.{goal.goal}" if goal.module else goal.goal,
            detail=detail,
            files=tuple(
                f for f in (rel, proof, evidence_file) if f == evidence_file or (root / f).is_file()
            ),
        )
        (mapped if ids else unmapped).append(item)
    return mapped, unmapped


def function_markers(markers: list[Marker], function: str, source: str = "") -> list[Marker]:
    """The function/class markers of ``function`` (in the file ``source`` when
    given: two files may define functions of the same name)."""
    name = function.split("(", 1)[0].rsplit(".", 1)[-1].rsplit(":", 1)[-1]
    return [
        m
        for m in markers
        if m.name == name and m.scope in ("function", "class") and (not source or m.path == source)
    ]


def crosshair_items(
    path: Path, root: Path, markers: list[Marker], ids: Collection[str]
) -> tuple[list[Item], list[Item]]:
    """(mapped, unmapped) proof items of a ``crosshair.json``; SchemaError if malformed.

    A function is mapped through the ``scope=function`` markers of the
    function it checked, in the file the run names (``source``), and located
    at the first of them.
    """
    data = schema.load(schema.CrossHairEvidence, path)
    evidence_file = _rel(path, root)
    mapped: list[Item] = []
    unmapped: list[Item] = []
    if not data.functions:
        unmapped.append(
            Item("proof", "crosshair", evidence_file, (), "no conditions recorded", False)
        )
    if not data.passed and all(f.ok for f in data.functions):
        unmapped.append(Item("proof", "crosshair", evidence_file, (), "passed: false", False))
    for function in data.functions:
        defs = function_markers(markers, function.function, data.source)
        found = tuple(dict.fromkeys(r for m in defs for r in m.ids if r in ids))
        where = f"{defs[0].path}:{defs[0].start}" if defs else function.function
        item = Item(
            "proof",
            "crosshair",
            where,
            found,
            function.status,
            function.ok,
            name=function.function,
            detail={"time": function.time, "evidence": evidence_file},
            files=tuple(f for f in (defs[0].path if defs else None, evidence_file) if f),
        )
        (mapped if found else unmapped).append(item)
    return mapped, unmapped


def exhaustive_items(path: Path, root: Path, ids: Collection[str]) -> tuple[list[Item], list[Item]]:
    """(mapped, unmapped) proof items of an ``exhaustive.json``; SchemaError if malformed.

    A result is evidence for the ids it names (``requirements``); a run with
    ``complete: false`` (fewer rows than every pair) is marked partial.
    """
    data = schema.load(schema.ExhaustiveEvidence, path)
    evidence_file = _rel(path, root)
    mapped: list[Item] = []
    unmapped: list[Item] = []
    for result in data.results:
        found = tuple(r for r in dict.fromkeys(result.requirements) if r in ids)
        status = "agree" if result.ok else f"{result.mismatches} mismatches"
        modes = "/".join(result.modes or [])
        label = " ".join(x for x in (result.type, modes) if x)
        detail: dict[str, Any] = {"pairs": result.pairs, "time": result.time}
        if not data.complete or schema.exhaustive_gap(result) is not None:
            detail["complete"] = False
            label += " (partial run: not every pair)"
        item = Item(
            "proof",
            "exhaustive",
            evidence_file,
            found,
            status,
            result.ok,
            name=label,
            detail=detail,
            files=(evidence_file,),
        )
        (mapped if found else unmapped).append(item)
    return mapped, unmapped
