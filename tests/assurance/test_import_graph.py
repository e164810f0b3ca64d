"""The layering of the two packages: the product never imports the tooling; no import circles.

Static: every module of ``src/sonnx_mul`` is parsed; any import of
``sonnx_mul_assurance`` (at module top or inside a function, by ``import``,
``importlib.import_module``, ``__import__``, ``find_spec``, or a string
naming it outside a docstring) fails. Dynamic: every product module is
imported in a fresh interpreter and no ``sonnx_mul_assurance`` module may be
loaded afterwards. Circles: the module import graph of each package, and the one of every
top-level module of ``src/`` (the package and the verifier beside it, which
imports nothing of ``src/``: the package's CLI imports its error contract),
counting every import statement, also inside functions, not those under
``TYPE_CHECKING``, must have no cycle. Each check has a negative control: the
same check on a copy with one planted import fails.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
PRODUCT = SRC / "sonnx_mul"
VERIFIER = "sonnx_mul_verify"
TOOLING = REPO / "assurance" / "sonnx_mul_assurance"
FORBIDDEN = "sonnx_mul_assurance"
IMPORT_CALLS = frozenset({"import_module", "__import__", "find_spec", "import_string"})


def modules_of(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` of a package directory."""
    top = package_dir.name
    found: dict[str, Path] = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = [top, *path.relative_to(package_dir).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _in_type_checking(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings or bare string statements."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def imported_names(
    path: Path, module: str, known: set[str] | None = None
) -> Iterator[tuple[str, int]]:
    """(absolute module name, line) of every import in ``path`` (``module``'s file).

    ``from X import a`` yields ``X.a`` (``a`` may be a submodule) and ``X``,
    the latter only when ``a`` is not among the ``known`` modules;
    relative imports are resolved; calls such as ``importlib.import_module("m")``
    with a constant name count as imports.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and _in_type_checking(node, parents):
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            subs = [f"{target}.{alias.name}" for alias in node.names]
            if known is None or any(sub not in known for sub in subs):
                yield target, node.lineno
            for sub in subs:
                yield sub, node.lineno
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in IMPORT_CALLS and node.args and isinstance(node.args[0], ast.Constant):
                yield str(node.args[0].value), node.lineno


def tooling_references(package_dir: Path) -> list[str]:
    """Every place in a package that imports, or names as a string, the tooling."""
    found: list[str] = []
    for module, path in modules_of(package_dir).items():
        for name, line in imported_names(path, module):
            if name == FORBIDDEN or name.startswith(FORBIDDEN + "."):
                found.append(f"{path.name}:{line} imports {name}")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docs
                and node.value.strip().startswith(FORBIDDEN)
            ):
                found.append(f"{path.name}:{node.lineno} names {node.value.strip()[:60]!r}")
    return sorted(set(found))


def top_level_modules(src: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module under ``src``: the modules of each
    package directory and each top-level ``.py`` file (the verifier)."""
    found: dict[str, Path] = {}
    for entry in sorted(src.iterdir()):
        if entry.is_dir() and (entry / "__init__.py").is_file():
            found.update(modules_of(entry))
        elif entry.suffix == ".py":
            found[entry.stem] = entry
    return found


def import_graph(package_dir: Path, *, top: bool = False) -> dict[str, set[str]]:
    """Module -> modules of the same package it imports (``top``: of every top-level
    module of the directory ``package_dir``, :func:`top_level_modules`).

    ``from P import m`` where ``P.m`` is a module is an edge to ``P.m`` only:
    the package ``P`` is being initialised already whenever one of its
    modules runs (Python imports parents first), so that is no circle.
    """
    mods = top_level_modules(package_dir) if top else modules_of(package_dir)
    known = set(mods)
    return {
        module: {name for name, _ in imported_names(path, module, known) if name in mods} - {module}
        for module, path in mods.items()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` as a path ``[a, b, ..., a]``, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


def loaded_tooling_after_importing_all(package_dir: Path) -> list[str]:
    """Tooling modules loaded after importing every module of ``package_dir`` afresh."""
    names = [m for m in modules_of(package_dir) if not m.endswith("__main__")]
    code = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] == {FORBIDDEN!r}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "PYTHONPATH": str(package_dir.parent)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result: list[str] = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture()
def product_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "sonnx_mul"
    shutil.copytree(PRODUCT, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def plant(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + "\n\n" + text, encoding="utf-8")


# ---------------------------------------------------------------- no import of the tooling
def test_the_product_does_not_import_the_tooling_statically() -> None:
    assert tooling_references(PRODUCT) == []


@pytest.mark.parametrize(
    "planted",
    [
        "def f() -> None:\n    import sonnx_mul_assurance.report\n",
        "def f() -> None:\n    from sonnx_mul_assurance import commands\n",
        "import importlib\n\ndef f() -> object:\n"
        "    return importlib.import_module('sonnx_mul_assurance.report')\n",
        "def f() -> object:\n    return __import__('sonnx_mul_assurance')\n",
        "NAME = 'sonnx_mul_assurance.commands'\n",
    ],
)
def test_negative_control_a_planted_tooling_import_is_found(
    product_copy: Path, planted: str
) -> None:
    plant(product_copy / "cli" / "errors.py", planted)
    assert len(tooling_references(product_copy)) >= 1


def test_importing_every_product_module_loads_no_tooling() -> None:
    assert loaded_tooling_after_importing_all(PRODUCT) == []


def test_negative_control_a_planted_runtime_import_is_seen(product_copy: Path) -> None:
    # Built by concatenation: the static scan cannot see it, the import still happens.
    plant(product_copy / "errors.py", "__import__('sonnx_mul_' + 'assurance.why3.whyml')\n")
    assert "sonnx_mul_assurance.why3.whyml" in loaded_tooling_after_importing_all(product_copy)


# ---------------------------------------------------------------- no circles
@pytest.mark.parametrize("package", [PRODUCT, TOOLING], ids=["product", "tooling"])
def test_no_import_circle(package: Path) -> None:
    graph = import_graph(package)
    assert len(graph) > 10 and any(graph.values())  # the graph is really built
    assert find_cycle(graph) is None


def test_no_import_circle_among_the_top_level_modules_of_src() -> None:
    """The package and the verifier beside it: the CLI imports the verifier's error
    contract, the verifier imports nothing of ``src/`` (the launcher, a script outside
    ``src/``, imports both)."""
    graph = import_graph(SRC, top=True)
    assert VERIFIER in graph and "sonnx_mul.cli" in graph  # every top-level module is read
    assert VERIFIER in graph["sonnx_mul.cli"]  # the edge the circle used to close is seen
    assert graph[VERIFIER] == set()
    assert find_cycle(graph) is None


@pytest.fixture()
def src_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "src"
    shutil.copytree(PRODUCT, dest / "sonnx_mul", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(SRC / f"{VERIFIER}.py", dest / f"{VERIFIER}.py")
    return dest


def test_negative_control_a_verifier_dispatching_to_the_cli_is_a_circle(src_copy: Path) -> None:
    """The circle this layering removed: the verifier handing other subcommands to the CLI."""
    plant(
        src_copy / f"{VERIFIER}.py",
        "def _product_main() -> int:\n    from sonnx_mul.cli import main\n\n    return main()\n",
    )
    graph = import_graph(src_copy, top=True)
    assert graph[VERIFIER] == {"sonnx_mul.cli"}
    cycle = find_cycle(graph)
    assert cycle is not None and cycle[0] == cycle[-1]
    assert {VERIFIER, "sonnx_mul.cli"} <= set(cycle)


def test_negative_control_a_planted_circle_is_found(product_copy: Path, tmp_path: Path) -> None:
    plant(product_copy / "errors.py", "def f() -> None:\n    from .cli import main\n")
    cycle = find_cycle(import_graph(product_copy))
    assert cycle is not None and cycle[0] == cycle[-1] and "sonnx_mul.errors" in cycle
    tooling = tmp_path / "tooling" / "sonnx_mul_assurance"
    shutil.copytree(TOOLING, tooling, ignore=shutil.ignore_patterns("__pycache__"))
    plant(tooling / "why3" / "whyml.py", "def f() -> None:\n    from .tables import generate\n")
    cycle = find_cycle(import_graph(tooling))
    assert cycle is not None and "sonnx_mul_assurance.why3.whyml" in cycle


def test_type_checking_imports_are_not_edges(tmp_path: Path) -> None:
    pkg = tmp_path / "p"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"
    )
    assert find_cycle(import_graph(pkg)) is None
    (pkg / "b.py").write_text("def f() -> None:\n    from .a import x\n")
    assert find_cycle(import_graph(pkg)) == ["p.a", "p.b", "p.a"]


# ---------------------------------------------------------------- imports at module top
def hidden_imports(package_dir: Path) -> list[str]:
    """Imports inside functions, unless their line carries a ``measured`` comment."""
    found: list[str] = []
    for path in sorted(package_dir.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                hidden = isinstance(node, ast.Import | ast.ImportFrom)
                if hidden and "measured" not in lines[node.lineno - 1]:
                    rel = path.relative_to(package_dir).as_posix()
                    found.append(f"{rel}:{node.lineno} in {fn.name}()")
    return found


def test_the_product_imports_at_module_top() -> None:
    assert hidden_imports(PRODUCT) == []


def test_negative_control_a_function_level_import_is_found(product_copy: Path) -> None:
    plant(product_copy / "errors.py", "def f() -> None:\n    import json\n")
    plant(product_copy / "dtypes.py", "def g() -> None:\n    import json  # measured: 40 ms\n")
    assert hidden_imports(product_copy) == [
        f"errors.py:{_last_line(product_copy / 'errors.py')} in f()"
    ]


def _last_line(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())
