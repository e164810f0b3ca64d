"""The verifier stays outside what it checks (issue 27), and knows the interpreter's own hooks.

- ``sonnx_mul_verify`` is stdlib-only and loads nothing of ``sonnx_mul``,
  numpy or onnx while it locates and hashes the package; locating it
  (:class:`importlib.machinery.PathFinder`) runs none of its code, whereas
  ``importlib.util.find_spec`` of a submodule would (negative control).
- Every environment variable the package reads is one the verifier knows.
- The package is imported only after every hash matched, in a child process:
  a child that dies by a signal is a finding, not a crash of the verifier.
- Start-up hooks: a ``sitecustomize`` in the interpreter's standard-library
  directory (Debian's, a link to ``/etc/python3.X``) is the interpreter's
  own, named in a note; one in a site-packages or ``PYTHONPATH`` directory,
  or a stdlib link leaving it, is a finding.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from types import ModuleType

import pytest

import sonnx_mul_verify
from sonnx_mul.digest import package_files, sha256
from sonnx_mul_verify import KNOWN_ENVIRONMENT, locate_package, startup_hooks

REPO = Path(__file__).resolve().parents[2]
PRODUCT = REPO / "src" / "sonnx_mul"
VERIFIER = Path(sonnx_mul_verify.__file__)
SITE = sysconfig.get_paths()["purelib"]


def run(argv: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SONNX_MUL_")}
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=300, check=False, env={**clean, **env},
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.fixture()
def installed(tmp_path: Path) -> tuple[Path, Path]:
    """(a copy of the package, a report covering it, the verifier's hash recorded)."""
    pkg = tmp_path / "site" / "sonnx_mul"
    shutil.copytree(PRODUCT, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    return pkg, report_for(pkg, tmp_path / "report.json")


def report_for(pkg: Path, path: Path, verifier: str | None = None) -> Path:
    block = {"files": package_files(pkg), "verifier": {"sha256": verifier or sha256(VERIFIER)}}
    path.write_text(json.dumps({"package": block, "gate": {"passed": True, "problems": []}}))
    return path


def pythonpath(pkg: Path) -> str:
    return os.pathsep.join((str(pkg.parent), SITE))


# ---------------------------------------------------------------- nothing of the package runs
HASH_PHASE = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("sonnx_mul_verify", sys.argv[1])
v = importlib.util.module_from_spec(spec)
sys.modules["sonnx_mul_verify"] = v
spec.loader.exec_module(v)
path = v.search_path()
where, why = v.locate_package(path)
files = json.loads(open(sys.argv[2], "rb").read())["package"]["files"]
outcome = v.compare(files, where, path=path)
stdlib = v.stdlib_dirs()
outside = sorted(
    name for name, m in sys.modules.items()
    if getattr(m, "__file__", None) and name != "sonnx_mul_verify"
    and not any(v.Path(m.__file__).resolve().is_relative_to(d) for d in stdlib)
)
print(json.dumps({"where": str(where), "ok": outcome.ok, "outside": outside,
                  "modules": sorted(sys.modules)}))
"""


def test_the_hash_phase_loads_only_the_standard_library(installed: tuple[Path, Path]) -> None:
    pkg, report = installed
    done = run(
        [sys.executable, "-I", "-S", "-c", HASH_PHASE, str(VERIFIER), str(report)],
        PYTHONPATH=pythonpath(pkg),
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["where"] == str(pkg) and answer["ok"] is True
    assert answer["outside"] == []  # every module loaded comes from the standard library
    product = ("sonnx_mul", "numpy", "onnx", "ml_dtypes", "sonnx_mul_assurance")
    loaded = [m for m in answer["modules"] if m.split(".")[0] in product]
    assert loaded == []


def test_locating_the_package_runs_none_of_its_code(tmp_path: Path) -> None:
    """PathFinder only looks; find_spec of a submodule imports the parent (the control)."""
    pkg = tmp_path / "p" / "sonnx_mul"
    pkg.mkdir(parents=True)
    marker = tmp_path / "ran"
    (pkg / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (pkg / "api.py").write_text("")
    assert locate_package([pkg.parent]) == (pkg, None)
    assert not marker.exists()
    control = "import importlib.util, sys; sys.path[:0] = [sys.argv[1]]; "
    control += "importlib.util.find_spec('sonnx_mul.api')"
    done = run([sys.executable, "-I", "-S", "-c", control, str(pkg.parent)])
    assert done.returncode == 0, done.stderr
    assert marker.exists()  # the parent package ran: why the verifier does not use it


def test_a_module_shadowing_the_package_is_a_finding(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    pkg, report = installed
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "sonnx_mul.py").write_text("print('verify-install: OK')\n")
    where, why = locate_package([shadow, pkg.parent])
    assert where is None and why == (
        f"sonnx_mul would be imported from {shadow / 'sonnx_mul.py'}, not a package directory"
    )
    path = os.pathsep.join((str(shadow), pythonpath(pkg)))
    done = run([sys.executable, "-I", "-m", "sonnx_mul_verify", str(report)], PYTHONPATH=path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"missing: {why}" in done.stdout.splitlines()
    assert "verify-install: OK" not in done.stdout


def test_the_verifier_hashes_as_the_report_does() -> None:
    """Its stdlib copy of the hashing agrees with sonnx_mul.digest, file for file."""
    files, caches, refused = sonnx_mul_verify.inventory(PRODUCT)
    assert files == package_files(PRODUCT) and refused == []
    assert all(p.parent.name == "__pycache__" for p in caches)


# ---------------------------------------------------------------- the child
def test_a_child_killed_by_a_signal_is_a_finding(installed: tuple[Path, Path]) -> None:
    """A package the report covers but that dies on import: exit 1 and a line, no signal here."""
    pkg, report = installed
    init = pkg / "__init__.py"
    init.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGBUS)\n" + init.read_text())
    report = report_for(pkg, report)  # the report covers the dying package: hashes match
    done = run([sys.executable, "-I", "-m", "sonnx_mul_verify", str(report)], **{
        "PYTHONPATH": pythonpath(pkg)
    })  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    line = f"selftest: importing the package in a child process was killed by signal {7}"
    assert line in done.stdout.splitlines(), done.stdout
    assert "Traceback" not in done.stderr and "verify-install: OK" not in done.stdout


def test_the_verifier_hash_the_report_records_is_compared(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    pkg, _ = installed
    wrong = report_for(pkg, tmp_path / "wrong.json", verifier="0" * 64)
    done = run([sys.executable, "-I", "-m", "sonnx_mul_verify", str(wrong)], **{
        "PYTHONPATH": pythonpath(pkg)
    })  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert any(
        line.startswith("verifier: ") and f"is not the verifier the report records ({'0' * 64})"
        in line for line in done.stdout.splitlines()
    ), done.stdout  # fmt: skip


# ---------------------------------------------------------------- environment
def environment_reads(package_dir: Path) -> set[str]:
    """Names of the environment variables the package's Python and C code read."""
    names: set[str] = set()
    for path in package_dir.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = {
            t.id: n.value.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
            for t in n.targets
            if isinstance(t, ast.Name) and isinstance(n.value.value, str)
        }
        for node in ast.walk(tree):
            text = ast.unparse(node)
            arg: ast.expr | None = None
            if isinstance(node, ast.Call) and re.fullmatch(
                r"os\.(environ\.get|getenv)", ast.unparse(node.func)
            ):
                arg = node.args[0] if node.args else None
            elif isinstance(node, ast.Subscript) and text.startswith("os.environ["):
                arg = node.slice
            if isinstance(arg, ast.Constant):
                names.add(str(arg.value))
            elif isinstance(arg, ast.Name):
                names.add(constants.get(arg.id, f"<{arg.id}>"))
            elif arg is not None:
                names.add(f"<{ast.unparse(arg)}>")
    for path in package_dir.rglob("*.c"):
        names |= set(re.findall(r"getenv\(\"([^\"]+)\"\)", path.read_text(encoding="utf-8")))
    return names


def test_every_variable_the_package_reads_is_known_to_the_verifier() -> None:
    assert environment_reads(PRODUCT) == set(KNOWN_ENVIRONMENT)


def test_negative_control_a_new_variable_is_seen(tmp_path: Path) -> None:
    copy = tmp_path / "sonnx_mul"
    shutil.copytree(PRODUCT, copy, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    with (copy / "api.py").open("a") as f:
        f.write("\nFAST = os.environ.get('SONNX_MUL_FAST')\n")
    with (copy / "_native.c").open("a") as f:
        f.write('\nstatic const char *threads(void) { return getenv("SONNX_MUL_THREADS"); }\n')
    assert environment_reads(copy) - set(KNOWN_ENVIRONMENT) == {
        "SONNX_MUL_FAST",
        "SONNX_MUL_THREADS",
    }


# ---------------------------------------------------------------- the interpreter's own hooks
@pytest.fixture()
def interpreter(tmp_path: Path) -> tuple[Path, Path]:
    """(a stdlib directory, an /etc/python3.X directory) laid out as Debian does."""
    stdlib = tmp_path / "usr" / "lib" / "python3.11"
    etc = tmp_path / "etc" / "python3.11"
    stdlib.mkdir(parents=True)
    etc.mkdir(parents=True)
    (etc / "sitecustomize.py").write_text(
        "try:\n    import apport_python_hook\nexcept ImportError:\n    pass\n"
    )
    (stdlib / "sitecustomize.py").symlink_to(etc / "sitecustomize.py")
    return stdlib, etc


def hooks(path: list[Path], stdlib: Path, etc: Path) -> tuple[list[str], list[str], list[str]]:
    return startup_hooks([], path=path, stdlib=[stdlib.resolve()], etc=etc, modules={})


def test_a_sitecustomize_of_the_interpreter_is_trusted_and_named(
    interpreter: tuple[Path, Path],
) -> None:
    stdlib, etc = interpreter
    bad, allowed, trusted = hooks([stdlib], stdlib, etc)
    link = stdlib / "sitecustomize.py"
    assert bad == [] and allowed == []
    assert trusted == [f"sitecustomize module {link} (-> {(etc / 'sitecustomize.py').resolve()})"]
    (stdlib / "sitecustomize.py").unlink()  # a plain file in the stdlib directory: also its own
    (stdlib / "sitecustomize.py").write_text("")
    assert hooks([stdlib], stdlib, etc)[2] == [f"sitecustomize module {link}"]


@pytest.mark.parametrize("where", ["site-packages", "pythonpath", "stdlib-link-out", "below"])
def test_a_sitecustomize_added_later_is_a_finding(
    interpreter: tuple[Path, Path], tmp_path: Path, where: str
) -> None:
    stdlib, etc = interpreter
    if where == "site-packages":  # pyenv's site-packages lies below its stdlib directory
        added = stdlib / "site-packages"
        path = [added, stdlib]
    elif where == "pythonpath":  # first on the path: it runs instead of the interpreter's
        added = tmp_path / "pythonpath"
        path = [added, stdlib]
    elif where == "below":
        added = stdlib / "lib-extra"
        path = [added]
    else:  # the stdlib file is a link to a directory nobody vouches for
        added = tmp_path / "elsewhere"
        path = [stdlib]
    added.mkdir()
    (added / "sitecustomize.py").write_text("import sonnx_patch\n")
    if where == "stdlib-link-out":
        (stdlib / "sitecustomize.py").unlink()
        (stdlib / "sitecustomize.py").symlink_to(added / "sitecustomize.py")
    bad, allowed, trusted = hooks(path, stdlib, etc)
    assert trusted == [] and allowed == []
    assert (
        len(bad) == 1
        and bad[0].startswith("sitecustomize module ")
        and "runs at start-up" in (bad[0])
    )


def test_a_pythonpath_sitecustomize_is_seen_beside_the_loaded_one(
    interpreter: tuple[Path, Path], tmp_path: Path
) -> None:
    """Under ``-I`` the process loaded the interpreter's own; the deployment reads
    ``PYTHONPATH`` and loads the other: both are judged."""
    stdlib, etc = interpreter
    added = tmp_path / "pythonpath"
    added.mkdir()
    (added / "sitecustomize.py").write_text("import sonnx_patch\n")
    loaded = ModuleType("sitecustomize")
    loaded.__file__ = str(stdlib / "sitecustomize.py")
    bad, _, trusted = startup_hooks(
        [], path=[added, stdlib], stdlib=[stdlib.resolve()], etc=etc,
        modules={"sitecustomize": loaded},
    )  # fmt: skip
    assert [t.split(" (->")[0] for t in trusted] == [f"sitecustomize module {loaded.__file__}"]
    assert bad == [f"sitecustomize module {added / 'sitecustomize.py'} runs at start-up"]


def real_interpreter_hook() -> Path | None:
    """This interpreter's own sitecustomize in its stdlib directory (Debian's), if any."""
    candidate = Path(sysconfig.get_paths()["stdlib"]) / "sitecustomize.py"
    return candidate if candidate.is_file() else None


@pytest.mark.skipif(
    real_interpreter_hook() is None,
    reason="this interpreter has no sitecustomize of its own (Debian's python3 has one; "
    "make test-debian-python runs this test there)",
)
def test_the_interpreters_own_sitecustomize_is_named_and_ok(installed: tuple[Path, Path]) -> None:
    pkg, report = installed
    script = Path(sys.executable).parent / "sonnx-mul"
    done = run([str(script), "verify-install", str(report)], PYTHONPATH=pythonpath(pkg))
    assert done.returncode == 0, done.stdout + done.stderr
    hook = real_interpreter_hook()
    assert any(
        line.startswith(f"note: interpreter hook: sitecustomize module {hook}")
        for line in done.stdout.splitlines()
    ), done.stdout
