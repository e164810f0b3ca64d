"""The generator's templates: C and ACSL text with ``string.Template``
placeholders (``${name}``), one file each.

The integer unit's templates are in native/templates/, the header's beside
it in native/include/ (``header_*.h.in``).  A template is the generated text
as it appears, but for its placeholders; a placeholder at the start of a
line that is followed by more text on that line (``${helpers}void ...``)
stands for whole lines, possibly none, each ending in a newline.  A missing
value is an error (``Template.substitute``), never an empty string.
"""

from __future__ import annotations

from pathlib import Path
from string import Template

NATIVE = Path(__file__).resolve().parent
UNIT_TEMPLATES = NATIVE / "templates"
HEADER_TEMPLATES = NATIVE / "include"

_AT = "@"
CHECKED_MARKER = f"/* {_AT}relation(F-CHECKED, scope=function) */\n"
"""The requirement marker (report/markers.py) of a checked-mode function, for
the text written outside the templates (native/int64_binary64.py).  The
templates carry their markers as text; here it is spelt by concatenation
because the marker scan reads this file too, and the markers belong to the
generated file only."""


def fill(path: Path, /, **values: object) -> str:
    """The template at ``path`` with every placeholder replaced by its value."""
    return Template(path.read_text()).substitute(values)


def unit(name: str, /, **values: object) -> str:
    """A template of the integer unit (native/templates/``name``), filled."""
    return fill(UNIT_TEMPLATES / name, **values)


def header(name: str, /, **values: object) -> str:
    """A template of the kernel's header (native/include/``name``), filled."""
    return fill(HEADER_TEMPLATES / name, **values)
