"""``python -m sonnx_mul_assurance.structural rekey`` on small data: a C file in a
git repository of its own, edited after its exemptions were written, the gaps a
measure of the edited file would report, and the exemption file.  A stale
exemption is carried only to the gap that is its item moved (same file,
function, kind, ``what`` but its column, and the line's text at the old
revision); a changed line, two identical candidate lines, and a gap no
exemption names are left for a person, and nothing is written for them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.structural.__main__ import main
from sonnx_mul_assurance.structural.gate import gate_problems
from sonnx_mul_assurance.structural.rekey import rekey, without_column
from sonnx_mul_assurance.structural.scope import EXEMPTIONS, OUT, Kind

SOURCE = "k.c"

OLD = """\
#include <stdlib.h>
int f(int x) {
    if (x > 0) {
        return 1;
    }
    return 0;
}
int g(int x) {
    if (x < 0)
        return -1;
    if (x > 9)
        return -1;
    return 0;
}
"""
"""The file as the exemptions were written against it (line numbers are below)."""

SHIFT = 2
INCLUDES = "#include <stdint.h>\n#include <string.h>\n"
"""Two lines added after the first: every later line moves down by :data:`SHIFT`."""


def shifted(text: str) -> str:
    first, rest = text.split("\n", 1)
    return f"{first}\n{INCLUDES}{rest}"


REASON = "a reason a person wrote, which must not be typed again"


def _exemption(function: str, kind: Kind, line: int, what: str = "") -> schema.CoverageExemption:
    return schema.CoverageExemption(
        SOURCE,
        function,
        kind,
        line,
        what,
        "defensive",
        f"{REASON} ({function}:{line})",
    )


def _gap(function: str, kind: Kind, line: int, what: str = "") -> schema.CoverageGap:
    return schema.CoverageGap(SOURCE, function, kind, line, what)


def _git(root: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(
        ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid",
         "-c", "commit.gpgsign=false", *args],
        cwd=root, env=env, check=True, capture_output=True,
    )  # fmt: skip


MEASURED = schema.CoverageFile(
    SOURCE,
    "c",
    schema.CoverageCount(8, 10),
    schema.CoverageCount(6, 8),
    schema.CoverageCount(2, 4),
    [],
)
"""The measured file (its figures play no part in rekey)."""


def _tree(
    tmp_path: Path,
    new: str,
    gaps: list[schema.CoverageGap],
    exemptions: list[schema.CoverageExemption],
) -> Path:
    """A repository whose HEAD holds :data:`OLD`, edited to ``new`` in its work tree,
    with the measured ``gaps`` and the ``exemptions`` written against HEAD."""
    root = tmp_path / "tree"
    root.mkdir()
    _git(root, "init", "-q")
    (root / SOURCE).write_text(OLD)
    _git(root, "add", SOURCE)
    _git(root, "commit", "-q", "-m", "old")
    (root / SOURCE).write_text(new)
    evidence = schema.CoverageEvidence(
        tools={}, build="test", tests="test", isa_variants=["portable"], variant_tests="",
        harnesses=[], files=[MEASURED], gaps=gaps, requirements={}, seconds=0.0, timings={},
        errors=[],
    )  # fmt: skip
    schema.dump(evidence, root / OUT)
    schema.dump(schema.CoverageExemptions(1, exemptions), root / EXEMPTIONS)
    return root


def _listed(root: Path) -> list[schema.CoverageExemption]:
    return schema.load(schema.CoverageExemptions, root / EXEMPTIONS).exemptions


def _gaps(root: Path) -> list[schema.CoverageGap]:
    return schema.load(schema.CoverageEvidence, root / OUT).gaps


def test_a_shifted_line_keeps_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exemptions = [
        _exemption("f", "branch", 3, "col 9: true never taken"),
        _exemption("f", "line", 4),
    ]
    gaps = [
        _gap("f", "branch", 3 + SHIFT, "col 9: true never taken"),
        _gap("f", "line", 4 + SHIFT),
    ]
    root = _tree(tmp_path, shifted(OLD), gaps, exemptions)
    assert gate_problems(schema.load(schema.CoverageEvidence, root / OUT), exemptions)
    assert rekey(root) == 0
    carried = _listed(root)
    assert carried == [
        schema.CoverageExemption(
            e.file, e.function, e.kind, e.line + SHIFT, e.what, e.why, e.reason
        )
        for e in exemptions
    ]
    evidence = schema.load(schema.CoverageEvidence, root / OUT)
    assert gate_problems(evidence, carried) == []  # the gate passes again
    out = capsys.readouterr().out
    assert f"carried: {SOURCE}:4 (f) line -> line {4 + SHIFT}" in out
    assert "2 exemption(s) carried" in out and "0 stale exemption(s), 0 unlisted gap(s)" in out


def test_two_conditions_of_one_line_are_carried_each_to_its_column(tmp_path: Path) -> None:
    """Two gaps differing only in their column on a moved line: the same text keeps
    the columns, so each exemption goes to the gap of its own column."""
    exemptions = [
        _exemption("g", "branch", 9, "col 9: true never taken"),
        _exemption("g", "branch", 9, "col 13: true never taken"),
    ]
    gaps = [_gap("g", "branch", 9 + SHIFT, e.what) for e in exemptions]
    root = _tree(tmp_path, shifted(OLD), gaps, exemptions)
    assert rekey(root) == 0
    assert [(e.line, e.what) for e in _listed(root)] == [(9 + SHIFT, e.what) for e in exemptions]


def test_a_changed_line_is_not_carried(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exemptions = [_exemption("f", "line", 4)]
    new = shifted(OLD).replace("return 1;", "return 2;")
    gaps = [_gap("f", "line", 4 + SHIFT)]
    root = _tree(tmp_path, new, gaps, exemptions)
    before = (root / EXEMPTIONS).read_bytes()
    assert rekey(root) == 1
    assert (root / EXEMPTIONS).read_bytes() == before  # nothing written, nothing deleted
    out = capsys.readouterr().out
    assert f"left stale: {SOURCE}:4 (f) line: no unlisted gap is this item moved" in out
    assert f"left unlisted: {SOURCE}:{4 + SHIFT} (f) line" in out


def test_two_identical_candidate_lines_are_ambiguous(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``return -1;`` at lines 10 and 12 of g: which one the exemption named is not known."""
    exemptions = [_exemption("g", "line", 10)]
    gaps = [_gap("g", "line", 10 + SHIFT), _gap("g", "line", 12 + SHIFT)]
    root = _tree(tmp_path, shifted(OLD), gaps, exemptions)
    assert rekey(root) == 1
    assert _listed(root) == exemptions
    out = capsys.readouterr().out
    assert f"ambiguous: 2 moved gaps match (lines {10 + SHIFT}, {12 + SHIFT})" in out


