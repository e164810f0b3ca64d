"""The verifier's rules on the package's files: where the package is found (the
venv's prefixes, the search path, a regular package only), how its files are read
(whole up to a cap, regular files only, never waiting on a FIFO; every byte
hashed) and listed (links, loops and unreadable entries are findings; changed,
missing and extra files told apart).

Part of the verifier's rules pinned one by one in this process (the
``test_verify_rules_*.py`` files: the mutants of ``sonnx_mul_verify`` run
against them first); each test names the rule it holds.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import stat
import sys
import threading
from pathlib import Path

import pytest
from verify_rules_support import flags_with, small_package

import sonnx_mul_verify as v


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


def test_a_file_that_cannot_be_examined_is_named_by_the_systems_reason(tmp_path: Path) -> None:
    assert v._regular_or_why(tmp_path / "missing") == "No such file or directory"
    assert v._regular_or_why(tmp_path) == "a directory, not a regular file"
    (tmp_path / "f").write_text("")
    assert v._regular_or_why(tmp_path / "f") is None


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
