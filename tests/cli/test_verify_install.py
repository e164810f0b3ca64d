"""`sonnx-mul verify-install`, tried as an attacker would (issue 19).

Each attack is first shown to work (the tampered package really broadcasts),
then shown to be caught: these are the negative controls of verify-install.
The attacks run ``sonnx-mul verify-install`` in a subprocess on a copy of the
package, so they
exercise the command exactly as a deployment runs it: the virtual environment's
interpreter, ``PYTHONPATH`` putting the copy first (the venv, created by
``make install``, holds only setuptools' own start-up hooks, which are allowed;
in-process calls scan no site directory). ``SONNX_MUL_UNDER_TEST``
(a directory holding a ``sonnx_mul`` package; default ``src/``) lets the same
tests be pointed at another version of the package, e.g. the one before this
hardening, to see them fail there. The verifier is ``sonnx_mul_verify``
(outside the package, issue 27); ``tests/cli/test_verify_attacks.py`` holds
the attacks that answer in its place when the package is imported first.
"""

from __future__ import annotations

import importlib.util
import json
import marshal
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from sonnx_mul.digest import package_files, sha256
from sonnx_mul_verify import (
    EXIT_GATE_FAILED,
    EXIT_MISMATCH,
    EXIT_OK,
    EXIT_UNREADABLE,
    cache_problem,
    compare,
    foreign_modules,
    inventory,
    startup_hooks,
    verify,
)
from support import LAUNCHER

REPO = Path(__file__).resolve().parents[2]
UNDER_TEST = Path(os.environ.get("SONNX_MUL_UNDER_TEST", REPO / "src")) / "sonnx_mul"
SITE = sysconfig.get_paths()["purelib"]
BROADCAST = "import numpy as np, sonnx_mul; print(sonnx_mul.mul(np.ones((2, 3)), np.ones(3)).shape)"
EVIL_MUL = "\n\nimport numpy as _np\n\n\ndef mul(a, b, **kwargs):\n    return _np.multiply(a, b)\n"


# ---------------------------------------------------------------- helpers
@pytest.fixture(autouse=True)
def no_ambient_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process checks scan only the hook directories a test names."""
    import sonnx_mul_verify

    monkeypatch.setattr(sonnx_mul_verify, "site_dirs", lambda path=None: [])
    monkeypatch.setattr(sonnx_mul_verify, "CUSTOMIZE_MODULES", ())


def copy_package(parent: Path) -> Path:
    """A copy of the package under test in ``parent/sonnx_mul`` (without caches)."""
    pkg = parent / "sonnx_mul"
    shutil.copytree(UNDER_TEST, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    return pkg


def write_report(path: Path, files: dict[str, str], gate_passed: bool = True) -> Path:
    """A report holding what verify-install reads: package files and the gate verdict."""
    problems = [] if gate_passed else ["R1: no test evidence"]
    doc = {"package": {"files": files}, "gate": {"passed": gate_passed, "problems": problems}}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.fixture()
def installed(tmp_path: Path) -> tuple[Path, Path]:
    """(package copy, a report covering it with a passing gate)."""
    pkg = copy_package(tmp_path / "site")
    return pkg, write_report(tmp_path / "report.json", package_files(pkg))


def python(
    site_dir: Path, code: str, *args: str, flags: tuple[str, ...] = (), extra: str = ""
) -> subprocess.CompletedProcess[str]:
    """``code`` in a Python that imports sonnx_mul from ``site_dir`` (numpy from the venv)."""
    path = os.pathsep.join(p for p in (extra, str(site_dir), SITE) if p)
    return subprocess.run(
        [sys.executable, *flags, "-c", code, *args],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": path},
    )  # fmt: skip


CLI = f"import runpy; runpy.run_path({str(LAUNCHER)!r}, run_name='__main__')"
"""What the ``sonnx-mul`` console script runs: the launcher, from its source."""


def verify_installed(site_dir: Path, report: Path, **kw: str) -> subprocess.CompletedProcess[str]:
    return python(site_dir, CLI, "verify-install", str(report), **kw)


def pyc_bytes(code: object, mode: str, source: Path) -> bytes:
    """A cache file for ``source`` holding ``code``, with the header ``mode`` asks for.

    The header is what CPython checks before running the cache: the
    source's mtime and size (timestamp), or its SipHash (checked-hash), or
    nothing (unchecked-hash).
    """
    magic = importlib.util.MAGIC_NUMBER
    body = marshal.dumps(code)
    if mode == "timestamp":
        st = source.stat()
        header = (0).to_bytes(4, "little") + int(st.st_mtime).to_bytes(4, "little")
        header += (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    else:
        flags = 0b11 if mode == "checked-hash" else 0b01
        header = flags.to_bytes(4, "little") + importlib.util.source_hash(source.read_bytes())
    return magic + header + body


def plant_pyc(pkg: Path, module: str, mode: str, evil: bool = True, opt: str = "") -> Path:
    """Write the cache of ``pkg/module.py``: its own code, or that code plus EVIL_MUL."""
    source = pkg / f"{module}.py"
    text = source.read_text(encoding="utf-8") + (EVIL_MUL if evil else "")
    optimize = int(opt or 0)
    code = compile(text, str(source), "exec", dont_inherit=True, optimize=optimize)
    cache = Path(importlib.util.cache_from_source(str(source), optimization=opt))
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_bytes(pyc_bytes(code, mode, source))
    return cache


def within(seconds: float, action: Callable[[], object]) -> object:
    """``action()``, failing if it is still running after ``seconds`` (it blocked)."""
    result: list[object] = []
    errors: list[BaseException] = []

    def go() -> None:
        try:
            result.append(action())
        except BaseException as exc:  # re-raised below
            errors.append(exc)

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked"
    if errors:
        raise errors[0]
    return result[0]


# ---------------------------------------------------------------- a real install
@pytest.fixture(scope="module")
def fresh_install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A non-editable install of this tree (pip install --no-deps --target)."""
    target = tmp_path_factory.mktemp("site")
    build = tmp_path_factory.mktemp("build")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
         "--no-compile", "--target", str(target), str(REPO)],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "TMPDIR": str(build), "PIP_NO_INPUT": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert (target / "sonnx_mul" / "oracle" / "reference.py").is_file()
    return target


