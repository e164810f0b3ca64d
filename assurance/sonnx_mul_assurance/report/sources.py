"""Rendered copies of the sources and evidence inside the report folder.

The HTML report links every evidence location (``file:line``, a test id, a
Why3 goal) to ``sources/<path>.html#L<line>``, a copy of that file with one
anchor per line, so that the report folder is self-contained and readable
offline. Only files under the repository root are copied.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from html import escape
from pathlib import Path

SOURCES_DIR = "sources"
MAX_BYTES = 8 << 20  # a larger file is linked by name only (none is this large today)
_LOCATION = re.compile(r"^(?P<path>[^:]+?)(?::(?P<line>\d+)(?:-(?P<end>\d+))?)?$")


def split_location(location: str) -> tuple[str, int | None]:
    """(path, first line or None) of ``path``, ``path:12`` or ``path:12-20``."""
    m = _LOCATION.match(location.strip())
    if not m:
        return location, None
    line = m.group("line")
    return m.group("path"), int(line) if line else None


def copy_name(rel: str) -> str:
    """The report-relative name of the rendered copy of ``rel``."""
    return f"{SOURCES_DIR}/{rel}.html"


def href(rel: str, line: int | None, available: set[str]) -> str | None:
    """Link from the report page to ``rel`` (at ``line``), or None if not copied."""
    if rel not in available:
        return None
    return copy_name(rel) + (f"#L{line}" if line else "")


_CSS = (
    "body{font-family:ui-monospace,monospace;font-size:13px;margin:1em}"
    "pre{margin:0}a.ln{display:inline-block;width:5em;color:#888;text-decoration:none}"
    "span.line:target{background:#fff3b0}"
)


def render_copy(rel: str, text: str, report_name: str) -> str:
    """HTML of one file: a link back to the report and one ``id="L<n>"`` per line."""
    depth = rel.count("/") + 1  # sources/<rel>.html sits depth directories below the report
    back = "../" * depth + report_name
    lines = text.splitlines() or [""]
    body = "\n".join(
        f'<span class="line" id="L{n}"><a class="ln" href="#L{n}">{n}</a>{escape(t)}</span>'
        for n, t in enumerate(lines, start=1)
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(rel)}</title><style>{_CSS}</style></head><body>"
        f'<p><a href="{back}">&larr; traceability report</a> &middot; '
        f"<strong>{escape(rel)}</strong> (copy made when the report was written)</p>"
        f"<pre>{body}</pre></body></html>\n"
    )


def write_copies(root: Path, out: Path, files: Iterable[str], report_name: str) -> set[str]:
    """Write the rendered copies of ``files`` (paths relative to ``root``); the set written."""
    written: set[str] = set()
    base = root.resolve()
    for rel in sorted(set(files)):
        src = (base / rel).resolve()
        if not src.is_relative_to(base) or not src.is_file() or src.stat().st_size > MAX_BYTES:
            continue
        text = src.read_bytes().decode("utf-8", errors="replace")
        target = out / copy_name(rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_copy(rel, text, report_name), encoding="utf-8")
        written.add(rel)
    return written
