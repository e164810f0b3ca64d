"""``sonnx-mul verify-install REPORT.json``: is the code that runs the code the report covers?

The report's ``package`` block holds the SHA-256 of every file of
``src/sonnx_mul`` when the report was written, and its ``gate`` block the
report's own verdict. This command checks, for the ``sonnx_mul`` package
that this interpreter imports (wherever it is installed):

1. **Files.** Every file of the package directory, sources and native
   binaries alike (``*.py``, ``*.so``/``*.pyd`` such as ``_native*.so``,
   data), is hashed with :func:`sonnx_mul.digest.sha256` and compared with
   the report: same set of files, same hashes. A file that is not regular
   (FIFO, device, socket) or a symbolic link leaving the package is refused
   without being opened for reading, so the command never blocks.
2. **Bytecode.** CPython may run a cached ``.pyc`` instead of its source:
   a timestamp ``.pyc`` whose header keeps the source's mtime and size, or
   an unchecked-hash ``.pyc``, is loaded whatever it holds. Decision: every
   cache the interpreter could load (``__pycache__/*.pyc`` in the package,
   and the caches under ``sys.pycache_prefix``) must be the compilation of
   its verified source by this interpreter, whatever its header says
   (timestamp, checked or unchecked hash): the source is compiled here and
   the code objects are compared field by field (bytecode, constants
   recursively with their types, names, line tables; not ``co_filename``,
   which the loader rewrites). A cache of another interpreter (other magic
   number or tag), a cache without a verified source, or an unreadable one is
   refused too. Refusing rather than ignoring stale caches keeps the rule
   simple: after an upgrade, delete ``__pycache__`` (or reinstall) and run
   again. Comparing code objects rather than marshalled bytes: ``marshal``
   output depends on reference counts (``FLAG_REF``), so equal code may
   marshal differently; bytes are compared first, code objects when they
   differ. Unmarshalling a hostile cache may crash this process; it then
   exits non-zero, never with "OK".
3. **Start-up hooks.** A ``.pth`` file in a site directory whose lines start
   with ``import`` runs code at every interpreter start, before any check,
   and can patch the package in memory; so can ``sitecustomize`` and
   ``usercustomize``. Each is reported unless allowed: the lines setuptools
   writes (``distutils-precedence.pth``, the editable finders'
   ``import __editable___*_finder; ....install()``) match exactly, and
   ``--allow-hook SHA256`` pins any other hook file by its content.
4. **Loaded modules.** Every ``sonnx_mul`` module already imported in this
   process must come from a verified file of the package directory.
5. **Gate.** The report's own gate verdict is printed; a report whose gate
   failed certifies nothing, so files that match it are not "OK".

What it cannot see: what an allowed hook imports (``_distutils_hack``,
the editable finder modules), patches made at run time by the application
or by other packages it imports, numpy/onnx/the interpreter themselves,
``LD_PRELOAD`` and audit hooks, and hooks of another interpreter or
environment (run it with the interpreter and environment variables the
deployment uses: ``PYTHONPATH``, ``PYTHONPYCACHEPREFIX``, ...).

Exit codes: 0 every check passed and the report's gate passed; 1 a file,
cache, hook or loaded module does not match; 2 the report cannot be read
(also when it is not a regular file) or has no ``package`` block; 3 the
installed code is the code the report covers, but the report's gate failed.
"""

from __future__ import annotations

import importlib.util
import json
import marshal
import os
import re
import site
import stat
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from .digest import sha256
from .regular import kind, read_bytes

EXIT_OK, EXIT_MISMATCH, EXIT_UNREADABLE, EXIT_GATE_FAILED = 0, 1, 2, 3

MAX_REPORT_BYTES = 256 << 20
"""A report is a few MB; anything bigger is refused before parsing."""
MAX_CACHE_BYTES = 64 << 20

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


