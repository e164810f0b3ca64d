"""The committed report screenshots are those of the current report (no browser needed).

``docs/report-screenshots/screenshots.json`` (written by ``make
report-screenshot``) holds the PNGs' SHA-256 and the report strings they
show; the current code must give the same strings, and the PNGs must be the
recorded ones. Negative controls: the record of the screenshots of
2026-11-23 ("sonnx_mul.mul runs numpy's C loops", no wp/misra evidence), a
replaced PNG and a link to a file that no longer exists are each caught.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from sonnx_mul_assurance.report import screenshots

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "docs" / "report-screenshots"


@pytest.fixture(scope="module")
def now(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return screenshots.current(REPO, tmp_path_factory.mktemp("shots"))


def recorded() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SHOTS / screenshots.RECORD).read_text(encoding="utf-8"))
    return data


def test_the_committed_screenshots_are_current(now: dict[str, Any]) -> None:
    assert screenshots.stale(recorded(), now, SHOTS, REPO) == []
    assert {"wp", "misra"} <= set(recorded()["shown"]["required_evidence"])


def test_negative_control_the_screenshots_of_2026_11_23_are_stale(now: dict[str, Any]) -> None:
    old = recorded()
    old["shown"] = {
        **old["shown"],
        "running_code": "sonnx_mul.mul runs numpy's C loops (the fast path) ...",
        "required_evidence": ["crosshair", "pytest", "why3"],
        "evidence_sources": ["why3", "crosshair", "exhaustive", "pytest"],
    }
    assert screenshots.stale(old, now, SHOTS, REPO) == [
        "the report's running_code changed",
        "the report's evidence_sources changed",
        "the report's required_evidence changed",
    ]


def test_negative_control_a_replaced_png_is_caught(now: dict[str, Any], tmp_path: Path) -> None:
    for name in screenshots.IMAGES:
        shutil.copy(SHOTS / name, tmp_path / name)
    (tmp_path / "report-link.png").write_bytes(b"\x89PNG other")
    assert screenshots.stale(recorded(), now, tmp_path, REPO) == [
        "report-link.png: SHA-256 differs from screenshots.json (replaced without recording)"
    ]


def test_negative_control_a_link_to_a_gone_file_is_caught(now: dict[str, Any]) -> None:
    old = recorded()
    old["shown"] = {**old["shown"], "first_link": "docs/spec/gone.md"}
    assert screenshots.stale(old, now, SHOTS, REPO) == [
        "the report's first_link changed",
        "the linked file docs/spec/gone.md does not exist",
    ]
