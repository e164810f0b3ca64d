"""What ties the native kernel's ACSL contracts to the Why3 per-type semantics (F-WRAP, F-CHECKED).

The C contracts (native/include/sonnx_mul_kernel.h) state each integer type's
range (``sonnx_fits_*``) and wrap modulus (``sonnx_wraps_*``); the Why3
profile (why3/profile.mlw) states ``type_lo``, ``type_hi`` and
``type_modulus`` per dtype; the product's registry (sonnx_mul.dtypes) has
``lo``, ``hi`` and ``bits``.  These tests check the three agree, that the
generated C files are what native/generate.py writes, and that the pinned
flags keep IEEE semantics.  See docs/native-kernel.md.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from sonnx_mul import dtypes
from sonnx_mul_assurance.c import flags

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT / "native/include/sonnx_mul_kernel.h"
PROFILE = ROOT / "why3/profile.mlw"
INTEGERS = [t for t in dtypes.ALL_TYPES if not t.is_float]


def _suffix(t: dtypes.ElementType) -> str:
    return f"{'i' if t.signed else 'u'}{t.bits}"


def _why3_table(function: str) -> dict[str, int]:
    """Constructor -> value of a `let function f (d : dtype) : int = match ...` of profile.mlw."""
    text = PROFILE.read_text()
    body = text[text.index(f"let function {function} ") :]
    body = body[: body.index("end")]
    return {c: int(v) for c, v in re.findall(r"\|\s*(\w+)\s*->\s*(-?\d+)", body)}


def _constructor(t: dtypes.ElementType) -> str:
    return f"{'Int' if t.signed else 'UInt'}{t.bits}"


def _header_semantics(header: str, s: str) -> tuple[int, int, int]:
    """(lo, hi, modulus) that the header's ACSL states for type suffix ``s``."""
    fits = re.search(rf"predicate sonnx_fits_{s}\(integer x\) = (-?\d+) <= x <= (\d+);", header)
    wraps = re.search(
        rf"predicate sonnx_wraps_{s}\(integer w, integer x\) =\s*"
        rf"sonnx_fits_{s}\(w\) && \(x - w\) % (\d+) == 0;",
        header,
    )
    assert fits is not None and wraps is not None, s
    return int(fits.group(1)), int(fits.group(2)), int(wraps.group(1))


@pytest.mark.parametrize("t", INTEGERS, ids=lambda t: t.onnx_name)
def test_F_WRAP_acsl_ranges_and_moduli_match_dtypes_and_why3(t: dtypes.ElementType) -> None:
    assert _header_semantics(HEADER.read_text(), _suffix(t)) == (t.lo, t.hi, 1 << t.bits)
    c = _constructor(t)
    assert _why3_table("type_lo")[c] == t.lo
    assert _why3_table("type_hi")[c] == t.hi
    assert _why3_table("type_modulus")[c] == 1 << t.bits


def test_F_WRAP_tie_check_sees_a_planted_wrong_range() -> None:
    # negative control: an off-by-one range or modulus in the ACSL is caught
    header = HEADER.read_text()
    wrong_range = header.replace("-128 <= x <= 127", "-127 <= x <= 127")
    wrong_modulus = header.replace("(x - w) % 65536 == 0", "(x - w) % 65535 == 0", 1)
    assert _header_semantics(wrong_range, "i8") != (dtypes.INT8.lo, dtypes.INT8.hi, 256)
    assert _header_semantics(wrong_modulus, "i16") != (dtypes.INT16.lo, dtypes.INT16.hi, 65536)


def test_F_WRAP_every_integer_type_has_its_three_entry_points() -> None:
    header = HEADER.read_text()
    for t in INTEGERS:
        s = _suffix(t)
        ctype = f"{'' if t.signed else 'u'}int{t.bits}_t"
        for name in (
            f"sonnx_mul_wrap_{s}",
            f"sonnx_mul_first_overflow_{s}",
            f"sonnx_mul_checked_{s}",
        ):
            assert re.search(rf"\b{name}\(const {ctype} \*a", header), name


def test_F_CHECKED_contract_says_nothing_written_on_overflow() -> None:
    header = HEADER.read_text()
    for t in INTEGERS:
        block = header[: header.index(f"size_t sonnx_mul_checked_{_suffix(t)}(")]
        block = block[block.rindex("/*@") :]
        overflow = block[block.index("behavior overflow:") :]
        assert "assigns \\nothing;" in overflow
        assert "complete behaviors;" in block and "disjoint behaviors;" in block


def test_generated_kernel_files_are_current() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "native/generate.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


def test_F_FLOAT_pinned_flags_keep_ieee_semantics() -> None:
    rows = flags.table(ROOT)
    cflags = rows["SONNX_CFLAGS"]
    for needed in ("-std=c99", "-fno-fast-math", "-ffp-contract=off"):
        assert needed in cflags
    assert "-fexcess-precision=standard" in rows["SONNX_CFLAGS_GCC"]
    everything = [
        flag for key, row in rows.items() if key.startswith("SONNX_CFLAGS") for flag in row
    ]
    assert not any(
        f in everything for f in ("-ffast-math", "-Ofast", "-funsafe-math-optimizations")
    )
    for arch in ("X86_64", "I686"):  # SSE2 arithmetic, never the x87
        assert rows[f"SONNX_CFLAGS_ARCH_{arch}"] == ["-msse2", "-mfpmath=sse"]
    arch = flags.target(ROOT, "gcc").upper()
    assert flags.cflags(ROOT, "gcc") == [
        *cflags,
        *rows["SONNX_CFLAGS_GCC"],
        *rows[f"SONNX_CFLAGS_ARCH_{arch}"],
    ]
    config = (ROOT / "native/include/sonnx_mul_config.h").read_text()
    assert "FLT_EVAL_METHOD != 0" in config and "#error" in config
