"""What `make test-debian-python` leaves out, and why that cannot hide a failure of the product.

The Debian-python run is `make test` with ``-m "not external_provers"``
(``DEBIAN_SELECT`` in the Makefile).  A file may carry that marker only if
its verdict is an external prover's (it is also marked ``provers``) and it
imports nothing of the product (``sonnx_mul``) itself: the interpreter then
only starts Why3, Frama-C or cppcheck and reads what they answer.  (The
tooling those files call, ``sonnx_mul_assurance``, reads the product's type
table, hash helper and quiet-NaN rule; the rest of the Debian run tests
those directly.)  `make test` and `make prove` run these files.  Imports are
read by the layering check's reader (``test_import_graph.imported_names``:
also inside functions and through importlib).  Negative controls: a marked
file that imports the product (at the top, in a function, by importlib), or
that is not a prover test, is refused; pytest's own selection deselects
exactly the marked files.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_import_graph import imported_names

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
MARKER = "external_provers"
PRODUCT = "sonnx_mul"


def _marks(tree: ast.Module) -> set[str]:
    """The ``pytest.mark.<name>`` names of the module's ``pytestmark``."""
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            for sub in ast.walk(node.value):
                if (
                    isinstance(sub, ast.Attribute)
                    and isinstance(sub.value, ast.Attribute)
                    and sub.value.attr == "mark"
                ):
                    found.add(sub.attr)
    return found


def selection_errors(path: Path) -> list[str]:
    """Why a test module may not carry the marker ([] when it may, or does not carry it)."""
    marks = _marks(ast.parse(path.read_text()))
    if MARKER not in marks:
        return []
    # every import, also inside functions and through importlib (the layering check's reader)
    product = sorted(
        {name for name, _ in imported_names(path, path.stem) if name.split(".")[0] == PRODUCT}
    )
    errors = [f"{path.name}: imports the product ({', '.join(product)})"] if product else []
    if "provers" not in marks:
        errors.append(f"{path.name}: marked {MARKER} but not provers")
    if "needs_prover" not in marks:  # make check leaves it out too
        errors.append(f"{path.name}: marked {MARKER} but not needs_prover")
    return errors


def _test_files() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def test_marked_files_import_nothing_of_the_product() -> None:
    marked = [p for p in _test_files() if MARKER in _marks(ast.parse(p.read_text()))]
    assert marked, "no file is left out: the selection would be a no-op"
    errors = [e for p in marked for e in selection_errors(p)]
    assert errors == []


def _planted(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "test_planted.py"
    path.write_text(text)
    return path


MARKED = (
    "import pytest\n"
    "pytestmark = [pytest.mark.provers, pytest.mark.external_provers, pytest.mark.needs_prover]\n"
)


def test_negative_control_a_marked_file_importing_the_product_is_refused(tmp_path: Path) -> None:
    top = _planted(tmp_path, MARKED + "from sonnx_mul import mul\n")
    assert selection_errors(top) == [
        "test_planted.py: imports the product (sonnx_mul, sonnx_mul.mul)"
    ]
    inside = _planted(tmp_path, MARKED + "def test_x():\n    import sonnx_mul.kernel\n")
    assert selection_errors(inside) == ["test_planted.py: imports the product (sonnx_mul.kernel)"]
    dynamic = _planted(
        tmp_path, MARKED + "import importlib\nimportlib.import_module('sonnx_mul.kernel')\n"
    )
    assert selection_errors(dynamic) == ["test_planted.py: imports the product (sonnx_mul.kernel)"]
    # the tooling package's name starts like the product's: not an import of it
    tooling = _planted(tmp_path, MARKED + "from sonnx_mul_assurance.c import wp\n")
    assert selection_errors(tooling) == []


def test_negative_control_a_marked_file_that_runs_no_prover_is_refused(tmp_path: Path) -> None:
    planted = _planted(tmp_path, "import pytest\npytestmark = pytest.mark.external_provers\n")
    assert selection_errors(planted) == [
        "test_planted.py: marked external_provers but not provers",
        "test_planted.py: marked external_provers but not needs_prover",
    ]


# Its child pytest collects the marked files, which skip at import without their tool
# (cppcheck, frama-c): they would not be collected. It starts no tool itself.
@pytest.mark.needs_prover
def test_the_debian_run_deselects_exactly_the_marked_files() -> None:
    makefile = (REPO / "Makefile").read_text()
    select = re.search(r"^DEBIAN_SELECT\s*:=\s*(.+)$", makefile, re.M)
    assert select, "DEBIAN_SELECT not in the Makefile"
    assert select.group(1).strip() == f'-m "not {MARKER}"'
    assert "PYTEST_SELECT='$(DEBIAN_SELECT)'" in makefile
    marked = {
        p.relative_to(REPO).as_posix()
        for p in _test_files()
        if MARKER in _marks(ast.parse(p.read_text()))
    }
    # pytest's own reading of the marker: the files it collects under it
    collected = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            MARKER,
            "tests",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    files = {line.split("::")[0] for line in collected.stdout.splitlines() if "::" in line}
    assert files == marked, collected.stdout[-2000:] + collected.stderr[-2000:]
