"""The report's sentences about the running code, rendered from the data.

What the report says is proved, and what runs, is not written by hand: the
units and goal counts come from the WP manifest (``proofs/wp-manifest.json``),
the loops that run from the ISA variant the extension selected on this CPU
(``sonnx_mul._native.isa()``).  A loop is called unproved only when its
source has no unit in the manifest, so a loop WP proves can never be called
unproved; :func:`unproved_claims` finds any sentence that still does (the
tests run it over the report's output, ``setup.py`` and the glue).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WP_MANIFEST = Path("proofs/wp-manifest.json")


@dataclass(frozen=True)
class WpUnit:
    """One WP unit of the manifest: its source, its goals and functions."""

    source: str
    goals: int
    functions: int
    provers: tuple[tuple[str, int], ...] = ()  # (the manifest's prover, its goals), by name


@dataclass(frozen=True)
class Loop:
    """Code that runs: a description, its C source, and when it runs."""

    name: str
    source: str
    when: str


PORTABLE: tuple[Loop, ...] = (
    Loop("the integer loops", "native/src/sonnx_mul_int.c", "every integer type"),
    Loop(
        "the float loops and the float16/bfloat16 conversions",
        "native/src/sonnx_mul_float.c",
        "float32, float64, float16 but where the F16C loop runs",
    ),
    Loop("the bfloat16 loop", "native/src/sonnx_mul_bf16.c", "bfloat16"),
)
HARDWARE: tuple[Loop, ...] = (
    Loop("the F16C float16 loop", "native/hw/sonnx_mul_f16c.c", "float16"),
    Loop(
        "the streaming int8/uint8 wrap loop",
        "native/hw/sonnx_mul_stream8.c",
        "int8/uint8 wrap from {stream8} elements in one call",
    ),
)
ISAS: Mapping[str, str] = {
    "portable": "the portable SSE2 build of the kernel's sources",
    "avx2": "the AVX2 build of the kernel's sources",
    "avx512": "the AVX-512 build of the kernel's sources",
}
"""The ISA variants of the extension (src/sonnx_mul/_native_variants.c)."""

ALIASES: Mapping[str, tuple[str, ...]] = {
    "native/src/sonnx_mul_int.c": ("sonnx_mul_int.c", "integer loops"),
    "native/src/sonnx_mul_float.c": (
        "sonnx_mul_float.c",
        "float16 conversions",
        "bfloat16 conversions",
        "narrowings",
        "widenings",
    ),
    "native/src/sonnx_mul_bf16.c": ("sonnx_mul_bf16.c", "bfloat16 loop", "bfloat16 product"),
    "native/hw/sonnx_mul_f16c.c": ("sonnx_mul_f16c.c", "F16C loop", "F16C and streaming loops"),
    "native/hw/sonnx_mul_stream8.c": (
        "sonnx_mul_stream8.c",
        "streaming loop",
        "streaming stores",
        "stream8",
    ),
    "proofs/wp/float_tie.c": ("float_tie.c",),
    "proofs/wp/spec_clients.c": ("spec_clients.c",),
}
"""The names a sentence may give each WP unit's code (a unit without an entry
fails :func:`check_aliases`, so that a new unit cannot go unnamed)."""

_NEGATED = re.compile(
    r"\bunproved\b|\bnot\s+(?:WP[- ])?proved?\b|\bdo(?:es)?\s+not\s+prove\b"
    r"|\bno evidence of (?:their|its) own\b|\bwithout (?:a )?proof\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n")


def wp_units(manifest: Mapping[str, Any]) -> tuple[WpUnit, ...]:
    """The units of a WP manifest, in its order (none when it lists none)."""
    return tuple(
        WpUnit(
            str(u["source"]),
            len(u["goals"]),
            len(u["functions"]),
            tuple(sorted(Counter(str(g["prover"]) for g in u["goals"].values()).items())),
        )
        for u in manifest.get("units", [])
    )


def load_wp_units(root: Path) -> tuple[WpUnit, ...]:
    """The units of the checkout's WP manifest (none when it is absent)."""
    path = root / WP_MANIFEST
    if not path.is_file():
        return ()
    return wp_units(json.loads(path.read_text()))


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def unit_phrase(source: str, units: Sequence[WpUnit]) -> str:
    """What the manifest says of ``source``: its goal count, or that no unit proves it."""
    unit = next((u for u in units if u.source == source), None)
    if unit is None:
        return f"{source}: no unit in {WP_MANIFEST}, not proved by WP"
    return (
        f"{source}: WP proves {_count(unit.goals, 'goal')} ({_count(unit.functions, 'function')})"
    )


def wp_summary(units: Sequence[WpUnit]) -> str:
    """One sentence: every unit WP proves, with its goal count, and the total."""
    if not units:
        return f"No WP manifest ({WP_MANIFEST}): WP proves nothing here."
    listed = "; ".join(f"{u.source} ({_count(u.goals, 'goal')})" for u in units)
    total = sum(u.goals for u in units)
    return (
        f"Frama-C WP proves {_count(len(units), 'unit')} of {WP_MANIFEST}, "
        f"{_count(total, 'goal')} in all: {listed}."
    )


