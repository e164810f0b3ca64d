"""The files of the tree as git lists them, for the tests that read the tree's files.

Every Markdown file of the documents' rules (tests/documents.py, tests/doc_figures.py),
and the folders the ISA-table and generated-files tests list, are the files git lists
(tracked or new, not ignored); where git lists nothing (the copy ``make
test-debian-python`` runs the suite in), the walk that skips what ``.gitignore``
ignores gives the same list (checked against git in tests/docs/test_documents.py).
"""

from __future__ import annotations

import fnmatch
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def markdown_files(root: Path = ROOT) -> list[Path]:
    """Every Markdown file git lists (tracked or new, not ignored); see :func:`listed_files`."""
    return [root / name for name in listed_files(root, "*.md")]


def listed_files(root: Path = ROOT, *pathspecs: str) -> list[str]:
    """The files git lists under ``root`` (tracked or new, not ignored; relative,
    POSIX), matching ``pathspecs`` (git's: ``*.md``, a folder; none: every file).

    Outside the top of a git work tree (``make test-debian-python`` runs the
    suite in a copy of the listed files under the ignored ``build/``, where
    git lists nothing), every file of the copy that matches, but for the
    folders ``.gitignore`` ignores (the copy's venv, its build and proof outputs).
    """
    top = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True
    )
    if top.returncode != 0 or Path(top.stdout.strip()).resolve() != root.resolve():
        return _walked(root, pathspecs)
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", *pathspecs],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted({line for line in out.splitlines() if (root / line).is_file()})


def _matches(name: str, pathspecs: tuple[str, ...]) -> bool:
    """git's reading of these pathspecs: a glob without a slash matches the base name
    anywhere (``*.md``), else the path or a folder above it."""
    if not pathspecs:
        return True
    return any(
        fnmatch.fnmatch(Path(name).name, spec)
        if "/" not in spec and any(c in spec for c in "*?[")
        else fnmatch.fnmatch(name, spec) or name.startswith(spec.rstrip("/") + "/")
        for spec in pathspecs
    )


def _walked(root: Path, pathspecs: tuple[str, ...]) -> list[str]:
    """The files under ``root`` matching ``pathspecs``, not descending into a folder
    that a folder pattern of ``root/.gitignore`` (a line ending in ``/``) matches,
    nor listing a file its other patterns match (``src/sonnx_mul/*.so``)."""
    lines = [
        line.strip() for line in (root / ".gitignore").read_text(encoding="utf-8").splitlines()
    ]
    ignored = [line.rstrip("/") for line in lines if line.endswith("/")]
    ignored_files = [
        line for line in lines if line and not line.endswith("/") and line[0] not in "#!"
    ]
    found: list[str] = []
    for here, dirs, names in os.walk(root):
        rel_here = Path(here).relative_to(root).as_posix()
        dirs[:] = [
            d
            for d in dirs
            if d != ".git"
            and not any(
                fnmatch.fnmatch(d, pattern)
                or fnmatch.fnmatch(f"{rel_here}/{d}".removeprefix("./"), pattern)
                for pattern in ignored
            )
        ]
        for name in names:
            if name == ".git":  # a worktree's link to its repository: git's, never listed
                continue
            path = f"{rel_here}/{name}".removeprefix("./")
            hidden = any(
                fnmatch.fnmatch(path, pattern.replace("**/", "*")) for pattern in ignored_files
            )
            if _matches(path, pathspecs) and not hidden:
                found.append(path)
    return sorted(found)


def rel(path: Path, root: Path = ROOT) -> str:
    return path.relative_to(root).as_posix()
