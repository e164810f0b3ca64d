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
import dataclasses
import hashlib
import importlib.util
import json
import marshal
import os
import re
import stat
import subprocess
import sys
import threading
from pathlib import Path
from types import CodeType, ModuleType

import pytest

import sonnx_mul_verify as v
from sonnx_mul.cli import COMMANDS
from support import LAUNCHER, launcher

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
    cache.parent.mkdir(parents=True, exist_ok=True)
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
    main = launcher().main
    assert main(["--format", "json", "verify-install", str(tmp_path / "none.json")], v) == 2
    out, err = capsys.readouterr()
    doc = json.loads(err)
    assert out == "" and doc["exit_code"] == 2 and "cannot read" in doc["error"]
    assert main(["verify-install", "--format", "json"], v) == 2  # no REPORT: a wrong call
    assert json.loads(capsys.readouterr().err)["exit_code"] == 2
    assert main(["verify-install", str(tmp_path / "none.json")], v) == 2
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


# ---------------------------------------------------------------- the interface and its caps
def test_the_exit_codes_are_the_documented_ones() -> None:
    codes = (v.EXIT_OK, v.EXIT_MISMATCH, v.EXIT_UNREADABLE, v.EXIT_GATE_FAILED)
    assert codes == (0, 1, 2, 3)
    assert (v.EXIT_INTERRUPTED, v.EXIT_BROKEN_PIPE) == (130, 141)


def test_the_caps_are_the_documented_ones() -> None:
    """A report is refused over 256 MiB, a cache or a hook file over 64 MiB."""
    assert (v.MAX_REPORT_BYTES, v.MAX_CACHE_BYTES) == (256 * 2**20, 64 * 2**20)


# ---------------------------------------------------------------- reading files
@pytest.mark.parametrize("size", [0, 1, 9, 10])
def test_a_file_up_to_the_limit_is_read_whole(tmp_path: Path, size: int) -> None:
    path = tmp_path / "f"
    path.write_bytes(bytes(range(size)))
    assert v.read_bytes(path, 10) == bytes(range(size))


def test_a_file_over_the_limit_is_refused_whatever_the_chunks(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 11)
    with pytest.raises(ValueError, match="over the 10-byte cap"):
        v.read_bytes(path, 10)
    chunk = v.BLOCK << 4  # the limit a whole number of chunks: the loop must still see more
    path.write_bytes(b"y" * (2 * chunk + 1))
    with pytest.raises(ValueError, match="cap"):
        v.read_bytes(path, 2 * chunk)
    assert v.read_bytes(path, 2 * chunk + 1) == b"y" * (2 * chunk + 1)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done: list[BaseException] = []

    def attempt() -> None:
        try:
            v.read_bytes(fifo, 10)
        except BaseException as exc:  # judged below
            done.append(exc)

    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(10)
    if thread.is_alive():  # it waits for a writer: give it one so the thread ends
        with open(fifo, "wb"):
            pass
        pytest.fail("opening the FIFO blocked")
    assert len(done) == 1 and isinstance(done[0], v.NotRegularFileError)
    assert "is a FIFO, not a regular file" in str(done[0])
    with pytest.raises(v.NotRegularFileError, match="is a directory"):
        v.sha256(tmp_path)


def test_the_hash_is_of_every_byte(tmp_path: Path) -> None:
    path = tmp_path / "f"
    data = bytes(range(256)) * 1000  # more than one block
    path.write_bytes(data)
    assert v.sha256(path) == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (stat.S_IFDIR, "a directory"), (stat.S_IFIFO, "a FIFO"), (stat.S_IFCHR,
        "a character device"), (stat.S_IFBLK, "a block device"), (stat.S_IFSOCK, "a socket"),
        (stat.S_IFLNK, "a symbolic link"), (0, "not a regular file"),
    ],
)  # fmt: skip
def test_every_kind_of_file_is_named(make: int, name: str) -> None:
    assert v.kind(make) == name


# ---------------------------------------------------------------- where the package is
def fake_interpreter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, conf: str | None) -> Path:
    """A venv layout ``tmp/venv/bin/python`` with ``pyvenv.cfg`` holding ``conf``."""
    exe = tmp_path / "venv" / "bin" / "python"
    exe.parent.mkdir(parents=True)
    if conf is not None:
        (tmp_path / "venv" / "pyvenv.cfg").write_text(conf)
    monkeypatch.setattr(sys, "executable", str(exe))
    return tmp_path / "venv"