@pytest.fixture(scope="module")
def built_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report the assurance tooling writes (no evidence: its gate fails)."""
    from sonnx_mul_assurance.report import build_report

    out = tmp_path_factory.mktemp("verify-report")
    report = build_report(REPO, out / "no-evidence", probe_tools=False)
    path = out / "traceability.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


def passing(report: Path, tmp: Path) -> Path:
    """``report`` with its gate marked passed (the files block untouched)."""
    doc = json.loads(report.read_text())
    doc["gate"] = {"passed": True, "problems": []}
    out = tmp / "passing.json"
    out.write_text(json.dumps(doc))
    return out


def test_verify_install_passes_on_a_fresh_install_and_fails_after_one_byte(
    fresh_install: Path, built_report: Path, tmp_path: Path
) -> None:
    report = passing(built_report, tmp_path)
    ok = verify_installed(fresh_install, report)
    assert ok.returncode == EXIT_OK, ok.stdout + ok.stderr
    assert "verify-install: OK" in ok.stdout and str(fresh_install) in ok.stdout

    for name, marker in (("api.py", b"element-wise"), (native_binary(fresh_install).name, None)):
        module = fresh_install / "sonnx_mul" / name
        original = module.read_bytes()
        # a byte of a docstring (the code still imports), or of the binary's end
        index = original.index(marker) if marker else len(original) - 1
        try:
            module.write_bytes(
                original[:index] + bytes([original[index] ^ 1]) + original[index + 1 :]
            )
            bad = verify_installed(fresh_install, report)
            assert bad.returncode == EXIT_MISMATCH, bad.stdout + bad.stderr
            assert f"changed: {name}" in bad.stdout
            assert "MISMATCH" in bad.stderr
        finally:
            module.write_bytes(original)


def native_binary(site: Path) -> Path:
    """The built extension sonnx_mul._native under a site directory."""
    (binary,) = (site / "sonnx_mul").glob("_native.*.so")
    return binary


def test_the_native_binary_is_among_the_hashed_files(
    fresh_install: Path, built_report: Path
) -> None:
    """The report hashes the extension built in the checkout; a fresh build of
    the same sources is byte for byte the same (no debug paths), so
    verify-install covers the code that multiplies."""
    from sonnx_mul import _native
    from sonnx_mul.digest import sha256

    files = json.loads(built_report.read_text())["package"]["files"]
    built = Path(_native.__file__)
    assert built.name in files and files[built.name] == sha256(built)
    assert sha256(native_binary(fresh_install)) == files[built.name]
    assert "_native.c" in files and "_native.pyi" in files


# ---------------------------------------------------------------- exactly the product
def test_the_report_covers_exactly_the_product_files(built_report: Path) -> None:
    files = json.loads(built_report.read_text())["package"]["files"]
    assert files == package_files(REPO / "src" / "sonnx_mul")
    assert "api.py" in files and "cli/__init__.py" in files
    assert not any("assurance" in f or "verify" in f for f in files)
    verifier = json.loads(built_report.read_text())["package"]["verifier"]
    assert verifier == {
        "file": "src/sonnx_mul_verify.py",
        "sha256": sha256(REPO / "src" / "sonnx_mul_verify.py"),
    }
    tooling = {
        p.relative_to(REPO / "assurance").as_posix() for p in (REPO / "assurance").rglob("*.py")
    }
    assert not set(files) & tooling


def test_verify_install_imports_no_tooling_and_hashes_no_tooling_file(
    installed: tuple[Path, Path],
) -> None:
    pkg, report = installed
    code = (
        "import sys; from sonnx_mul_verify import verify; code = verify(sys.argv[1]); "
        "bad = sorted(m for m in sys.modules if m.startswith('sonnx_mul_assurance')); "
        "print('TOOLING', bad); sys.exit(code)"
    )
    done = python(pkg.parent, code, str(report))
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    assert "TOOLING []" in done.stdout
    # A tooling module dropped into the product is an extra file, not covered.
    (pkg / "sonnx_mul_assurance").mkdir()
    (pkg / "sonnx_mul_assurance" / "__init__.py").write_text("")
    assert compare(json.loads(report.read_text())["package"]["files"], pkg).extra == [
        "sonnx_mul_assurance/__init__.py"
    ]


def test_extra_and_missing_files_are_mismatches(installed: tuple[Path, Path]) -> None:
    pkg, report = installed
    expected = json.loads(report.read_text())["package"]["files"]
    assert compare(expected, pkg, modules={}).ok
    assert verify_installed(pkg.parent, report).returncode == EXIT_OK
    (pkg / "trojan.py").write_text("import os\n")
    (pkg / "errors.py").unlink()
    outcome = compare(expected, pkg, modules={})
    assert outcome.extra == ["trojan.py"] and outcome.missing == ["errors.py"]
    assert verify_installed(pkg.parent, report).returncode == EXIT_MISMATCH


def test_a_sourceless_pyc_in_the_package_is_an_extra_file(installed: tuple[Path, Path]) -> None:
    """``sonnx_mul/evil.pyc`` is importable as ``sonnx_mul.evil``: never skipped as a cache."""
    pkg, report = installed
    code = compile("x = 1\n", "evil.py", "exec")
    (pkg / "evil.pyc").write_bytes(pyc_bytes(code, "unchecked-hash", pkg / "api.py"))
    assert python(pkg.parent, "import sonnx_mul.evil as e; print(e.x)").stdout.strip() == "1"
    done = verify_installed(pkg.parent, report)
    assert done.returncode == EXIT_MISMATCH and "extra: evil.pyc" in done.stdout


def test_unreadable_report_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert verify(bad) == EXIT_UNREADABLE
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"schema": "sonnx-mul-traceability/1"}))
    assert verify(old) == EXIT_UNREADABLE
    assert verify(tmp_path / "missing.json") == EXIT_UNREADABLE
    no_gate = tmp_path / "no-gate.json"
    no_gate.write_text(json.dumps({"package": {"files": {"api.py": "0" * 64}}}))
    assert verify(no_gate) == EXIT_UNREADABLE


# ---------------------------------------------------------------- bytecode
@pytest.mark.parametrize("mode", ["timestamp", "checked-hash", "unchecked-hash"])
def test_a_tampered_pyc_that_cpython_runs_is_caught(
    installed: tuple[Path, Path], mode: str
) -> None:
    pkg, report = installed
    clean = verify_installed(pkg.parent, report)
    assert clean.returncode == EXIT_OK, clean.stdout + clean.stderr
    refused = python(pkg.parent, BROADCAST)
    assert "ShapeError" in refused.stderr, refused.stdout + refused.stderr  # R4 holds
    cache = plant_pyc(pkg, "api", mode)
    attack = python(pkg.parent, BROADCAST)
    assert attack.stdout.strip() == "(2, 3)", attack.stderr  # the attack works: it broadcasts
    done = verify_installed(pkg.parent, report)
    assert done.returncode == EXIT_MISMATCH, done.stdout + done.stderr
    assert "OK" not in done.stdout
    rel = cache.relative_to(pkg).as_posix()
    assert f"bytecode: {rel} (its code is not the compilation of its source)" in done.stdout


@pytest.mark.parametrize(
    ("mode", "opt"),
    [
        ("timestamp", ""),
        ("checked-hash", ""),
        ("unchecked-hash", ""),
        ("timestamp", 1),
        ("timestamp", 2),
    ],
)
def test_honest_caches_pass(installed: tuple[Path, Path], mode: str, opt: str) -> None:
    """The negative control of the one above: the compilation of the source is accepted."""
    pkg, report = installed
    for module in ("api", "validation", "__init__"):
        plant_pyc(pkg, module, mode, evil=False, opt=str(opt) if opt else "")
    done = verify_installed(pkg.parent, report)
    assert done.returncode == EXIT_OK, done.stdout + done.stderr


def test_caches_written_by_cpython_itself_pass(installed: tuple[Path, Path]) -> None:
    pkg, report = installed
    done = subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(pkg)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert list(pkg.glob("__pycache__/*.pyc"))
    result = verify_installed(pkg.parent, report)
    assert result.returncode == EXIT_OK, result.stdout + result.stderr


def test_foreign_orphan_and_stale_caches_are_refused(installed: tuple[Path, Path]) -> None:
    pkg, report = installed
    expected = json.loads(report.read_text())["package"]["files"]
    cache = plant_pyc(pkg, "api", "timestamp", evil=False)
    foreign = cache.with_name("api.cpython-399.pyc")
    shutil.copy(cache, foreign)
    orphan = cache.with_name(f"gone.{sys.implementation.cache_tag}.pyc")
    shutil.copy(cache, orphan)
    wrong_magic = plant_pyc(pkg, "errors", "timestamp", evil=False)
    wrong_magic.write_bytes(b"\0\0\r\n" + wrong_magic.read_bytes()[4:])
    stale = plant_pyc(pkg, "dtypes", "timestamp", evil=False)
    (pkg / "dtypes.py").write_text((pkg / "dtypes.py").read_text() + "\n# edited\n")
    found = "\n".join(compare(expected, pkg).bytecode)
    assert "api.cpython-399.pyc (a cache of another interpreter" in found
    assert f"gone.{sys.implementation.cache_tag}.pyc (no verified source" in found
    assert f"{wrong_magic.name} (another interpreter's magic number)" in found
    assert f"{stale.name} (no verified source" in found  # dtypes.py itself is "changed"
    assert f"{cache.name} (" not in found


def test_cache_problem_compares_code_not_headers(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("X = 1.0\nY = (1, frozenset({'a', 'b'}))\n")
    cache = tmp_path / "__pycache__" / f"m.{sys.implementation.cache_tag}.pyc"
    cache.parent.mkdir()
    honest = compile(source.read_bytes(), "elsewhere/m.py", "exec", dont_inherit=True)
    cache.write_bytes(pyc_bytes(honest, "unchecked-hash", source))
    assert cache_problem(cache, source) is None  # another co_filename is not a difference
    for evil in ("X = 1\nY = (1, frozenset({'a', 'b'}))\n", "X = 1.0\nY = (1, frozenset({'a'}))\n"):
        code = compile(evil, str(source), "exec", dont_inherit=True)
        cache.write_bytes(pyc_bytes(code, "unchecked-hash", source))
        assert cache_problem(cache, source) == "its code is not the compilation of its source"
    cache.write_bytes(cache.read_bytes()[:20])
    assert cache_problem(cache, source) is not None


def test_caches_under_pycache_prefix_are_checked(
    installed: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg, report = installed
    expected = json.loads(report.read_text())["package"]["files"]
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    cache = plant_pyc(pkg, "api", "unchecked-hash")
    assert cache.is_relative_to(tmp_path / "prefix")
    assert any("its code is not the compilation" in b for b in compare(expected, pkg).bytecode)


# ---------------------------------------------------------------- start-up hooks
PATCH = "import sonnx_mul, numpy; sonnx_mul.mul = lambda a, b, **k: numpy.multiply(a, b)\n"


def test_a_pth_hook_that_patches_the_package_is_reported(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    pkg, report = installed
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sonnx_patch.py").write_text(PATCH)
    (hooks / "zz-speedups.pth").write_text("# looks harmless\nimport sonnx_patch\n")
    boot = f"import site; site.addsitedir({str(hooks)!r}); "
    attack = python(pkg.parent, boot + BROADCAST)
    assert attack.stdout.strip() == "(2, 3)", attack.stderr  # the hook patched mul
    done = python(pkg.parent, boot + CLI, "verify-install", str(report))
    assert done.returncode == EXIT_MISMATCH, done.stdout + done.stderr
    assert f"hook: {hooks / 'zz-speedups.pth'} runs code at start-up: import sonnx_patch" in (
        done.stdout
    )


def test_sitecustomize_is_reported(installed: tuple[Path, Path], tmp_path: Path) -> None:
    pkg, report = installed
    custom = tmp_path / "custom"
    custom.mkdir()
    (custom / "sitecustomize.py").write_text(PATCH)
    attack = python(pkg.parent, BROADCAST, flags=(), extra=str(custom))
    assert attack.stdout.strip() == "(2, 3)", attack.stderr  # site ran it at start-up
    done = python(pkg.parent, CLI, "verify-install", str(report), flags=(), extra=str(custom))
    assert done.returncode == EXIT_MISMATCH, done.stdout + done.stderr
    assert f"hook: sitecustomize module {custom / 'sitecustomize.py'} runs at start-up" in (
        done.stdout
    )
    pinned = python(
        pkg.parent, CLI, "verify-install", str(report), "--allow-hook",
        sha256(custom / "sitecustomize.py"), flags=(), extra=str(custom),
    )  # fmt: skip
    assert pinned.returncode == EXIT_OK, pinned.stdout + pinned.stderr


def test_hook_allow_list(tmp_path: Path) -> None:
    """setuptools' own lines pass, matched in full; a copy with one more statement does not."""
    (tmp_path / "distutils-precedence.pth").write_text(
        "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') "
        "== 'local'; enabled and __import__('_distutils_hack').add_shim(); \n"
    )
    (tmp_path / "__editable__.pkg-1.0.pth").write_text(
        "import __editable___pkg_1_0_finder; __editable___pkg_1_0_finder.install()\n"
    )
    (tmp_path / "paths.pth").write_text("/some/dir\n# import nothing\n")
    bad, allowed, _ = startup_hooks([tmp_path])
    assert bad == [] and len(allowed) == 2
    (tmp_path / "distutils-precedence.pth").write_text(
        "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') "
        "== 'local'; enabled and __import__('_distutils_hack').add_shim(); import evil\n"
    )
    (tmp_path / "__editable__.other.pth").write_text(
        "import __editable___a_finder; __editable___b_finder.install()\n"
    )
    bad, allowed, _ = startup_hooks([tmp_path])
    assert len(bad) == 2 and len(allowed) == 1
    pin = sha256(tmp_path / "__editable__.other.pth")
    bad, allowed, _ = startup_hooks([tmp_path], allow=[pin])
    assert len(bad) == 1 and "distutils-precedence.pth" in bad[0]


