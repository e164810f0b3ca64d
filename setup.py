"""Builds ``sonnx_mul._native``: the proved C kernel (native/) and its numpy glue.

Everything else about the package is declared in pyproject.toml. The kernel
sources are compiled with exactly the flags pinned in ``native/flags.mk``
(the one place they live: IEEE semantics, warnings as errors) and nothing
else but ``-fPIC``; the glue (src/sonnx_mul/_native.c, which includes
Python's and numpy's headers) with Python's own flags followed by the same
pinned IEEE flags. Both compile commands are recorded in the module as
``sonnx_mul._native.BUILD_FLAGS`` and shown in the report.
"""

from __future__ import annotations

import os
import platform
import shlex
from pathlib import Path

import numpy as np
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
NATIVE = ROOT / "native"
FLAGS_FILE = NATIVE / "flags.mk"
GLUE = "src/sonnx_mul/_native.c"


def pinned(name: str) -> list[str]:
    """The words of ``NAME = words`` in native/flags.mk (its only syntax)."""
    for line in FLAGS_FILE.read_text(encoding="utf-8").splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.lstrip().startswith("#") and key.strip() == name:
            return shlex.split(value)
    raise SystemExit(f"{FLAGS_FILE}: no {name} = ... line (the pinned kernel flags)")


X86_64 = platform.machine().lower() in ("x86_64", "amd64")


def ieee_flags() -> list[str]:
    flags = pinned("SONNX_CFLAGS")
    if X86_64:
        flags += pinned("SONNX_CFLAGS_X86_64")
    return flags


def variants() -> list[tuple[str, list[str]]]:
    """The ISA variants selected at run time (x86-64 only): the same proved
    sources compiled again with the variant's extra flags, their symbols renamed
    (native/include/sonnx_mul_rename.h)."""
    if not X86_64:
        return []
    return [(v, pinned(f"SONNX_CFLAGS_{v.upper()}")) for v in ("avx2", "avx512")]


def hardware_loops() -> list[tuple[str, str, list[str]]]:
    """(source in native/hw, object stem, extra flags) of the loops that are not
    WP-proved (verified exhaustively): the float16 F16C loop, 8-wide (AVX2 +
    F16C) and 16-wide (AVX-512 + F16C), and the int8/uint8 streaming wrap loop,
    32-wide (AVX2) and 64-wide (AVX-512BW)."""
    f16c, avx2, avx512 = (pinned(f"SONNX_CFLAGS_{v}") for v in ("F16C", "AVX2", "AVX512"))
    return [
        ("sonnx_mul_f16c.c", "f16c", f16c),
        ("sonnx_mul_f16c.c", "f16c512", [*avx512, *f16c]),
        ("sonnx_mul_stream8.c", "stream8", avx2),
        ("sonnx_mul_stream8.c", "stream8512", avx512),
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
        kernel_flags = ["-fPIC", *ieee_flags(), *pinned("SONNX_WARNFLAGS"), "-I", "native/include"]
        objects = []
        for source in sorted(NATIVE.glob("src/*.c")):
            obj = build / (source.stem + ".o")
            self.compiler.spawn([cc, *kernel_flags, "-c", str(source), "-o", str(obj)])
            objects.append(str(obj))
        recorded = f"kernel: {cc} {' '.join(kernel_flags)}"
        for name, extra in variants():
            rename = [f"-DSONNX_MUL_VARIANT=sonnx_mul_{name}", "-include", "sonnx_mul_rename.h"]
            for source in sorted(NATIVE.glob("src/*.c")):
                obj = build / f"{source.stem}.{name}.o"
                self.compiler.spawn(
                    [cc, *kernel_flags, *extra, *rename, "-c", str(source), "-o", str(obj)]
                )
                objects.append(str(obj))
            recorded += f"; {name}: + {' '.join(extra)}"
        if variants():
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
            sources=[GLUE],
            include_dirs=["native/include", np.get_include()],
            # -g0: no debug info, which would record the paths of the build
            # (numpy's headers in an isolated build environment) and make two
            # builds of the same sources differ: verify-install compares bytes.
            extra_compile_args=[*ieee_flags(), "-g0", "-Wall", "-Wextra"],
            language="c",
        )
    ],
    cmdclass={"build_ext": BuildExt},
)
