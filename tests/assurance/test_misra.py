"""The MISRA C:2012 check of the native kernel, and its negative controls.

Test evidence of F-RTE (the C subset without the constructs whose behaviour
C leaves undefined, apart from the recorded deviations):
@relation(F-RTE, scope=file)
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sonnx_mul_assurance.c import misra

pytestmark = [pytest.mark.provers, pytest.mark.external_provers, pytest.mark.needs_prover]

ROOT = Path(__file__).resolve().parents[2]

if shutil.which("cppcheck") is None:
    pytest.skip("cppcheck not installed (sh proofs/install-provers.sh)", allow_module_level=True)


def _findings(
    tmp_path: Path, old: str = "", new: str = "", *, every_file: bool = False
) -> list[str]:
    """Errors of the check on a copy of native/ with ``old`` replaced by ``new``
    in the integer unit (the portable sources only, unless ``every_file``; the
    deviations of the others then read as gone)."""
    shutil.copytree(ROOT / "native", tmp_path / "native")
    target = tmp_path / "native/src/sonnx_mul_int.c"
    text = target.read_text()
    assert old in text
    target.write_text(text.replace(old, new, 1))
    sources = (
        misra.kernel_sources(tmp_path)
        if every_file
        else sorted((tmp_path / "native/src").glob("*.c"))
    )
    found = misra.run_kernel(tmp_path, sources)
    deviations = json.loads((ROOT / misra.DEVIATIONS).read_text())["deviations"]
    return misra.compare(found, deviations)


def test_kernel_has_only_the_recorded_deviations(tmp_path: Path) -> None:
    assert _findings(tmp_path, every_file=True) == []


def test_the_hardware_loops_are_analysed() -> None:
    assert {p.relative_to(ROOT).as_posix() for p in misra.kernel_sources(ROOT)} >= {
        "native/hw/sonnx_mul_f16c.c",
        "native/hw/sonnx_mul_stream8.c",
        "native/src/sonnx_mul_int.c",
    }


def test_a_planted_violation_is_reported(tmp_path: Path) -> None:
    # rule 15.5 (single point of exit): an early return in the scan helper
    errors = _findings(
        tmp_path,
        "    const int32_t p = (int32_t)x * (int32_t)y;\n",
        "    const int32_t p = (int32_t)x * (int32_t)y;\n"
        "    if (p == 0) {\n        return 0;\n    }\n",
    )
    assert any("rule 15.5" in e for e in errors), errors


def test_a_file_cppcheck_cannot_analyse_fails(tmp_path: Path) -> None:
    # without gcc's view (FLT_EVAL_METHOD unknown) cppcheck checks nothing: refused
    errors = _findings(tmp_path, '#include "sonnx_mul_config.h"\n', "#error planted\n")
    assert errors, "an unanalysed file must fail the check"
