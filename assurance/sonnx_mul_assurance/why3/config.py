"""The one reader of the project's Why3 prover configurations, shared by the
Why3 check (``driver.py``) and the WP check (``wp.py``, ``wp_plan.py``); the
limits their goals are held to are the pinned proofs' core's
(:mod:`sonnx_mul_assurance.pinned`).

``proofs/why3.conf.in`` (Why3) and ``proofs/wp-why3.conf.in`` (Frama-C WP)
are templates: ``render`` writes them under ``proofs/out/`` with the
absolute path of ``proofs/drivers`` (``@DRIVERS@``) and of the PyPI ``z3``
next to the running Python (``@Z3_PYPI@``); the Coq template
(``proofs/coq/why3-coq.conf.in``) gets ``@COQ_REALIZATIONS@`` and ``@COQ_DRIVER@``.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from sonnx_mul_assurance.evidence.files import OUT_DIR

DRIVERS = Path("proofs/drivers")
COQ_REALIZATIONS = Path("build/why3-coq")
"""Why3's compiled Coq realizations (proofs/build-why3-coq.sh): coqc's ``-R ... Why3``."""
COQ_DRIVER = Path("proofs/coq/coq.drv")
"""Why3's Coq driver with ieee_float realized (the Coq proofs' goal printer)."""


def z3_pypi() -> str:
    """The PyPI z3 of the running Python's environment (else the first on PATH)."""
    candidate = Path(sys.executable).parent / "z3"
    if candidate.exists():
        return str(candidate)
    return shutil.which("z3") or "z3-pypi-not-found"


def render(root: Path, template: Path, name: str) -> Path:
    """Write ``proofs/out/<name>`` from ``template`` (relative to ``root``).

    The file is replaced whole (a temporary file renamed over it): checks
    that run at once, such as the two workers of ``make test``, render the same
    file while a prover started by the other reads it, and a reader must
    never see it truncated."""
    text = (root / template).read_text()
    text = text.replace("@DRIVERS@", str((root / DRIVERS).resolve()))
    text = text.replace("@WHY3_SPEC@", str((root / "why3").resolve()))
    text = text.replace("@Z3_PYPI@", z3_pypi())
    text = text.replace("@COQ_REALIZATIONS@", str((root / COQ_REALIZATIONS).resolve()))
    text = text.replace("@COQ_DRIVER@", str((root / COQ_DRIVER).resolve()))
    conf = root / OUT_DIR / name
    conf.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=conf.parent, prefix=f".{name}.")
    try:
        with os.fdopen(fd, "w") as stream:
            stream.write(text)
        os.chmod(temporary, 0o644)  # mkstemp's 0600 would differ from a plain write's
        os.replace(temporary, conf)
    except BaseException:
        os.unlink(temporary)
        raise
    return conf


def prover_sections(conf_text: str) -> list[dict[str, str]]:
    """The ``key = "value"`` fields of every [prover] section of a Why3 config."""
    return [
        dict(re.findall(r'^(\w+) = "([^"]*)"', section, re.M))
        for section in re.split(r"^\[prover\]$", conf_text, flags=re.M)[1:]
    ]
