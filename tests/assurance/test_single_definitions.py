"""Each limit of the pinned proofs and each evidence file name is written once.

The limits (step margin, safety nets, search steps) are defined in
``assurance/sonnx_mul_assurance/pinned.py`` and the evidence file names in
``assurance/sonnx_mul_assurance/evidence/files.py``, which the report's
protocol and the producers both read: a second definition elsewhere in the
assurance code (a constant assigned again, a name spelled out as a path)
could drift from the first unnoticed.  Docstrings and prose may name them.
"""

from __future__ import annotations

import ast
import shutil
from collections import defaultdict
from pathlib import Path

from sonnx_mul_assurance.evidence import files
from sonnx_mul_assurance.report import protocol

REPO = Path(__file__).resolve().parents[2]
PACKAGE = Path("assurance/sonnx_mul_assurance")
CORE = PACKAGE / "pinned.py"
FILES = PACKAGE / "evidence/files.py"

LIMITS = (
    "CHECK_NET_FACTOR",
    "MEASURE_STEPS",
    "UNHELD_STEPS",
    "STEP_MARGIN",
    "STEP_SLACK",
    "SAFETY_NET",
    "SAFETY_FACTOR",
    "TIME_ONLY",
)
"""The limit constants of the Why3 and WP checks."""


def _strings(tree: ast.AST) -> list[str]:
    """The string literals of ``tree`` that are values, not documentation (a
    string standing alone as a statement: a docstring or an attribute's)."""
    prose = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
    ]


def _assigned(tree: ast.AST) -> set[str]:
    """The names ``tree`` assigns (``X = ...``, ``X: T = ...``), at any level."""
    names: set[str] = set()
    for node in ast.walk(tree):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign) and node.value is not None
            else []
        )
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def definitions(root: Path) -> dict[str, list[str]]:
    """Where each limit of :data:`LIMITS` is assigned and each evidence file
    name of the protocol and record of the pipeline is written as a value (the
    name alone, its last part, or a path or pattern ending in it), in every
    module of the assurance package under ``root``: name -> the files,
    relative to ``root``."""
    names = [source.file for source in protocol.SOURCES] + list(files.RECORDS)
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted((root / PACKAGE).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        shown = path.relative_to(root).as_posix()
        for limit in sorted(_assigned(tree) & set(LIMITS)):
            found[limit].append(shown)
        for text in _strings(tree):
            for name in names:
                if text in (name, name.rsplit("/", 1)[-1]) or text.endswith("/" + name):
                    found[name].append(shown)
    return dict(found)


def test_each_limit_is_defined_once_in_the_core() -> None:
    found = definitions(REPO)
    assert {limit: found.get(limit) for limit in LIMITS} == {
        limit: [CORE.as_posix()] for limit in LIMITS
    }


def test_each_evidence_file_of_the_protocol_is_named_once() -> None:
    names = [source.file for source in protocol.SOURCES]
    assert names == list(files.NAMES)  # the protocol declares every file of the registry
    found = definitions(REPO)
    names += files.RECORDS  # the pipeline's records beside them
    assert {name: found.get(name) for name in names} == {name: [FILES.as_posix()] for name in names}


def test_the_producers_write_where_the_protocol_reads() -> None:
    from sonnx_mul_assurance.c import misra, native_exhaustive, targets, wp
    from sonnx_mul_assurance.structural import scope
    from sonnx_mul_assurance.why3 import coq, driver

    written = {
        driver.PROOFS.evidence_path(Path(".")),
        coq.OUT,
        wp.PROOFS.evidence_path(Path(".")),
        misra.OUT,
        native_exhaustive.OUT,
        targets.OUT,
        scope.OUT,
    }
    names = (files.WHY3, files.COQ, files.WP, files.MISRA, files.NATIVE_EXHAUSTIVE, files.TARGETS)
    assert written == {files.OUT_DIR / name for name in (*names, files.COVERAGE)}


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(REPO / PACKAGE, root / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_negative_control_a_second_definition_is_found(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    assert definitions(root) == definitions(REPO)  # the copy is the tree
    driver = root / PACKAGE / "why3/driver.py"
    driver.write_text(driver.read_text() + "\nCHECK_NET_FACTOR = 6\n")
    misra = root / PACKAGE / "c/misra.py"
    misra.write_text(misra.read_text() + '\nREPORT = Path("proofs/out/misra.json")\n')
    suite = root / PACKAGE / "suite.py"
    suite.write_text(suite.read_text() + '\nRUN = RUN_DIR / "run.json"\n')
    wp = root / PACKAGE / "c/wp.py"
    wp.write_text(wp.read_text() + '\nLOG = f"{OUT}/pytest.xml"\n')
    found = definitions(root)
    assert found["CHECK_NET_FACTOR"] == [CORE.as_posix(), (PACKAGE / "why3/driver.py").as_posix()]
    assert found["misra.json"] == [(PACKAGE / "c/misra.py").as_posix(), FILES.as_posix()]
    assert found["pytest.xml"] == [(PACKAGE / "c/wp.py").as_posix(), FILES.as_posix()]
    assert found["suite/run.json"] == [FILES.as_posix(), (PACKAGE / "suite.py").as_posix()]


def test_negative_control_prose_is_not_a_definition(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    wp = root / PACKAGE / "c/wp.py"
    wp.write_text(
        wp.read_text() + '\nNOTE = 1\n"""Writes proofs/out/wp.json; CHECK_NET_FACTOR widens."""\n'
    )
    assert definitions(root) == definitions(REPO)
