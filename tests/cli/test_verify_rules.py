"""The verifier's rules, pinned one by one in this process (fast: the mutants of
``sonnx_mul_verify`` run against this file first).

Each test names the rule it holds, and fails when the rule is broken by hand:
a cache compared by length only, a code comparison that ignores constants, a
``.pth`` allowed when any (not every) line is allowed, a variable of the
interpreter missing from the table or judged harmless, a spelling of
``verify-install`` handed to the package.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import marshal
import os
import re
import subprocess
import sys
from pathlib import Path
from types import CodeType

import pytest

import sonnx_mul_verify as v
from sonnx_mul.cli import COMMANDS

REPO = Path(__file__).resolve().parents[2]
PRODUCT = REPO / "src" / "sonnx_mul"
SETUPTOOLS_LINE = (
    "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') "
    "== 'local'; enabled and __import__('_distutils_hack').add_shim(); "
)


def cache_of(source: Path, text: str, mode: str = "unchecked-hash") -> Path:
    """Write the cache CPython would load for ``source``, holding the compilation of ``text``."""
    code = compile(text, str(source), "exec", dont_inherit=True)
    cache = Path(importlib.util.cache_from_source(str(source)))
    cache.parent.mkdir(exist_ok=True)
    if mode == "timestamp":
        st = source.stat()
        header = (0).to_bytes(4, "little") + int(st.st_mtime).to_bytes(4, "little")
        header += st.st_size.to_bytes(4, "little")
    else:
        header = (0b01).to_bytes(4, "little") + importlib.util.source_hash(source.read_bytes())
    cache.write_bytes(importlib.util.MAGIC_NUMBER + header + marshal.dumps(code))
    return cache


# ---------------------------------------------------------------- bytecode
def test_a_cache_of_the_same_length_is_compared_by_content(tmp_path: Path) -> None:
    """Rule: a cache is accepted only when it is the compilation of its source,
    not when it merely has the compilation's length."""
    source = tmp_path / "limits.py"
    source.write_text("LIMIT = 1.0\n")
    honest = marshal.dumps(compile("LIMIT = 1.0\n", str(source), "exec", dont_inherit=True))
    lying = marshal.dumps(compile("LIMIT = 2.0\n", str(source), "exec", dont_inherit=True))
    assert len(honest) == len(lying) and honest != lying  # the premise: only the bytes differ
    cache = cache_of(source, "LIMIT = 2.0\n")
    assert v.cache_problem(cache, source) == "its code is not the compilation of its source"
    cache_of(source, "LIMIT = 1.0\n")
    assert v.cache_problem(cache, source) is None  # control: the compilation itself passes


@pytest.mark.parametrize(
    ("honest", "lying"),
    [
        ("LIMIT = 1.0\n", "LIMIT = 2.0\n"),
        ("LIMIT = 1.0\n", "LIMIT = 1\n"),
        ("SIGN = 0.0\n", "SIGN = -0.0\n"),
        ("FLAG = 1\n", "FLAG = True\n"),
        ("def f():\n    return 'checked'\n", "def f():\n    return 'skipped'\n"),
        ("X = ('a', frozenset({'b'}))\n", "X = ('a', frozenset({'c'}))\n"),
        ("X = (1, 2)\n", "X = (1, 3)\n"),
    ],
)
def test_code_objects_differing_in_a_constant_differ(honest: str, lying: str) -> None:
    """Rule: the code comparison covers constants, nested code objects' too."""
    a = compile(honest, "m.py", "exec", dont_inherit=True)
    b = compile(lying, "m.py", "exec", dont_inherit=True)
    assert v.code_key(a) != v.code_key(b)
    again = compile(honest, "elsewhere/m.py", "exec", dont_inherit=True)
    assert v.code_key(a) == v.code_key(again)  # control: the file name is not compared


