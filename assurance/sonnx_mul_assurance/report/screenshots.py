"""What the committed report screenshots show, recorded so that a stale one is caught.

``tools/report/screenshot.sh`` takes the screenshots with headless Chromium,
then runs ``python -m sonnx_mul_assurance.report.screenshots record
REPORT_DIR OUT_DIR``: it writes ``OUT_DIR/screenshots.json`` with the
SHA-256 of each PNG and the report's strings the pictures show that do not
depend on one run's evidence (the running-code statement, the requirement
ids, the evidence sources and which are required, the proof subjects, the
file the first evidence link opens). :func:`stale` compares a record with
the same strings computed from the current code (no browser needed): any
difference, a PNG that is not the one recorded, or a linked file that no
longer exists means the screenshots must be taken again.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .prose import machine_independent

IMAGES: tuple[str, ...] = ("report-toc.png", "report-link.png")
RECORD = "screenshots.json"
_LINK = re.compile(r'href="sources/([^"#]*)\.html#L[0-9]+"')


def shown(report: Mapping[str, Any], html: str) -> dict[str, Any]:
    """The evidence-independent strings of ``report`` (its JSON) the screenshots show."""
    link = _LINK.search(html)
    return {
        # the screenshots are taken on one machine and checked on any other
        "running_code": machine_independent(report["running_code"]),
        "requirements": list(report["requirements"]),
        "titles": [r["title"] for r in report["requirements"].values()],
        "evidence_sources": list(report["evidence_files"]),
        "required_evidence": report["required_evidence"],
        "proof_subjects": [s["label"] for s in report["proof_subjects"].values()],
        "first_link": link.group(1) if link else None,
    }


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def record(report_dir: Path, out_dir: Path) -> dict[str, Any]:
    """Write ``out_dir/screenshots.json`` for the screenshots just taken of ``report_dir``."""
    report = json.loads((report_dir / "traceability.json").read_text(encoding="utf-8"))
    html = (report_dir / "traceability.html").read_text(encoding="utf-8")
    data = {
        "date": report["date"],
        "commit": report["git"]["commit"],
        "images": {name: _sha256(out_dir / name) for name in IMAGES},
        "shown": shown(report, html),
    }
    (out_dir / RECORD).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return data


def current(root: Path, scratch: Path) -> dict[str, Any]:
    """What the screenshots would show now: the report of ``root`` without evidence
    (the recorded strings do not depend on it), rendered into ``scratch``."""
    from .render import linked_files, render_html
    from .report import build_report

    report = build_report(root, scratch / "no-evidence", probe_tools=False)
    # every linked file counts as copied, as write_report copies them
    return shown(report, render_html(report, linked_files(report)))


def stale(
    recorded: Mapping[str, Any], now: Mapping[str, Any], shots: Path, root: Path
) -> list[str]:
    """Every reason the screenshots in ``shots`` are out of date (empty: current)."""
    reasons = [
        f"{name}: SHA-256 differs from {RECORD} (replaced without recording)"
        for name, digest in recorded.get("images", {}).items()
        if not (shots / name).is_file() or _sha256(shots / name) != digest
    ]
    reasons += [
        f"{name}: not recorded" for name in IMAGES if name not in recorded.get("images", {})
    ]
    was = recorded.get("shown", {})
    reasons += [f"the report's {key} changed" for key in now if was.get(key) != now[key]]
    link = was.get("first_link")
    if not link or not (root / link).is_file():
        reasons.append(f"the linked file {link} does not exist")
    return reasons


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("command", choices=("record",))
    parser.add_argument("report_dir", type=Path)
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    data = record(args.report_dir, args.out_dir)
    print(f"wrote {args.out_dir / RECORD} ({', '.join(data['images'])})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
