"""The verifier's rules on bytecode caches: a cache is accepted only when it is the
compilation of its verified source (by content, constants and nested code included,
at its optimization level), wherever the interpreter would look for it (``__pycache__``,
``-X pycache_prefix``), the verifier's own caches included.

Fails when the rule is broken by hand: a cache compared by length only, a code
comparison that ignores constants.

Part of the verifier's rules pinned one by one in this process (the
``test_verify_rules_*.py`` files: the mutants of ``sonnx_mul_verify`` run
against them first); each test names the rule it holds.
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import sys
from pathlib import Path
from types import CodeType

import pytest
from verify_rules_support import small_package

import sonnx_mul_verify as v


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