ON_THIS_CPU: tuple[str, ...] = (
    "On this CPU the extension runs",
    "The ISA variant the extension selects on this CPU",
    "The loops that run:",
    "On a CPU with AVX2 and F16C the extension would also run:",
)
"""How each sentence of :func:`running_code` that depends on this CPU begins."""


def machine_independent(paragraph: str) -> str:
    """``paragraph`` without the sentences that depend on the CPU it was
    rendered on (:data:`ON_THIS_CPU`): the same on every machine."""
    return " ".join(s for s in sentences(paragraph) if not s.startswith(ON_THIS_CPU))


def running_loops(isa: str | None) -> tuple[Loop, ...]:
    """The loops the selected ISA variant runs (None: not known here)."""
    if isa in ("avx2", "avx512"):
        return PORTABLE + HARDWARE
    return PORTABLE


def running_code(units: Sequence[WpUnit], isa: str | None, stream8: int) -> str:
    """The "Running code" paragraph: what sonnx_mul.mul runs on this CPU,
    and for each loop what the WP manifest says of its source."""
    build = ISAS.get(isa or "", "the build the extension selects at import")
    where = f"{ON_THIS_CPU[0]} the extension runs {build} (sonnx_mul._native.isa(): {isa})."
    if isa is None:
        where = f"{ON_THIS_CPU[1]} is not known here."
    loops = [
        f"{loop.name} ({loop.when.format(stream8=stream8)}), {unit_phrase(loop.source, units)}"
        for loop in running_loops(isa)
    ]
    hardware = [
        f"{loop.name}, {unit_phrase(loop.source, units)}"
        for loop in HARDWARE
        if loop not in running_loops(isa)
    ]
    parts = [
        "sonnx_mul.mul runs the project's native C kernel (C99 with ACSL contracts) "
        "through a thin numpy glue (src/sonnx_mul/_native.c), compiled by gcc with the "
        "flags pinned in native/flags.mk: one call of the glue writes every element.",
        where,
        f"{ON_THIS_CPU[2]} " + "; ".join(loops) + ".",
    ]
    if hardware:
        parts.append(f"{ON_THIS_CPU[3]} " + "; ".join(hardware) + ".")
    parts += [
        "A hardware loop is proved against the contract of the portable loop it stands "
        "in for, from the admitted contract of its vector operations, which make "
        "verify-exhaustive checks on the hardware bit for bit with the loops' values.",
        wp_summary(units),
        "Proofs of the C source are proofs of the running code up to the compiler and "
        "the hardware (trusted base).",
        "The glue and numpy's buffered iterator are tested, not proved.",
        "mul_reference runs oracle/integers.py (integers, proved by Why3) and "
        "oracle/softfloat.py (floats, tested and contract-checked, not proved).",
    ]
    return " ".join(parts)


def native_exhaustive_absent(units: Sequence[WpUnit]) -> str:
    """The meaning of an absent native-exhaustive.json: what the hardware
    loops' proofs then rest on, with their WP units."""
    proved = "; ".join(unit_phrase(loop.source, units) for loop in HARDWARE)
    return (
        "the compiled kernel's own exhaustive checks (every binary32 input of both "
        "narrowings bit for bit, every float16/bfloat16 pair of the portable and hardware "
        "loops, every int8/uint8 pair of the streaming loop) did not run. "
        f"The hardware loops are proved by WP ({proved}) from the admitted contracts "
        "of their vector operations: without this file those admitted contracts, and "
        "the compiled loops' values, are checked on this hardware only by the sampled "
        "tests and the import check. "
        "A development gate passes without it; a release gate "
        "(`--require native-exhaustive`) fails. Produce it with `make verify-exhaustive`."
    )


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (at ``.``, ``!``, ``?`` before a space, and
    at blank lines): a clause after a colon or semicolon stays with its
    subject."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def unproved_claims(text: str, units: Sequence[WpUnit]) -> list[str]:
    """Every sentence of ``text`` that calls code of a WP unit unproved
    (names the unit's source or one of its :data:`ALIASES` and says "not
    proved", "unproved", "does not prove" ...)."""
    names = {u.source: (u.source, *ALIASES.get(u.source, ())) for u in units}
    found = []
    for sentence in sentences(text):
        if not _NEGATED.search(sentence):
            continue
        lower = sentence.lower()
        if any(name.lower() in lower for aliases in names.values() for name in aliases):
            found.append(sentence)
    return found


def strings(data: Any) -> Iterable[str]:
    """Every string inside a JSON-like value (the report's, say)."""
    if isinstance(data, str):
        yield data
    elif isinstance(data, Mapping):
        for value in data.values():
            yield from strings(value)
    elif isinstance(data, list | tuple):
        for value in data:
            yield from strings(value)


def check_aliases(units: Sequence[WpUnit]) -> list[str]:
    """The units :data:`ALIASES` does not name."""
    return [u.source for u in units if u.source not in ALIASES]
