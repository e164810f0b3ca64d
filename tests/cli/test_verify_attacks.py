"""Attacks that answer ``verify-install`` in its place when it imports the package first (issue 27).

Each attack is first shown to work on a plain ``import sonnx_mul`` (it prints
the verdict line and exits 0, kills the process with SIGBUS, raises, or
changes what multiplies), then every entry point of ``verify-install`` must
say MISMATCH: exit 1, one ``label: what`` line per finding (as many as the
verdict counts), never "OK", never a traceback or a signal. The entry points:
the ``sonnx-mul`` console script of this interpreter's environment (what a
deployment types), ``python -I -m sonnx_mul_verify`` and the hardened
``python -I -S .../sonnx_mul_verify.py``.

The file imports nothing of the verifier, so it also runs against the code
before issue 27 (a venv of that tree, whose ``sonnx-mul`` script imported
the package first): there, through the console script, the constructor and
``__init__.py`` attacks and the diagnosis kernel got exit 0 and "OK", the
truncated binary killed it with SIGBUS and the empty one gave a traceback
(the tampered ``.pyc`` was already caught); the other two entry points did
not exist.
"""

from __future__ import annotations

import importlib.util
import json
import marshal
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from sonnx_mul.digest import package_files

REPO = Path(__file__).resolve().parents[2]
UNDER_TEST = Path(os.environ.get("SONNX_MUL_UNDER_TEST", REPO / "src")) / "sonnx_mul"
SITE = sysconfig.get_paths()["purelib"]
SCRIPT = Path(sys.executable).parent / "sonnx-mul"
OK_LINE = "verify-install: OK: 40 files of sonnx_mul are the files the report covers"
FAKE_VERDICT = f'import os, sys\nprint("{OK_LINE}", flush=True)\nos._exit(0)\n'
"""The three lines of attack (b): print the verdict, exit 0 before anything is checked."""
CONSTRUCTOR = f"""
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void answer(void)
{{
    puts("{OK_LINE}");
    fflush(stdout);
    _exit(0);
}}
"""
"""Attack (a): an ELF constructor runs when the binary is loaded, before Python sees it."""
EVIL_MUL = "\n\nimport numpy as _np\n\n\ndef mul(a, b, **kwargs):\n    return _np.multiply(a, b)\n"
BROADCAST = "import numpy as np, sonnx_mul; print(sonnx_mul.mul(np.ones((2, 3)), np.ones(3)).shape)"
LABELS = (
    "changed", "missing", "extra", "refused", "bytecode", "hook", "environment", "module",
    "verifier", "selftest",
)  # fmt: skip


def verifier_file() -> Path:
    """The verifier module's file, found without importing it (None before issue 27)."""
    spec = importlib.util.find_spec("sonnx_mul_verify")
    assert spec is not None and spec.origin, "no sonnx_mul_verify module (code before issue 27)"
    return Path(spec.origin)


ENTRY_POINTS = {
    "console-script": lambda report: [str(SCRIPT), "verify-install", str(report)],
    "python-I-m": lambda report: [sys.executable, "-I", "-m", "sonnx_mul_verify", str(report)],
    "python-I-S-file": lambda report: [
        sys.executable, "-I", "-S", str(verifier_file()), str(report)
    ],
}  # fmt: skip