@dataclass
class Outcome:
    """What :func:`compare` found; ``ok`` when nothing."""

    package_dir: str
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # not a regular file, link leaving
    bytecode: list[str] = field(default_factory=list)  # caches not compiled from the source
    hooks: list[str] = field(default_factory=list)  # start-up hooks not allowed
    modules: list[str] = field(default_factory=list)  # loaded from elsewhere
    allowed_hooks: list[str] = field(default_factory=list)

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
                ("module", self.modules),
            )
            for item in items
        ]

    @property
    def ok(self) -> bool:
        return not self.problems


def installed_package_dir() -> Path:
    """The directory of the ``sonnx_mul`` package this interpreter imports.

    It is the package of this module (``foreign_modules`` checks that this
    module, like every loaded one, comes from a verified file of it).
    """
    return Path(__file__).resolve().parent


# ---------------------------------------------------------------- files
def inventory(package_dir: Path) -> tuple[dict[str, str], list[Path], list[str]]:
    """(SHA-256 by relative path, cache files, refusals) of a package directory.

    Every entry is judged by ``lstat`` first: a regular file is hashed, a
    ``.pyc`` inside ``__pycache__`` is a cache (checked by
    :func:`check_caches`), a symbolic link is followed only when it stays in
    the package and names a regular file, anything else is refused unopened.
    """
    base = package_dir.resolve()
    files: dict[str, str] = {}
    caches: list[Path] = []
    refused: list[str] = []
    for dirpath, dirnames, filenames in os.walk(base):
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
                    target = path.resolve()
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
            except OSError as exc:  # vanished, unreadable, replaced by a FIFO meanwhile
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
    """Why ``cache`` is not the compilation of ``source`` by this interpreter (None: it is)."""
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
    base = package_dir.resolve()
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
def site_dirs() -> list[Path]:
    """Directories whose ``.pth`` files run at start-up: the site directories, and
    every directory on ``sys.path`` (``site.addsitedir`` may have made one a site
    directory; a ``.pth`` anywhere else is inert, so reporting it is only cautious).
    """
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    dirs += [p for p in sys.path if p]
    return [Path(d) for d in dict.fromkeys(dirs) if Path(d).is_dir()]


def startup_hooks(
    dirs: Iterable[Path] | None = None, allow: Iterable[str] = ()
) -> tuple[list[str], list[str]]:
    """(hooks not allowed, hooks allowed): ``.pth`` files that run code, ``*customize``.

    A ``.pth`` line runs code when it starts with ``import`` (what
    ``site.addpackage`` executes). A hook file is allowed when every such
    line matches :data:`ALLOWED_PTH_LINES` or when its SHA-256 is in ``allow``.
    """
    pinned = {a.lower() for a in allow}
    bad: list[str] = []
    allowed: list[str] = []
    for d in site_dirs() if dirs is None else list(dirs):
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
            if all(any(p.fullmatch(line) for p in ALLOWED_PTH_LINES) for line in code):
                allowed.append(f"{pth} (setuptools)")
            elif sha256(pth) in pinned:
                allowed.append(f"{pth} (--allow-hook)")
            else:
                bad.append(f"{pth} runs code at start-up: {code[0][:120]}")
    for name in CUSTOMIZE_MODULES:
        where = _customize_file(name)
        if where is None:
            continue
        if where.is_file() and sha256(where) in pinned:
            allowed.append(f"{where} (--allow-hook)")
        else:
            bad.append(f"{name} module {where} runs at start-up")
    return bad, allowed


def _customize_file(name: str) -> Path | None:
    """The file of ``sitecustomize``/``usercustomize`` if one is loaded or importable."""
    module = sys.modules.get(name)
    if module is not None:
        return Path(getattr(module, "__file__", None) or f"<{name} without a file>")
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    return Path(spec.origin) if spec.origin else Path(f"<{name} without a file>")


# ---------------------------------------------------------------- loaded modules
def foreign_modules(
    package_dir: Path, verified: Iterable[str], modules: Mapping[str, ModuleType] | None = None
) -> list[str]:
    """``sonnx_mul`` modules of this process not loaded from a verified file of the package."""
    base = package_dir.resolve()
    good = set(verified)
    found: list[str] = []
    for name, module in sorted((sys.modules if modules is None else modules).items()):
        if name != "sonnx_mul" and not name.startswith("sonnx_mul."):
            continue
        file = getattr(module, "__file__", None)
        if not file:
            found.append(f"{name} (not loaded from a file)")
            continue
        path = Path(file).resolve()
        rel = path.relative_to(base).as_posix() if path.is_relative_to(base) else None
        if rel not in good:
            found.append(f"{name} (from {file})")
    return found