def test_product_modules_loaded_from_elsewhere_are_reported(installed: tuple[Path, Path]) -> None:
    pkg, report = installed
    expected = json.loads(report.read_text())["package"]["files"]
    good = ModuleType("sonnx_mul.api")
    good.__file__ = str(pkg / "api.py")
    evil = ModuleType("sonnx_mul.fastpath")
    evil.__file__ = "/tmp/evil/fastpath.py"
    made = ModuleType("sonnx_mul.validation")  # built in memory by a hook: no file
    tooling = ModuleType("sonnx_mul_assurance.report")
    tooling.__file__ = "/elsewhere/report.py"
    modules = {m.__name__: m for m in (good, evil, made, tooling)}
    assert foreign_modules(pkg, expected, modules) == [
        "sonnx_mul.fastpath (from /tmp/evil/fastpath.py)",
        "sonnx_mul.validation (not loaded from a file)",
    ]
    assert compare(expected, pkg, modules={"sonnx_mul.api": good}).ok


# ---------------------------------------------------------------- native binaries
def test_native_binaries_are_hashed_like_the_sources(installed: tuple[Path, Path]) -> None:
    pkg, report = installed
    native = pkg / f"_native{sysconfig.get_config_var('EXT_SUFFIX')}"
    built = native.exists()  # the real extension, which the report covers, is replaced
    native.write_bytes(b"\x7fELF" + bytes(range(256)) * 64)
    (pkg / "_native.pyd").write_bytes(b"MZ" + bytes(100))
    files = package_files(pkg)
    assert native.name in files and "_native.pyd" in files  # what the report records
    assert compare(files, pkg, modules={}).ok
    data = native.read_bytes()
    native.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    assert compare(files, pkg, modules={}).changed == [native.name]
    without = {k: v for k, v in files.items() if k != "_native.pyd"}
    assert compare(without, pkg, modules={}).extra == ["_native.pyd"]
    done = verify_installed(pkg.parent, report)  # the report before the binary changed
    assert done.returncode == EXIT_MISMATCH, done.stdout + done.stderr
    # hashed, never loaded: the verifier does not import what does not match
    assert f"{'changed' if built else 'extra'}: {native.name}" in done.stdout
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------- non-regular files
def test_a_fifo_in_the_package_is_refused_promptly(installed: tuple[Path, Path]) -> None:
    pkg, report = installed
    os.mkfifo(pkg / "validation_data.py")
    start = time.monotonic()
    done = verify_installed(pkg.parent, report)
    assert time.monotonic() - start < 60
    assert done.returncode == EXIT_MISMATCH, done.stdout + done.stderr
    assert "refused: validation_data.py (a FIFO, not a regular file)" in done.stdout


