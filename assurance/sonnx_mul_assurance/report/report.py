"""The traceability report and its gate.

``build_report(repo_root, evidence_dir)`` collects, for every registry id,
its own evidence of four kinds and a verdict:

- ``spec``: top-level ids need a line of the normative SONNX text
  (``[R1]``, ``(C1)``, the formula for F); derived ids their ``Requirement``
  entry in the registry module. WhyML markers (``why3/*.mlw``) that name an
  id are listed too.
- ``code``: markers in ``src/`` and in the C kernel's sources (``native/``;
  see :mod:`sonnx_mul_assurance.report.markers`).
- ``test``: JUnit test cases mapped by name or marker (see
  :func:`sonnx_mul_assurance.report.evidence.testcase_items`), with pass/fail.
- ``proof``: the items of every evidence source of
  :data:`~sonnx_mul_assurance.report.protocol.SOURCES` (Why3 goals, CrossHair
  conditions, Frama-C WP goals by C function, MISRA checks by C file,
  exhaustive runs), mapped through markers.

Verdict of an id: ``"pass"`` when each kind has at least one passing item,
no item of the id failed, and every child (derived id) passes; otherwise the
reasons, joined by ``"; "``. Evidence does not flow between parent and
children: each id needs its own; failures roll up to the parent.
The gate fails (exit 1) when any id does not pass, the marker lint finds a
problem, some failed evidence maps to no id, or a required evidence file is
absent, off its schema or (``--require``) partial.
"""

from __future__ import annotations

import datetime as dt
import platform
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

from sonnx_mul.digest import package_files, sha256
from sonnx_mul_assurance.evidence import files, schema
from sonnx_mul_assurance.report import alignment, coverage, wg_classes
from sonnx_mul_assurance.report.evidence import Item, marker_items, registry_items, spec_text_items
from sonnx_mul_assurance.report.hashes import binaries, claim_files, why3_library
from sonnx_mul_assurance.report.markers import C_SUFFIXES, SCAN_DIRS, Marker, scan
from sonnx_mul_assurance.report.prose import load_wp_units, running_code
from sonnx_mul_assurance.report.protocol import (
    BY_KEY,
    PASS_RULES,
    SOURCES,
    Context,
    Reading,
    Source,
    claim_paths,
)
from sonnx_mul_assurance.report.trusted import as_json as trusted_json
from sonnx_mul_assurance.report.trusted import subject_of

SCHEMA = "sonnx-mul-traceability/1"
KINDS: tuple[str, ...] = ("spec", "code", "test", "proof")
SPEC_FILE = "docs/spec/sonnx_mul_profile.md"
REGISTRY_FILE = "src/sonnx_mul/requirements.py"
PARTIAL_MEANING = (
    "the exhaustive run covered only part of the pairs (complete: false, fewer --rows or "
    "--types, or results that do not hold every pair of int8, uint8, float16 and bfloat16): "
    "its records are listed, marked partial; a release gate (`--require exhaustive`) "
    "fails as if the file were absent"
)
PYTHON_PACKAGES: tuple[str, ...] = (
    "numpy",
    "onnx",
    "ml_dtypes",
    "onnxruntime",
    "crosshair-tool",
    "z3-solver",
    "pytest",
    "hypothesis",
    "strictdoc",
)
BINARIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("why3", ("--version",)),
    ("z3", ("--version",)),
    ("cvc4", ("--version",)),
    ("cvc5", ("--version",)),
    ("gappa", ("--version",)),
    ("gcc", ("--version",)),
    ("frama-c", ("-version",)),
)