def environment(site_dir: Path, **extra: str) -> dict[str, str]:
    """This environment with the tampered copy first on ``PYTHONPATH`` (numpy from the venv)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SONNX_MUL_")}
    return {**env, "PYTHONPATH": os.pathsep.join((str(site_dir), SITE)), **extra}


def run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=300, check=False, env=env,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.fixture()
def installed(tmp_path: Path) -> tuple[Path, Path]:
    """(a copy of the package under test, a report covering it with a passing gate)."""
    pkg = tmp_path / "site" / "sonnx_mul"
    shutil.copytree(UNDER_TEST, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    doc = {"package": {"files": package_files(pkg)}, "gate": {"passed": True, "problems": []}}
    report = tmp_path / "report.json"
    report.write_text(json.dumps(doc), encoding="utf-8")
    return pkg, report


def native_binary(pkg: Path) -> Path:
    (binary,) = pkg.glob("_native.*.so")
    return binary


def assert_mismatch(done: subprocess.CompletedProcess[str], *expected: str) -> None:
    """Exit 1, each ``expected`` line, one line per finding, no OK, no traceback, no signal."""
    shown = f"exit {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert done.returncode == 1, shown  # a signal would be negative, a crash 1 with a traceback
    assert "verify-install: OK" not in done.stdout + done.stderr, shown
    assert "Traceback" not in done.stderr, shown
    lines = done.stdout.splitlines()
    for line in expected:
        assert line in lines, shown
    findings = [line for line in lines if line.split(":")[0] in LABELS]
    others = [line for line in lines if line not in findings]
    assert all(line.startswith(("note: ", "allowed hook: ")) for line in others), shown
    verdict = re.fullmatch(
        r"verify-install: MISMATCH: .* is not the code .* covers \((\d+) findings\)",
        done.stderr.strip(),
    )
    assert verdict is not None and int(verdict[1]) == len(findings), shown


def attack_then_verify(
    report: Path, site_dir: Path, entry: str, *expected: str, **env: str
) -> None:
    assert_mismatch(run(ENTRY_POINTS[entry](report), environment(site_dir, **env)), *expected)


@pytest.fixture(params=sorted(ENTRY_POINTS))
def entry(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# ---------------------------------------------------------------- the attacks
@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc to build the binary")
def test_a_native_binary_whose_constructor_prints_ok(
    installed: tuple[Path, Path], tmp_path: Path, entry: str
) -> None:
    pkg, report = installed
    binary = native_binary(pkg)
    source = tmp_path / "answer.c"
    source.write_text(CONSTRUCTOR)
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-o", str(binary), str(source)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    attack = run([sys.executable, "-c", "import sonnx_mul"], environment(pkg.parent))
    assert (attack.returncode, attack.stdout.strip()) == (0, OK_LINE)  # the attack works
    attack_then_verify(report, pkg.parent, entry, f"changed: {binary.name}")


def test_an_init_that_prints_ok_and_exits(installed: tuple[Path, Path], entry: str) -> None:
    pkg, report = installed
    init = pkg / "__init__.py"
    init.write_text(FAKE_VERDICT + init.read_text(encoding="utf-8"), encoding="utf-8")
    attack = run([sys.executable, "-c", "import sonnx_mul"], environment(pkg.parent))
    assert (attack.returncode, attack.stdout.strip()) == (0, OK_LINE)
    attack_then_verify(report, pkg.parent, entry, "changed: __init__.py")


def test_a_half_truncated_native_binary(installed: tuple[Path, Path], entry: str) -> None:
    pkg, report = installed
    binary = native_binary(pkg)
    data = binary.read_bytes()
    binary.write_bytes(data[: len(data) // 2])
    attack = run([sys.executable, "-c", "import sonnx_mul"], environment(pkg.parent))
    assert attack.returncode != 0  # SIGBUS (-7) when the loader maps past the end
    attack_then_verify(report, pkg.parent, entry, f"changed: {binary.name}")


def test_an_empty_native_binary(installed: tuple[Path, Path], entry: str) -> None:
    pkg, report = installed
    binary = native_binary(pkg)
    binary.write_bytes(b"")
    attack = run([sys.executable, "-c", "import sonnx_mul"], environment(pkg.parent))
    assert attack.returncode == 1 and "Traceback" in attack.stderr
    attack_then_verify(report, pkg.parent, entry, f"changed: {binary.name}")


def test_a_tampered_pyc(installed: tuple[Path, Path], entry: str) -> None:
    """An unchecked-hash cache of api.py with a broadcasting mul: CPython runs it unchecked."""
    pkg, report = installed
    source = pkg / "api.py"
    code = compile(source.read_text(encoding="utf-8") + EVIL_MUL, str(source), "exec")
    cache = Path(importlib.util.cache_from_source(str(source)))
    cache.parent.mkdir(exist_ok=True)
    flags = (0b01).to_bytes(4, "little") + importlib.util.source_hash(source.read_bytes())
    cache.write_bytes(importlib.util.MAGIC_NUMBER + flags + marshal.dumps(code))
    attack = run([sys.executable, "-c", BROADCAST], environment(pkg.parent))
    assert attack.stdout.strip() == "(2, 3)", attack.stderr  # R4 is gone
    rel = cache.relative_to(pkg).as_posix()
    line = f"bytecode: {rel} (its code is not the compilation of its source)"
    attack_then_verify(report, pkg.parent, entry, line)


def test_the_diagnosis_kernel_variable(installed: tuple[Path, Path], entry: str) -> None:
    pkg, report = installed
    env = {"SONNX_MUL_KERNEL": "numpy"}
    probe = "import sonnx_mul.kernel as k; print(k.NAME)"
    attack = run([sys.executable, "-c", probe], environment(pkg.parent, **env))
    assert attack.stdout.strip() == "numpy"  # numpy's loops run, not the proved kernel
    line = (
        "environment: SONNX_MUL_KERNEL=numpy runs numpy's multiply loops (a diagnosis mode), "
        "not the proved native kernel"
    )
    attack_then_verify(report, pkg.parent, entry, line, **env)


# ---------------------------------------------------------------- negative controls
def test_the_untouched_copy_is_ok(installed: tuple[Path, Path], entry: str) -> None:
    """Without an attack every entry point says OK (and the self-test ran)."""
    pkg, report = installed
    done = run(ENTRY_POINTS[entry](report), environment(pkg.parent))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"verify-install: OK: {len(package_files(pkg))} files of {pkg}" in done.stdout
    assert "note: self-test passed:" in done.stdout


@pytest.mark.parametrize(("value", "ok"), [("portable", True), ("sse9", False)])
def test_an_isa_choice_is_a_note_when_it_names_a_variant(
    installed: tuple[Path, Path], value: str, ok: bool
) -> None:
    """``SONNX_MUL_ISA=portable`` names a verified variant: a note, still OK; a bogus one is not."""
    pkg, report = installed
    done = run(ENTRY_POINTS["console-script"](report), environment(pkg.parent, SONNX_MUL_ISA=value))
    if ok:
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"note: environment: SONNX_MUL_ISA={value} chooses the {value} variant" in (
            done.stdout
        )
        assert "kernel, variant portable" in done.stdout  # what the child really ran
    else:
        assert_mismatch(
            done, f"environment: SONNX_MUL_ISA='{value}': not a variant (auto, portable, avx2, "
            "avx512)",
        )  # fmt: skip


# ---------------------------------------------------------------- side doors
def cache_path(source: Path, env: dict[str, str]) -> Path:
    """Where the interpreter started with ``env`` looks for the cache of ``source``."""
    probe = "import importlib.util, sys; print(importlib.util.cache_from_source(sys.argv[1]))"
    done = run([sys.executable, "-c", probe, str(source)], env)
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.strip())


def test_a_tampered_pyc_under_a_pycache_prefix(
    installed: tuple[Path, Path], tmp_path: Path, entry: str
) -> None:
    """``PYTHONPYCACHEPREFIX`` moves the caches out of the package: CPython runs a
    broadcasting ``api`` from there; every entry point names the variable."""
    pkg, report = installed
    prefix = tmp_path / "prefix"
    env = {"PYTHONPYCACHEPREFIX": str(prefix)}
    source = pkg / "api.py"
    cache = cache_path(source, environment(pkg.parent, **env))
    assert cache.is_relative_to(prefix)
    cache.parent.mkdir(parents=True)
    code = compile(source.read_text(encoding="utf-8") + EVIL_MUL, str(source), "exec")
    flags = (0b01).to_bytes(4, "little") + importlib.util.source_hash(source.read_bytes())
    cache.write_bytes(importlib.util.MAGIC_NUMBER + flags + marshal.dumps(code))
    attack = run([sys.executable, "-c", BROADCAST], environment(pkg.parent, **env))
    assert attack.stdout.strip() == "(2, 3)", attack.stderr  # R4 is gone
    line = (
        f"environment: PYTHONPYCACHEPREFIX={str(prefix)!r} is set: the interpreter loads "
        "cached bytecode from a tree outside the package, not from its __pycache__ directories"
    )
    attack_then_verify(report, pkg.parent, entry, line, **env)


FAKE_VERIFIER = f"def verify_install_main(argv):\n    print({OK_LINE!r})\n    return 0\n"
"""A verifier that answers OK whatever it is shown."""


def test_a_planted_cache_of_the_verifier_does_not_answer(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    """A ``__pycache__/sonnx_mul_verify.*.pyc`` with the verifier's mtime and size runs
    on ``import sonnx_mul_verify``; the ``sonnx-mul`` script runs the verifier's source,
    which finds the tampered package and names the planted cache."""
    pkg, report = installed
    init = pkg / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + "\n# tampered\n", encoding="utf-8")
    verifier_dir = tmp_path / "verifier"
    verifier_dir.mkdir()
    copy = verifier_dir / "sonnx_mul_verify.py"
    shutil.copy2(verifier_file(), copy)
    cache = Path(importlib.util.cache_from_source(str(copy)))
    cache.parent.mkdir()
    st = copy.stat()
    header = (0).to_bytes(4, "little") + int(st.st_mtime).to_bytes(4, "little")
    header += (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    lie = compile(FAKE_VERIFIER, str(copy), "exec", dont_inherit=True)
    cache.write_bytes(importlib.util.MAGIC_NUMBER + header + marshal.dumps(lie))
    env = environment(pkg.parent)
    env["PYTHONPATH"] = os.pathsep.join((str(verifier_dir), env["PYTHONPATH"]))
    entry_point = "import sys, sonnx_mul_verify as v; sys.exit(v.verify_install_main(sys.argv[1:]))"
    attack = run([sys.executable, "-c", entry_point, str(report)], env)
    assert (attack.returncode, attack.stdout.strip()) == (0, OK_LINE)  # the import ran it
    done = run([str(SCRIPT), "verify-install", str(report)], env)
    assert_mismatch(
        done,
        "changed: __init__.py",
        f"verifier: {cache} (its code is not the compilation of its source): importing "
        "sonnx_mul_verify would run it",
    )
    assert f"note: verifier: {copy} sha256 " in done.stdout  # the source that ran


@pytest.mark.parametrize(
    "spelling",
    [
        ["--", "verify-install"], ["verify"], ["v"], ["verify-inst"],
        ["--format", "text", "verify-install"], ["--format=text", "--", "verify"],
    ],
    ids=lambda words: " ".join(words),
)  # fmt: skip
def test_every_spelling_reaches_the_verifier_first(
    installed: tuple[Path, Path], spelling: list[str]
) -> None:
    """An ``__init__.py`` that prints OK answers any spelling that imports the package."""
    pkg, report = installed
    init = pkg / "__init__.py"
    init.write_text(FAKE_VERDICT + init.read_text(encoding="utf-8"), encoding="utf-8")
    done = run([str(SCRIPT), *spelling, str(report)], environment(pkg.parent))
    assert_mismatch(done, "changed: __init__.py")


def test_options_before_the_command_reach_the_verifier_in_json(
    installed: tuple[Path, Path],
) -> None:
    pkg, report = installed
    init = pkg / "__init__.py"
    init.write_text(FAKE_VERDICT + init.read_text(encoding="utf-8"), encoding="utf-8")
    done = run([str(SCRIPT), "--format", "json", "verify-install", str(report)],
               environment(pkg.parent))  # fmt: skip
    assert done.returncode == 1 and done.stderr == "", done.stdout + done.stderr
    doc = json.loads(done.stdout)
    assert (doc["verdict"], doc["exit_code"]) == ("mismatch", 1)
    assert {"label": "changed", "what": "__init__.py"} in doc["findings"]


def test_a_symlink_loop_is_a_finding_and_the_other_checks_run(
    installed: tuple[Path, Path], entry: str
) -> None:
    pkg, report = installed
    (pkg / "loop_a").symlink_to(pkg / "loop_b")
    (pkg / "loop_b").symlink_to(pkg / "loop_a")
    (pkg / "errors.py").write_text("# tampered\n", encoding="utf-8")
    attack_then_verify(
        report, pkg.parent, entry,
        "refused: loop_a (Too many levels of symbolic links)",
        "refused: loop_b (Too many levels of symbolic links)",
        "changed: errors.py",
    )  # fmt: skip
