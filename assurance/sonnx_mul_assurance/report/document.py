"""A small document model and its two renderings, Markdown and self-contained HTML.

The report is built once as a :class:`Document` (``render.build_document``);
:func:`to_markdown` and :func:`to_html` only render it, so both formats show
the same sections, rows and words.

Inlines: :class:`Text`, :class:`Strong`, :class:`Code`, :class:`Mark` (text
with a CSS class), :class:`Link`.  Blocks: :class:`Paragraph`,
:class:`Quote`, :class:`Definitions`, :class:`BulletList`, :class:`Table`
and :class:`Section` (nested; the heading level follows the nesting).

What differs by format, and why: CSS classes (good/bad/warn/absent) colour
the HTML only, and every coloured element carries the same fact in words;
links (to anchors and to the rendered copies under ``sources/``) exist only
in the HTML, whose folder holds their targets: the Markdown is read alone
and shows their text.  No link leaves the report (URLs are shown as code).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from html import escape


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Strong:
    text: str
    css: str = ""


@dataclass(frozen=True)
class Code:
    text: str


@dataclass(frozen=True)
class Mark:
    """Text with a CSS class (HTML ``<span>``; plain text in Markdown)."""

    text: str
    css: str


@dataclass(frozen=True)
class Link:
    """``target``: ``#anchor`` or a file of the report's folder; None: only the text."""

    text: str
    target: str | None
    code: bool = False


Inline = Text | Strong | Code | Mark | Link
Line = tuple[Inline, ...]


def line(*parts: Inline | str) -> Line:
    """A line of inlines; a ``str`` is plain text."""
    return tuple(Text(p) if isinstance(p, str) else p for p in parts)


@dataclass(frozen=True)
class Paragraph:
    content: Line
    css: str = ""


@dataclass(frozen=True)
class Quote:
    text: str


@dataclass(frozen=True)
class Definitions:
    """Label -> value pairs; ``css`` per value (HTML ``<dl>``, Markdown bullets)."""

    items: tuple[tuple[str, Line, str], ...]


@dataclass(frozen=True)
class BulletList:
    items: tuple[Line, ...]
    css: str = ""
    empty: str = "none"  # shown as the only item of an empty list


@dataclass(frozen=True)
class Cell:
    lines: tuple[Line, ...]
    css: str = ""


def cell(*parts: Inline | str, css: str = "") -> Cell:
    return Cell((line(*parts),), css)


@dataclass(frozen=True)
class Row:
    cells: tuple[Cell, ...]
    id: str = ""
    css: str = ""


def row(*values: Cell | str) -> Row:
    return Row(tuple(v if isinstance(v, Cell) else cell(v) for v in values))


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[Row, ...]
    id: str = ""


@dataclass
class Section:
    """``id`` is the HTML anchor (top-level sections are in the contents)."""

    id: str
    title: str
    blocks: list[Block] = field(default_factory=list)
    css: str = ""


Block = Paragraph | Quote | Definitions | BulletList | Table | Section


@dataclass
class Document:
    title: str
    sections: list[Section]
    stylesheet: str = ""


# --- Markdown -------------------------------------------------------------------


def _md_inline(item: Inline) -> str:
    if isinstance(item, Strong):
        return f"**{item.text}**"
    if isinstance(item, Code):
        return f"`{item.text}`"
    if isinstance(item, Link):
        return f"`{item.text}`" if item.code else item.text
    return item.text


def _md_line(content: Iterable[Inline]) -> str:
    return "".join(_md_inline(i) for i in content)


def _md_block(block: Block, level: int) -> list[str]:
    if isinstance(block, Section):
        out = ["#" * level + " " + block.title]
        for child in block.blocks:
            out += ["", *_md_block(child, level + 1)]
        return out
    if isinstance(block, Paragraph):
        return [_md_line(block.content)]
    if isinstance(block, Quote):
        return [f"> {block.text}"]
    if isinstance(block, Definitions):
        return [f"- **{label}**: {_md_line(value)}" for label, value, _ in block.items]
    if isinstance(block, BulletList):
        return [f"- {_md_line(i)}" for i in block.items] or [f"- {block.empty}"]
    out = ["| " + " | ".join(block.header) + " |", "|" + "---|" * len(block.header)]
    for r in block.rows:
        cells = ("<br>".join(_md_line(ln) for ln in c.lines).replace("|", "\\|") for c in r.cells)
        out.append("| " + " | ".join(cells) + " |")
    return out