@pytest.mark.parametrize(
    ("conf", "system"),
    [
        ("home = /usr/bin\ninclude-system-site-packages = false\n", False),
        ("home = /usr/bin\nInclude-System-Site-Packages = TRUE\n", True),
        ("home = /usr/bin\n", True),
        ("include-system-site-packages\nversion = 3.11\n", True),
    ],
)
def test_the_venv_prefixes_are_read_from_pyvenv_cfg(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, conf: str, system: bool
) -> None:
    prefix = fake_interpreter(tmp_path, monkeypatch, conf)
    expected = [str(prefix), *([sys.base_prefix] if system else [])]
    assert v.venv_prefixes() == expected


def test_no_pyvenv_cfg_is_no_venv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_interpreter(tmp_path, monkeypatch, None)
    assert v.venv_prefixes() is None


def test_under_no_site_the_site_directories_are_the_venvs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = fake_interpreter(tmp_path, monkeypatch, "include-system-site-packages = false\n")
    monkeypatch.setattr(sys, "flags", flags_with(no_site=1))
    import site

    assert v.site_directories() == [Path(d) for d in site.getsitepackages([str(prefix)])]


def flags_with(**changed: int) -> argparse.Namespace:
    """``sys.flags`` with some fields changed."""
    names = [n for n in dir(sys.flags) if not n.startswith("_") and n not in ("count", "index")]
    return argparse.Namespace(**{n: getattr(sys.flags, n) for n in names} | changed)


def test_the_search_path_reads_pythonpath_when_this_process_ignored_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(sys, "path", [str(tmp_path / "b"), "", str(tmp_path / "a")])
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path / "a"), "", str(tmp_path / "c")])}
    assert v.search_path(env) == [tmp_path / "b", tmp_path / "a"]  # read by the process
    monkeypatch.setattr(sys, "flags", flags_with(ignore_environment=1))
    assert v.search_path(env) == [tmp_path / "a", tmp_path / "c", tmp_path / "b"]
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "d"))
    assert v.search_path()[0] == tmp_path / "d"


def test_under_no_site_the_pth_path_lines_are_searched(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    site_dir = tmp_path / "site"
    (site_dir / "extra").mkdir(parents=True)
    (site_dir / "x.pth").write_text("extra\nmissing\nimport os\n")
    monkeypatch.setattr(sys, "path", [])
    monkeypatch.setattr(sys, "flags", flags_with(no_site=1))
    monkeypatch.setattr(v, "site_directories", lambda: [site_dir, tmp_path / "absent"])
    assert v.search_path({}) == [site_dir, site_dir / "extra"]


def test_the_package_is_located_only_as_a_regular_package(tmp_path: Path) -> None:
    pkg = tmp_path / "a" / "sonnx_mul"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    assert v.locate_package([tmp_path / "none", tmp_path / "a"]) == (pkg, None)
    assert v.locate_package([tmp_path / "none"]) == (
        None,
        "no sonnx_mul package on the search path",
    )
    namespace = tmp_path / "ns" / "sonnx_mul"
    namespace.mkdir(parents=True)
    where, why = v.locate_package([tmp_path / "ns"])
    assert where is None and why is not None and why.endswith("not a package directory")
    compiled = tmp_path / "pyc" / "sonnx_mul"
    compiled.mkdir(parents=True)
    (compiled / "__init__.pyc").write_bytes(importlib.util.MAGIC_NUMBER + bytes(12))
    where, why = v.locate_package([tmp_path / "pyc"])
    assert where is None and str(compiled / "__init__.pyc") in str(why)
    module = tmp_path / "mod"
    module.mkdir()
    (module / "sonnx_mul.py").write_text("")
    assert v.locate_package([module, tmp_path / "a"]) == (
        None, f"sonnx_mul would be imported from {module / 'sonnx_mul.py'}, not a package directory"
    )  # fmt: skip


# ---------------------------------------------------------------- files
def test_only_pyc_files_in_pycache_are_caches(tmp_path: Path) -> None:
    pkg = tmp_path / "sonnx_mul"
    (pkg / "__pycache__").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"")
    (pkg / "__pycache__" / "notes.txt").write_text("")
    (pkg / "loose.pyc").write_bytes(b"")
    files, caches, refused = v.inventory(pkg)
    assert caches == [pkg / "__pycache__" / "m.cpython-311.pyc"] and refused == []
    assert set(files) == {"__init__.py", "__pycache__/notes.txt", "loose.pyc"}


