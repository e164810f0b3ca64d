"""The outputs of the coverage tools as schema records: llvm-cov's JSON and lcov
exports (the C), coverage.py's JSON report and data (the Python, per requirement),
gcov's summaries (the kernel as gcc builds it)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.structural.scope import GCOV_RUN, PRODUCT


@dataclass
class _Tally:
    covered: int = 0
    total: int = 0

    def add(self, hit: bool) -> None:
        self.total += 1
        self.covered += int(hit)

    def count(self) -> schema.CoverageCount:
        return schema.CoverageCount(self.covered, self.total)


def _rel(path: str, root: Path, copy: Path | None = None) -> str:
    p = Path(path)
    for base in (copy, root):
        if base is not None and p.is_relative_to(base):
            return p.relative_to(base).as_posix()
    return path


def lcov_lines(text: str, root: Path) -> dict[str, dict[int, int]]:
    """Line -> execution count, per file (relative to ``root``), from
    ``llvm-cov export -format=lcov``."""
    out: dict[str, dict[int, int]] = {}
    current: dict[int, int] | None = None
    for line in text.splitlines():
        if line.startswith("SF:"):
            current = out.setdefault(_rel(line[3:], root), {})
        elif line.startswith("DA:") and current is not None:
            number, count = line[3:].split(",")[:2]
            current[int(number)] = max(current.get(int(number), 0), int(count))
    return out


def c_coverage(
    export: Mapping[str, Any],
    lines: Mapping[str, Mapping[int, int]],
    root: Path,
    files: Iterable[str],
) -> tuple[list[schema.CoverageFile], list[schema.CoverageGap]]:
    """Per-file and per-function figures and the gaps of ``files``, from llvm-cov's
    JSON export and its lcov lines.  A branch or MC/DC condition at one source
    location is merged over every function compiled from it (the ISA variants).

    An item is counted in the file it is written in: a condition of a macro of a
    measured header (``_native_isas.h``'s CPU tests) in that header, never at the
    same line numbers of the function's own file; an item of a header outside the
    product (Python's, numpy's) is not counted."""
    wanted = list(files)
    data = export["data"][0]
    # location -> [true taken, false taken]; location -> per-condition covered
    branches: dict[str, dict[tuple[int, int, int, int], list[bool]]] = {f: {} for f in wanted}
    mcdc: dict[str, dict[tuple[int, int, int, int], list[bool]]] = {f: {} for f in wanted}
    # function extent -> names (one per build of the source)
    extents: dict[str, dict[tuple[int, int], set[str]]] = {f: {} for f in wanted}
    # a header's items written in macros: line -> the functions expanding them
    expanded_in: dict[str, dict[int, set[str]]] = {f: {} for f in wanted}
    for fn in data["functions"]:
        names = [_rel(n, root) for n in fn["filenames"]]
        if not names or names[0] not in extents or not fn["regions"]:
            continue
        home = names[0]
        short = fn["name"].split(":")[-1]
        first = fn["regions"][0]
        extents[home].setdefault((first[0], first[2]), set()).add(short)
        written: list[tuple[str, tuple[int, int]]] = []  # each branch's file and start
        for b in fn["branches"]:
            # [line, col, end line, end col, true count, false count, file id, expanded id, kind]
            where = names[b[6]]
            written.append((where, (b[0], b[1])))
            if where not in branches:
                continue
            if where != home:
                expanded_in[where].setdefault(b[0], set()).add(short)
            seen = branches[where].setdefault((b[0], b[1], b[2], b[3]), [False, False])
            seen[0] |= b[4] > 0
            seen[1] |= b[5] > 0
        for m in fn.get("mcdc_records", []):
            # [line, col, end line, end col, expanded file id, kind, [condition covered ...]]:
            # no file id; the decision is in the file of the conditions (branches) it spans
            span = ((m[0], m[1]), (m[2], m[3]))
            inside = [w for w, at in written if span[0] <= at <= span[1]]
            where = max(dict.fromkeys(inside), key=inside.count) if inside else home
            if where not in mcdc:
                continue
            conds = m[6]
            seen = mcdc[where].setdefault((m[0], m[1], m[2], m[3]), [False] * len(conds))
            for i, hit in enumerate(conds[: len(seen)]):
                seen[i] |= bool(hit)
    files_out: list[schema.CoverageFile] = []
    gaps: list[schema.CoverageGap] = []
    for rel in wanted:
        if rel not in lines:
            continue
        per_line = lines[rel]
        functions = []
        for (first, last), builds in sorted(extents[rel].items()):
            name = min(builds, key=lambda n: (len(n), n))
            ln, br, mc = _Tally(), _Tally(), _Tally()
            for number, count in per_line.items():
                if first <= number <= last:
                    ln.add(count > 0)
            for loc, seen in branches[rel].items():
                if first <= loc[0] <= last:
                    br.add(seen[0])
                    br.add(seen[1])
            for loc, conds in mcdc[rel].items():
                if first <= loc[0] <= last:
                    for hit in conds:
                        mc.add(hit)
            functions.append(
                schema.CoverageFunction(name, first, ln.count(), br.count(), mc.count())
            )

        def owner(
            number: int,
            functions: list[schema.CoverageFunction] = functions,
            expanded: dict[int, set[str]] = expanded_in[rel],
        ) -> str:
            inside = [f for f in functions if f.line <= number]
            if inside:
                return inside[-1].name
            return min(expanded.get(number, {""}), key=lambda n: (len(n), n))

        ln, br, mc = _Tally(), _Tally(), _Tally()
        for number, count in sorted(per_line.items()):
            ln.add(count > 0)
            if count == 0:
                gaps.append(schema.CoverageGap(rel, owner(number), "line", number, ""))
        for loc, seen in sorted(branches[rel].items()):
            for outcome, hit in zip(("true", "false"), seen, strict=True):
                br.add(hit)
                if not hit:
                    what = f"col {loc[1]}: {outcome} never taken"
                    gaps.append(schema.CoverageGap(rel, owner(loc[0]), "branch", loc[0], what))
        for loc, conds in sorted(mcdc[rel].items()):
            for i, hit in enumerate(conds):
                mc.add(hit)
                if not hit:
                    what = f"col {loc[1]}: condition {i + 1} of {len(conds)} not shown independent"
                    gaps.append(schema.CoverageGap(rel, owner(loc[0]), "mcdc", loc[0], what))
        files_out.append(
            schema.CoverageFile(rel, "c", ln.count(), br.count(), mc.count(), functions)
        )
    return files_out, gaps


def python_coverage(
    report: Mapping[str, Any], root: Path, copy: Path
) -> tuple[list[schema.CoverageFile], list[schema.CoverageGap]]:
    """Per-file and per-function figures and the gaps, from ``coverage json``
    (files measured in the copy ``copy`` are named by their path in ``root``)."""
    files_out: list[schema.CoverageFile] = []
    gaps: list[schema.CoverageGap] = []
    for path, entry in sorted(report["files"].items()):
        rel = _rel(str((root / path) if not Path(path).is_absolute() else path), root, copy)
        rel = rel if rel.startswith(PRODUCT) else f"{PRODUCT}/{rel.split('sonnx_mul/', 1)[-1]}"
        functions = []
        owners: list[tuple[int, int, str]] = []
        for name, fn in entry.get("functions", {}).items():
            if not name:
                continue  # the module's top level
            statements = fn["executed_lines"] + fn["missing_lines"]
            if not statements:
                continue
            arcs = len(fn.get("executed_branches", [])) + len(fn.get("missing_branches", []))
            functions.append(
                schema.CoverageFunction(
                    name,
                    min(statements),
                    schema.CoverageCount(len(fn["executed_lines"]), len(statements)),
                    schema.CoverageCount(len(fn.get("executed_branches", [])), arcs),
                    None,
                )
            )
            owners.append((min(statements), max(statements), name))
        functions.sort(key=lambda f: f.line)

        def owner(number: int, owners: list[tuple[int, int, str]] = owners) -> str:
            inside = [o for o in owners if o[0] <= number <= o[1]]
            return min(inside, key=lambda o: o[1] - o[0])[2] if inside else ""

        for number in entry["missing_lines"]:
            gaps.append(schema.CoverageGap(rel, owner(number), "line", number, ""))
        for start, end in entry.get("missing_branches", []):
            what = f"to {end}" if end > 0 else "to exit"
            gaps.append(schema.CoverageGap(rel, owner(start), "branch", start, what))
        summary = entry["summary"]
        files_out.append(
            schema.CoverageFile(
                rel,
                "python",
                schema.CoverageCount(summary["covered_lines"], summary["num_statements"]),
                schema.CoverageCount(summary["covered_branches"], summary["num_branches"]),
                None,
                functions,
            )
        )
    return files_out, gaps


def python_by_requirement(
    data_file: Path,
    report: Mapping[str, Any],
    contexts_of: Mapping[str, list[str]],
    copy: Path,
) -> dict[str, schema.CoverageRequirement]:
    """Per id: the product's statements and branches covered by the tests carrying it."""
    from coverage import CoverageData

    data = CoverageData(basename=str(data_file))
    data.read()
    out: dict[str, schema.CoverageRequirement] = {}
    for rid, contexts in sorted(contexts_of.items()):
        data.set_query_contexts([f"^{re.escape(c)}$" for c in contexts] or ["^$nothing"])
        lines, branches = _Tally(), _Tally()
        for path, entry in report["files"].items():
            measured = (
                str(copy / path.split("src/", 1)[-1]) if not Path(path).is_absolute() else path
            )
            statements = set(entry["executed_lines"]) | set(entry["missing_lines"])
            arcs = {tuple(a) for a in entry.get("executed_branches", [])} | {
                tuple(a) for a in entry.get("missing_branches", [])
            }
            hit_lines = set(data.lines(measured) or ())
            hit_arcs = set(data.arcs(measured) or ())
            lines.covered += len(statements & hit_lines)
            lines.total += len(statements)
            branches.covered += len(arcs & hit_arcs)
            branches.total += len(arcs)
        out[rid] = schema.CoverageRequirement(len(contexts), lines.count(), branches.count())
    return out


def parse_gcov(text: str, root: Path) -> dict[str, schema.CoverageGcov]:
    """``gcov -b`` summaries: per file, lines executed and branches taken."""
    out: dict[str, schema.CoverageGcov] = {}
    name = ""
    counts: dict[str, schema.CoverageCount] = {}
    for line in text.splitlines():
        if line.startswith("File '"):
            name, counts = _rel(line[6:].rstrip("'"), root), {}
        found = re.match(r"(Lines executed|Taken at least once):([\d.]+)% of (\d+)", line)
        if found and name:
            total = int(found.group(3))
            covered = round(float(found.group(2)) * total / 100)
            counts[found.group(1)] = schema.CoverageCount(covered, total)
            if "Lines executed" in counts and "Taken at least once" in counts:
                out[name] = schema.CoverageGcov(
                    counts["Lines executed"], counts["Taken at least once"], GCOV_RUN
                )
                name = ""  # gcov's closing total of every file is no file's
    return out