def test_symlinks_leaving_the_package_are_refused(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    pkg, report = installed
    expected = json.loads(report.read_text())["package"]["files"]
    outside = tmp_path / "outside.py"
    outside.write_text("x = 1\n")
    (pkg / "linked.py").symlink_to(outside)
    (pkg / "linked_dir").symlink_to(tmp_path)
    (pkg / "inside.py").symlink_to(pkg / "errors.py")
    outcome = compare(expected, pkg, modules={})
    assert outcome.refused == [
        "linked.py (a symbolic link pointing outside the package)",
        "linked_dir (a symbolic link pointing outside the package)",
    ]
    assert outcome.extra == ["inside.py"]  # a link inside is hashed as the file it names
    files, _, refused = inventory(pkg)
    assert files["inside.py"] == files["errors.py"] and len(refused) == 2


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_a_non_regular_report_is_refused_promptly(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "report"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path = Path("/dev/zero")
    assert stat.S_ISREG(os.stat(path).st_mode) is False
    start = time.monotonic()
    done = python(UNDER_TEST.parent, CLI, "verify-install", str(path))
    assert time.monotonic() - start < 60
    assert done.returncode == EXIT_UNREADABLE, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "not a regular file" in lines[0], done.stderr
    assert within(10, lambda: verify(path)) == EXIT_UNREADABLE  # in-process: no block either


# ---------------------------------------------------------------- the gate
def test_a_report_whose_gate_failed_is_not_ok(installed: tuple[Path, Path], tmp_path: Path) -> None:
    pkg, _ = installed
    failed = write_report(tmp_path / "failed.json", package_files(pkg), gate_passed=False)
    done = verify_installed(pkg.parent, failed)
    assert done.returncode == EXIT_GATE_FAILED, done.stdout + done.stderr
    assert "OK" not in done.stdout
    assert "FAILED GATE" in done.stderr and "R1: no test evidence" in done.stderr
    assert "OK" not in done.stderr


def test_the_built_report_without_evidence_fails_its_gate(
    fresh_install: Path, built_report: Path
) -> None:
    """The report the tooling writes with no evidence: same files, gate failed, exit 3."""
    assert json.loads(built_report.read_text())["gate"]["passed"] is False
    done = verify_installed(fresh_install, built_report)
    assert done.returncode == EXIT_GATE_FAILED, done.stdout + done.stderr
    assert "FAILED GATE" in done.stderr
