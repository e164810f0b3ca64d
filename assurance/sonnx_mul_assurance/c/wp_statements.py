"""What each WP goal states, pinned per function: Frama-C's printed program, cut and hashed.

:func:`printed_functions` runs Frama-C's printer after ``-wp-rte``'s RTE
annotation on one C file; :func:`split_functions` cuts what it prints into
function definitions, each with the ACSL contract just before it, and
hashes each (the rest, logic definitions and prototypes, is hashed as
``wp_plan.GLOBALS``).  The WP check (:mod:`.wp`) pins these hashes in
``proofs/wp-manifest.json``: a weakened ``ensures``, a dropped ``assigns`` or
an edited loop changes a hash even when every goal name stays the same.
The hardware loops that stand in for proved ones (:data:`STANDS_IN`) must
carry the proved loops' contracts, word for word (:func:`stand_in_errors`).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from sonnx_mul_assurance.c import wp_plan

_LOG_RE = re.compile(r"^\[[\w:-]+\] ")


def text_sha256(text: str) -> str:
    """The SHA-256 of ``text`` (UTF-8), in hexadecimal."""
    return hashlib.sha256(text.encode()).hexdigest()


def frama_c() -> str:
    """The ``frama-c`` on PATH; FileNotFoundError when there is none."""
    exe = shutil.which("frama-c")
    if exe is None:
        raise FileNotFoundError("frama-c not found: run sh proofs/install-provers.sh")
    return exe


def frama_c_argv(source: Path, include: Path) -> list[str]:
    """Frama-C on ``source``, its headers from ``include`` (the options follow)."""
    return [frama_c(), f"-cpp-extra-args=-I{include}", str(source)]


def printed_functions(source: Path, include: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(function -> SHA-256, function -> contract) of every function defined in
    ``source``, as Frama-C prints it after ``-wp-rte``'s RTE annotation."""
    argv = [*frama_c_argv(source, include), "-rte", "-then", "-print", "-no-unicode"]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"frama-c -print failed on {source}:\n{proc.stdout}{proc.stderr}")
    # Frama-C's log lines ("[kernel] Parsing FILE ...") name paths: not part of the program
    program = "\n".join(line for line in proc.stdout.splitlines() if not _LOG_RE.match(line))
    return split_functions(program)


STANDS_IN = {
    "sonnx_mul_f16c_f16": "sonnx_mul_f16",
    "sonnx_mul_stream8_wrap8": "sonnx_mul_wrap_u8",
    "block_overflows_f64_i64": "block_overflows_i64",
    "block_fused_f64_i64": "block_fused_i64",
}
"""Each function that one build calls in place of a proved one, and that
proved one: the hardware loops on the default path (``native/hw/``), and
int64's binary64 block scan, which the avx512 build's
``sonnx_mul_first_overflow_i64`` calls (``native/int_scans.py``,
``scan_choice``; WP proves the caller with the #else branch), and its fused
checked pass, which ``sonnx_mul_checked_fresh_i64`` calls in the same build
(``native/int_unit.py``, ``fused``).  WP proves
each against a contract written beside it, which must be the proved one's,
word for word: the callers' proofs use nothing else of it."""


def stand_in_errors(contracts: Mapping[str, str]) -> list[str]:
    """Every hardware loop of :data:`STANDS_IN` whose contract, as Frama-C
    prints it (``contracts``: function -> contract, of every unit), is not
    the one of the proved loop it stands in for."""
    errors: list[str] = []
    for hardware, proved in sorted(STANDS_IN.items()):
        mine, theirs = contracts.get(hardware), contracts.get(proved)
        if not mine or not theirs:
            errors.append(f"stand-in: no contract printed for {hardware} or {proved}")
        elif mine != theirs:
            errors.append(
                f"stand-in: {hardware} is not proved against {proved}'s contract:"
                f" {mine} differs from {theirs}"
            )
    return errors


_GHOST_DEF_RE = re.compile(r"^\s+\w[\w\s*]*?\b(\w+)\s*\([^;]*\)\s*$")


def _ghost_function(block: Sequence[str]) -> tuple[str, str] | None:
    """(name, contract) of the ghost function a printed ``/*@ ghost ... */``
    block defines (its contract the ``/@ ... @/`` block inside), else None."""
    if not block or block[0].strip() != "/*@ ghost":
        return None
    for index, line in enumerate(block[1:-1], start=1):
        match = _GHOST_DEF_RE.match(line)
        if match and block[index + 1].strip() == "{":
            inner = [x.strip() for x in block[1:index]]
            text = " ".join(" ".join(inner).split())
            contract = text.replace("/@", "/*@", 1).replace("@/", "*/", 1) if text else ""
            return match.group(1), contract
    return None


def split_functions(printed: str) -> tuple[dict[str, str], dict[str, str]]:
    """Cut Frama-C's printed program into function definitions, each with the
    ACSL block just before it, and hash each one; the other ACSL blocks and
    declarations (logic definitions, prototypes) go to ``wp_plan.GLOBALS``."""
    lines = printed.splitlines()
    hashes: dict[str, str] = {}
    contracts: dict[str, str] = {}
    globals_: list[str] = []
    pending: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("/*@"):
            globals_ += pending
            pending = [line]
            while not lines[i].rstrip().endswith("*/") and i + 1 < len(lines):
                i += 1
                pending.append(lines[i])
            i += 1
            ghost = _ghost_function(pending)
            if ghost is not None:  # a ghost function: WP proves it as any other
                name, contract = ghost
                hashes[name] = text_sha256("\n".join(pending) + "\n")
                contracts[name] = contract
                pending = []
            continue
        if line and not line[0].isspace() and not line.startswith(("#", "/*", "}")):
            signature = [line]
            while not signature[-1].rstrip().endswith(";") and i + 1 < len(lines):
                if lines[i + 1] == "{":
                    break
                i += 1
                signature.append(lines[i])
            if signature[-1].rstrip().endswith(";"):
                globals_ += pending + signature
                pending = []
                i += 1
                continue
            body = []
            i += 1
            while i < len(lines) and lines[i] != "}":
                body.append(lines[i])
                i += 1
            body.append("}")
            name_match = re.search(r"(\w+)\s*\(", " ".join(signature))
            name = name_match.group(1) if name_match else f"?{i}"
            text = "\n".join(pending + signature + body) + "\n"
            hashes[name] = text_sha256(text)
            contracts[name] = " ".join(" ".join(pending).split())
            pending = []
        i += 1
    globals_ += pending
    hashes[wp_plan.GLOBALS] = text_sha256("\n".join(globals_) + "\n")
    contracts[wp_plan.GLOBALS] = ""
    return hashes, contracts
