"""Reading WhyML text: comments removed, modules by name.

Shared by :mod:`sonnx_mul_assurance.tables` (the per-type instances) and
:mod:`sonnx_mul_assurance.check_order` (the order of the checks); it lived
in ``tables``, which made the two modules import each other.
"""

from __future__ import annotations

import re

_COMMENT = re.compile(r"\(\*.*?\*\)", re.S)
_MODULE = re.compile(r"^module\s+(\w+)(.*?)^end\b", re.M | re.S)


def strip_comments(text: str) -> str:
    """WhyML text without comments (they do not nest in the project's files)."""
    return _COMMENT.sub(" ", text)


def modules(text: str) -> dict[str, str]:
    """Module name -> body (comments removed) of a WhyML file."""
    return {m.group(1): m.group(2) for m in _MODULE.finditer(strip_comments(text))}