def test_a_link_inside_the_package_is_hashed_as_its_target(tmp_path: Path) -> None:
    pkg = tmp_path / "sonnx_mul"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("A = 1\n")
    (pkg / "b.py").symlink_to(pkg / "a.py")
    (pkg / "linked").symlink_to(pkg / "sub")
    (pkg / "out.py").symlink_to(tmp_path)
    files, _, refused = v.inventory(pkg)
    assert files == {"a.py": v.sha256(pkg / "a.py"), "b.py": v.sha256(pkg / "a.py")}
    assert refused == [
        "linked (a directory, not a regular file)",
        "out.py (a symbolic link pointing outside the package)",
    ]


# ---------------------------------------------------------------- caches, in the package or not
def small_package(tmp_path: Path) -> Path:
    pkg = tmp_path / "sonnx_mul"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "api.py").write_text("LIMIT = 1.0\n")
    (pkg / "data.txt").write_text("")
    return pkg


def test_caches_are_judged_against_their_verified_source_only(tmp_path: Path) -> None:
    pkg = small_package(tmp_path)
    honest = cache_of(pkg / "api.py", "LIMIT = 1.0\n")
    lying = cache_of(pkg / "__init__.py", "LIMIT = 2.0\n")
    orphan = honest.with_name(f"gone.{sys.implementation.cache_tag}.pyc")
    orphan.write_bytes(honest.read_bytes())
    _, caches, _ = v.inventory(pkg)
    tag = sys.implementation.cache_tag
    assert v.check_caches(pkg, caches, ["api.py", "__init__.py"]) == [
        f"__pycache__/__init__.{tag}.pyc (its code is not the compilation of its source)",
        f"__pycache__/gone.{tag}.pyc (no verified source beside it)",
    ]
    assert v.check_caches(pkg, caches, ["__init__.py"]) == [  # api.py not verified: its cache
        f"__pycache__/__init__.{tag}.pyc (its code is not the compilation of its source)",
        f"__pycache__/api.{tag}.pyc (no verified source beside it)",
        f"__pycache__/gone.{tag}.pyc (no verified source beside it)",
    ]
    del lying


def test_caches_under_the_prefix_are_looked_up_for_every_verified_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = small_package(tmp_path)
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    lying = cache_of(pkg / "api.py", "LIMIT = 2.0\n")
    assert lying.is_relative_to(tmp_path / "prefix")
    optimized = Path(importlib.util.cache_from_source(str(pkg / "api.py"), optimization=2))
    optimized.write_bytes(b"not a cache")
    honest = cache_of(pkg / "__init__.py", "")
    assert v.check_caches(pkg, [], ["api.py", "__init__.py", "data.txt"]) == [
        f"{optimized} (another interpreter's magic number)",
        f"{lying} (its code is not the compilation of its source)",
    ]
    honest.unlink()
    honest.symlink_to(tmp_path / "nowhere")
    assert v.check_caches(pkg, [], ["__init__.py"]) == [
        f"{honest} (a symbolic link, not a regular file)"
    ]


# ---------------------------------------------------------------- the interpreter's own hooks
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


# ---------------------------------------------------------------- the package's variables
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


# ---------------------------------------------------------------- loaded modules
def test_modules_from_unverified_files_are_named(tmp_path: Path) -> None:
    pkg = small_package(tmp_path)
    modules: dict[str, object] = {
        "sonnx_mul": str(pkg / "__init__.py"),
        "sonnx_mul.api": str(pkg / "api.py"),
        "sonnx_mul.evil": "/tmp/evil.py",
        "sonnx_mul.made": None,
        "sonnx_mulx": "/tmp/other.py",
        "numpy": "/tmp/numpy.py",
    }
    assert v.foreign_modules(pkg, ["__init__.py"], modules) == [
        "sonnx_mul.api (from " + str(pkg / "api.py") + ")",
        "sonnx_mul.evil (from /tmp/evil.py)",
        "sonnx_mul.made (not loaded from a file)",
    ]
    assert v.foreign_modules(pkg, ["__init__.py", "api.py"], {}) == []