def to_markdown(doc: Document) -> str:
    out = [f"# {doc.title}", "", "## Contents", ""]
    out += [f"- {s.title}" for s in doc.sections]
    for section in doc.sections:
        out += ["", *_md_block(section, 2)]
    return "\n".join(out) + "\n"


# --- HTML -----------------------------------------------------------------------


def _attrs(**values: str) -> str:
    return "".join(f' {k}="{escape(v)}"' for k, v in values.items() if v)


def _html_inline(item: Inline) -> str:
    if isinstance(item, Strong):
        return f"<strong{_attrs(**{'class': item.css})}>{escape(item.text)}</strong>"
    if isinstance(item, Code):
        return f"<code>{escape(item.text)}</code>"
    if isinstance(item, Mark):
        return f'<span class="{escape(item.css)}">{escape(item.text)}</span>'
    if isinstance(item, Link):
        text = f"<code>{escape(item.text)}</code>" if item.code else escape(item.text)
        return f'<a href="{escape(item.target)}">{text}</a>' if item.target else text
    return escape(item.text)


def _html_line(content: Iterable[Inline]) -> str:
    return "".join(_html_inline(i) for i in content)


def _html_block(block: Block, level: int) -> list[str]:
    if isinstance(block, Section):
        if level == 2:
            back = ' <small><a href="#toc">↑</a></small>'
            out = [f'<h2 id="{escape(block.id)}">{escape(block.title)}{back}</h2>']
        else:
            out = [f"<section{_attrs(**{'class': block.css, 'id': block.id})}>"]
            out.append(f"<h{level}>{escape(block.title)}</h{level}>")
        for child in block.blocks:
            out += _html_block(child, level + 1)
        return out if level == 2 else [*out, "</section>"]
    if isinstance(block, Paragraph):
        return [f"<p{_attrs(**{'class': block.css})}>{_html_line(block.content)}</p>"]
    if isinstance(block, Quote):
        return [f"<blockquote>{escape(block.text)}</blockquote>"]
    if isinstance(block, Definitions):
        pairs = [
            f"<dt>{escape(label)}</dt><dd{_attrs(**{'class': css})}>{_html_line(value)}</dd>"
            for label, value, css in block.items
        ]
        return ["<dl>", *pairs, "</dl>"]
    if isinstance(block, BulletList):
        items = [f"<li>{_html_line(i)}</li>" for i in block.items]
        css = _attrs(**{"class": block.css})
        return [f"<ul{css}>", *(items or [f"<li>{escape(block.empty)}</li>"]), "</ul>"]
    out = [f"<table{_attrs(id=block.id)}><thead><tr>"]
    out.append("".join(f"<th>{escape(h)}</th>" for h in block.header) + "</tr></thead><tbody>")
    for r in block.rows:
        cells = "".join(
            f"<td{_attrs(**{'class': c.css})}>{'<br>'.join(_html_line(ln) for ln in c.lines)}</td>"
            for c in r.cells
        )
        out.append(f"<tr{_attrs(**{'class': r.css, 'id': r.id})}>{cells}</tr>")
    out.append("</tbody></table>")
    return out


def to_html(doc: Document) -> str:
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(doc.title)}</title>",
        f"<style>{doc.stylesheet}</style></head><body>",
        f'<h1 id="top">{escape(doc.title)}</h1>',
        '<nav id="toc"><strong>Contents</strong><ol>',
        *(f'<li><a href="#{escape(s.id)}">{escape(s.title)}</a></li>' for s in doc.sections),
        "</ol></nav>",
    ]
    for section in doc.sections:
        out += _html_block(section, 2)
    out.append("</body></html>")
    return "\n".join(out) + "\n"
