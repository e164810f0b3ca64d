"""`sonnx-mul verify-install`: passes on a fresh install, fails after one changed byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from sonnx_mul.install_check import EXIT_MISMATCH, EXIT_OK, EXIT_UNREADABLE, compare, verify
from sonnx_mul_assurance.report import build_report

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def report_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("verify-report")
    report = build_report(REPO, out / "no-evidence", probe_tools=False)
    path = out / "traceability.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


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
    assert (target / "sonnx_mul" / "api.py").is_file()
    return target


def run_installed(target: Path, report: Path) -> subprocess.CompletedProcess[str]:
    """``sonnx-mul verify-install`` in a Python that imports sonnx_mul from ``target`` only.

    ``-S`` skips site (and the editable install's path hook); the virtual
    environment's site-packages come after ``target`` for numpy, and the
    assurance sources after them (its commands are entry points the CLI loads).
    """
    site = sysconfig.get_paths()["purelib"]
    code = "import sys; from sonnx_mul.cli import main; sys.exit(main(sys.argv[1:]))"
    path = os.pathsep.join([str(target), site, str(REPO / "assurance")])
    return subprocess.run(
        [sys.executable, "-S", "-c", code, "verify-install", str(report)],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": path},
    )  # fmt: skip


def test_verify_install_passes_on_a_fresh_install_and_fails_after_one_byte(
    fresh_install: Path, report_json: Path
) -> None:
    ok = run_installed(fresh_install, report_json)
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
            bad = run_installed(fresh_install, report_json)
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
    fresh_install: Path, report_json: Path
) -> None:
    """The report hashes the extension built in the checkout; a fresh build of
    the same sources is byte for byte the same (no debug paths), so
    verify-install covers the code that multiplies."""
    from sonnx_mul import _native
    from sonnx_mul.digest import sha256

    files = json.loads(report_json.read_text())["package"]["files"]
    built = Path(_native.__file__)
    assert built.name in files and files[built.name] == sha256(built)
    assert sha256(native_binary(fresh_install)) == files[built.name]
    assert "_native.c" in files and "_native.pyi" in files


def test_extra_and_missing_files_are_mismatches(tmp_path: Path, report_json: Path) -> None:
    expected = json.loads(report_json.read_text())["package"]["files"]
    pkg = tmp_path / "sonnx_mul"
    for rel in expected:
        dest = pkg / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes((REPO / "src" / "sonnx_mul" / rel).read_bytes())
    assert compare(expected, pkg).ok
    assert verify(report_json, pkg) == EXIT_OK
    (pkg / "trojan.py").write_text("import os\n")
    (pkg / "errors.py").unlink()
    outcome = compare(expected, pkg)
    assert outcome.extra == ["trojan.py"] and outcome.missing == ["errors.py"]
    assert verify(report_json, pkg) == EXIT_MISMATCH


def test_unreadable_report_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert verify(bad) == EXIT_UNREADABLE
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"schema": "sonnx-mul-traceability/1"}))
    assert verify(old) == EXIT_UNREADABLE
    assert verify(tmp_path / "missing.json") == EXIT_UNREADABLE