# ---------------------------------------------------------------- the child's answer
def child_answer(
    monkeypatch: pytest.MonkeyPatch, returncode: int, stdout: str = "", stderr: str = ""
) -> list[list[str]]:
    """Make the child process answer this (its argv is recorded)."""
    calls: list[list[str]] = []

    def fake_run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append(argv)
        return subprocess.CompletedProcess(argv, returncode, stdout, stderr)

    monkeypatch.setattr(v.subprocess, "run", fake_run)
    return calls


def answer(pkg: Path, **changed: object) -> str:
    doc: dict[str, object] = {
        "kernel": "native", "isa": "avx2", "ok": True, "checked": 68, "failures": [],
        "modules": {"sonnx_mul": str(pkg / "__init__.py")},
    } | changed  # fmt: skip
    return "some output\n" + json.dumps(doc) + "\n"


def test_a_passing_child_is_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = small_package(tmp_path)
    calls = child_answer(monkeypatch, 0, answer(pkg))
    assert v.selftest_in_child(pkg, ["__init__.py"], [tmp_path]) == (
        [], ["self-test passed: 68 known-answer vectors on the native kernel, variant avx2"]
    )  # fmt: skip
    assert calls[0][:3] == [sys.executable, "-I", "-c"] and json.loads(calls[0][4]) == [
        str(tmp_path)
    ]
    monkeypatch.setattr(sys, "flags", flags_with(no_site=1))
    calls = child_answer(monkeypatch, 0, answer(pkg))
    v.selftest_in_child(pkg, ["__init__.py"], [])
    assert calls[0][1:3] == ["-I", "-S"]


@pytest.mark.parametrize(
    ("returncode", "changed", "finding"),
    [
        (-9, {}, "importing the package in a child process was killed by signal 9"),
        (3, {}, "importing the package in a child process failed (exit 3): the last line"),
        (0, {"kernel": "numpy"}, "the numpy kernel runs, not the proved native kernel"),
        (0, {"ok": False, "failures": ["f32 1*1"]}, "self-test FAIL f32 1*1"),
        (0, {"ok": 1}, None),
        (0, {"modules": {"sonnx_mul.x": "/tmp/x.py"}}, "module sonnx_mul.x (from /tmp/x.py)"),
        (0, {"kernel": None, "modules": []}, "no answer from the self-test: the last line"),
    ],
)
def test_a_failing_child_is_a_finding(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    returncode: int,
    changed: dict[str, object],
    finding: str | None,
) -> None:
    pkg = small_package(tmp_path)
    child_answer(monkeypatch, returncode, answer(pkg, **changed), "a\nthe last line\n")
    findings, notes = v.selftest_in_child(pkg, ["__init__.py"], [])
    if finding is None:  # "ok" must be exactly true: no note, no pass
        assert notes == [] and findings == []
    else:
        assert any(finding in f for f in findings), findings


def test_a_child_with_no_answer_is_a_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = small_package(tmp_path)
    child_answer(monkeypatch, 0, "", "")
    findings, _ = v.selftest_in_child(pkg, [], [])
    assert findings == ["importing the package in a child process: no answer from the self-test: "]

    def cannot_start(argv: list[str], **kwargs: object) -> None:
        raise subprocess.TimeoutExpired(argv, v.CHILD_TIMEOUT)

    monkeypatch.setattr(v.subprocess, "run", cannot_start)
    findings, _ = v.selftest_in_child(pkg, [], [])
    assert len(findings) == 1 and findings[0].startswith("the package could not be imported")


# ---------------------------------------------------------------- the verdict
def report_file(tmp_path: Path, doc: object) -> Path:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc))
    return path


def test_the_report_is_read_strictly(tmp_path: Path) -> None:
    files = {"api.py": "a" * 64}
    good = {"package": {"files": files, "verifier": {"sha256": "B" * 64}},
            "gate": {"passed": False, "problems": ["R1: none", 3]}}  # fmt: skip
    expected = v.read_expected(report_file(tmp_path, good))
    assert expected == v.Expected(files, False, ["R1: none", "3"], "B" * 64)
    for bad in (
        [], {"package": []}, {"package": {"files": {}}}, {"package": {"files": {"a": 1}}},
        {"package": {"files": files}}, {"package": {"files": files}, "gate": {"passed": 1}},
        {"package": {"files": files}, "gate": []},
    ):  # fmt: skip
        with pytest.raises(ValueError):
            v.read_expected(report_file(tmp_path, bad))
    plain = {"package": {"files": files, "verifier": "x"}, "gate": {"passed": True}}
    assert v.read_expected(report_file(tmp_path, plain)) == v.Expected(files, True, [], None)


