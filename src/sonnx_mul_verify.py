"""``sonnx-mul verify-install REPORT.json``: is the code that would run the code a report covers?

This module is the verifier, and it lives OUTSIDE the package it checks
(``sonnx_mul``), in the same distribution (``sonnx-mul``). It uses the
standard library only and never imports ``sonnx_mul`` itself: the package is
located, read and hashed as data before any of its code can run, so neither a
replaced ``_native*.so`` (an ELF constructor), nor lines added to
``__init__.py``, nor a truncated binary can answer in the verifier's place.
Only when every check below passed is the package imported, in a child
process, for the known-answer self-test. Entry points:

- ``sonnx-mul verify-install REPORT.json``: the launcher, the ``sonnx-mul``
  script (``scripts/sonnx-mul``), compiles this file's source, never a cached
  compilation, which a planted ``__pycache__`` file could replace; this
  file's rule (:func:`verify_install_arguments`) tells it every spelling of
  ``verify-install`` (``--``, an abbreviation, options before it), which it
  hands to :func:`verify_install_main`; it imports ``sonnx_mul.cli`` for the
  other subcommands only. This module imports nothing of the package; the
  package's CLI imports the error contract from here (``guarded``), never
  the reverse;
- ``python -I -m sonnx_mul_verify REPORT.json`` (the import system may run
  a cache of this file: the verifier names such a cache when it is not the
  compilation of its source, but only the script and the hardened form run
  the source whatever the cache holds);
- hardened: ``python -I -S /path/to/sonnx_mul_verify.py REPORT.json`` (no
  ``site``: no ``.pth`` line nor ``sitecustomize`` runs before this code; the
  site directories and their ``.pth`` path lines are then read as data).

Checks, for the ``sonnx_mul`` package the deployment's interpreter would
import (found by :class:`importlib.machinery.PathFinder` on the search path
of :func:`search_path`, which executes nothing):

1. **Files.** Every file of the package directory, sources and native
   binaries alike, is read with ``os.read`` (never mapped, imported or
   loaded) and its SHA-256 compared with the report's ``package.files``:
   same set of files, same hashes. A FIFO, device or socket, or a symbolic
   link leaving the package, is refused without being opened for reading;
   a link loop, an unreadable file or a directory that cannot be listed is a
   finding too, and the other checks still run.
2. **Bytecode.** Every cache the interpreter could load (``__pycache__`` and
   ``sys.pycache_prefix``) must be the compilation of its verified source by
   this interpreter, whatever its header says: the source is compiled here
   (``compile``, nothing executed) and the code objects compared field by
   field (not ``co_filename``). Caches of another interpreter, without a
   verified source, or unreadable are refused: delete ``__pycache__`` after
   an upgrade. ``marshal.loads`` of a hostile cache could crash this process:
   it then exits non-zero, never with "OK".
3. **Start-up hooks.** ``.pth`` lines starting with ``import`` (site
   directories and the search path) and ``sitecustomize``/``usercustomize``
   run code at every start-up. setuptools' own ``.pth`` lines are allowed
   when they match exactly; ``--allow-hook SHA256`` pins any other hook file.
   Rule for the interpreter's own hooks: a ``*customize`` module whose file
   lies directly in the interpreter's standard-library directory
   (``sysconfig`` ``stdlib``/``platstdlib``), and whose real path (symbolic
   links resolved) is in that directory or in ``/etc/pythonX.Y`` (Debian's
   ``sitecustomize.py``, a conffile of ``libpythonX.Y-minimal``), is part of
   the interpreter's installation: trusted like the interpreter, named in a
   ``note:`` line, not a finding. The same module in a site-packages, user
   or ``PYTHONPATH`` directory was added later and is a finding.
4. **Environment.** Variables read by the package that change what runs
   (:data:`KNOWN_ENVIRONMENT`): ``SONNX_MUL_KERNEL=numpy`` (numpy's loops, a
   diagnosis mode) or any value but ``native`` is a finding;
   ``SONNX_MUL_ISA`` naming a variant (``portable``, ``avx2``, ``avx512``:
   builds of the same proved sources, compared with the portable build by
   the self-test) is a ``note:`` line, any other value a finding. Every
   variable of the interpreter and of the dynamic loader is judged by one
   table, :data:`INTERPRETER_ENVIRONMENT` (a reason each): those that make
   the interpreter load or run code from elsewhere (``PYTHONPYCACHEPREFIX``,
   ``PYTHONHOME``, ``PYTHONUSERBASE``, ``LD_PRELOAD`` ...) are findings, and
   so are the options of this process that do the same
   (:data:`INTERPRETER_OPTIONS`: ``-X pycache_prefix``, ``-O``, ``-i``, a
   ``-W`` filter that imports a module).
5. **Loaded modules.** A ``sonnx_mul`` module already loaded in this
   process (a start-up hook imported it) must come from a verified file.
6. **Verifier.** This file's SHA-256 is printed, and compared with the
   report's ``package.verifier`` when the report records one. A verifier
   cannot verify itself: it is part of the trusted base, like the
   interpreter; an auditor compares the printed hash with the report.
7. **Self-test.** Only when 1-6 found nothing: a child ``python -I`` imports
   the verified package, runs its known-answer self-test, and says which
   kernel and variant run and where each loaded ``sonnx_mul`` module comes
   from; a failure, a crash or a signal is a finding.
8. **Gate.** A report whose own gate failed certifies nothing: exit 3.

The search path is what the deployment's ``python`` (default flags, same
environment) would search: ``PYTHONPATH`` (read from the environment even
under ``-I``, since the deployment reads it), this process's ``sys.path``,
and, under ``-S``, the site directories with their ``.pth`` path lines.

What it cannot see: what an allowed or interpreter hook imports; code that
ran before this module (``site`` and its hooks, unless ``-S``; such code
could also hide itself from the scan); run-time patches by the application;
numpy, onnx, the interpreter; another interpreter's or environment's hooks;
a verifier file that was itself replaced.

Output: one line per finding on stdout (``label: what``), ``note:`` and
``allowed hook:`` lines, then the verdict; with ``--format json`` one JSON
document on stdout instead, and every error as the JSON error object. Exit
codes: 0 every check passed and the report's gate passed; 1 a finding; 2 the
report cannot be read (also when it is not a regular file), has no
``package`` block, or a wrong call; 3 no finding but the report's gate
failed. Never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.machinery
import importlib.util
import json
import marshal
import os
import re
import site
import stat
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, MappingProxyType, ModuleType
from typing import Any, NoReturn

EXIT_OK, EXIT_MISMATCH, EXIT_UNREADABLE, EXIT_GATE_FAILED = 0, 1, 2, 3
EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 130, 141

PACKAGE = "sonnx_mul"
MAX_REPORT_BYTES = 256 << 20
"""A report is a few MB; anything bigger is refused before parsing."""
MAX_CACHE_BYTES = 64 << 20
BLOCK = 1 << 16
CHILD_TIMEOUT = 300.0

ALLOWED_PTH_LINES: tuple[re.Pattern[str], ...] = (
    # setuptools' distutils-precedence.pth, exactly as setuptools writes it.
    re.compile(
        r"import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os\.environ\.get\(var, "
        r"'local'\) == 'local'; enabled and __import__\('_distutils_hack'\)\.add_shim\(\);?"
    ),
    # setuptools' editable installs (PEP 660): a finder module of its own.
    re.compile(r"import (__editable___[A-Za-z0-9_]+_finder); \1\.install\(\)"),
)
"""``import`` lines of ``.pth`` files that are known harmless, matched in full."""

CUSTOMIZE_MODULES = ("sitecustomize", "usercustomize")

# The ISA variants of the native kernel, the reference first (native/isa.toml's table):
# generated here, since the verifier reads nothing of the package before it is verified.
# BEGIN GENERATED from native/isa.toml by sonnx_mul_assurance.c.glue_isas: do not edit
ISA_VARIANTS = ("portable", "avx2", "avx512")
# END GENERATED
KNOWN_ENVIRONMENT = {
    "SONNX_MUL_KERNEL": "sonnx_mul.kernel: native (default) or numpy (diagnosis)",
    "SONNX_MUL_ISA": f"sonnx_mul._native: auto (default), {', '.join(ISA_VARIANTS[:-1])} or "
    f"{ISA_VARIANTS[-1]}",
}
"""Every environment variable the package reads (a test greps the package for them)."""


# ---------------------------------------------------------------- reading files
def real_path(path: str | os.PathLike[str]) -> Path:
    """``path`` with its symbolic links resolved, as far as they go.

    Not :meth:`Path.resolve`, which raises RuntimeError on a link loop: a loop
    is then an OSError (ELOOP) of whatever opens the path, a finding.
    """
    return Path(os.path.realpath(path))


class NotRegularFileError(OSError):
    """The path names something that is not a regular file."""


def kind(mode: int) -> str:
    """``'a FIFO'``, ``'a directory'``, ... for an ``st_mode`` that is not a regular file."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _open_fd(path: str | os.PathLike[str]) -> int:
    """A descriptor of the regular file ``path``; NotRegularFileError otherwise.

    ``O_NONBLOCK``: a FIFO opens at once instead of waiting for a writer;
    ``fstat`` on the descriptor judges what was opened (no check/open race).
    """
    name = os.fspath(path)
    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(f"{name!r} is {kind(mode)}, not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def sha256(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of every byte of the regular file ``path``, read with ``os.read``."""
    digest = hashlib.sha256()
    fd = _open_fd(path)
    try:
        while block := os.read(fd, BLOCK):
            digest.update(block)
    finally:
        os.close(fd)
    return digest.hexdigest()


def read_bytes(path: str | os.PathLike[str], limit: int) -> bytes:
    """All bytes of the regular file ``path``; ValueError when over ``limit`` bytes."""
    fd = _open_fd(path)
    try:
        chunks: list[bytes] = []
        size = 0
        while size <= limit and (block := os.read(fd, min(BLOCK << 4, limit + 1 - size))):
            chunks.append(block)
            size += len(block)
    finally:
        os.close(fd)
    if size > limit:
        raise ValueError(f"over the {limit}-byte cap")
    return b"".join(chunks)


# ---------------------------------------------------------------- where the package is
def pth_lines(site_dir: Path) -> list[tuple[Path, list[str], list[str]]]:
    """(file, path lines, import lines) of every ``.pth`` of ``site_dir``, sorted as site does.

    Read as data: nothing is executed. Unreadable or non-regular files are skipped
    here (:func:`startup_hooks` reports them).
    """
    found: list[tuple[Path, list[str], list[str]]] = []
    try:
        names = sorted(n for n in os.listdir(site_dir) if n.endswith(".pth"))
    except OSError:
        return found
    for name in names:
        pth = site_dir / name
        try:
            text = read_bytes(pth, MAX_CACHE_BYTES).decode("utf-8", "replace")
        except (OSError, ValueError):
            continue
        paths: list[str] = []
        code: list[str] = []
        for line in text.splitlines():
            if line.startswith(("import ", "import\t")):
                code.append(line.rstrip())
            elif line.strip() and not line.startswith("#"):
                paths.append(line.rstrip())
        found.append((pth, paths, code))
    return found


def venv_prefixes() -> list[str] | None:
    """The prefixes ``site`` would use in the virtual environment of ``sys.executable``.

    ``site.venv`` would process the ``.pth`` files (run their import lines):
    ``pyvenv.cfg`` is read here as data instead. None outside a venv.
    """
    exe_dir = os.path.dirname(os.path.abspath(sys.executable))
    prefix = os.path.dirname(exe_dir)
    for conf in (os.path.join(exe_dir, "pyvenv.cfg"), os.path.join(prefix, "pyvenv.cfg")):
        try:
            text = read_bytes(conf, MAX_CACHE_BYTES).decode("utf-8", "replace")
        except (OSError, ValueError):
            continue
        system_site = "true"
        for line in text.splitlines():
            key, eq, value = line.partition("=")
            if eq and key.strip().lower() == "include-system-site-packages":
                system_site = value.strip().lower()
        return [prefix, *([sys.base_prefix] if system_site == "true" else [])]
    return None


def site_directories() -> list[Path]:
    """The site directories of this interpreter, whether or not ``site`` ran (``-S``)."""
    if sys.flags.no_site:  # sys.prefix is still the base interpreter's: no site.venv()
        return [Path(d) for d in site.getsitepackages(venv_prefixes())]
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [Path(d) for d in dirs]


def search_path(environ: Mapping[str, str] | None = None) -> list[Path]:
    """Where the deployment's interpreter looks for ``sonnx_mul``, in its order.

    ``PYTHONPATH`` first (this process skipped it under ``-E``/``-I``; the
    deployment does not), then ``sys.path``; under ``-S`` the site
    directories and the path lines of their ``.pth`` files are appended as
    ``site`` would (read, not run).
    """
    env = os.environ if environ is None else environ
    entries: list[str] = []
    if sys.flags.ignore_environment:
        entries += [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    entries += [p for p in sys.path if p]
    if sys.flags.no_site:
        for d in site_directories():
            if d.is_dir():
                entries.append(str(d))
                for _, paths, _ in pth_lines(d):
                    entries += [str(d / p) for p in paths if (d / p).is_dir()]
    return [Path(p) for p in dict.fromkeys(entries)]


def locate_package(path: Sequence[Path]) -> tuple[Path | None, str | None]:
    """(package directory, None) or (None, why): where ``import sonnx_mul`` would load from.

    :meth:`importlib.machinery.PathFinder.find_spec` only looks at the
    directories of ``path``: it executes nothing of the package (a test shows
    it). Anything but a regular package directory (a ``sonnx_mul.py`` or
    extension module shadowing it, a namespace package, a zip) is refused.
    """
    spec = importlib.machinery.PathFinder.find_spec(PACKAGE, [str(p) for p in path])
    if spec is None:
        return None, f"no {PACKAGE} package on the search path"
    origin = spec.origin
    locations = list(spec.submodule_search_locations or [])
    if (
        origin is None
        or len(locations) != 1
        or Path(origin).name != "__init__.py"
        or not isinstance(spec.loader, importlib.machinery.SourceFileLoader)
    ):
        shown = origin or locations
        return None, f"{PACKAGE} would be imported from {shown}, not a package directory"
    return Path(locations[0]), None


# ---------------------------------------------------------------- files
def inventory(package_dir: Path) -> tuple[dict[str, str], list[Path], list[str]]:
    """(SHA-256 by relative path, cache files, refusals) of a package directory.

    Every entry is judged by ``lstat`` first: a regular file is hashed, a
    ``.pyc`` inside ``__pycache__`` is a cache (checked by
    :func:`check_caches`), a symbolic link is followed only when it stays in
    the package and names a regular file, anything else is refused unopened.
    """
    base = real_path(package_dir)
    files: dict[str, str] = {}
    caches: list[Path] = []
    refused: list[str] = []

    def unreadable_directory(exc: OSError) -> None:  # os.walk would skip it silently
        where = Path(exc.filename or base)
        rel = where.relative_to(base).as_posix() if where.is_relative_to(base) else str(where)
        refused.append(f"{rel} (a directory that cannot be listed: {exc.strerror or exc})")

    for dirpath, dirnames, filenames in os.walk(base, onerror=unreadable_directory):
        here = Path(dirpath)
        for d in list(dirnames):
            if (here / d).is_symlink():  # os.walk does not enter it: judge it here
                dirnames.remove(d)
                filenames.append(d)
        dirnames.sort()
        for name in sorted(filenames):
            path = here / name
            rel = path.relative_to(base).as_posix()
            try:
                mode = os.lstat(path).st_mode
                if stat.S_ISLNK(mode):
                    # realpath, not Path.resolve: a link loop is an OSError (ELOOP) of
                    # the stat below, never a RuntimeError that would end every check
                    target = real_path(path)
                    if not target.is_relative_to(base):
                        refused.append(f"{rel} (a symbolic link pointing outside the package)")
                        continue
                    mode = os.stat(target).st_mode
                if not stat.S_ISREG(mode):
                    refused.append(f"{rel} ({kind(mode)}, not a regular file)")
                elif here.name == "__pycache__" and name.endswith(".pyc"):
                    caches.append(path)
                else:
                    files[rel] = sha256(path)
            except OSError as exc:  # vanished, unreadable, a link loop, a FIFO meanwhile
                refused.append(f"{rel} ({exc.strerror or exc})")
    return files, caches, refused


# ---------------------------------------------------------------- bytecode
def _const_key(value: object) -> object:
    if isinstance(value, CodeType):
        return code_key(value)
    if isinstance(value, tuple | frozenset):
        keys = [_const_key(v) for v in value]
        if isinstance(value, frozenset):
            keys.sort(key=repr)
        return (type(value).__name__, tuple(keys))
    return (type(value).__name__, repr(value))  # 1, 1.0, True and -0.0 stay apart


def code_key(code: CodeType) -> tuple[object, ...]:
    """Everything of a code object that decides what it does (not ``co_filename``)."""
    return (
        code.co_name,
        code.co_qualname,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_flags,
        code.co_stacksize,
        code.co_nlocals,
        code.co_firstlineno,
        code.co_code,
        code.co_linetable,
        code.co_exceptiontable,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        tuple(_const_key(c) for c in code.co_consts),
    )


_CACHE_NAME = re.compile(r"(?P<stem>[^.]+)\.(?P<tag>[^.]+)(?:\.opt-(?P<opt>[12]))?\.pyc")


def cache_problem(cache: Path, source: Path | None) -> str | None:
    """Why ``cache`` is not the compilation of ``source`` by this interpreter (None: it is).

    ``compile`` of the source and ``marshal.loads`` of the cache execute nothing.
    """
    match = _CACHE_NAME.fullmatch(cache.name)
    if match is None or match["tag"] != sys.implementation.cache_tag:
        return "a cache of another interpreter or not a cache name"
    if source is None:
        return "no verified source beside it"
    try:
        data = read_bytes(cache, MAX_CACHE_BYTES)
        source_bytes = read_bytes(source, MAX_CACHE_BYTES)
    except (OSError, ValueError) as exc:
        return f"unreadable: {exc}"
    if data[:4] != importlib.util.MAGIC_NUMBER:
        return "another interpreter's magic number"
    optimize = int(match["opt"] or 0)
    try:
        expected = compile(source_bytes, str(source), "exec", dont_inherit=True, optimize=optimize)
    except (SyntaxError, ValueError) as exc:
        return f"its source does not compile here: {exc}"
    payload = data[16:]
    # marshal output depends on reference counts (FLAG_REF): equal code may
    # marshal differently, so bytes first, then code objects.
    if marshal.dumps(expected) == payload:
        return None
    try:
        found = marshal.loads(payload)
    except (EOFError, ValueError, TypeError) as exc:
        return f"not valid bytecode: {exc}"
    if not isinstance(found, CodeType) or code_key(found) != code_key(expected):
        return "its code is not the compilation of its source"
    return None


def check_caches(package_dir: Path, caches: Iterable[Path], verified: Iterable[str]) -> list[str]:
    """Problems of the caches found in the package and under ``sys.pycache_prefix``.

    ``verified``: relative paths of the sources whose hashes matched the report
    (a cache of a changed source is refused with it).
    """
    base = real_path(package_dir)
    good = set(verified)
    todo: dict[Path, Path | None] = {}
    for cache in caches:
        stem = _CACHE_NAME.fullmatch(cache.name)
        source = cache.parent.parent / f"{stem['stem'] if stem else cache.stem}.py"
        rel = source.relative_to(base).as_posix()
        todo[cache] = source if rel in good else None
    if sys.pycache_prefix:  # caches live in another tree: look each source's up
        for rel in sorted(good):
            if rel.endswith(".py"):
                for opt in ("", 1, 2):
                    cached = Path(
                        importlib.util.cache_from_source(str(base / rel), optimization=opt)
                    )
                    if cached.exists() or cached.is_symlink():
                        todo[cached] = base / rel
    problems: list[str] = []
    for cached_file, verified_source in sorted(todo.items(), key=lambda kv: str(kv[0])):
        why = _regular_or_why(cached_file) or cache_problem(cached_file, verified_source)
        if why:
            inside = cached_file.is_relative_to(base)
            shown = cached_file.relative_to(base).as_posix() if inside else str(cached_file)
            problems.append(f"{shown} ({why})")
    return problems


def _regular_or_why(path: Path) -> str | None:
    try:
        mode = os.lstat(path).st_mode
    except OSError as exc:
        return exc.strerror or str(exc)
    return None if stat.S_ISREG(mode) else f"{kind(mode)}, not a regular file"


# ---------------------------------------------------------------- start-up hooks
def site_dirs(path: Sequence[Path] | None = None) -> list[Path]:
    """Directories whose ``.pth`` files run at start-up: the site directories, and
    every directory of the search path (``site.addsitedir`` may have made one a
    site directory; a ``.pth`` anywhere else is inert, so reporting it is cautious).
    """
    dirs = [*site_directories(), *(search_path() if path is None else path)]
    return [d for d in dict.fromkeys(dirs) if d.is_dir()]


def stdlib_dirs() -> list[Path]:
    """The interpreter's standard-library directories (``sysconfig``), resolved."""
    paths = sysconfig.get_paths()
    found = [Path(os.path.realpath(paths[k])) for k in ("stdlib", "platstdlib") if k in paths]
    return list(dict.fromkeys(found))


def interpreter_etc() -> Path:
    """Where Debian keeps the interpreter's own configuration files (``/etc/pythonX.Y``)."""
    return Path(f"/etc/python{sys.version_info.major}.{sys.version_info.minor}")


def interpreter_hook(file: Path, stdlib: Sequence[Path], etc: Path) -> bool:
    """True when the hook module ``file`` is part of the interpreter's installation.

    It must lie directly in a standard-library directory (not in a
    site-packages below it), and its real path must stay in that directory
    or in ``etc`` (Debian's ``/etc/pythonX.Y`` conffile).
    """
    parent = Path(os.path.realpath(file.parent))
    if parent not in stdlib:
        return False
    real = Path(os.path.realpath(file))
    return real.parent == parent or real.is_relative_to(Path(os.path.realpath(etc)))


def startup_hooks(
    dirs: Iterable[Path] | None = None,
    allow: Iterable[str] = (),
    *,
    path: Sequence[Path] | None = None,
    stdlib: Sequence[Path] | None = None,
    etc: Path | None = None,
    modules: Mapping[str, ModuleType] | None = None,
) -> tuple[list[str], list[str], list[str]]:
    """(hooks not allowed, hooks allowed, interpreter hooks) of the start-up.

    ``.pth`` files in ``dirs`` (default :func:`site_dirs`) with ``import``
    lines, and the ``*customize`` modules the search ``path`` would load. A
    ``.pth`` is allowed when every import line matches
    :data:`ALLOWED_PTH_LINES`, any hook file when its SHA-256 is in
    ``allow``; a ``*customize`` module is the interpreter's own by
    :func:`interpreter_hook`. ``stdlib``, ``etc``, ``modules`` (default
    ``sys.modules``, where ``site`` left the hook it ran): for tests.
    """
    pinned = {a.lower() for a in allow}
    bad: list[str] = []
    allowed: list[str] = []
    trusted: list[str] = []
    for d in site_dirs(path) if dirs is None else list(dirs):
        for pth in sorted(Path(d).glob("*.pth")):
            why = _regular_or_why(pth)
            if why:
                bad.append(f"{pth} ({why})")
                continue
            try:
                text = read_bytes(pth, MAX_CACHE_BYTES).decode("utf-8", "replace")
            except (OSError, ValueError) as exc:
                bad.append(f"{pth} (unreadable: {exc})")
                continue
            code = [
                line.rstrip()
                for line in text.splitlines()
                if line.startswith(("import ", "import\t"))
            ]
            if not code:
                continue
            # every import line must be one of setuptools' own: one of them beside
            # a line of one's own does not make the file harmless
            unknown = [ln for ln in code if not any(p.fullmatch(ln) for p in ALLOWED_PTH_LINES)]
            if not unknown:
                allowed.append(f"{pth} (setuptools)")
            elif sha256(pth) in pinned:
                allowed.append(f"{pth} (--allow-hook)")
            else:
                bad.append(f"{pth} runs code at start-up: {unknown[0][:120]}")
    own = stdlib_dirs() if stdlib is None else list(stdlib)
    for name in CUSTOMIZE_MODULES:
        for where in _customize_files(
            name,
            search_path() if path is None else path,
            sys.modules if modules is None else modules,
        ):
            real = Path(os.path.realpath(where))
            # a module made in memory has a pseudo name, not a path to resolve
            moved = where.is_absolute() and real != where
            shown = f"{where}" + (f" (-> {real})" if moved else "")
            if where.is_file() and interpreter_hook(where, own, etc or interpreter_etc()):
                trusted.append(f"{name} module {shown}")
            elif where.is_file() and _regular_or_why(real) is None and sha256(where) in pinned:
                allowed.append(f"{shown} (--allow-hook)")
            else:
                bad.append(f"{name} module {shown} runs at start-up")
    return bad, allowed, trusted


def _customize_files(
    name: str, path: Sequence[Path], modules: Mapping[str, ModuleType]
) -> list[Path]:
    """The files of ``sitecustomize``/``usercustomize``: the one loaded here, and the one
    first on ``path`` (what the deployment loads: under ``-I`` this process skipped
    ``PYTHONPATH``, so the two may differ)."""
    found: list[Path] = []
    module = modules.get(name)
    if module is not None:
        found.append(Path(getattr(module, "__file__", None) or f"<{name} without a file>"))
    spec = importlib.machinery.PathFinder.find_spec(name, [str(p) for p in path])
    if spec is not None:
        found.append(Path(spec.origin) if spec.origin else Path(f"<{name} without a file>"))
    return list(dict.fromkeys(found))


# ---------------------------------------------------------------- environment
REFUSED = "refused"
"""The variable makes the interpreter load or run code the verifier did not check: a finding."""
FOLLOWED = "followed"
"""The verifier follows the variable as the interpreter does (a ``note:`` line)."""
HARMLESS = "harmless"
"""The variable changes nothing of what is loaded or run; not mentioned."""
REFUSED_WHEN_IMPORTING = "refused when it names a category in a module"
"""``PYTHONWARNINGS``: a finding only when a filter's category lives in a module
(the interpreter imports that module at start-up to find the class)."""

INTERPRETER_ENVIRONMENT: Mapping[str, tuple[str, str]] = MappingProxyType({
    # where modules come from
    "PYTHONPATH": (FOLLOWED, "prepends directories to the module search path; the verifier "
                   "searches them too, so the package it hashes is the one this path finds"),
    "PYTHONHOME": (REFUSED, "moves the standard library and site-packages to another prefix, "
                   "directories the verifier does not search"),
    "PYTHONPLATLIBDIR": (REFUSED, "renames the library directory (lib64 ...): site-packages "
                         "the verifier does not search"),
    "PYTHONUSERBASE": (REFUSED, "moves the user site directory, which comes before "
                       "site-packages on the path, to a directory of the caller's choosing"),
    "PYTHONNOUSERSITE": (HARMLESS, "removes the user site directory: nothing more is loaded"),
    "PYTHONSAFEPATH": (HARMLESS, "removes the script's or current directory from the path: "
                       "nothing more is loaded"),
    "PYTHONPYCACHEPREFIX": (REFUSED, "the interpreter loads cached bytecode from a tree "
                            "outside the package, not from its __pycache__ directories"),
    "PYTHONDONTWRITEBYTECODE": (HARMLESS, "stops writing caches; what is read is unchanged"),
    "PYTHONCASEOK": (REFUSED, "on a case-insensitive file system an import takes a file of "
                     "another case, which the verifier's exact names do not cover"),
    "PYTHONOPTIMIZE": (REFUSED, "runs the optimized compilation (assert statements and "
                       "__debug__ blocks removed): code the tests did not run"),
    "PYTHONEXECUTABLE": (REFUSED, "replaces sys.executable (macOS): the self-test child "
                         "would not run this interpreter"),
    "PYTHONNODEBUGRANGES": (HARMLESS, "drops column tables from code objects; a cache "
                            "written without them is refused as not the compilation"),
    # code that runs in the process besides the program
    "PYTHONSTARTUP": (REFUSED, "a file run before the first prompt of an interactive "
                      "interpreter, in the process that imports the package: like "
                      "sitecustomize it can patch the package in memory"),
    "PYTHONINSPECT": (REFUSED, "after the program the interpreter stays interactive, runs "
                      "what standard input says with the package loaded, and loses the "
                      "program's exit code"),
    "PYTHONWARNINGS": (REFUSED_WHEN_IMPORTING, "a filter whose category is in a module "
                       "imports that module at start-up; built-in categories only change "
                       "how warnings are shown"),
    "PYTHONBREAKPOINT": (HARMLESS, "read by breakpoint() only, which the package never "
                         "calls (a test checks)"),
    # diagnostics, encodings, allocators: what runs is unchanged
    **{
        name: (HARMLESS, "diagnostics, encoding or allocator settings: what is loaded and "
               "run is unchanged")
        for name in (
            "PYTHONDEBUG", "PYTHONDEVMODE", "PYTHONVERBOSE", "PYTHONUNBUFFERED",
            "PYTHONHASHSEED", "PYTHONINTMAXSTRDIGITS", "PYTHONIOENCODING", "PYTHONUTF8",
            "PYTHONCOERCECLOCALE", "PYTHONLEGACYWINDOWSFSENCODING",
            "PYTHONLEGACYWINDOWSSTDIO", "PYTHONWARNDEFAULTENCODING", "PYTHONFAULTHANDLER",
            "PYTHONTRACEMALLOC", "PYTHONPROFILEIMPORTTIME", "PYTHONASYNCIODEBUG",
            "PYTHONMALLOC", "PYTHONMALLOCSTATS", "PYTHONTHREADDEBUG", "PYTHONDUMPREFS",
        )
    },
    # the dynamic loader: native code loaded into the process with the kernel
    "LD_PRELOAD": (REFUSED, "the dynamic loader loads these libraries into the process "
                   "before the kernel; their code runs with it"),
    "LD_AUDIT": (REFUSED, "the dynamic loader runs these audit libraries in the process"),
    "LD_LIBRARY_PATH": (REFUSED, "the dynamic loader takes the libraries the kernel links "
                        "(libm, libc) from these directories first"),
})  # fmt: skip
"""Every variable of the CPython 3.11 documentation (``python --help-env`` and
the "Environment variables" section of ``python(1)``; a test compares this
table with ``--help-env``) and of the dynamic loader, with how the verifier
judges it and why. The verifier reads them from ``os.environ`` even under
``-E``/``-I``: the deployment's interpreter does not ignore them."""

INTERPRETER_OPTIONS: tuple[tuple[str, str, str], ...] = (
    ("-X pycache_prefix", "PYTHONPYCACHEPREFIX", "this interpreter loads cached bytecode "
     "from a tree outside the package (sys.pycache_prefix)"),
    ("-O", "PYTHONOPTIMIZE", "this interpreter runs the optimized compilation (asserts "
     "removed: sys.flags.optimize)"),
    ("-i", "PYTHONINSPECT", "this interpreter stays interactive after the program "
     "(sys.flags.inspect)"),
)  # fmt: skip
"""The options of this process that do what a refused variable does: (option,
variable, why). Reported when set and the variable is not (then the variable
is the finding)."""


def _option_set(option: str) -> bool:
    if option == "-X pycache_prefix":
        return sys.pycache_prefix is not None
    if option == "-O":
        return sys.flags.optimize > 0
    return bool(sys.flags.inspect)


def warning_imports(filters: Iterable[str]) -> list[str]:
    """Modules the ``-W``/``PYTHONWARNINGS`` ``filters`` make the interpreter import.

    A filter is ``action:message:category:module:lineno``; a dotted category
    ``pkg.mod.Class`` is found by importing ``pkg.mod`` (``warnings._getcategory``).
    """
    found: list[str] = []
    for spec in filters:
        for one in spec.split(","):
            fields = one.split(":")
            category = fields[2].strip() if len(fields) > 2 else ""
            if "." in category:
                found.append(category.rpartition(".")[0])
    return found


def interpreter_environment(
    environ: Mapping[str, str] | None = None, *, options: bool = True
) -> tuple[list[str], list[str]]:
    """(findings, notes) about the interpreter's and the loader's variables and options.

    ``options``: also judge this process's own interpreter options (off for tests
    that judge an environment alone).
    """
    env = os.environ if environ is None else environ
    findings: list[str] = []
    notes: list[str] = []
    for name, (verdict, why) in INTERPRETER_ENVIRONMENT.items():
        value = env.get(name)
        if value is None or (value == "" and name != "PYTHONPATH"):
            continue  # CPython ignores an empty PYTHON* variable
        shown = f"{name}={value!r}"
        if verdict == REFUSED:
            findings.append(f"{shown} is set: {why}")
        elif verdict == FOLLOWED and value:
            notes.append(f"{shown}: {why}")
        elif verdict == REFUSED_WHEN_IMPORTING and (modules := warning_imports([value])):
            findings.append(f"{shown} imports {', '.join(modules)} at start-up: {why}")
    if options:
        for option, variable, why in INTERPRETER_OPTIONS:
            if _option_set(option) and not env.get(variable):
                findings.append(f"interpreter option {option}: {why}")
        modules = warning_imports(sys.warnoptions)
        if modules and not warning_imports([env.get("PYTHONWARNINGS", "")]):
            findings.append(
                f"interpreter option -W imports {', '.join(modules)} at start-up: "
                "code that ran before the verifier"
            )
    return findings, notes


def environment(environ: Mapping[str, str] | None = None) -> tuple[list[str], list[str]]:
    """(findings, notes) about the variables that change what the package runs.

    The package's own (:data:`KNOWN_ENVIRONMENT`), then the interpreter's and
    the dynamic loader's (:func:`interpreter_environment`).
    """
    env = os.environ if environ is None else environ
    findings: list[str] = []
    notes: list[str] = []
    kernel = env.get("SONNX_MUL_KERNEL")
    if kernel == "numpy":
        findings.append(
            "SONNX_MUL_KERNEL=numpy runs numpy's multiply loops (a diagnosis mode), "
            "not the proved native kernel"
        )
    elif kernel not in (None, "native"):
        findings.append(f"SONNX_MUL_KERNEL={kernel!r}: sonnx_mul refuses to import with it")
    isa = env.get("SONNX_MUL_ISA")
    if isa in ISA_VARIANTS:
        notes.append(
            f"SONNX_MUL_ISA={isa} chooses the {isa} variant of the native kernel (a build "
            f"of the proved sources; the self-test compares it with the {ISA_VARIANTS[0]} build)"
        )
    elif isa not in (None, "", "auto"):
        findings.append(f"SONNX_MUL_ISA={isa!r}: not a variant (auto, {', '.join(ISA_VARIANTS)})")
    for name in sorted(env):
        if name.startswith("SONNX_MUL_") and name not in KNOWN_ENVIRONMENT:
            notes.append(f"{name} is set; the package reads no such variable")
    more_findings, more_notes = interpreter_environment(env, options=environ is None)
    return findings + more_findings, notes + more_notes


# ---------------------------------------------------------------- loaded modules
def foreign_modules(
    package_dir: Path, verified: Iterable[str], modules: Mapping[str, object] | None = None
) -> list[str]:
    """``sonnx_mul`` modules not loaded from a verified file of the package.

    ``modules`` maps names to modules or to their file names (the child's
    answer); default: this process's ``sys.modules``.
    """
    base = real_path(package_dir)
    good = set(verified)
    found: list[str] = []
    for name, module in sorted((sys.modules if modules is None else modules).items()):
        if name != PACKAGE and not name.startswith(PACKAGE + "."):
            continue
        file = module if isinstance(module, str) or module is None else None
        if isinstance(module, ModuleType):
            file = getattr(module, "__file__", None)
        if not file:
            found.append(f"{name} (not loaded from a file)")
            continue
        path = real_path(file)
        rel = path.relative_to(base).as_posix() if path.is_relative_to(base) else None
        if rel not in good:
            found.append(f"{name} (from {file})")
    return found


# ---------------------------------------------------------------- the child
CHILD = """\
import json, sys
sys.path[:0] = json.loads(sys.argv[1])
import sonnx_mul
from sonnx_mul import kernel
report = sonnx_mul.selftest()
modules = {n: getattr(m, "__file__", None) for n, m in list(sys.modules.items())
           if n == "sonnx_mul" or n.startswith("sonnx_mul.")}
print(json.dumps({"kernel": kernel.NAME, "isa": kernel.isa(), "ok": report.ok,
                  "checked": report.checked, "failures": [str(f) for f in report.failures],
                  "modules": modules}))
"""
"""Run by :func:`selftest_in_child`: import the verified package, self-test, say what ran."""


def selftest_in_child(
    package_dir: Path, verified: Iterable[str], path: Sequence[Path]
) -> tuple[list[str], list[str]]:
    """(findings, notes) of importing the verified package in a child ``python -I``.

    The child inherits the environment (``SONNX_MUL_ISA``), gets the search
    ``path`` explicitly (``-I`` drops ``PYTHONPATH``), and ``-S`` when this
    process has it. A non-zero exit, a signal, a failed self-test, another
    kernel than the native one, or a module from an unverified file is a finding.
    """
    flags = ["-I", *(["-S"] if sys.flags.no_site else [])]
    argv = [sys.executable, *flags, "-c", CHILD, json.dumps([str(p) for p in path])]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=CHILD_TIMEOUT, check=False,
            stdin=subprocess.DEVNULL, errors="replace",
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [f"the package could not be imported in a child process: {exc}"], []
    where = "importing the package in a child process"
    if done.returncode < 0:
        return [f"{where} was killed by signal {-done.returncode}"], []
    last = (done.stderr.strip().splitlines() or [""])[-1][:200]
    if done.returncode != 0:
        return [f"{where} failed (exit {done.returncode}): {last}"], []
    try:
        answer: Any = json.loads((done.stdout.strip().splitlines() or [""])[-1])
        kernel, isa, ok = str(answer["kernel"]), str(answer["isa"]), answer["ok"] is True
        modules = {str(k): (str(v) if v else None) for k, v in answer["modules"].items()}
        failures = [str(f) for f in answer["failures"]]
    except (ValueError, KeyError, TypeError, AttributeError, IndexError):
        return [f"{where}: no answer from the self-test: {last}"], []
    findings = [f"module {m}" for m in foreign_modules(package_dir, verified, modules)]
    if kernel != "native":
        findings.append(f"the {kernel} kernel runs, not the proved native kernel")
    if not ok:
        findings += [f"self-test FAIL {f}" for f in failures[:10]]
    notes = [f"self-test passed: {answer['checked']} known-answer vectors on the {kernel} "
             f"kernel, variant {isa}"] if ok else []  # fmt: skip
    return findings, notes


# ---------------------------------------------------------------- the verdict
@dataclass
class Outcome:
    """What :func:`compare` (and :func:`verify`) found; ``ok`` when nothing."""

    package_dir: str
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # not a regular file, link leaving
    bytecode: list[str] = field(default_factory=list)  # caches not compiled from the source
    hooks: list[str] = field(default_factory=list)  # start-up hooks not allowed
    environment: list[str] = field(default_factory=list)  # variables that change what runs
    modules: list[str] = field(default_factory=list)  # loaded from elsewhere
    verifier: list[str] = field(default_factory=list)  # not the verifier the report records
    selftest: list[str] = field(default_factory=list)  # the child's import and self-test
    allowed_hooks: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    verified: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[tuple[str, str]]:
        """(label, what) of every finding, in a fixed order."""
        return [
            (label, item)
            for label, items in (
                ("changed", self.changed),
                ("missing", self.missing),
                ("extra", self.extra),
                ("refused", self.refused),
                ("bytecode", self.bytecode),
                ("hook", self.hooks),
                ("environment", self.environment),
                ("module", self.modules),
                ("verifier", self.verifier),
                ("selftest", self.selftest),
            )
            for item in items
        ]

    @property
    def ok(self) -> bool:
        return not self.problems


def compare(
    expected: Mapping[str, str],
    package_dir: Path,
    *,
    allow_hooks: Iterable[str] = (),
    hook_dirs: Iterable[Path] | None = None,
    modules: Mapping[str, object] | None = None,
    environ: Mapping[str, str] | None = None,
    path: Sequence[Path] | None = None,
) -> Outcome:
    """Files, caches, hooks, environment and loaded modules against the report's hashes.

    Reads files only: nothing of the package is imported or executed.
    """
    actual, caches, refused = inventory(package_dir)
    out = Outcome(str(real_path(package_dir)))
    out.changed = sorted(p for p in expected if p in actual and actual[p] != expected[p])
    out.missing = sorted(p for p in expected if p not in actual)
    out.extra = sorted(p for p in actual if p not in expected)
    out.refused = refused
    out.verified = [p for p in expected if actual.get(p) == expected[p]]
    out.bytecode = check_caches(package_dir, caches, out.verified)
    out.hooks, out.allowed_hooks, trusted = startup_hooks(hook_dirs, allow_hooks, path=path)
    out.notes += [f"interpreter hook: {t} is part of the interpreter (trusted)" for t in trusted]
    out.environment, notes = environment(environ)
    out.notes += [f"environment: {n}" for n in notes]
    out.modules = foreign_modules(package_dir, out.verified, modules)
    return out


@dataclass(frozen=True)
class Expected:
    """What a report says: the package's file hashes, the verifier's, its own gate verdict."""

    files: dict[str, str]
    gate_passed: bool
    gate_problems: list[str]
    verifier: str | None = None


def read_expected(report_path: Path) -> Expected:
    """The ``package`` and ``gate`` blocks of a report; ValueError when malformed.

    A FIFO or a device is refused (OSError), never waited on.
    """
    data: Any = json.loads(read_bytes(report_path, MAX_REPORT_BYTES).decode("utf-8"))
    package = data.get("package", {}) if isinstance(data, dict) else {}
    files = package.get("files") if isinstance(package, dict) else None
    if not isinstance(files, dict) or not files:
        raise ValueError("the report has no package.files block (written by an older version?)")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise ValueError("package.files must map file names to SHA-256 strings")
    gate = data.get("gate")
    if not isinstance(gate, dict) or not isinstance(gate.get("passed"), bool):
        raise ValueError("the report has no gate verdict (gate.passed)")
    problems = gate.get("problems")
    listed = [str(p) for p in problems] if isinstance(problems, list) else []
    verifier = package.get("verifier")
    recorded = verifier.get("sha256") if isinstance(verifier, dict) else None
    return Expected(
        {str(k): str(v) for k, v in files.items()},
        gate["passed"],
        listed,
        str(recorded) if isinstance(recorded, str) else None,
    )


def verifier_check(recorded: str | None) -> tuple[list[str], list[str]]:
    """(findings, notes): this file's SHA-256 against the report's ``package.verifier``."""
    mine = real_path(__file__)
    try:
        digest = sha256(mine)
    except OSError as exc:
        return [f"{mine} cannot be read: {exc}"], []
    note = f"verifier: {mine} sha256 {digest} (trusted base: it cannot verify itself)"
    caches = own_cache_problems(mine)
    if recorded is None:
        return caches, [note, "verifier: the report records no verifier hash"]
    if recorded.lower() != digest:
        mismatch = f"{mine} sha256 {digest} is not the verifier the report records ({recorded})"
        return [mismatch, *caches], []
    return caches, [note]


def own_cache_problems(source: Path) -> list[str]:
    """The caches of the verifier's own file that this interpreter would run on
    ``import sonnx_mul_verify`` (``python -m``, an importing tool) instead of
    compiling ``source``, and that are not its compilation. This run is from
    source (the ``sonnx-mul`` script compiles it): a cache that would answer in
    its place elsewhere is a finding. A cache the import system would not run
    (another magic number, a header that does not match the source: it
    recompiles) is not."""
    problems: list[str] = []
    for opt in ("", 1, 2):
        cached = Path(importlib.util.cache_from_source(str(source), optimization=opt))
        try:
            data = read_bytes(cached, MAX_CACHE_BYTES)
            source_bytes = read_bytes(source, MAX_CACHE_BYTES)
        except (OSError, ValueError):  # absent or unreadable: the import compiles the source
            continue
        if not would_run(data, source, source_bytes):
            continue
        why = cache_problem(cached, source)
        if why:
            problems.append(f"{cached} ({why}): importing sonnx_mul_verify would run it")
    return problems


def would_run(cache: bytes, source: Path, source_bytes: bytes) -> bool:
    """Whether the import system runs ``cache`` for ``source`` rather than recompiling:
    this interpreter's magic number and a header that matches the source (its mtime
    and size, or its hash when checked; an unchecked-hash cache always runs)."""
    if cache[:4] != importlib.util.MAGIC_NUMBER or len(cache) < 16:
        return False
    flags = int.from_bytes(cache[4:8], "little")
    if flags & 0b01:  # hash-based
        checked = flags & 0b10
        return not checked or cache[8:16] == importlib.util.source_hash(source_bytes)
    st = os.stat(source)
    mtime = (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
    size = (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    return cache[8:12] == mtime and cache[12:16] == size


def verify(
    report_path: Path,
    package_dir: Path | None = None,
    *,
    allow_hooks: Iterable[str] = (),
    child: bool = True,
    as_json: bool = False,
) -> int:
    """Print the verdict and return the exit code (see the module docstring).

    ``package_dir`` defaults to where the deployment would import ``sonnx_mul``
    from; ``child=False`` skips the self-test in a child process; ``as_json``
    prints one JSON document on stdout instead of the lines (an unreadable
    report: the JSON error object on stderr).
    """
    try:
        expected = read_expected(report_path)
    except (OSError, ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
        return fail(f"cannot read {report_path}: {exc}", EXIT_UNREADABLE, as_json)
    path = search_path()
    where, why = (package_dir, None) if package_dir is not None else locate_package(path)
    if where is None:
        outcome = Outcome(f"{PACKAGE} (not found)", missing=[str(why)])
        outcome.environment, notes = environment()
        outcome.notes += [f"environment: {n}" for n in notes]
    else:
        outcome = compare(expected.files, where, allow_hooks=allow_hooks, path=path)
    outcome.verifier, notes = verifier_check(expected.verifier)
    outcome.notes += notes
    if outcome.ok and child and where is not None:
        # the checked directory first: the child imports what was hashed
        child_path = [real_path(where).parent, *path]
        outcome.selftest, notes = selftest_in_child(where, outcome.verified, child_path)
        outcome.notes += notes
    if not outcome.ok:
        code = EXIT_MISMATCH
        verdict = (
            f"verify-install: MISMATCH: {outcome.package_dir} is not the code {report_path} "
            f"covers ({len(outcome.problems)} findings)"
        )
    elif not expected.gate_passed:
        code = EXIT_GATE_FAILED
        first = f": {expected.gate_problems[0]}" if expected.gate_problems else ""
        verdict = (
            f"verify-install: FAILED GATE: the {len(expected.files)} files of "
            f"{outcome.package_dir} are the files {report_path} covers, but that report's "
            f"own gate failed ({len(expected.gate_problems)} problems{first}); it certifies "
            f"nothing"
        )
    else:
        code = EXIT_OK
        verdict = (
            f"verify-install: OK: {len(expected.files)} files of {outcome.package_dir} "
            f"are the files {report_path} covers, and its gate passed"
        )
    if as_json:
        doc = {
            "verdict": {EXIT_OK: "ok", EXIT_MISMATCH: "mismatch"}.get(code, "failed-gate"),
            "exit_code": code,
            "message": verdict,
            "package": outcome.package_dir,
            "report": str(report_path),
            "findings": [{"label": label, "what": item} for label, item in outcome.problems],
            "allowed_hooks": outcome.allowed_hooks,
            "notes": outcome.notes,
        }
        print(json.dumps(doc, indent=2))
        return code
    for label, item in outcome.problems:
        print(f"{label}: {item}")
    for item in outcome.allowed_hooks:
        print(f"allowed hook: {item} (what it imports is not verified)")
    for item in outcome.notes:
        print(f"note: {item}")
    print(verdict, file=sys.stdout if code == EXIT_OK else sys.stderr)
    return code


# ---------------------------------------------------------------- command line
COMMAND = "verify-install"
PRODUCT_COMMANDS = ("check", "run", "selftest")
"""The product's other subcommands (``sonnx_mul.cli.COMMANDS``; a test keeps them equal)."""
PLUGIN_GROUP = "sonnx_mul.commands"


# ------------------------------------------- the error contract of every sonnx-mul command
# Written once, here: the verifier imports nothing but the standard library, so
# sonnx_mul.cli imports these from it (never the reverse), and the launcher
# (scripts/sonnx-mul) uses them once it has compiled this file.
class UsageError(Exception):
    """A wrong call (exit 2); ``sonnx_mul.cli.errors.UsageError`` is one too."""


class StoreOnce(argparse._StoreAction):
    """A single-valued option given twice is a wrong call (argparse keeps the last).

    The one definition: :class:`Parser` registers it, for verify-install and
    every subcommand of ``sonnx_mul.cli``. Repeatable options use ``action="append"``.
    """

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        seen: set[str] = namespace.__dict__.setdefault("_given_once", set())
        if option_string is not None and self.dest in seen:
            parser.error(f"{option_string} is given more than once")
        seen.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


class Parser(argparse.ArgumentParser):
    """argparse that raises ``usage_error`` instead of printing usage and exiting, and
    refuses a single-valued option given twice (:class:`StoreOnce`)."""

    usage_error: type[Exception] = UsageError

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, StoreOnce)
        self.register("action", "store", StoreOnce)

    def error(self, message: str) -> NoReturn:
        raise self.usage_error(f"{message} (see '{self.prog} --help')")


def json_requested(argv: Sequence[str]) -> bool:
    """``--format json`` anywhere in ``argv``, in any spelling argparse accepts
    (``--format=json``, an abbreviation such as ``--form json``): errors raised
    before the arguments are parsed (start-up, a wrong call) honour it too."""
    for i, word in enumerate(argv):
        name, eq, value = word.partition("=")
        if len(name) < 3 or not "--format".startswith(name):
            continue
        if (value if eq else (argv[i + 1] if i + 1 < len(argv) else "")) == "json":
            return True
    return False


def error_text(message: str, code: int, as_json: bool) -> str:
    """The one line of a failure: ``sonnx-mul: error: MESSAGE``, or the JSON error object
    ``{"error": MESSAGE, "exit_code": N}`` (the error contract of every command)."""
    line = " ".join(message.split())
    return (
        json.dumps({"error": line, "exit_code": code}) if as_json else f"sonnx-mul: error: {line}"
    )


def fail(message: str, code: int, as_json: bool) -> int:
    """Print the one line of a failure on stderr, flush stdout, return ``code``."""
    if sys.stderr is not None:
        # stderr closed (None) or broken: the exit code is all that is left
        with contextlib.suppress(OSError, ValueError):
            print(error_text(message, code, as_json), file=sys.stderr, flush=True)
    if sys.stdout is not None:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            silence_stdout()
    return code


def silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush cannot fail."""
    with contextlib.suppress(OSError, ValueError):  # not a real file (tests capture it)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def guarded(
    argv: Sequence[str],
    parse: Callable[[list[str]], argparse.Namespace],
    run: Callable[[argparse.Namespace], int],
    judge: Callable[[Exception], tuple[str, int]],
) -> int:
    """``run(parse(argv))``'s exit code, every failure one line (:func:`fail`), never a
    traceback: the exception handling of every command, written once.

    A closed stdout at start and a :class:`UsageError` are exit 2; ``--help`` and
    ``--version`` their own code; a closed pipe on stdout 141, silently; an interrupt
    130; any other exception the (message, code) ``judge`` gives it. JSON errors when
    the call asks for them (:func:`json_requested`, then the parsed ``--format``).
    """
    as_json = json_requested(argv)
    try:
        if sys.stdout is None:  # started with fd 1 closed (`>&-`): nothing could be reported
            raise UsageError(
                "standard output is closed; nothing could be reported (redirect it to "
                "/dev/null to discard the output)"
            )
        try:
            args = parse(list(argv))
        except SystemExit as exc:  # --help or --version (errors raise UsageError)
            code = int(exc.code) if isinstance(exc.code, int) else EXIT_OK
        else:
            as_json = getattr(args, "format", None) == "json"
            code = run(args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        silence_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        return fail("interrupted", EXIT_INTERRUPTED, as_json)
    except UsageError as exc:
        return fail(str(exc), EXIT_UNREADABLE, as_json)
    except Exception as exc:  # the command's own failures, and defects: still one line
        message, code = judge(exc)
        return fail(message, code, as_json)


# ---------------------------------------------------------------- verify-install
def parser(prog: str = "sonnx-mul verify-install") -> argparse.ArgumentParser:
    """The arguments of ``verify-install`` (also those of ``python -m sonnx_mul_verify``)."""
    p = Parser(
        prog=prog,
        description="Check, without importing it first, that the sonnx_mul package this "
        "Python would import is the code REPORT.json covers (files, bytecode caches, "
        "start-up hooks, environment), then self-test it in a child process. Exit 0: all "
        "of that holds and the report's gate passed; 1: a finding; 2: unreadable report "
        "or wrong call; 3: no finding, but the report's gate failed.",
    )
    add_arguments(p)
    return p


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``verify-install``: one definition for this parser and
    the ``sonnx-mul`` CLI's help."""
    p.add_argument("report", help="traceability.json written by 'sonnx-mul report'")
    p.add_argument(
        "--allow-hook", action="append", default=[], metavar="SHA256",
        help="allow the start-up hook file (.pth, sitecustomize) with this SHA-256 "
        "(repeatable)",
    )  # fmt: skip
    p.add_argument(
        "--format", choices=("text", "json"), default="text",
        help="text: one line per finding, then the verdict; json: one document on stdout, "
        "errors as a JSON object on stderr (default text)",
    )  # fmt: skip


def _judge(exc: Exception) -> tuple[str, int]:
    """verify-install's failures: a defect is exit 1 (never "OK")."""
    if isinstance(exc, MemoryError):
        return "not enough memory", EXIT_MISMATCH
    return f"internal error: {type(exc).__name__}: {exc}", EXIT_MISMATCH


def verify_install_main(argv: Sequence[str], prog: str = "sonnx-mul verify-install") -> int:
    """``verify-install`` with its arguments: the exit code; one line per failure, no traceback."""

    def run(args: argparse.Namespace) -> int:
        return verify(Path(args.report), allow_hooks=args.allow_hook, as_json=args.format == "json")

    return guarded(argv, parser(prog).parse_args, run, _judge)


def _names_verify_install(word: str) -> bool:
    """``word`` is ``verify-install`` or a beginning of it (``verify``, ``v``)."""
    return bool(word) and COMMAND.startswith(word)


def _other_commands() -> set[str]:
    """The subcommands that are not ``verify-install``: the product's and the plugins'
    (entry-point metadata, read as data: nothing of a plugin is imported)."""
    from importlib.metadata import entry_points

    names = set(PRODUCT_COMMANDS)
    with contextlib.suppress(Exception):  # unreadable metadata: the product's names only
        names |= {e.name for e in entry_points(group=PLUGIN_GROUP)}
    return {n for n in names if not _names_verify_install(n)}


def verify_install_arguments(argv: Sequence[str]) -> list[str] | None:
    """The verifier's arguments when ``argv`` could ask for ``verify-install``, else None.

    The rule the launcher (``scripts/sonnx-mul``) applies, here so that it is part
    of the file an auditor hashes. The command line goes to the package (which a
    tampered package answers) only when its first word that is not an option names
    another subcommand exactly. Otherwise, any word that is ``verify-install`` or a
    beginning of it makes this call the verifier's, whatever comes before it
    (``--``, options such as ``--format json``): the first such word is the command
    and is dropped, with a ``--`` before it; the other words are the verifier's
    arguments, which it checks as it does every call.
    """
    words = list(argv)
    first = next((w for w in words if not w.startswith("-")), None)
    if first is None or first in _other_commands():
        return None
    at = next((i for i, w in enumerate(words) if _names_verify_install(w)), None)
    if at is None:
        return None
    before = [w for w in words[:at] if w != "--"]
    return [*before, *words[at + 1 :]]


if __name__ == "__main__":  # python -I -m sonnx_mul_verify, or python -I -S path/to/this.py
    sys.exit(verify_install_main(sys.argv[1:], prog="python -m sonnx_mul_verify"))
