"""One mutator per language (:mod:`.python`, :mod:`.whyml`, :mod:`.c`), and the
mutants of a run: each target's, spread evenly over its file (:func:`generate`)."""

from __future__ import annotations

from pathlib import Path

from sonnx_mul_assurance.mutants.mutant import Mutant, spread
from sonnx_mul_assurance.mutants.mutators.c import c_mutants, spread_functions
from sonnx_mul_assurance.mutants.mutators.python import python_mutants
from sonnx_mul_assurance.mutants.mutators.whyml import mlw_mutants
from sonnx_mul_assurance.mutants.targets import Targets


def generate(
    root: Path,
    targets: Targets,
    max_py: int | None,
    max_mlw: int,
    only: list[str] | None,
    under: list[str] | None = None,
    max_c: int | None = None,
) -> list[Mutant]:
    """Mutants of every target, or of the ``only`` files and the targets ``under`` folders:
    the Python targets in their order, every ``why3/*.mlw``, the glue. ``max_py`` None:
    each file's ``max``; ``max_c`` None: the glue's ``max``, shared among its functions."""

    def wanted(file: str) -> bool:
        if only is None and under is None:
            return True
        folders = [u.rstrip("/") + "/" for u in under or []]
        return file in (only or []) or any(file.startswith(f) for f in folders)

    mutants: list[Mutant] = []
    for file, target in targets.python.items():
        if wanted(file):
            limit = max_py if max_py is not None else target.max
            mutants += spread(python_mutants(file, (root / file).read_text()), limit)
    for mlw in sorted((root / "why3").glob("*.mlw")):
        file = f"why3/{mlw.name}"
        if wanted(file):
            mutants += spread(mlw_mutants(file, mlw.read_text()), max_mlw)
    glue = targets.glue
    limit = glue.max if max_c is None else max_c
    if wanted(glue.file) and limit > 0:
        found = c_mutants(glue.file, (root / glue.file).read_text(), glue.functions)
        mutants += spread_functions(found, limit)
    return mutants