def test_the_verifier_compares_its_own_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = Path(v.__file__).resolve()
    digest = v.sha256(mine)
    monkeypatch.setattr(v, "own_cache_problems", lambda source: [])
    assert v.verifier_check(digest.upper()) == (
        [], [f"verifier: {mine} sha256 {digest} (trusted base: it cannot verify itself)"]
    )  # fmt: skip
    findings, notes = v.verifier_check("0" * 64)
    assert notes == [] and findings == [
        f"{mine} sha256 {digest} is not the verifier the report records ({'0' * 64})"
    ]
    assert v.verifier_check(None)[1][1] == "verifier: the report records no verifier hash"
    monkeypatch.setattr(v, "__file__", str(tmp_path / "gone.py"))
    findings, _ = v.verifier_check(None)
    assert len(findings) == 1 and "cannot be read" in findings[0]


def test_the_verifiers_own_caches_are_judged(tmp_path: Path) -> None:
    """A cache the import would run in place of the verifier's source is a finding
    when it is not the compilation; one the import would not run is not."""
    source = tmp_path / "sonnx_mul_verify.py"
    source.write_text("X = 1\n")
    assert v.own_cache_problems(source) == []
    honest = cache_of(source, "X = 1\n", "timestamp")
    assert v.own_cache_problems(source) == []
    cache_of(source, "X = 2\n", "timestamp")
    finding = (
        f"{honest} (its code is not the compilation of its source): importing "
        "sonnx_mul_verify would run it"
    )
    assert v.own_cache_problems(source) == [finding]
    cache_of(source, "X = 2\n")  # unchecked hash: runs whatever the source says
    assert v.own_cache_problems(source) == [finding]
    os.utime(source, (1, 1))  # a stale timestamp cache: the import recompiles
    cache_of(source, "X = 2\n", "timestamp")
    os.utime(source, (2, 2))
    assert v.own_cache_problems(source) == []
    honest.write_bytes(b"\0\0\r\n" + honest.read_bytes()[4:])  # another magic: recompiled
    assert v.own_cache_problems(source) == []
    honest.unlink()
    honest.mkdir()  # unreadable as a file: the import compiles the source
    assert v.own_cache_problems(source) == []


@pytest.mark.parametrize(
    ("flags", "hash_matches", "runs"),
    [(0b01, False, True), (0b11, True, True), (0b11, False, False)],
)
def test_a_hash_based_cache_runs_when_unchecked_or_matching(
    tmp_path: Path, flags: int, hash_matches: bool, runs: bool
) -> None:
    source = tmp_path / "m.py"
    source.write_text("X = 1\n")
    digest = importlib.util.source_hash(source.read_bytes() if hash_matches else b"other")
    cache = importlib.util.MAGIC_NUMBER + flags.to_bytes(4, "little") + digest + b"code"
    assert v.would_run(cache, source, source.read_bytes()) is runs
    assert v.would_run(cache[:16], source, source.read_bytes()) is runs  # a header alone
    assert v.would_run(cache[:15], source, source.read_bytes()) is False


def verify_small(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    gate: bool = True,
    child: bool = False,
    as_json: bool = False,
) -> tuple[int, str, str]:
    pkg = small_package(tmp_path)
    files = v.inventory(pkg)[0]
    gate_block = {"passed": gate, "problems": ["R1: none"]}
    report = report_file(tmp_path, {"package": {"files": files}, "gate": gate_block})
    code = v.verify(report, pkg, child=child, as_json=as_json)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def quiet_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No variable, hook or module of this process's own is judged."""
    for name in list(os.environ):
        if name.startswith("SONNX_MUL_") or name in v.INTERPRETER_ENVIRONMENT:
            monkeypatch.delenv(name)
    monkeypatch.setattr(v, "site_dirs", lambda path=None: [])
    monkeypatch.setattr(v, "CUSTOMIZE_MODULES", ())
    monkeypatch.setattr(v, "own_cache_problems", lambda source: [])
    # this process has imported sonnx_mul (from src/): not the package checked here
    monkeypatch.setattr(v, "foreign_modules", lambda *args: [])