def test_a_gap_two_stale_exemptions_match_is_not_carried(tmp_path: Path) -> None:
    """Lines 10 and 12 both exempted, only one still a gap: neither is carried."""
    exemptions = [_exemption("g", "line", 10), _exemption("g", "line", 12)]
    gaps = [_gap("g", "line", 12 + SHIFT)]
    root = _tree(tmp_path, shifted(OLD), gaps, exemptions)
    assert rekey(root) == 1
    assert _listed(root) == exemptions


def test_a_gap_with_no_exemption_stays_unlisted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exemptions = [_exemption("f", "line", 4)]
    unexempted = _gap("g", "line", 13 + SHIFT)
    gaps = [_gap("f", "line", 4 + SHIFT), unexempted]
    root = _tree(tmp_path, shifted(OLD), gaps, exemptions)
    assert rekey(root) == 1
    assert [(e.function, e.line) for e in _listed(root)] == [("f", 4 + SHIFT)]  # none invented
    out = capsys.readouterr().out
    assert f"left unlisted: {SOURCE}:{13 + SHIFT} (g) line" in out
    assert "1 exemption(s) carried" in out and "1 unlisted gap(s)" in out


OTHER_ITEMS = {
    # return 0; of f moved, and g's return 0; (the same text) is the gap
    "another function": (_exemption("f", "line", 6), _gap("g", "line", 13 + SHIFT)),
    "another kind": (_exemption("f", "line", 3), _gap("f", "branch", 3 + SHIFT)),
    "another outcome": (
        _exemption("f", "branch", 3, "col 9: true never taken"),
        _gap("f", "branch", 3 + SHIFT, "col 9: false never taken"),
    ),
    "another condition": (
        _exemption("g", "mcdc", 9, "col 9: condition 1 of 2 not shown independent"),
        _gap("g", "mcdc", 9 + SHIFT, "col 9: condition 2 of 2 not shown independent"),
    ),
}
"""A stale exemption and a gap on its moved line (or one of the same text) that is
another item: each differs from the exemption in one part of the match only."""


@pytest.mark.parametrize("case", OTHER_ITEMS)
def test_another_item_on_the_moved_text_is_not_carried_to(tmp_path: Path, case: str) -> None:
    exemption, gap = OTHER_ITEMS[case]
    root = _tree(tmp_path, shifted(OLD), [gap], [exemption])
    assert rekey(root) == 1
    assert _listed(root) == [exemption]


def test_the_old_revision_is_chosen_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The edit committed already: at HEAD the old line is the new one, so nothing
    matches; ``--from HEAD~1`` reads the revision the exemptions were written against."""
    exemptions = [_exemption("f", "line", 4)]
    root = _tree(tmp_path, shifted(OLD), [_gap("f", "line", 4 + SHIFT)], exemptions)
    _git(root, "commit", "-q", "-am", "new")
    assert main(["rekey", "--root", str(root)]) == 1
    assert _listed(root) == exemptions
    assert main(["rekey", "--root", str(root), "--from", "HEAD~1"]) == 0
    assert [e.line for e in _listed(root)] == [4 + SHIFT]
    assert "1 exemption(s) carried" in capsys.readouterr().out.splitlines()[-1]


def test_a_file_absent_at_the_old_revision_is_left_stale(tmp_path: Path) -> None:
    exemptions = [_exemption("f", "line", 4)]
    root = _tree(tmp_path, shifted(OLD), [_gap("f", "line", 4 + SHIFT)], exemptions)
    _git(root, "rm", "-q", "--cached", SOURCE)
    _git(root, "commit", "-q", "-m", "untracked")
    assert rekey(root) == 1  # k.c is not in HEAD: no old text to compare
    assert _listed(root) == exemptions
    assert rekey(root, rev="no-such-revision") == 1
    assert _listed(root) == exemptions
    assert rekey(root, rev="HEAD~1") == 0


def test_only_the_leading_column_is_left_out_of_what() -> None:
    assert without_column("col 9: true never taken") == "true never taken"
    assert without_column("col 21: condition 2 of 3 not shown independent") == (
        "condition 2 of 3 not shown independent"
    )
    assert without_column("to 219") == "to 219"
    assert without_column("") == ""