def test_every_field_of_the_code_key_decides(tmp_path: Path) -> None:
    """Rule: names, argument counts, flags, line numbers and bytecode are compared."""
    base = "def f(a, b):\n    return a + b\n"
    variants = (
        "def g(a, b):\n    return a + b\n",  # co_name
        "def f(a, b, c=1):\n    return a + b\n",  # co_argcount, co_varnames
        "def f(a, /, b):\n    return a + b\n",  # co_posonlyargcount
        "def f(a, *, b):\n    return a + b\n",  # co_kwonlyargcount
        "def f(a, b):\n    return a - b\n",  # co_code
        "\ndef f(a, b):\n    return a + b\n",  # co_firstlineno
        "def f(a, b):\n    return a + len(b)\n",  # co_names
        "def f(*a, b):\n    return a + b\n",  # co_flags
        "def f(a, b):\n    def g():\n        return a\n    return a + b\n",  # co_cellvars
    )
    key = v.code_key(function_code(base))
    for text in variants:
        assert v.code_key(function_code(text)) != key, text


def function_code(text: str) -> CodeType:
    """The code object of the one function ``text`` defines."""
    (code,) = (c for c in compile(text, "m.py", "exec").co_consts if isinstance(c, CodeType))
    return code


def test_a_cache_of_another_tag_or_magic_or_no_source_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("X = 1\n")
    cache = cache_of(source, "X = 1\n")
    assert v.cache_problem(cache, None) == "no verified source beside it"
    other = cache.with_name("m.cpython-39.pyc")
    other.write_bytes(cache.read_bytes())
    assert v.cache_problem(other, source) == "a cache of another interpreter or not a cache name"
    cache.write_bytes(b"\0\0\r\n" + cache.read_bytes()[4:])
    assert v.cache_problem(cache, source) == "another interpreter's magic number"
    cache_of(source, "X = 1\n")
    data = cache.read_bytes()
    cache.write_bytes(data[:16] + b"\xff" + data[17:])
    assert v.cache_problem(cache, source) is not None
    source.write_text("X = (\n")
    cache_of(source, "X = 1\n")
    assert "does not compile" in str(v.cache_problem(cache, source))


