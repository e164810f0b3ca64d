"""The instrumented builds and the interpreter the run measures with: the extension
and the C harnesses through clang with the coverage flags, the kernel through gcc
with ``--coverage`` under the portable harness, and a venv of its own carrying
coverage.py's start-up hook."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.structural.parse import parse_gcov
from sonnx_mul_assurance.structural.scope import CLANG, COVERAGE_FLAGS, HARNESSES, PORTABLE_HARNESS


def run_logged(
    argv: list[str], cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    print("==", " ".join(argv), flush=True)
    return subprocess.run(
        argv, cwd=cwd, env=dict(env) if env else None, text=True, capture_output=True
    )


def tool_version(exe: str) -> str:
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False).stdout
    return next((line.strip() for line in out.splitlines() if re.search(r"\d+\.\d+", line)), "")


def isa_variants(root: Path, env: Mapping[str, str]) -> list[str]:
    """The variants this CPU runs (the instrumented module answers), best first."""
    probe = "import sonnx_mul._native as n; print(n.isa(), *n.isas())"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=root, env=dict(env), capture_output=True, text=True
    )
    words = done.stdout.split()
    return list(dict.fromkeys(words))  # the one in use (auto) first


def build(root: Path, work: Path) -> tuple[Path, list[str]]:
    """The instrumented extension in a copy of ``src/`` (returned) and errors."""
    from sonnx_mul_assurance.c.glue_build import DRIVER

    errors: list[str] = []
    if work.exists():
        shutil.rmtree(work)
    (work / "bin").mkdir(parents=True)
    wrapper = work / "bin" / "cc"
    # the coverage flags go last: setup.py's pinned flags stay as they are
    wrapper.write_text(f'#!/bin/sh\nexec {CLANG} "$@" {" ".join(COVERAGE_FLAGS)}\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "CC": str(wrapper), "LDSHARED": f"{wrapper} -shared"}
    record = work / "commands.json"
    done = run_logged(
        [sys.executable, "-c", DRIVER, str(work / "lib"), str(work / "temp"), str(record)],
        root,
        env,
    )
    if done.returncode != 0:
        return work / "src", [f"instrumented build failed: {done.stderr.strip()[-400:]}"]
    built = Path(json.loads(record.read_text())["output"])
    copy = work / "src"
    shutil.copytree(root / "src", copy, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    shutil.copy2(
        root / built if not built.is_absolute() else built, copy / "sonnx_mul" / built.name
    )
    # the C harnesses, with the kernel compiled the same way (base build)
    flags = subprocess.run(
        [sys.executable, "native/flags.py", CLANG], cwd=root, capture_output=True, text=True
    ).stdout.split()
    kernel = sorted(str(source) for source in (root / "native" / "src").glob("*.c"))
    for harness in HARNESSES:
        exe = work / "bin" / Path(harness).stem
        done = run_logged(
            [
                CLANG,
                *flags,
                *COVERAGE_FLAGS,
                "-Inative/include",
                harness,
                *kernel,
                "-lm",
                "-o",
                str(exe),
            ],
            root,
        )
        if done.returncode != 0:
            errors.append(f"{harness}: build failed: {done.stderr.strip()[-300:]}")
    return copy, errors


def gcc_kernel(root: Path, work: Path) -> tuple[dict[str, schema.CoverageGcov], list[str]]:
    """The kernel as gcc builds it (its pinned flags), with ``--coverage``,
    under the portable harness: gcov's statement and branch figures."""
    gdir = work / "gcov"
    gdir.mkdir(parents=True, exist_ok=True)
    flags = subprocess.run(
        [sys.executable, "native/flags.py", "gcc"], cwd=root, capture_output=True, text=True
    ).stdout.split()
    kernel = sorted(str(source) for source in (root / "native" / "src").glob("*.c"))
    harness = str(root / PORTABLE_HARNESS)
    exe = gdir / Path(harness).stem
    steps = [
        ["gcc", *flags, "--coverage", f"-I{root / 'native' / 'include'}", harness, *kernel,
         "-lm", "-o", str(exe)],
        [str(exe), "--stride", "61"],
        ["gcov", "-b", "-n", *(f"portable-{Path(k).stem}.gcda" for k in kernel)],
    ]  # fmt: skip
    done = None
    for argv in steps:
        done = subprocess.run(argv, cwd=gdir, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return {}, [f"gcov run: {argv[0]} exit {done.returncode}: {done.stderr[-300:]}"]
    assert done is not None
    return parse_gcov(done.stdout, root), []


COVERAGE_HOOK = (
    'import os, sys; exec(\'if os.getenv("COVERAGE_PROCESS_CONFIG") '
    'or os.getenv("COVERAGE_PROCESS_START"):\\n import coverage\\n '
    "coverage.process_startup()')\n"
)
"""The start-up hook of the run's interpreter (a ``.pth`` line): in each Python child
of the tests, whose environment names the configuration (``patch = subprocess``),
coverage starts."""


def measuring_venv(work: Path) -> Path:
    """The interpreter the run measures with (``work/venv/bin/python``): a venv of its
    own that reads the product venv's packages (its site directory added first, its
    ``.pth`` files processed) and carries coverage.py's start-up hook, which the
    product venv must not carry (verify-install refuses it, and its tests run on
    that venv, possibly beside this run)."""
    venv = work / "venv"
    if venv.exists():
        shutil.rmtree(venv)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site_dir = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    product = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    (Path(site_dir) / "a0_product.pth").write_text(
        "".join(f"import site; site.addsitedir({p!r})\n" for p in product)
    )
    (Path(site_dir) / "a1_measure.pth").write_text(COVERAGE_HOOK)
    # the product venv's scripts (sonnx-mul, which tests start beside their
    # interpreter), started by this interpreter instead of the product's
    product_bin = Path(sys.executable).parent
    shebang = f"#!{product_bin / 'python'}"
    for script in sorted(product_bin.iterdir()):
        if script.name.startswith("python") or not script.is_file():
            continue
        head, _, body = script.read_bytes().partition(b"\n")
        if head.decode("utf-8", "replace") == shebang:
            copy = venv / "bin" / script.name
            copy.write_bytes(f"#!{python}\n".encode() + body)
            copy.chmod(0o755)
    return python
