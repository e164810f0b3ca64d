"""Optional StrictDoc export (``make trace-html``; extra ``[audit]``).

Generates, from the registry, ``OUT/sdoc/requirements.sdoc`` and a
``OUT/strictdoc_config.py`` (rendered from ``tools/strictdoc/``), mirrors
the scanned sources (``src/``, ``tests/``, ``why3/``) into ``OUT/source/``,
then runs ``strictdoc export``. Nothing generated is committed; the
traceability report never needs StrictDoc.

StrictDoc 0.30 accepts only UIDs of two or more characters starting with a
letter, so the registry id ``F`` cannot appear in its markers: the export
names such ids ``REQ-<id>`` (``REQ-F``) in the document and in the mirrored
markers; every other id is unchanged.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from sonnx_mul.requirements import REGISTRY, Requirement
from sonnx_mul_assurance.report.markers import iter_files

_SDOC_UID = re.compile(r"[A-Za-z][A-Za-z0-9_/.\\-]+\Z")
_MARKER = re.compile("@" + r"relation\(([^()]*)\)")


def sdoc_uid(rid: str) -> str:
    """The StrictDoc UID of a registry id (``REQ-<id>`` when StrictDoc refuses the id)."""
    return rid if _SDOC_UID.match(rid) else f"REQ-{rid}"


def _rewrite(match: re.Match[str]) -> str:
    parts = [p.strip() for p in match.group(1).split(",")]
    parts = [p if "=" in p else sdoc_uid(p) for p in parts]
    return "@" + "relation(" + ", ".join(parts) + ")"


def mirror_sources(root: Path, dest: Path) -> int:
    """Copy the scanned sources to ``dest`` with marker ids as StrictDoc UIDs."""
    count = 0
    for path in iter_files(root):
        rel = path.relative_to(root)
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(encoding="utf-8")
        target.write_text(_MARKER.sub(_rewrite, text), encoding="utf-8")
        count += 1
    return count


TEMPLATE = Path("tools/strictdoc/strictdoc_config.py.in")


def _multiline(text: str) -> str:
    return ">>>\n" + text.strip() + "\n<<<"


def render_sdoc(registry: Mapping[str, Requirement]) -> str:
    """The registry as a StrictDoc document (parents as Parent relations)."""
    out = [
        "[DOCUMENT]",
        "TITLE: sonnx-mul requirements",
        "",
        "[TEXT]",
        "STATEMENT: "
        + _multiline(
            "Generated from src/sonnx_mul/requirements.py (the registry); do not edit. "
            "Top-level ids quote the SONNX profile of Mul; derived ids refine one parent."
        ),
        "",
    ]
    for req in registry.values():
        out += [
            "[REQUIREMENT]",
            f"UID: {sdoc_uid(req.id)}",
            f"TITLE: {req.id}: {req.title}",
            "STATEMENT: " + _multiline(req.statement),
            "COMMENT: " + _multiline(f"Source: {req.source}"),
        ]
        if req.parent:
            out += ["RELATIONS:", "- TYPE: Parent", f"  VALUE: {sdoc_uid(req.parent)}"]
        out.append("")
    return "\n".join(out)


def export(root: Path, out: Path, strictdoc: str = "strictdoc", run: bool = True) -> int:
    """Write the document and config under ``out``; run the export unless ``run`` is False."""
    out = out if out.is_absolute() else root / out
    sdoc_dir = out / "sdoc"
    sdoc_dir.mkdir(parents=True, exist_ok=True)
    (sdoc_dir / "requirements.sdoc").write_text(render_sdoc(REGISTRY), encoding="utf-8")
    source = out / "source"
    if source.exists():
        shutil.rmtree(source)
    mirror_sources(root, source)
    template = (root / TEMPLATE).read_text(encoding="utf-8")
    config = template.replace("@SOURCE@", str(source))
    (out / "strictdoc_config.py").write_text(config, encoding="utf-8")
    print(f"wrote {sdoc_dir / 'requirements.sdoc'} and {out / 'strictdoc_config.py'}")
    if not run:
        return 0
    exe = shutil.which(strictdoc)
    if exe is None:
        print(
            f"{strictdoc} not found: install the optional extra (pip install -e '.[audit]'), "
            "preferably in a separate virtual environment, and pass --strictdoc PATH",
            file=sys.stderr,
        )
        return 2
    cmd = [
        exe,
        "export",
        str(sdoc_dir),
        "--config",
        str(out / "strictdoc_config.py"),
        "--formats",
        "html",
        "--output-dir",
        str(out / "export"),
    ]
    print(" ".join(cmd))
    return subprocess.run(cmd, cwd=root, check=False).returncode