@pytest.mark.usefixtures("quiet_environment")
def test_the_verdict_lines_and_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = verify_small(tmp_path / "ok", capsys)
    assert code == v.EXIT_OK and err == ""
    assert out.splitlines()[-1].startswith("verify-install: OK: 3 files of ")
    code, out, err = verify_small(tmp_path / "gate", capsys, gate=False)
    assert code == v.EXIT_GATE_FAILED and "OK" not in out
    assert "FAILED GATE" in err and "(1 problems: R1: none)" in err
    monkeypatch.setenv("PYTHONHOME", "/elsewhere")
    code, out, err = verify_small(tmp_path / "bad", capsys)
    assert code == v.EXIT_MISMATCH
    assert out.splitlines()[0].startswith("environment: PYTHONHOME='/elsewhere' is set")
    assert err.strip().endswith("(1 findings)") and "MISMATCH" in err


@pytest.mark.usefixtures("quiet_environment")
def test_the_verdict_in_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = verify_small(tmp_path / "ok", capsys, as_json=True)
    doc = json.loads(out)
    assert (code, err, doc["verdict"], doc["exit_code"], doc["findings"]) == (0, "", "ok", 0, [])
    code, out, _ = verify_small(tmp_path / "gate", capsys, gate=False, as_json=True)
    assert (code, json.loads(out)["verdict"]) == (3, "failed-gate")
    monkeypatch.setenv("PYTHONHOME", "/elsewhere")
    code, out, _ = verify_small(tmp_path / "bad", capsys, as_json=True)
    doc = json.loads(out)
    assert (code, doc["verdict"], doc["findings"][0]["label"]) == (1, "mismatch", "environment")


@pytest.mark.usefixtures("quiet_environment")
def test_no_package_is_a_finding_with_the_environment_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    report = report_file(tmp_path, {"package": {"files": {"a.py": "0" * 64}},
                                    "gate": {"passed": True}})  # fmt: skip
    monkeypatch.setattr(v, "search_path", lambda environ=None: [tmp_path / "none"])
    monkeypatch.setenv("PYTHONHOME", "/elsewhere")
    assert v.verify(report, child=False) == v.EXIT_MISMATCH
    lines = capsys.readouterr().out.splitlines()
    assert "missing: no sonnx_mul package on the search path" in lines
    assert any(line.startswith("environment: PYTHONHOME=") for line in lines)


@pytest.mark.usefixtures("quiet_environment")
def test_the_child_runs_only_when_nothing_was_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[list[Path]] = []

    def child(pkg: Path, verified: object, path: list[Path]) -> tuple[list[str], list[str]]:
        ran.append(path)
        return ["self-test FAIL x"], []

    monkeypatch.setattr(v, "selftest_in_child", child)
    code, out, _ = verify_small(tmp_path, capsys, child=True)
    assert code == v.EXIT_MISMATCH and "selftest: self-test FAIL x" in out.splitlines()
    assert ran and ran[0][0] == (tmp_path / "sonnx_mul").resolve().parent
    monkeypatch.setenv("PYTHONHOME", "/elsewhere")
    ran.clear()
    verify_small(tmp_path / "again", capsys, child=True)
    assert ran == []


# ---------------------------------------------------------------- the command line's failures
@pytest.mark.parametrize(
    ("error", "code", "line"),
    [
        (KeyboardInterrupt(), 130, "sonnx-mul: error: interrupted"),
        (MemoryError(), 1, "sonnx-mul: error: not enough memory"),
        (RuntimeError("boom"), 1, "sonnx-mul: error: internal error: RuntimeError: boom"),
    ],
)
def test_every_failure_of_the_verifier_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: BaseException,
    code: int,
    line: str,
) -> None:
    def fail(*args: object, **kwargs: object) -> int:
        raise error

    monkeypatch.setattr(v, "verify", fail)
    assert v.verify_install_main(["r.json"]) == code
    out, err = capsys.readouterr()
    assert (out, err) == ("", line + "\n")
    assert v.verify_install_main(["r.json", "--format", "json"]) == code
    assert json.loads(capsys.readouterr().err)["exit_code"] == code


