"""The ISA variants are declared once, in ``native/isa.toml``: names, compile flags, CPU
features, hardware loops and what each stands in for.

- Each variant's name is *defined* in exactly one hand-written file, the table:
  a definition is a string literal that is exactly the name (Python, C; not a
  ``__builtin_cpu_supports`` argument, which is a CPU feature), a C build tag
  (``VARIANT_TAG avx2_``, ``SONNX_MUL_VARIANT sonnx_mul_avx2``), a make row
  named after it (``SONNX_CFLAGS_AVX2 =``) or a ``name =`` line of a table.
  Prose (docstrings, comments, the extension's help) may name them.
- The glue's table (``_native_isas.h``, ``_native_isa_builds.h``) and the
  verifier's list are generated from it, and are current.
- Each hardware loop's function and the proved loops it stands in for exist.

Negative controls: a definition planted in Python, in C or as a make row is found;
a CPU feature and a generated file are not definitions; a stale generated file is
reported.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import tree_files  # tests/tree_files.py
from sonnx_mul_assurance.c import flags, glue_isas
from sonnx_mul_assurance.why3 import tables

ROOT = Path(__file__).resolve().parents[2]
TABLE = "native/isa.toml"
SCOPE = ("src", "assurance", "native", "benchmarks", "scripts", "setup.py", "Makefile")
SUFFIXES = {".py", ".pyi", ".c", ".h", ".mk", ".toml"}
PENDING = {
    "assurance/sonnx_mul_assurance/report/prose.py": (
        "the report's prose has its own mapping of the variants until the branch that "
        "brings it is merged and switched to the table"
    ),
}
"""Hand-written files not yet reading the table, each with why (only while they exist)."""
PROVED = {
    "native/hw/sonnx_mul_stream8.c": (
        "a WP-proved source: the variant whose proved int8 loop it calls follows from "
        "the flags it is compiled with (__AVX512BW__); a change re-pins its goals; "
        "test_the_streaming_loop_calls_its_variants_loop holds it to the table"
    ),
}
"""Proved sources that name a variant's symbols themselves, each with why."""


def names() -> list[str]:
    return [v.name for v in flags.variants(ROOT)]


def generated() -> set[str]:
    """Every generated file (the verifier is hand-written but for its generated block)."""
    return {str(path) for path in tables.generated_files()} - {str(glue_isas.VERIFIER)}


def hand_written(root: Path = ROOT) -> list[str]:
    listed = tree_files.listed_files(root, *SCOPE)  # also in make test-debian-python's copy
    found = [
        f
        for f in listed
        if (Path(f).suffix in SUFFIXES or f in ("scripts/sonnx-mul", "Makefile"))
        and f not in generated()
        and f not in PENDING
        and f not in PROVED
        and (root / f).is_file()
    ]
    return sorted(found)


def _without_generated_block(text: str) -> str:
    start, end = text.find(glue_isas.BEGIN), text.find(glue_isas.END)
    return text[:start] + text[end:] if 0 <= start < end else text


def definitions(path: str, text: str, name: str) -> bool:
    """Whether ``text`` (the file ``path``) defines the variant ``name`` (module docstring)."""
    text = _without_generated_block(text)
    suffix = Path(path).suffix
    if suffix in (".py", ".pyi") or path == "scripts/sonnx-mul":
        return any(
            isinstance(node, ast.Constant) and node.value == name
            for node in ast.walk(ast.parse(text))
        )
    if suffix in (".c", ".h"):
        literal = rf'(?<!__builtin_cpu_supports\()"{re.escape(name)}"'
        tag = rf"\b(VARIANT_TAG\s+{name}_|SONNX_MUL_VARIANT\s+sonnx_mul_{name})\b"
        return bool(re.search(literal, text) or re.search(tag, text))
    if suffix == ".mk" or path == "Makefile":
        return bool(re.search(rf"^\s*\w+_{re.escape(name.upper())}\s*[:?]?=", text, re.M))
    if suffix == ".toml":
        return bool(re.search(rf'^name\s*=\s*"{re.escape(name)}"', text, re.M))
    return False


def defined_in(name: str, root: Path = ROOT) -> list[str]:
    return [
        f
        for f in hand_written(root)
        if definitions(f, (root / f).read_text(encoding="utf-8"), name)
    ]


@pytest.mark.parametrize("name", names())
def test_each_variant_name_is_defined_in_the_table_only(name: str) -> None:
    assert defined_in(name) == [TABLE]