# ---------------------------------------------------------------- the verdict
def compare(
    expected: Mapping[str, str],
    package_dir: Path,
    *,
    allow_hooks: Iterable[str] = (),
    hook_dirs: Iterable[Path] | None = None,
    modules: Mapping[str, ModuleType] | None = None,
) -> Outcome:
    """Compare the report's hashes with the package, its caches, hooks and loaded modules."""
    actual, caches, refused = inventory(package_dir)
    out = Outcome(str(package_dir.resolve()))
    out.changed = sorted(p for p in expected if p in actual and actual[p] != expected[p])
    out.missing = sorted(p for p in expected if p not in actual)
    out.extra = sorted(p for p in actual if p not in expected)
    out.refused = refused
    verified = [p for p in expected if actual.get(p) == expected[p]]
    out.bytecode = check_caches(package_dir, caches, verified)
    out.hooks, out.allowed_hooks = startup_hooks(hook_dirs, allow_hooks)
    out.modules = foreign_modules(package_dir, verified, modules)
    return out


@dataclass(frozen=True)
class Expected:
    """What a report says: the package's file hashes and its own gate verdict."""

    files: dict[str, str]
    gate_passed: bool
    gate_problems: list[str]


def read_expected(report_path: Path) -> Expected:
    """The ``package.files`` and ``gate`` blocks of a report; ValueError when malformed.

    The report is opened through :func:`sonnx_mul.regular.read_bytes`: a FIFO
    or a device is refused (OSError), never waited on.
    """
    data: Any = json.loads(read_bytes(report_path, MAX_REPORT_BYTES).decode("utf-8"))
    files = data.get("package", {}).get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict) or not files:
        raise ValueError("the report has no package.files block (written by an older version?)")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise ValueError("package.files must map file names to SHA-256 strings")
    gate = data.get("gate")
    if not isinstance(gate, dict) or not isinstance(gate.get("passed"), bool):
        raise ValueError("the report has no gate verdict (gate.passed)")
    problems = gate.get("problems")
    listed = [str(p) for p in problems] if isinstance(problems, list) else []
    return Expected({str(k): str(v) for k, v in files.items()}, gate["passed"], listed)


def verify(
    report_path: Path, package_dir: Path | None = None, *, allow_hooks: Iterable[str] = ()
) -> int:
    """Print the verdict and return the exit code (see the module docstring)."""
    try:
        expected = read_expected(report_path)
    except (OSError, ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
        print(f"sonnx-mul: error: cannot read {report_path}: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    outcome = compare(
        expected.files, package_dir or installed_package_dir(), allow_hooks=allow_hooks
    )
    for label, item in outcome.problems:
        print(f"{label}: {item}")
    for item in outcome.allowed_hooks:
        print(f"allowed hook: {item} (what it imports is not verified)")
    if not outcome.ok:
        print(
            f"verify-install: MISMATCH: {outcome.package_dir} is not the code {report_path} "
            f"covers ({len(outcome.problems)} findings)",
            file=sys.stderr,
        )
        return EXIT_MISMATCH
    if not expected.gate_passed:
        first = f": {expected.gate_problems[0]}" if expected.gate_problems else ""
        print(
            f"verify-install: FAILED GATE: the {len(expected.files)} files of "
            f"{outcome.package_dir} are the files {report_path} covers, but that report's "
            f"own gate failed ({len(expected.gate_problems)} problems{first}); it certifies "
            f"nothing",
            file=sys.stderr,
        )
        return EXIT_GATE_FAILED
    print(
        f"verify-install: OK: {len(expected.files)} files of {outcome.package_dir} "
        f"are the files {report_path} covers, and its gate passed"
    )
    return EXIT_OK