class RequirementLike(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def statement(self) -> str: ...
    @property
    def parent(self) -> str | None: ...


def _default_registry() -> Mapping[str, RequirementLike]:
    from sonnx_mul.requirements import REGISTRY

    return REGISTRY


def _run(cmd: Sequence[str], cwd: Path | None = None, timeout: float = 10) -> str | None:
    try:
        done = subprocess.run(
            list(cmd), cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (done.stdout or done.stderr).strip()
    return text if done.returncode == 0 or text else None


def _first_version_line(text: str) -> str:
    for line in text.splitlines():
        if re.search(r"\d+\.\d+", line):
            return line.strip()
    return text.splitlines()[0].strip() if text else ""


def tool_versions(recorded: Mapping[str, Any] | None = None, probe: bool = True) -> dict[str, Any]:
    """Python and package versions, prover versions: those the evidence
    files record (``recorded``: source key -> its reading's ``tools``, shown as
    ``recorded_by_<key>``: why3.json's, coq.json's) and those probed now."""
    tools: dict[str, Any] = {
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": f"{platform.machine()} {platform.processor()}".strip(),
        "native_build": _native_build(),
    }
    for name in PYTHON_PACKAGES:
        try:
            tools[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    for key, value in (recorded or {}).items():
        tools[f"recorded_by_{key}"] = dict(value)
    if probe:
        venv_bin = Path(sys.executable).parent
        for binary, args in BINARIES:
            candidates = [binary] if binary != "z3" else [str(venv_bin / "z3"), "/usr/bin/z3"]
            for index, exe in enumerate(candidates):
                out = _run([exe, *args])
                if out:
                    key = binary if index == 0 else f"{binary} ({exe})"
                    tools[key] = _first_version_line(out)
    return tools


def _native_build() -> str:
    """The kernel sonnx_mul.mul runs, its compiler and exact compile command."""
    from sonnx_mul import kernel

    return f"{kernel.NAME}: {kernel.BUILD}; variant in use: {kernel.isa()}"


def native_isa() -> tuple[str | None, int]:
    """The ISA variant sonnx_mul.mul runs on this CPU and the streaming
    loop's threshold, from the built extension ((None, 0) without one)."""
    try:
        from sonnx_mul import _native, kernel
    except ImportError:
        return None, 0
    return kernel.isa(), int(_native.STREAM8_MIN_ELEMENTS)


def git_state(root: Path) -> dict[str, Any]:
    commit = _run(["git", "rev-parse", "HEAD"], cwd=root)
    status = _run(["git", "status", "--porcelain"], cwd=root)
    # "XY PATH" lines; _run strips the first line's leading blank, so split, not slice
    changed = [line.split(None, 1)[-1] for line in (status or "").splitlines() if line.strip()]
    return {
        "commit": commit if commit and re.fullmatch(r"[0-9a-f]{40}", commit) else None,
        "dirty": bool(changed) if status is not None else None,
        "changed": changed[:50],
    }


def semantics() -> dict[str, Any]:
    """The options the evidence covers: opsets, overflow modes, element types."""
    from sonnx_mul.dtypes import (
        ALL_TYPES,
        DEFAULT_OPSET,
        MAX_KNOWN_OPSET,
        MUL_VERSIONS,
        allowed_types,
    )
    from sonnx_mul.validation import OVERFLOW_MODES

    return {
        "mul_versions": list(MUL_VERSIONS),
        "opsets": [1, MAX_KNOWN_OPSET],
        "default_opset": DEFAULT_OPSET,
        "overflow_modes": list(OVERFLOW_MODES),
        "element_types": [t.onnx_name for t in ALL_TYPES],
        "types_by_mul_version": {
            str(v): [t.onnx_name for t in allowed_types(v)] for v in MUL_VERSIONS
        },
    }


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _verdicts(
    registry: Mapping[str, RequirementLike], evidence: Mapping[str, Mapping[str, list[Item]]]
) -> dict[str, str]:
    own: dict[str, list[str]] = {}
    for rid in registry:
        reasons: list[str] = []
        for kind in KINDS:
            items = evidence[rid][kind]
            if not any(i.ok is True for i in items):
                reasons.append(f"no {kind} evidence")
            failed = sum(1 for i in items if i.ok is False)
            if failed:
                noun = {"test": "test", "proof": "proof check"}.get(kind, f"{kind} item")
                reasons.append(f"{_count(failed, noun)} failed")
        own[rid] = reasons
    verdicts: dict[str, str] = {}

    def verdict(rid: str, seen: tuple[str, ...] = ()) -> str:
        if rid in verdicts:
            return verdicts[rid]
        reasons = list(own[rid])
        for child, req in registry.items():
            if req.parent == rid and child not in seen and verdict(child, (*seen, rid)) != "pass":
                reasons.append(f"child {child} does not pass")
        verdicts[rid] = "pass" if not reasons else "; ".join(reasons)
        return verdicts[rid]

    for rid in registry:
        verdict(rid)
    return verdicts


def build_report(
    repo_root: Path | str,
    evidence_dir: Path | str | None = None,
    *,
    registry: Mapping[str, RequirementLike] | None = None,
    spec_file: Path | str | None = None,
    registry_file: Path | str | None = None,
    scan_dirs: Iterable[str] = SCAN_DIRS,
    probe_tools: bool = True,
    require: Iterable[str] = (),
    same_tools: bool = False,
) -> dict[str, Any]:
    """The traceability report as a JSON-ready dict (see the module docstring).

    Everything is injectable for tests: the registry (any mapping id ->
    object with ``title``, ``statement``, ``parent``), the spec and registry
    files, the directories scanned for markers; ``evidence_dir`` defaults to
    ``repo_root/proofs/out``. ``require`` names optional evidence (keys of
    ``protocol.BY_KEY``, e.g. ``"exhaustive"``) whose absence fails the gate.
    ``same_tools`` (the release gate) probes the tools each evidence file
    records (``Source.probe``) and fails the gate on any other version.

    Every evidence file that records its inputs and goals is refused (a gate
    problem naming the file) when they are not this tree's: a file changed
    since its run, a manifest goal or unit absent, a goal recorded twice
    (``Reading.refused``).
    """
    required = set(require)
    unknown_keys = required - set(BY_KEY)
    if unknown_keys:
        raise ValueError(f"unknown evidence kinds {sorted(unknown_keys)}; known: {list(BY_KEY)}")
    root = Path(repo_root).resolve()
    edir = Path(evidence_dir) if evidence_dir is not None else root / "proofs" / "out"
    edir = edir if edir.is_absolute() else (Path.cwd() / edir)
    reg = registry if registry is not None else _default_registry()
    ids = list(reg)
    spec_path = Path(spec_file) if spec_file else root / SPEC_FILE
    registry_path = Path(registry_file) if registry_file else root / REGISTRY_FILE

    markers, problems = scan(root, set(ids), scan_dirs)
    wp_units = load_wp_units(root)
    whyml = [m for m in markers if m.path.endswith(".mlw")]
    code = [
        m
        for m in markers
        if (m.path.startswith("src/") and not m.path.endswith(".mlw"))
        or m.path.endswith(C_SUFFIXES)
    ]

    top_level = [rid for rid in ids if reg[rid].parent is None]
    items: list[Item] = []
    items += spec_text_items(spec_path, root, top_level)
    items += [i for i in registry_items(registry_path, root, set(ids)) if reg[i.ids[0]].parent]
    items += marker_items(whyml, "spec", "whyml")
    items += marker_items(code, "code", "marker")

    unmapped: list[Item] = []
    evidence_files: dict[str, dict[str, Any]] = {}
    recorded_tools: dict[str, Any] = {}
    skipped: dict[str, int] = {}
    context = Context(root, edir, markers, frozenset(ids))
    for source in SOURCES:
        entry, reading = _read_source(source, context, source.key in required, same_tools)
        evidence_files[source.key] = entry
        if reading is None:
            continue
        items += reading.mapped
        unmapped += reading.unmapped
        skipped = {**skipped, **reading.skipped}
        if reading.tools:
            recorded_tools[source.key] = reading.tools

    for item in items + unmapped:
        if item.kind == "proof":
            declared = BY_KEY[item.source].subject if item.source in BY_KEY else None
            item.detail["about"] = declared or subject_of(item.source, item.location)
    per_id: dict[str, dict[str, list[Item]]] = {rid: {k: [] for k in KINDS} for rid in ids}
    for item in items:
        for rid in item.ids:
            if rid in per_id:
                per_id[rid][item.kind].append(item)
    verdicts = _verdicts(reg, per_id)

    gate: list[str] = [f"{rid}: {verdicts[rid]}" for rid in ids if verdicts[rid] != "pass"]
    gate += [f"marker lint: {p}" for p in problems]
    gate += [
        f"unmapped failed {i.source} evidence: {i.name or ''} at {i.location} ({i.status})"
        for i in unmapped
        if i.ok is False
    ]
    gate += [f["problem"] for f in evidence_files.values() if "problem" in f]
    gate += [line for f in evidence_files.values() for line in f.get("refused", [])]
    # the SONNX working group's classes per E_MUL tag, from the suite's results
    wg_entry = wg_classes.section(wg_classes.junit_cases(edir))
    gate += wg_classes.gate_problems(wg_entry)

    files: set[str] = {f for i in items + unmapped for f in i.files}
    files |= {_display(spec_path, root), _display(registry_path, root)}
    files |= {str(f["path"]) for f in evidence_files.values() if f["present"]}
    artifacts = claim_files(root, claim_paths())
    for rel in sorted(files - set(artifacts)):
        p = Path(rel) if Path(rel).is_absolute() else root / rel
        if p.is_file():
            artifacts[rel] = sha256(p)
    artifacts = dict(sorted(artifacts.items()))
    absent = [k for k, f in evidence_files.items() if f["status"] != "present"]

    def not_there(key: str) -> str:
        f = evidence_files[key]
        return str(f["path"]) + ("" if f["status"] == "absent" else f" ({f['status']})")

    requirements: dict[str, Any] = {}
    for rid in ids:
        req = reg[rid]
        requirements[rid] = {
            "title": req.title,
            "statement": req.statement,
            "parent": req.parent,
            "children": [c for c in ids if reg[c].parent == rid],
            "verdict": verdicts[rid],
            "evidence": {k: [i.as_json() for i in per_id[rid][k]] for k in KINDS},
            "skipped_tests": skipped.get(rid, 0),
            "absent_evidence": [not_there(k) for k in absent if rid in BY_KEY[k].expected_by],
            "proof_subjects": _subject_counts(per_id[rid]["proof"]),
            "sonnx": list(alignment.tags(rid)),
            "sonnx_alignment": _alignment_of(rid),
        }
    passed = not gate
    coverage_entry = coverage.section(edir, root)
    trusted = trusted_json(wp_units)
    # the A-7 structural coverage row says what this run measured
    a7 = asdict(coverage.objective(coverage_entry))
    trusted["objectives"] = [
        a7 if o["standard"] == coverage.STANDARD else o for o in trusted["objectives"]
    ]
    return {
        "schema": SCHEMA,
        "date": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "verdict": "pass" if passed else f"{_count(len(gate), 'problem')}",
        "gate": {"passed": passed, "problems": gate},
        "requirements": requirements,
        "lint": [str(p) for p in problems],
        "unmapped": [i.as_json() for i in unmapped],
        "evidence_files": evidence_files,
        "evidence_absent": [not_there(k) for k in absent],
        "required_evidence": sorted(k for k, f in evidence_files.items() if f["required"]),
        "running_code": running_code(wp_units, *native_isa()),
        "tools": tool_versions(recorded_tools, probe_tools),
        "binaries": binaries(root, probe_tools),
        "why3_library": why3_library(root),
        "git": git_state(root),
        "semantics": semantics(),
        "artifacts": artifacts,
        "package": {
            "name": "sonnx_mul",
            "source": "src/sonnx_mul",
            "files": package_files(root / "src" / "sonnx_mul")
            if (root / "src" / "sonnx_mul").is_dir()
            else {},
            # The verifier lives outside the package and cannot check itself: its
            # hash is recorded for the auditor (and compared by verify-install).
            "verifier": {
                "file": "src/sonnx_mul_verify.py",
                "sha256": sha256(root / "src" / "sonnx_mul_verify.py"),
            }
            if (root / "src" / "sonnx_mul_verify.py").is_file()
            else None,
        },
        "sonnx": _sonnx_alignment(),
        "wg_classes": wg_entry,
        # the platform, compiler and floating-point mode the suite's run recorded
        "test_environment": _test_environment(edir),
        "coverage": coverage_entry,
        **trusted,
        "rules": {
            "verdict": "pass iff the id has passing spec, code, test and proof evidence of "
            "its own, none of its evidence failed, and every child passes",
            "pass_rules": dict(PASS_RULES),
        },
    }


def _read_source(
    source: Source, context: Context, require: bool, same_tools: bool = False
) -> tuple[dict[str, Any], Reading | None]:
    """The ``evidence_files`` entry of ``source`` and what its reader read
    (None: absent or off its schema, which the entry's ``problem`` says when
    the gate needs the file).  What the reader refuses (and, with
    ``same_tools``, every tool version the file records that is not the
    installed one) goes to the entry's ``refused``: gate problems whether or
    not the file is required, since a file that is read is evidence."""
    root = context.root
    path = context.evidence_dir / source.file
    shown = _display(path, root)
    needed = source.required or require
    why = "" if source.required else f" (--require {source.key})"
    entry: dict[str, Any] = {
        "path": shown,
        "present": path.is_file(),
        "status": "present" if path.is_file() else "absent",
        "required": needed,
        "schema": source.schema.__name__ if source.schema else "JUnit XML",
        "pass_rule": source.pass_rule,
    }
    if not path.is_file():
        entry["meaning"] = source.meaning(root)
        if needed:
            entry["problem"] = f"evidence file {shown} is missing{why}"
        return entry, None
    try:
        reading = source.read(path, context)
    except (ValueError, OSError, SyntaxError) as exc:  # SchemaError, JSONDecodeError, ParseError
        # off its schema is a gate problem whether or not the file is required
        entry["problem"] = f"cannot read {shown}: {exc}"
        entry["status"] = "unreadable"
        return entry, None
    if reading.origin is not None:
        entry["origin"] = reading.origin
    refused = list(reading.refused)
    if same_tools and source.probe is not None:
        refused += _other_tools(shown, reading.versions, source.probe(root))
    if refused:
        entry["status"] = "refused"
        entry["refused"] = refused
    if reading.partial is not None:
        entry["status"] = "partial"
        entry["meaning"] = PARTIAL_MEANING
        if needed:
            entry["problem"] = f"evidence file {shown} is a partial run ({reading.partial}){why}"
    return entry, reading


def _other_tools(shown: str, recorded: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """Release refusals: each tool whose recorded version is not the one installed now."""
    if not recorded:
        return [f"evidence file {shown} records no tool versions"]
    return [
        f"evidence file {shown} was made with {tool} {recorded.get(tool, '(not recorded)')!r};"
        f" installed now: {now.get(tool, '(not probed)')!r}"
        for tool in sorted(set(recorded) | set(now))
        if recorded.get(tool) != now.get(tool)
    ]


def _subject_counts(items: Sequence[Item]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        key = str(item.detail.get("about", "unknown"))
        counts[key] = counts.get(key, 0) + 1
    return counts


def _alignment_of(req_id: str) -> dict[str, str]:
    """The requirement's alignment with the newest SONNX text."""
    return {k: str(v) for k, v in asdict(alignment.alignment(req_id)).items()}


def _sonnx_alignment() -> dict[str, Any]:
    return {
        "source": dict(alignment.SONNX_SOURCE),
        "tags": dict(alignment.SONNX_TAGS),
        "decisions": [asdict(d) for d in alignment.SONNX_DECISIONS],
    }


def _test_environment(edir: Path) -> dict[str, Any] | None:
    env = schema.junit_environment(edir / files.PYTEST)
    return asdict(env) if env is not None else None


def _display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


def write_report(
    report: Mapping[str, Any], out_dir: Path | str, root: Path | str | None = None
) -> list[Path]:
    """Write ``traceability.json``, ``.md`` and ``.html`` into ``out_dir``.

    With ``root`` (the repository), also write ``out_dir/sources/``: rendered
    copies of every file the report names, which the HTML links to.
    """
    import json

    from .render import linked_files, render_html, render_markdown
    from .sources import write_copies

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "traceability.json", out / "traceability.md", out / "traceability.html"]
    copied: set[str] = set()
    if root is not None:
        copied = write_copies(Path(root), out, linked_files(report), paths[2].name)
    paths[0].write_text(json.dumps(report, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    paths[1].write_text(render_markdown(report), encoding="utf-8")
    paths[2].write_text(render_html(report, copied), encoding="utf-8")
    return paths


def markers_of(root: Path) -> list[Marker]:
    """All markers of the tree (for tools that want the raw list)."""
    return scan(root)[0]
