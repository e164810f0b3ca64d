"""The extension ``sonnx_mul._native`` built in a copy of the repository, then
rebuilt there glue only, for the glue's mutants (:mod:`..mutants.runner`).

:func:`prepare` runs the copy's own ``setup.py`` build (its ``BuildExt``: the
kernel, its ISA variants and hardware loops, the glue, the link) once, with
the running interpreter's setuptools and numpy, through a small driver that
records every command the build spawns; it installs the module into the
copy's ``src/sonnx_mul`` (where ``PYTHONPATH`` finds it) and keeps it as the
baseline.  The driver calls ``setup.py`` with ``setuptools.setup`` captured
and builds the captured extension with a bare ``Distribution``: the package's
metadata (``pyproject.toml``) is not read, so the setuptools of the venv
builds it as well as the isolated build of ``pip install``.

:meth:`GlueBuild.rebuild` then runs again exactly two of the recorded
commands, the glue's compilation and the link, against the kernel objects of
the first build: a mutant of ``_native.c`` costs one compilation of the glue.
:meth:`GlueBuild.restore` puts the baseline module back.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

GLUE = "src/sonnx_mul/_native.c"
BUILD = Path("build/mutants-glue")
BUILD_TIMEOUT = 900
REBUILD_TIMEOUT = 300

DRIVER = r"""
import json, runpy, sys
import setuptools

captured = {}
setuptools.setup = lambda **kwargs: captured.update(kwargs)
runpy.run_path("setup.py", run_name="__main__")

import distutils.ccompiler as ccompiler

spawned = []
spawn = ccompiler.CCompiler.spawn


def recorded(self, cmd, **kwargs):
    spawned.append([str(word) for word in cmd])
    return spawn(self, cmd, **kwargs)


ccompiler.CCompiler.spawn = recorded
dist = setuptools.Distribution({
    "name": "sonnx-mul",
    "ext_modules": captured["ext_modules"],
    "cmdclass": captured["cmdclass"],
})
build_ext = dist.get_command_obj("build_ext")
build_ext.build_lib, build_ext.build_temp = sys.argv[1], sys.argv[2]
build_ext.ensure_finalized()
build_ext.run()
output = build_ext.get_ext_fullpath("sonnx_mul._native")
with open(sys.argv[3], "w") as f:
    json.dump({"commands": spawned, "output": output}, f, indent=1)
"""


class GlueBuildError(RuntimeError):
    """The copy's extension could not be built, or its commands not found."""


def _tail(proc: subprocess.CompletedProcess[str]) -> str:
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    return " | ".join(lines[-4:])[-400:]


@dataclass(frozen=True)
class GlueBuild:
    """The recorded glue compilation and link of one copy, and where the module goes."""

    root: Path
    compile: tuple[str, ...]
    link: tuple[str, ...]
    output: Path  # what the link writes
    installed: Path  # the extension module in the copy's src/sonnx_mul/ (what the tests import)
    baseline: Path  # the module built from the unmutated glue

    def rebuild(self) -> tuple[bool, str]:
        """Compile the glue as it now is and link; install the module.
        (False, the compiler's last lines) when it does not compile or link."""
        for argv in (self.compile, self.link):
            try:
                proc = subprocess.run(
                    argv, cwd=self.root, capture_output=True, text=True, timeout=REBUILD_TIMEOUT
                )
            except subprocess.TimeoutExpired:
                return False, f"{argv[0]} ran past {REBUILD_TIMEOUT} s"
            if proc.returncode != 0:
                return False, _tail(proc)
        _install(self.root / self.output, self.installed)
        return True, ""

    def restore(self) -> None:
        """The baseline module back in place."""
        _install(self.baseline, self.installed)


def _install(source: Path, target: Path) -> None:
    """Copy, then rename over the target (a process loading it never sees half a file)."""
    partial = target.with_name(target.name + ".partial")
    shutil.copyfile(source, partial)
    partial.chmod(0o755)
    partial.replace(target)


def glue_commands(commands: list[list[str]], output: str) -> tuple[list[str], list[str]]:
    """The glue's compilation (the one command compiling ``GLUE``) and the link (the
    one writing ``output``) among the recorded commands of a build."""
    compiles = [c for c in commands if GLUE in c and "-c" in c]
    links = [c for c in commands if "-o" in c and c[c.index("-o") + 1] == output]
    if len(compiles) != 1 or len(links) != 1:
        raise GlueBuildError(
            f"expected one compilation of {GLUE} and one link of {output} among the "
            f"{len(commands)} commands of the build, found {len(compiles)} and {len(links)}"
        )
    return compiles[0], links[0]


def prepare(root: Path) -> GlueBuild:
    """Build the extension in ``root`` (a copy of the repository) with its setup.py,
    install it into ``root/src/sonnx_mul`` and keep it as the baseline."""
    build = root / BUILD
    build.mkdir(parents=True, exist_ok=True)
    record = build / "commands.json"
    argv = [sys.executable, "-c", DRIVER, str(BUILD / "lib"), str(BUILD / "temp"), str(record)]
    try:
        proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    except subprocess.TimeoutExpired as error:
        raise GlueBuildError(f"building the extension ran past {BUILD_TIMEOUT} s") from error
    if proc.returncode != 0:
        raise GlueBuildError(f"building the extension failed: {_tail(proc)}")
    data = json.loads(record.read_text())
    output = str(data["output"])
    compile_argv, link_argv = glue_commands(data["commands"], output)
    built = root / output
    installed = root / "src" / "sonnx_mul" / built.name
    baseline = build / f"baseline-{built.name}"
    shutil.copyfile(built, baseline)
    glue = GlueBuild(root, tuple(compile_argv), tuple(link_argv), Path(output), installed, baseline)
    glue.restore()
    return glue
