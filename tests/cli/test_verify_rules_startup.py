"""The verifier's rules on what runs at start-up, before or beside the package:
``.pth`` files and ``sitecustomize``/``usercustomize`` hooks, the interpreter's
variables (``python --help-env``, each judged), its options (``-X pycache_prefix``,
``-O``, ``-i``, ``-W``) and the package's own ``SONNX_MUL_*`` variables.

Fails when the rule is broken by hand: a ``.pth`` allowed when any (not every)
line is allowed, a variable of the interpreter missing from the table or judged
harmless.

Part of the verifier's rules pinned one by one in this process (the
``test_verify_rules_*.py`` files: the mutants of ``sonnx_mul_verify`` run
against them first); each test names the rule it holds.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import sonnx_mul_verify as v

REPO = Path(__file__).resolve().parents[2]


PRODUCT = REPO / "src" / "sonnx_mul"


SETUPTOOLS_LINE = (
    "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') "
    "== 'local'; enabled and __import__('_distutils_hack').add_shim(); "
)


def test_a_pth_is_allowed_only_when_every_import_line_is(tmp_path: Path) -> None:
    """Rule: setuptools' own line beside an import line of one's own is a finding."""
    pth = tmp_path / "distutils-precedence.pth"
    pth.write_text(SETUPTOOLS_LINE + "\n")
    assert v.startup_hooks([tmp_path], path=[], modules={}) == ([], [f"{pth} (setuptools)"], [])
    pth.write_text(SETUPTOOLS_LINE + "\nimport sonnx_patch\n")
    bad, allowed, _ = v.startup_hooks([tmp_path], path=[], modules={})
    assert allowed == [] and bad == [f"{pth} runs code at start-up: import sonnx_patch"]
    pth.write_text("import sonnx_patch\n" + SETUPTOOLS_LINE + "\n")
    bad, allowed, _ = v.startup_hooks([tmp_path], path=[], modules={})
    assert allowed == [] and bad == [f"{pth} runs code at start-up: import sonnx_patch"]


def test_pth_path_and_comment_lines_run_nothing(tmp_path: Path) -> None:
    (tmp_path / "paths.pth").write_text("/some/dir\n# import nothing\n\n")
    (tmp_path / "tab.pth").write_text("import\tsonnx_patch\n")
    bad, allowed, _ = v.startup_hooks([tmp_path], path=[], modules={})
    tab = tmp_path / "tab.pth"
    assert allowed == [] and bad == [f"{tab} runs code at start-up: import\tsonnx_patch"]
    assert v.pth_lines(tmp_path) == [
        (tmp_path / "paths.pth", ["/some/dir"], []),
        (tmp_path / "tab.pth", [], ["import\tsonnx_patch"]),
    ]


def test_a_hook_pinned_by_its_hash_is_allowed_and_no_other(tmp_path: Path) -> None:
    pth = tmp_path / "site.pth"
    pth.write_text("import sonnx_patch\n")
    digest = v.sha256(pth)
    assert v.startup_hooks([tmp_path], [digest.upper()], path=[], modules={})[1] == [
        f"{pth} (--allow-hook)"
    ]
    assert v.startup_hooks([tmp_path], ["0" * 64], path=[], modules={})[0] != []


def test_an_interpreter_hook_lies_directly_in_its_stdlib(tmp_path: Path) -> None:
    stdlib = tmp_path / "lib"
    etc = tmp_path / "etc"
    (stdlib / "site-packages").mkdir(parents=True)
    etc.mkdir()
    (stdlib / "sitecustomize.py").write_text("")
    (stdlib / "site-packages" / "sitecustomize.py").write_text("")
    (etc / "sitecustomize.py").write_text("")
    (tmp_path / "elsewhere.py").write_text("")
    assert v.interpreter_hook(stdlib / "sitecustomize.py", [stdlib], etc)
    assert not v.interpreter_hook(stdlib / "site-packages" / "sitecustomize.py", [stdlib], etc)
    (stdlib / "sitecustomize.py").unlink()
    (stdlib / "sitecustomize.py").symlink_to(etc / "sitecustomize.py")
    assert v.interpreter_hook(stdlib / "sitecustomize.py", [stdlib], etc)
    (stdlib / "sitecustomize.py").unlink()
    (stdlib / "sitecustomize.py").symlink_to(tmp_path / "elsewhere.py")
    assert not v.interpreter_hook(stdlib / "sitecustomize.py", [stdlib], etc)
    assert v.stdlib_dirs() and all(d.is_dir() for d in v.stdlib_dirs())
    assert v.interpreter_etc() == Path(f"/etc/python{sys.version_info[0]}.{sys.version_info[1]}")


def test_customize_modules_on_the_path_and_in_memory_are_judged(tmp_path: Path) -> None:
    path_dir = tmp_path / "path"
    path_dir.mkdir()
    (path_dir / "usercustomize.py").write_text("import sonnx_patch\n")
    loaded = ModuleType("sitecustomize")  # made in memory: no file
    bad, allowed, trusted = v.startup_hooks(
        [], path=[path_dir], stdlib=[], etc=tmp_path, modules={"sitecustomize": loaded}
    )
    assert (allowed, trusted) == ([], [])
    assert bad == [
        "sitecustomize module <sitecustomize without a file> runs at start-up",
        f"usercustomize module {path_dir / 'usercustomize.py'} runs at start-up",
    ]
    pin = v.sha256(path_dir / "usercustomize.py")
    bad, allowed, _ = v.startup_hooks([], [pin], path=[path_dir], stdlib=[], etc=tmp_path,
                                      modules={})  # fmt: skip
    assert (bad, allowed) == ([], [f"{path_dir / 'usercustomize.py'} (--allow-hook)"])


def test_a_pth_that_is_not_a_regular_file_is_a_finding(tmp_path: Path) -> None:
    (tmp_path / "dir.pth").mkdir()
    bad, _, _ = v.startup_hooks([tmp_path], path=[], modules={})
    assert bad == [f"{tmp_path / 'dir.pth'} (a directory, not a regular file)"]
    assert v.pth_lines(tmp_path) == []  # skipped when read as data


def test_the_hook_directories_are_the_site_and_path_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(v, "site_directories", lambda: [tmp_path, tmp_path / "absent"])
    (tmp_path / "p").mkdir()
    assert v.site_dirs([tmp_path / "p", tmp_path]) == [tmp_path, tmp_path / "p"]


def test_the_interpreters_etc_directory_is_the_one_given_or_its_own(tmp_path: Path) -> None:
    stdlib, etc = tmp_path / "lib", tmp_path / "etc"
    stdlib.mkdir()
    etc.mkdir()
    (etc / "sitecustomize.py").write_text("")
    (stdlib / "sitecustomize.py").symlink_to(etc / "sitecustomize.py")
    hooks = {"path": [stdlib], "stdlib": [stdlib], "modules": {}}
    bad, _, trusted = v.startup_hooks([], etc=etc, **hooks)  # type: ignore[arg-type]
    assert bad == [] and len(trusted) == 1
    bad, _, trusted = v.startup_hooks([], **hooks)  # type: ignore[arg-type]
    assert trusted == [] and len(bad) == 1  # not the interpreter's own /etc/pythonX.Y


def help_env_names() -> set[str]:
    """The variables this interpreter documents (``python --help-env``)."""
    done = subprocess.run(
        [sys.executable, "--help-env"], capture_output=True, text=True, timeout=60, check=True
    )
    return set(re.findall(r"^(PYTHON[A-Z0-9_]+)", done.stdout, flags=re.MULTILINE))


def test_every_documented_interpreter_variable_is_judged() -> None:
    """Rule: the table covers every variable of ``python --help-env`` (a new
    interpreter's variable fails here until it is judged)."""
    names = help_env_names()
    assert len(names) > 20 and names <= set(v.INTERPRETER_ENVIRONMENT)
    verdicts = {verdict for verdict, _ in v.INTERPRETER_ENVIRONMENT.values()}
    assert verdicts == {v.REFUSED, v.FOLLOWED, v.HARMLESS, v.REFUSED_WHEN_IMPORTING}
    assert all(why for _, why in v.INTERPRETER_ENVIRONMENT.values())


LOADING_ELSEWHERE = (
    "PYTHONPYCACHEPREFIX", "PYTHONHOME", "PYTHONPLATLIBDIR", "PYTHONUSERBASE", "PYTHONCASEOK",
    "PYTHONOPTIMIZE", "PYTHONEXECUTABLE", "PYTHONSTARTUP", "PYTHONINSPECT", "LD_PRELOAD",
    "LD_AUDIT", "LD_LIBRARY_PATH",
)  # fmt: skip
"""The variables that make the interpreter load or run code the verifier did not check."""


@pytest.mark.parametrize("name", LOADING_ELSEWHERE)
def test_a_variable_that_loads_code_from_elsewhere_is_a_finding(name: str) -> None:
    findings, notes = v.environment({name: "/elsewhere"})
    why = v.INTERPRETER_ENVIRONMENT[name][1]
    assert findings == [f"{name}='/elsewhere' is set: {why}"] and notes == []
    assert v.environment({name: ""}) == ([], [])  # an empty value is ignored by CPython too


def test_exactly_those_are_refused() -> None:
    refused = {n for n, (verdict, _) in v.INTERPRETER_ENVIRONMENT.items() if verdict == v.REFUSED}
    assert refused == set(LOADING_ELSEWHERE)


@pytest.mark.parametrize(
    "name", [n for n, (k, _) in v.INTERPRETER_ENVIRONMENT.items() if k == v.HARMLESS]
)
def test_a_harmless_variable_is_not_mentioned(name: str) -> None:
    assert v.environment({name: "1"}) == ([], [])


def test_pythonpath_is_followed_and_named() -> None:
    why = v.INTERPRETER_ENVIRONMENT["PYTHONPATH"][1]
    assert v.environment({"PYTHONPATH": "/a:/b"}) == ([], [f"PYTHONPATH='/a:/b': {why}"])
    assert v.environment({"PYTHONPATH": ""}) == ([], [])


def test_a_warning_filter_that_imports_a_module_is_a_finding() -> None:
    assert v.warning_imports(["error::pkg.mod.Warn", "ignore::DeprecationWarning"]) == ["pkg.mod"]
    assert v.warning_imports(["default,error:msg:evil.Thing:mod:3"]) == ["evil"]
    assert v.warning_imports(["error", "ignore::UserWarning", "::"]) == []
    why = v.INTERPRETER_ENVIRONMENT["PYTHONWARNINGS"][1]
    findings, _ = v.environment({"PYTHONWARNINGS": "error::sonnx_patch.Warn"})
    assert findings == [f"PYTHONWARNINGS='error::sonnx_patch.Warn' imports sonnx_patch at "
                        f"start-up: {why}"]  # fmt: skip
    assert v.environment({"PYTHONWARNINGS": "error::RuntimeWarning"}) == ([], [])


def test_a_filter_without_a_category_imports_nothing() -> None:
    assert v.warning_imports(["error:some message", "ignore", ""]) == []


def test_the_interpreter_options_of_this_process_are_judged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``-X pycache_prefix``, ``-O``, ``-i`` and an importing ``-W`` of the verifier's own
    process are findings; the variable, when set, is the one finding."""
    assert v.interpreter_environment({}) == ([], [])
    monkeypatch.setattr(sys, "pycache_prefix", "/elsewhere")
    findings, _ = v.interpreter_environment({})
    assert findings == [f"interpreter option -X pycache_prefix: {v.INTERPRETER_OPTIONS[0][2]}"]
    findings, _ = v.interpreter_environment({"PYTHONPYCACHEPREFIX": "/elsewhere"})
    assert len(findings) == 1 and findings[0].startswith("PYTHONPYCACHEPREFIX=")
    assert v.interpreter_environment({}, options=False) == ([], [])
    monkeypatch.setattr(sys, "pycache_prefix", None)
    monkeypatch.setattr(sys, "warnoptions", ["error::sonnx_patch.Warn"])
    findings, _ = v.interpreter_environment({})
    assert findings == [
        "interpreter option -W imports sonnx_patch at start-up: code that ran before the verifier"
    ]
    findings, _ = v.interpreter_environment({"PYTHONWARNINGS": "error::sonnx_patch.Warn"})
    assert len(findings) == 1 and findings[0].startswith("PYTHONWARNINGS=")


@pytest.mark.parametrize(("flag", "option"), [("optimize", "-O"), ("inspect", "-i")])
def test_optimize_and_inspect_flags_are_findings(
    monkeypatch: pytest.MonkeyPatch, flag: str, option: str
) -> None:
    fields = {name: getattr(sys.flags, name) for name in dir(sys.flags) if not name.startswith("_")}
    flags = argparse.Namespace(**{k: x for k, x in fields.items() if isinstance(x, int | bool)})
    setattr(flags, flag, 1)
    monkeypatch.setattr(sys, "flags", flags)
    findings, _ = v.interpreter_environment({})
    assert [f.split(":")[0] for f in findings] == [f"interpreter option {option}"]
    assert v._option_set(option) and not v._option_set("-X pycache_prefix")


def test_the_process_options_are_judged_only_for_this_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``environment(env)`` judges an environment alone; ``environment()`` this process."""
    for name in list(os.environ):
        if name.startswith("SONNX_MUL_") or name in v.INTERPRETER_ENVIRONMENT:
            monkeypatch.delenv(name)
    monkeypatch.setattr(sys, "pycache_prefix", "/elsewhere")
    assert v.environment({}) == ([], [])
    findings, _ = v.environment()
    assert [f.split(":")[0] for f in findings] == ["interpreter option -X pycache_prefix"]


def test_the_package_never_calls_breakpoint() -> None:
    """Why PYTHONBREAKPOINT is harmless: breakpoint() is its only reader."""
    calls = [p for p in PRODUCT.rglob("*.py") if "breakpoint(" in p.read_text(encoding="utf-8")]
    assert calls == []


@pytest.mark.parametrize(
    ("env", "findings", "notes"),
    [
        ({"SONNX_MUL_KERNEL": "native"}, 0, 0), ({"SONNX_MUL_KERNEL": "numpy"}, 1, 0),
        ({"SONNX_MUL_KERNEL": "fast"}, 1, 0), ({"SONNX_MUL_ISA": "auto"}, 0, 0),
        ({"SONNX_MUL_ISA": ""}, 0, 0), ({"SONNX_MUL_ISA": "avx2"}, 0, 1),
        ({"SONNX_MUL_ISA": "sse9"}, 1, 0), ({"SONNX_MUL_FAST": "1"}, 0, 1), ({}, 0, 0),
    ],
)  # fmt: skip
def test_the_packages_variables_are_judged(env: dict[str, str], findings: int, notes: int) -> None:
    found, said = v.environment(env)
    assert (len(found), len(said)) == (findings, notes), (found, said)
    for name, value in env.items():
        assert all(f"{name}=" in line or f"{name} is set" in line for line in found + said)
        del value


def test_the_environment_defaults_to_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("SONNX_MUL_") or name in v.INTERPRETER_ENVIRONMENT:
            monkeypatch.delenv(name)
    monkeypatch.setenv("SONNX_MUL_KERNEL", "numpy")
    monkeypatch.setenv("PYTHONHOME", "/elsewhere")
    found, _ = v.environment()
    assert [f.split("=")[0] for f in found] == ["SONNX_MUL_KERNEL", "PYTHONHOME"]