@pytest.mark.parametrize(
    ("path", "text", "defines"),
    [
        ("src/a.py", 'ISAS = ("portable", "avx2")\n', True),
        ("src/a.py", 'if isa != "avx2":\n    pass\n', True),
        ("src/a.py", '"""The avx2 variant."""\nX = "-mavx2"\n', False),
        ("src/a.c", 'static const char *n = "avx2";\n', True),
        ("src/a.c", "#define VARIANT_TAG avx2_\n", True),
        ("src/a.c", "#define SONNX_MUL_VARIANT sonnx_mul_avx2\n", True),
        ("src/a.c", 'int f = __builtin_cpu_supports("avx2");\n', False),
        ("src/a.c", "\"isa ('avx2') runs that variant\"\n", False),
        ("native/flags.mk", "SONNX_CFLAGS_AVX2 = -mavx2\n", True),
        ("native/flags.mk", "# SONNX_CFLAGS_AVX2 is in isa.toml\n", False),
        ("native/isa.toml", 'name = "avx2"\n', True),
        ("src/v.py", f'{glue_isas.BEGIN}\nISA = ("avx2",)\n{glue_isas.END}\n', False),
    ],
)
def test_negative_control_what_counts_as_a_definition(path: str, text: str, defines: bool) -> None:
    assert definitions(path, text, "avx2") is defines


def test_negative_control_a_planted_definition_is_found(tmp_path: Path) -> None:
    """A second list of the names in a copy of the tree (kernel.py, as before the table)."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for f in hand_written():
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / f, tmp_path / f)
    kernel = tmp_path / "src/sonnx_mul/kernel.py"
    kernel.write_text(kernel.read_text() + '\nISA_VALUES = ("auto", "portable", "avx2")\n')
    assert defined_in("avx2", tmp_path) == ["native/isa.toml", "src/sonnx_mul/kernel.py"]
    assert defined_in("avx512", tmp_path) == ["native/isa.toml"]


def test_the_generated_tables_are_current(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "why3", tmp_path / "why3")  # what tables check reads besides
    for path in tables.generated_files():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / path, tmp_path / path)
    assert tables.check_generated(tmp_path) == []
    for path, make in glue_isas.GENERATORS.items():
        assert (ROOT / path).read_text(encoding="utf-8") == make(), path
        stale = make().replace("avx512", "avx1024")  # negative control: each is reported
        (tmp_path / path).write_text(stale, encoding="utf-8")
    errors = tables.check_generated(tmp_path)
    for path in glue_isas.GENERATORS:
        assert any(e.startswith(f"{path} is not") for e in errors), (path, errors)


def test_the_verifier_knows_the_variants_of_the_table() -> None:
    import sonnx_mul_verify

    assert tuple(names()) == sonnx_mul_verify.ISA_VARIANTS
    assert names()[0] in sonnx_mul_verify.KNOWN_ENVIRONMENT["SONNX_MUL_ISA"]


def test_each_loop_stands_in_for_proved_loops_that_exist() -> None:
    kernel = (ROOT / "native/include/sonnx_mul_kernel.h").read_text(encoding="utf-8")
    pairs = flags.hardware_loops(ROOT)
    assert {loop.name for _, loop in pairs} == {
        loop.name for v in flags.variants(ROOT) for loop in v.loops
    }
    for variant, loop in pairs:
        source = (ROOT / loop.source).read_text(encoding="utf-8")
        assert re.search(rf"\b{loop.function}\b", source + kernel), loop.function
        for proved in loop.stands_in_for:
            assert re.search(rf"\b{proved}\s*\(", kernel), (loop.name, proved)
        assert loop.kinds and variant.name in names()


def test_the_streaming_loop_calls_its_variants_loop() -> None:
    """The proved source chooses the prefix by ``__AVX512BW__``: with each loop's flags
    (its variant's and its own), that is the variant of the table that owns the loop."""
    text = (ROOT / "native/hw/sonnx_mul_stream8.c").read_text(encoding="utf-8")
    choice = re.search(
        r"#if defined\(__AVX512BW__\)\n#define SONNX_MUL_VARIANT sonnx_mul_(\w+)\n#else\n"
        r"#define SONNX_MUL_VARIANT sonnx_mul_(\w+)\n#endif",
        text,
    )
    assert choice, "the variant choice of sonnx_mul_stream8.c is not where it was"
    wide, narrow = choice.groups()
    streams = [(v, loop) for v, loop in flags.hardware_loops(ROOT) if loop.source in PROVED]
    assert len(streams) == 2
    for variant, loop in streams:
        called = wide if "-mavx512bw" in variant.loop_cflags(loop) else narrow
        assert called == variant.name, (loop.name, called, variant.name)