def test_help_and_a_closed_stdout(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert v.verify_install_main(["--help"]) == 0
    assert "REPORT.json" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdout", None)
    assert v.verify_install_main(["r.json"]) == 2
    assert "standard output is closed" in capsys.readouterr().err


def test_an_interrupt_at_start_up_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(args: list[str], verifier: ModuleType) -> int:
        raise KeyboardInterrupt

    launched = launcher()
    monkeypatch.setattr(launched, "product", interrupted)
    assert launched.main(["check", "--format", "json", "m.onnx"], v) == 130
    assert json.loads(capsys.readouterr().err) == {"error": "interrupted", "exit_code": 130}


def test_other_subcommands_go_to_the_package(capsys: pytest.CaptureFixture[str]) -> None:
    assert launcher().main(["--version"], v) == 0
    assert capsys.readouterr().out.startswith("sonnx-mul ")


def test_a_plain_cache_is_compared_with_the_unoptimized_compilation(tmp_path: Path) -> None:
    """No ``opt-N`` in the name: the compilation at optimization 0 (asserts kept)."""
    source = tmp_path / "m.py"
    source.write_text("assert X, 'checked'\n")
    cache = cache_of(source, "assert X, 'checked'\n")
    assert v.cache_problem(cache, source) is None
    stripped = compile(source.read_text(), str(source), "exec", dont_inherit=True, optimize=1)
    data = cache.read_bytes()
    cache.write_bytes(data[:16] + marshal.dumps(stripped))
    assert v.cache_problem(cache, source) == "its code is not the compilation of its source"


@pytest.mark.parametrize("opt", ["", 1, 2])
def test_every_optimization_level_under_the_prefix_is_looked_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opt: object
) -> None:
    pkg = small_package(tmp_path)
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    cached = Path(importlib.util.cache_from_source(str(pkg / "api.py"), optimization=opt))
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"not a cache")
    assert v.check_caches(pkg, [], ["api.py"]) == [f"{cached} (another interpreter's magic number)"]


@pytest.mark.parametrize("opt", ["", 1, 2])
def test_every_optimization_level_of_the_verifiers_cache_is_judged(
    tmp_path: Path, opt: object
) -> None:
    source = tmp_path / "sonnx_mul_verify.py"
    source.write_text("X = 1\n")
    cached = Path(importlib.util.cache_from_source(str(source), optimization=opt))
    cached.parent.mkdir()
    code = compile("X = 2\n", str(source), "exec", dont_inherit=True)
    flags = (0b01).to_bytes(4, "little") + importlib.util.source_hash(b"")
    cached.write_bytes(importlib.util.MAGIC_NUMBER + flags + marshal.dumps(code))
    assert v.own_cache_problems(source) == [
        f"{cached} (its code is not the compilation of its source): importing "
        "sonnx_mul_verify would run it"
    ]


def test_a_file_that_cannot_be_examined_is_named_by_the_systems_reason(tmp_path: Path) -> None:
    assert v._regular_or_why(tmp_path / "missing") == "No such file or directory"
    assert v._regular_or_why(tmp_path) == "a directory, not a regular file"
    (tmp_path / "f").write_text("")
    assert v._regular_or_why(tmp_path / "f") is None


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


def test_a_filter_without_a_category_imports_nothing() -> None:
    assert v.warning_imports(["error:some message", "ignore", ""]) == []


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


def test_a_module_object_that_is_not_a_module_has_no_file(tmp_path: Path) -> None:
    pkg = small_package(tmp_path)
    assert v.foreign_modules(pkg, [], {"sonnx_mul.odd": object()}) == [
        "sonnx_mul.odd (not loaded from a file)"
    ]


def test_the_child_is_started_with_its_output_captured_as_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = small_package(tmp_path)
    seen: list[dict[str, object]] = []

    def fake_run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        seen.append(kwargs)
        return subprocess.CompletedProcess(argv, 0, answer(pkg), "")

    monkeypatch.setattr(v.subprocess, "run", fake_run)
    v.selftest_in_child(pkg, ["__init__.py"], [])
    assert seen == [{
        "capture_output": True, "text": True, "timeout": v.CHILD_TIMEOUT, "check": False,
        "stdin": subprocess.DEVNULL, "errors": "replace",
    }]  # fmt: skip


