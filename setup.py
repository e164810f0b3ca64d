"""Builds ``sonnx_mul._native``: the proved C kernel (native/) and its numpy glue.

Everything else about the package is declared in pyproject.toml. The kernel
sources are compiled with exactly the flags pinned in ``native/flags.mk``
(the one place they live: IEEE semantics, warnings as errors) and nothing
else but ``-fPIC``; the glue (src/sonnx_mul/_native.c, _native_module.c and
_native_variants.c, which include Python's headers) with Python's own flags followed by the same
pinned IEEE flags. Both compile commands are recorded in the module as
``sonnx_mul._native.BUILD_FLAGS`` and shown in the report.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import numpy as np
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
NATIVE = ROOT / "native"
GLUE = "src/sonnx_mul/_native.c"
# The Python module's definition: its method table, constants, initialisation.
MODULE = "src/sonnx_mul/_native_module.c"
# Which build of the kernel runs each kind, chosen at import (the glue's other source).
VARIANTS = "src/sonnx_mul/_native_variants.c"


def _flag_table() -> ModuleType:
    """native/flags.py: flags.mk's rows selected for a compiler (the Makefile's too)."""
    spec = importlib.util.spec_from_file_location("sonnx_mul_native_flags", NATIVE / "flags.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FLAGS = _flag_table()


def pinned(name: str) -> list[str]:
    """The words of ``NAME = words`` in native/flags.mk (its only syntax)."""
    rows: dict[str, list[str]] = FLAGS.table()
    if name not in rows:
        raise SystemExit(f"{FLAGS.FLAGS_FILE}: no {name} = ... line (the pinned kernel flags)")
    return rows[name]


def ieee_flags(cc: str) -> list[str]:
    """The kernel's pinned flags for the compiler ``cc`` (its target's and its own rows)."""
    try:
        flags: list[str] = FLAGS.cflags(cc)
    except FLAGS.UnsupportedTarget as error:
        raise SystemExit(f"native/flags.py: {error}") from None
    return flags


def variants(cc: str) -> list[tuple[str, list[str]]]:
    """The ISA variants selected at run time (x86-64 only; native/isa.toml, all but
    the first, which is this build as such): the same proved sources compiled again
    with the variant's extra flags, their symbols renamed
    (native/include/sonnx_mul_rename.h)."""
    if FLAGS.target(cc) != "x86_64":
        return []
    return [(v.name, list(v.cflags)) for v in FLAGS.variants()[1:]]


def hardware_loops() -> list[tuple[str, str, list[str]]]:
    """(source in native/hw, object stem, extra flags) of the hardware loops,
    which stand in for proved portable loops (native/isa.toml): each compiled
    with its variant's flags and its own.  WP proves each from the admitted
    contract of its vector operations (its unit in proofs/wp-manifest.json),
    which make verify-exhaustive checks on the hardware, with the loops' values."""
    return [
        (Path(loop.source).name, loop.name, list(variant.loop_cflags(loop)))
        for variant, loop in FLAGS.hardware_loops()
    ]


class BuildExt(build_ext):
    """The kernel with its pinned flags only; the glue with Python's flags, then the pinned ones."""

    def build_extension(self, ext: Extension) -> None:
        # Always rebuilt: setuptools would skip the link when the glue is older
        # than a previous build's binary, whatever changed in native/ (a stale
        # binary is exactly what verify-install must never be shown).
        self.force = True
        cc = self.compiler.compiler_so[0]
        build = Path(self.build_temp) / "native"
        build.mkdir(parents=True, exist_ok=True)
        # asked of the compiler once (native/flags.py runs it: -dumpmachine, -dM -E)
        ieee = ieee_flags(cc)
        isa_variants = variants(cc)
        kernel_flags = ["-fPIC", *ieee, *pinned("SONNX_WARNFLAGS"), "-I", "native/include"]
        objects = []
        for source in sorted(NATIVE.glob("src/*.c")):
            obj = build / (source.stem + ".o")
            self.compiler.spawn([cc, *kernel_flags, "-c", str(source), "-o", str(obj)])
            objects.append(str(obj))
        recorded = f"kernel: {cc} {' '.join(kernel_flags)}"
        for name, extra in isa_variants:
            rename = [f"-DSONNX_MUL_VARIANT=sonnx_mul_{name}", "-include", "sonnx_mul_rename.h"]
            for source in sorted(NATIVE.glob("src/*.c")):
                obj = build / f"{source.stem}.{name}.o"
                self.compiler.spawn(
                    [cc, *kernel_flags, *extra, *rename, "-c", str(source), "-o", str(obj)]
                )
                objects.append(str(obj))
            recorded += f"; {name}: + {' '.join(extra)}"
        if isa_variants:
            for source, stem, extra in hardware_loops():
                obj = build / f"sonnx_mul_{stem}.o"
                self.compiler.spawn(
                    [cc, *kernel_flags, *extra, "-c", str(NATIVE / "hw" / source), "-o", str(obj)]
                )
                objects.append(str(obj))
                recorded += f"; {stem}: + {' '.join(extra)}"
            ext.define_macros = [("SONNX_MUL_X86_VARIANTS", "1")]
        else:
            ext.define_macros = []
        ext.extra_compile_args = [*ieee, *ext.extra_compile_args]
        glue = [*self.compiler.compiler_so, *ext.extra_compile_args]
        recorded += f"; glue: {' '.join(glue)}"
        if '"' in recorded or "\\" in recorded:
            raise SystemExit(f"cannot record compile flags containing quotes: {recorded}")
        ext.define_macros.append(("SONNX_MUL_BUILD_FLAGS", f'"{recorded}"'))
        ext.extra_objects = objects
        super().build_extension(ext)


os.chdir(ROOT)  # the paths below are relative to the checkout
setup(
    ext_modules=[
        Extension(
            "sonnx_mul._native",
            sources=[GLUE, MODULE, VARIANTS],
            include_dirs=["native/include", np.get_include()],
            # -g0: no debug info, which would record the paths of the build
            # (numpy's headers in an isolated build environment) and make two
            # builds of the same sources differ: verify-install compares bytes.
            # (the pinned IEEE flags go first, chosen for the compiler: BuildExt)
            extra_compile_args=["-g0", "-Wall", "-Wextra"],
            language="c",
        )
    ],
    cmdclass={"build_ext": BuildExt},
)