def test_optimized_caches_are_compared_with_the_optimized_compilation(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("assert False, 'checked'\nX = 1\n")
    for opt in (1, 2):
        code = compile(source.read_text(), str(source), "exec", dont_inherit=True, optimize=opt)
        cache = Path(importlib.util.cache_from_source(str(source), optimization=opt))
        cache.parent.mkdir(exist_ok=True)
        flags = (0b01).to_bytes(4, "little") + importlib.util.source_hash(source.read_bytes())
        cache.write_bytes(importlib.util.MAGIC_NUMBER + flags + marshal.dumps(code))
        assert v.cache_problem(cache, source) is None
        plain = compile(source.read_text(), str(source), "exec", dont_inherit=True)
        cache.write_bytes(importlib.util.MAGIC_NUMBER + flags + marshal.dumps(plain))
        assert v.cache_problem(cache, source) == "its code is not the compilation of its source"


# ---------------------------------------------------------------- start-up hooks
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


# ---------------------------------------------------------------- environment
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


def test_the_package_never_calls_breakpoint() -> None:
    """Why PYTHONBREAKPOINT is harmless: breakpoint() is its only reader."""
    calls = [p for p in PRODUCT.rglob("*.py") if "breakpoint(" in p.read_text(encoding="utf-8")]
    assert calls == []


# ---------------------------------------------------------------- the dispatcher
REPORT = "r.json"


@pytest.mark.parametrize(
    ("argv", "verifier_args"),
    [
        (["verify-install", REPORT], [REPORT]),
        (["--", "verify-install", REPORT], [REPORT]),
        (["verify", REPORT], [REPORT]),
        (["v", REPORT], [REPORT]),
        (["verify-i", REPORT, "--allow-hook", "ab"], [REPORT, "--allow-hook", "ab"]),
        (["--format", "json", "verify-install", REPORT], ["--format", "json", REPORT]),
        (["--format=json", "--", "verify-install", REPORT], ["--format=json", REPORT]),
        (["--bogus", "verify-install", "v"], ["--bogus", "v"]),
        (["verify-install"], []),
    ],
)
def test_every_spelling_of_verify_install_reaches_the_verifier(
    argv: list[str], verifier_args: list[str]
) -> None:
    assert v.verify_install_arguments(argv) == verifier_args


@pytest.mark.parametrize(
    "argv",
    [
        [], ["--help"], ["--version"], ["check", "v"], ["run", "m.onnx", "--out", "verify"],
        ["selftest"], ["--format", "json", "check", "m.onnx"], ["bogus"], ["report", "--out", "v"],
    ],
)  # fmt: skip
def test_other_calls_go_to_the_package(argv: list[str]) -> None:
    assert v.verify_install_arguments(argv) is None


def test_the_dispatcher_knows_the_products_commands() -> None:
    assert set(v.PRODUCT_COMMANDS) == {c.name for c in COMMANDS} - {v.COMMAND}
    assert "report" in v._other_commands()  # a plugin, from its metadata


@pytest.mark.parametrize(
    ("argv", "wanted"),
    [
        (["--format", "json"], True), (["--format=json"], True), (["--form", "json"], True),
        (["--f=json"], True), (["x", "--format", "text"], False), (["--format"], False),
        (["--fox", "json"], False), (["-f", "json"], False), (["json"], False),
    ],
)  # fmt: skip
def test_json_is_requested_in_every_spelling(argv: list[str], wanted: bool) -> None:
    assert v.json_requested(argv) is wanted


def test_errors_are_one_line_or_one_json_object() -> None:
    assert v.error_text("cannot\n read", 2, False) == "sonnx-mul: error: cannot read"
    assert json.loads(v.error_text("cannot\n read", 2, True)) == {
        "error": "cannot read",
        "exit_code": 2,
    }


def test_verify_install_errors_honour_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert v.main(["--format", "json", "verify-install", str(tmp_path / "none.json")]) == 2
    out, err = capsys.readouterr()
    doc = json.loads(err)
    assert out == "" and doc["exit_code"] == 2 and "cannot read" in doc["error"]
    assert v.main(["verify-install", "--format", "json"]) == 2  # no REPORT: a wrong call
    assert json.loads(capsys.readouterr().err)["exit_code"] == 2
    assert v.main(["verify-install", str(tmp_path / "none.json")]) == 2
    assert capsys.readouterr().err.startswith("sonnx-mul: error: cannot read")


# ---------------------------------------------------------------- files the verifier cannot read
def test_a_symlink_loop_is_a_finding_and_the_other_files_are_still_hashed(tmp_path: Path) -> None:
    pkg = tmp_path / "sonnx_mul"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "z.py").write_text("")
    (pkg / "loop_a").symlink_to(pkg / "loop_b")
    (pkg / "loop_b").symlink_to(pkg / "loop_a")
    (pkg / "self").symlink_to(pkg / "self")
    files, caches, refused = v.inventory(pkg)
    assert set(files) == {"__init__.py", "sub/z.py"} and caches == []
    assert refused == [
        "loop_a (Too many levels of symbolic links)",
        "loop_b (Too many levels of symbolic links)",
        "self (Too many levels of symbolic links)",
    ]


def test_an_unreadable_file_and_directory_are_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Root reads everything: the denial is simulated where the verifier asks the system."""
    pkg = tmp_path / "sonnx_mul"
    (pkg / "closed").mkdir(parents=True)
    (pkg / "closed" / "hidden.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "secret.py").write_text("")
    real_open, real_scandir = os.open, os.scandir

    def deny_open(path: str, *args: int) -> int:
        if str(path).endswith("secret.py"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args)

    def deny_scandir(path: str) -> object:
        if str(path).endswith("closed"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "open", deny_open)
    monkeypatch.setattr(os, "scandir", deny_scandir)
    files, _, refused = v.inventory(pkg)
    assert set(files) == {"__init__.py"}
    assert refused == [
        "secret.py (Permission denied)",
        "closed (a directory that cannot be listed: Permission denied)",
    ]