def test_the_childs_last_lines_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = small_package(tmp_path)
    only_answer = answer(pkg).splitlines()[-1]
    child_answer(monkeypatch, 0, only_answer)
    assert v.selftest_in_child(pkg, ["__init__.py"], [])[0] == []
    child_answer(monkeypatch, 0, "a\nb\n" + only_answer + "\n")
    assert v.selftest_in_child(pkg, ["__init__.py"], [])[0] == []
    child_answer(monkeypatch, 5, "", "x" * 300 + "\n")
    (finding,) = v.selftest_in_child(pkg, [], [])[0]
    assert finding.endswith("failed (exit 5): " + "x" * 200)
    failures = [f"vector {i}" for i in range(12)]
    child_answer(monkeypatch, 0, answer(pkg, ok=False, failures=failures))
    findings = v.selftest_in_child(pkg, ["__init__.py"], [])[0]
    assert findings == [f"self-test FAIL vector {i}" for i in range(10)]


def test_changed_missing_and_extra_files_are_told_apart(tmp_path: Path) -> None:
    pkg = small_package(tmp_path)
    expected = v.inventory(pkg)[0]
    (pkg / "api.py").write_text("LIMIT = 2.0\n")
    (pkg / "data.txt").unlink()
    (pkg / "new.py").write_text("")
    outcome = v.compare(expected, pkg, hook_dirs=[], modules={}, environ={}, path=[])
    assert (outcome.changed, outcome.missing, outcome.extra) == (
        ["api.py"],
        ["data.txt"],
        ["new.py"],
    )
    assert outcome.verified == ["__init__.py"] and not outcome.ok
    assert [label for label, _ in outcome.problems] == ["changed", "missing", "extra"]


@pytest.mark.parametrize(
    "package",
    [[], {"files": []}, {"files": {}}, {"files": {"a.py": 1}}, {}],
)
def test_a_package_block_without_file_hashes_is_refused(tmp_path: Path, package: object) -> None:
    """Each with a valid gate: the package block alone makes the report unreadable."""
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"package": package, "gate": {"passed": True}}))
    with pytest.raises(ValueError, match=r"package\.files"):
        v.read_expected(path)


def test_what_a_report_says_cannot_be_changed_after_reading() -> None:
    expected = v.Expected({"a.py": "0" * 64}, True, [])
    with pytest.raises(dataclasses.FrozenInstanceError):
        expected.gate_passed = False  # type: ignore[misc]


@pytest.mark.usefixtures("quiet_environment")
def test_the_command_runs_the_self_test_in_a_child(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = small_package(tmp_path)
    report = report_file(tmp_path, {"package": {"files": v.inventory(pkg)[0]},
                                    "gate": {"passed": True}})  # fmt: skip
    ran: list[Path] = []

    def child(where: Path, verified: object, path: object) -> tuple[list[str], list[str]]:
        ran.append(where)
        return [], ["self-test passed"]

    monkeypatch.setattr(v, "selftest_in_child", child)
    monkeypatch.setattr(v, "search_path", lambda environ=None: [tmp_path])
    assert v.verify_install_main([str(report)]) == v.EXIT_OK
    assert ran == [pkg] and "note: self-test passed" in capsys.readouterr().out


def test_the_console_script_reads_its_arguments_and_keeps_its_exit_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``run()`` reads ``sys.argv[1:]`` and, as the process's last act, ignores SIGINT
    (the decided code must not become a traceback); ``main(argv, v)`` leaves SIGINT alone."""
    launched = launcher()
    handlers: list[object] = []
    monkeypatch.setattr(launched.signal, "signal", lambda sig, handler: handlers.append(handler))
    monkeypatch.setattr(launched, "verifier", lambda: v)
    monkeypatch.setattr(sys, "argv", ["sonnx-mul", "--version"])
    assert launched.run() == 0
    assert capsys.readouterr().out.startswith("sonnx-mul ")
    assert handlers == [launched.signal.SIG_IGN]
    handlers.clear()
    assert launched.main(["--version"], v) == 0
    assert handlers == []


def test_the_file_runs_as_the_hardened_verifier() -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(v.__file__), "--help"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m sonnx_mul_verify [-h]")


def test_the_installed_command_is_the_launcher() -> None:
    """The command the attack tests run (``bin/sonnx-mul``) is the launcher's source but
    for the shebang pip writes: make install reinstalls when it changes."""
    installed = Path(sys.executable).parent / "sonnx-mul"

    def body(path: Path) -> str:
        return path.read_text(encoding="utf-8").partition("\n")[2]

    assert body(installed) == body(LAUNCHER)
    assert body(installed) != body(LAUNCHER) + "\n"  # control: a change is seen
