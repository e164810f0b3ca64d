"""F: the kernel's ISA variants (portable SSE2; the same proved sources built for
AVX2 and AVX-512; float16 by the F16C hardware loop) compute the same bits.

Every variant this CPU can run is run back to back with the portable build on
edge sets of every type (both signs, zeros, subnormals, infinities, NaNs with
payloads, overflow to infinity, halfway cases) and random bit patterns, at
lengths that exercise the loops' vector bodies and tails, and the results are
compared BIT FOR BIT (NaN payloads and signs included, not as "any NaN").
The hardware path must be the one selected on a CPU that has it; all 2^32
float16 pairs through the F16C loop run in ``make verify-exhaustive``.
"""

from __future__ import annotations

import functools
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sonnx_mul import _native, kernel, mul, selftest
from sonnx_mul.dtypes import ALL_TYPES, ElementType, by_onnx_name
from sonnx_mul_assurance.c import flags as native_flags
from sonnx_mul_assurance.c.native_exhaustive import cpu_flags
from support import float_edge_bits, int_edge_values

IDS = [t.onnx_name for t in ALL_TYPES]
ROOT = Path(__file__).resolve().parents[2]
HARDWARE = tuple(isa for isa in _native.isas() if isa != "portable")
LENGTHS = (1, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 127, 129)

# float16 patterns around the narrowing's boundaries, beyond the generic edges.
F16_EXTRA = [
    0x0001, 0x0002, 0x0003, 0x01FF, 0x0200, 0x03FF, 0x0401, 0x07FF,  # subnormal ties
    0x3555, 0x37FF, 0x3800, 0x3BFF, 0x3C01, 0x3C03, 0x3DFF, 0x3E01,  # halfway products
    0x5BFF, 0x5C00, 0x7BFE, 0x7BFF, 0x4000,  # overflow to infinity and just below
    0x7C01, 0x7D55, 0x7DFF, 0x7E01, 0x7FFF,  # signalling and quiet NaNs with payloads
]  # fmt: skip
BF16_EXTRA = [0x0001, 0x007F, 0x0080, 0x3F81, 0x3F83, 0x3FC0, 0x7F7F, 0x7F81, 0x7FC1, 0x7FFF]


def edges(etype: ElementType) -> np.ndarray:
    if not etype.is_float:
        return np.array(int_edge_values(etype), etype.dtype)
    extra = {"float16": F16_EXTRA, "bfloat16": BF16_EXTRA}.get(etype.onnx_name, [])
    sign = 1 << (etype.bits - 1)
    patterns = sorted(set(float_edge_bits(etype)) | set(extra) | {x ^ sign for x in extra})
    return np.array(patterns, etype.uint_view).view(etype.dtype)


def random_patterns(etype: ElementType, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if etype.is_float:
        return (
            rng.integers(0, 1 << etype.bits, n, dtype=np.uint64)
            .astype(etype.uint_view)
            .view(etype.dtype)
        )
    return rng.integers(etype.lo, etype.hi, n, dtype=etype.dtype, endpoint=True)


def same_bits(got: np.ndarray | int, want: np.ndarray | int) -> None:
    if isinstance(got, int) or isinstance(want, int):
        assert got == want
        return
    assert got.dtype == want.dtype and got.shape == want.shape
    differ = np.flatnonzero(got.view(np.uint8) != want.view(np.uint8))
    assert differ.size == 0, f"{differ.size} bytes differ, first at byte {differ[:5]}"


def test_F_the_variant_in_use_is_one_this_cpu_runs() -> None:
    assert _native.isas()[0] == "portable"
    assert _native.isa() in _native.isas()
    wanted = os.environ.get("SONNX_MUL_ISA", "auto")
    if wanted not in ("", "auto"):
        assert _native.isa() == wanted
    else:
        assert _native.isa() == _native.isas()[-1]  # the widest


def variant_features() -> tuple[set[str], set[str]]:
    """The CPU features the two hardware variants need, with their loops' (native/isa.toml)."""
    _, narrow, wide = native_flags.variants(ROOT)
    return set(narrow.runs_on), set(wide.runs_on)


def features_tested_in(text: str, variable: str) -> set[str]:
    """The __builtin_cpu_supports names in the statement assigning ``variable`` in ``text``."""
    start = text.index(f"{variable} = ")
    statement = text[start : text.index(";", start)]
    return set(re.findall(r'__builtin_cpu_supports\("([a-z0-9_]+)"\)', statement))


def test_F_the_exhaustive_harness_tests_the_features_isa_toml_gives() -> None:
    """The exhaustive harness runs a variant only on a CPU with every feature its
    compile flags may use: native/isa.toml's ``cpu`` of the variant and its loops."""
    avx2, avx512 = variant_features()
    text = (ROOT / "native/verify/exhaustive/selftest.h").read_text(encoding="utf-8")
    assert features_tested_in(text, "const int avx2") == avx2
    # the avx512 statement tests the avx2 variable and the rest
    assert features_tested_in(text, "const int avx512") | avx2 == avx512
    # each variant's and loop's instruction-set flags (-mavx2, -mavx512dq, -mf16c ...)
    # are its features
    for variant in native_flags.variants(ROOT):
        for part in (variant, *variant.loops):
            isa_flags = {f[2:] for f in part.cflags if re.fullmatch(r"-m(avx|f16c)\w*", f)}
            assert isa_flags == set(part.cpu), part.name
    # negative control: the same statement without its last feature differs
    planted = re.sub(r' &&\s+__builtin_cpu_supports\("avx512dq"\)', "", text, count=1)
    assert planted != text
    assert features_tested_in(planted, "const int avx512") | avx2 != avx512


def dispatch_features(header: str) -> dict[str, set[str]]:
    """The __builtin_cpu_supports names of each ``ISA_<NAME>_CPU`` test of the glue's
    generated table (src/sonnx_mul/_native_isas.h)."""
    return {
        name.lower(): set(re.findall(r'__builtin_cpu_supports\("([a-z0-9_]+)"\)', test))
        for name, test in re.findall(r"^#define ISA_(\w+)_CPU (.*)$", header, re.M)
    }


def test_F_the_dispatch_tests_the_features_isa_toml_gives() -> None:
    """The extension selects a hardware variant only on a CPU with its features and
    its loops' (the generated table, which tables check keeps current)."""
    header = (ROOT / "src/sonnx_mul/_native_isas.h").read_text(encoding="utf-8")
    hardware = native_flags.variants(ROOT)[1:]
    assert dispatch_features(header) == {v.name: set(v.runs_on) for v in hardware}
    planted = header.replace(' && __builtin_cpu_supports("f16c")', "", 1)
    assert dispatch_features(planted) != dispatch_features(header)  # negative control


def test_F_the_hardware_path_is_selected_on_a_cpu_that_has_it() -> None:
    if os.environ.get("SONNX_MUL_ISA", "auto") not in ("", "auto"):
        pytest.skip(f"SONNX_MUL_ISA={os.environ['SONNX_MUL_ISA']} chooses the variant")
    # The skips below are asserted: without the hardware, the portable build runs.
    if platform.machine().lower() not in ("x86_64", "amd64"):
        assert _native.isas() == ("portable",) and _native.isa() == "portable"
        pytest.skip(f"not x86-64 ({platform.machine()}): the portable build is the only one")
    flags = cpu_flags()
    avx2, avx512 = variant_features()
    if not avx2 <= flags:
        assert _native.isa() == "portable"
        pytest.skip(f"this CPU lacks {sorted(avx2 - flags)}: portable only")
    assert "avx2" in _native.isas()
    if avx512 <= flags:
        assert _native.isa() == "avx512"
    else:
        assert _native.isa() == "avx2"
    # mul() runs it: the portable float16 loop is an order of magnitude slower
    # than the F16C one, but timing is not a test; the import check and the
    # self-test say which ran:
    report = selftest()
    assert report.ok, report.failures
    assert report.isa == _native.isa() and report.isa_compared == len(ALL_TYPES)


@pytest.mark.parametrize("isa", HARDWARE or ["none"])
@pytest.mark.parametrize("etype", ALL_TYPES, ids=IDS)
def test_F_every_variant_gives_the_portable_bits_on_edge_pairs(isa: str, etype: ElementType):
    if isa == "none":
        pytest.skip("this build or CPU has no variant but the portable one")
    values = edges(etype)
    a = np.repeat(values, len(values))
    b = np.tile(values, len(values))
    for n in (*LENGTHS, a.size - 1, a.size):
        x, y = a[:n], b[:n]
        same_bits(
            _native.multiply(x, y, None, False, isa),
            _native.multiply(x, y, None, False, "portable"),
        )
        if not etype.is_float:
            same_bits(
                _native.multiply(x, y, None, True, isa),
                _native.multiply(x, y, None, True, "portable"),
            )
    # out= aliasing a operand, and a strided (buffered) layout
    got, want = a.copy(), a.copy()
    _native.multiply(got, b, got, False, isa)
    _native.multiply(want, b, want, False, "portable")
    same_bits(got, want)
    same_bits(
        _native.multiply(a[::3], b[::3], None, False, isa),
        _native.multiply(a[::3], b[::3], None, False, "portable"),
    )


@pytest.mark.parametrize("isa", HARDWARE or ["none"])
@pytest.mark.parametrize("etype", ALL_TYPES, ids=IDS)
def test_F_every_variant_gives_the_portable_bits_on_random_patterns(
    isa: str, etype: ElementType
) -> None:
    if isa == "none":
        pytest.skip("this build or CPU has no variant but the portable one")
    a, b = random_patterns(etype, 100_003, 1), random_patterns(etype, 100_003, 2)
    same_bits(
        _native.multiply(a, b, None, False, isa), _native.multiply(a, b, None, False, "portable")
    )


@pytest.mark.parametrize("isa", HARDWARE or ["none"])
@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_F_FLOAT_every_16_bit_pattern_times_the_edges(isa: str, name: str) -> None:
    """All 2^16 patterns against every edge value, both orders (2^32: make verify-exhaustive)."""
    if isa == "none":
        pytest.skip("this build or CPU has no variant but the portable one")
    etype = by_onnx_name(name)
    assert etype is not None
    every = np.arange(1 << 16, dtype=np.uint16).view(etype.dtype)
    for e in edges(etype):
        other = np.full(every.shape, e, etype.dtype)
        for x, y in ((every, other), (other, every)):
            same_bits(
                _native.multiply(x, y, None, False, isa),
                _native.multiply(x, y, None, False, "portable"),
            )


STREAM8 = _native.STREAM8_MIN_ELEMENTS
STREAM8_SIZES = (STREAM8 - 1, STREAM8, STREAM8 + 1, STREAM8 + 63) if STREAM8 else ()


def test_F_the_streaming_threshold_is_the_header_s() -> None:
    """int8/uint8 wrap runs the streaming loop (native/hw/sonnx_mul_stream8.c)
    from SONNX_MUL_STREAM8_MIN_ELEMENTS elements up, on the x86-64 build."""
    header = (ROOT / "native/include/sonnx_mul_stream8.h").read_text()
    line = next(x for x in header.splitlines() if "define SONNX_MUL_STREAM8_MIN_ELEMENTS" in x)
    expected = int(line.split()[-1].rstrip("U"))
    if platform.machine().lower() in ("x86_64", "amd64"):
        assert expected == _native.STREAM8_MIN_ELEMENTS
    else:
        assert _native.STREAM8_MIN_ELEMENTS == 0


@pytest.mark.parametrize("isa", HARDWARE or ["none"])
@pytest.mark.parametrize("name", ["int8", "uint8"])
def test_F_int8_uint8_around_the_streaming_threshold(isa: str, name: str) -> None:
    """The streaming int8/uint8 wrap loop (from STREAM8_MIN_ELEMENTS up) and the
    proved loop below it give the portable bits: sizes around the threshold,
    every byte value, offsets that misalign the output, strided and
    negative-stride inputs, Fortran order, out= aliasing either input; checked
    mode (the proved loop) too."""
    if isa == "none":
        pytest.skip("this build or CPU has no variant but the portable one")
    etype = by_onnx_name(name)
    assert etype is not None
    size = max(STREAM8_SIZES) + 64
    every = random_patterns(etype, 2 * size + 64, 3)
    other = random_patterns(etype, 2 * size + 64, 4)
    pairs = np.arange(1 << 16, dtype=np.uint16)
    for start in (0, 1 << 17):  # every byte pair, twice (at an even and an odd index)
        every[start + 1 : start + 1 + (1 << 16)] = (pairs >> 8).astype(np.uint8).view(etype.dtype)
        other[start + 1 : start + 1 + (1 << 16)] = (pairs & 0xFF).astype(np.uint8).view(etype.dtype)

    def same(x: np.ndarray, y: np.ndarray) -> None:
        same_bits(
            _native.multiply(x, y, None, False, isa),
            _native.multiply(x, y, None, False, "portable"),
        )

    for n in STREAM8_SIZES:
        for offset in (0, 1, 33):  # the output of a new array is aligned; inputs moved
            x, y = every[offset : offset + n], other[offset : offset + n]
            same(x, y)
            for shift in (0, 5):  # out= misaligned against its allocation
                out = np.empty(n + 64, etype.dtype)[shift : shift + n]
                want = _native.multiply(x, y, None, False, "portable")
                got = _native.multiply(x, y, out, False, isa)
                assert got is out
                same_bits(out, want)
        x, y = every[: 2 * n], other[: 2 * n]
        same(x[::2], y[::2])  # strided: the buffered iterator
        same(x[::-1][:n], y[::-1][:n])  # negative stride
        same(x[::-2], y[::-2])
        # out= aliasing a, then b (exactly the input)
        for first in (True, False):
            got, want = x[:n].copy(), x[:n].copy()
            other_got, other_want = y[:n].copy(), y[:n].copy()
            if first:
                _native.multiply(got, other_got, got, False, isa)
                _native.multiply(want, other_want, want, False, "portable")
            else:
                _native.multiply(other_got, got, got, False, isa)
                _native.multiply(other_want, want, want, False, "portable")
            same_bits(got, want)
        # checked mode keeps the proved loop: the same index or the same bits
        same_bits(
            _native.multiply(x[:n], y[:n], None, True, isa),
            _native.multiply(x[:n], y[:n], None, True, "portable"),
        )
    # Fortran order, one call of the kernel on the whole array
    f = np.asfortranarray(every[: 1024 * 1000].reshape(1000, 1024))
    g = np.asfortranarray(other[: 1024 * 1000].reshape(1000, 1024))
    same(f, g)


def test_F_an_unknown_or_unrunnable_variant_is_refused() -> None:
    a = np.ones(4, np.float16)
    with pytest.raises(ValueError, match="no ISA variant"):
        _native.multiply(a, a, None, False, "sse9")
    with pytest.raises(TypeError, match="str"):
        _native.multiply(a, a, None, False, 3)
    if "avx512" not in _native.isas() and platform.machine().lower() in ("x86_64", "amd64"):
        with pytest.raises(ValueError, match="cannot run"):
            _native.multiply(a, a, None, False, "avx512")


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
        check=False,
    )


def test_F_SONNX_MUL_ISA_portable_runs_the_portable_build() -> None:
    proc = _python(
        "import numpy as np, sonnx_mul; from sonnx_mul import _native; "
        "r = sonnx_mul.selftest(); a = np.array([1.5, -0.0, 65504], np.float16); "
        "print(_native.isa(), r.ok, r.isa, r.isa_compared, sonnx_mul.mul(a, a).tolist())",
        SONNX_MUL_ISA="portable",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[:4] == ["portable", "True", "portable", "0"]
    assert "[2.25, 0.0, inf]" in proc.stdout


@pytest.mark.parametrize("value", ["", "auto"])
def test_F_SONNX_MUL_ISA_empty_or_auto_chooses_the_cpu_s_best_variant(value: str) -> None:
    """Set to "" or "auto", the variable leaves the choice to the CPU (as unset)."""
    proc = _python("from sonnx_mul import _native; print(_native.isa(), *_native.isas())",
                   SONNX_MUL_ISA=value)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    chosen, *supported = proc.stdout.split()
    assert chosen == supported[-1]  # the last one this CPU runs is the best


def test_F_SONNX_MUL_ISA_unknown_fails_the_import() -> None:
    proc = _python("import sonnx_mul", SONNX_MUL_ISA="sse9")
    assert proc.returncode != 0
    assert "ConfigurationError: sonnx_mul._native: SONNX_MUL_ISA=sse9: expected auto, portable" in (
        proc.stderr
    )
    # whichever kernel is asked for: numpy's loops do not hide a misspelt variant
    proc = _python("import sonnx_mul", SONNX_MUL_ISA="sse9", SONNX_MUL_KERNEL="numpy")
    assert proc.returncode != 0 and "SONNX_MUL_ISA=sse9: expected auto" in proc.stderr


def test_F_mul_runs_the_selected_variant() -> None:
    a = edges(by_onnx_name("float16"))  # type: ignore[arg-type]
    b = a[::-1].copy()
    assert kernel.NAME == "native"
    same_bits(mul(a, b), _native.multiply(a, b, None, False, _native.isa()))


@functools.cache
def disassembly() -> str:
    """objdump's disassembly of the built extension (skips the test without binutils)."""
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("objdump (binutils) is not installed")
    return subprocess.run(
        [objdump, "-d", "--no-show-raw-insn", _native.__file__],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_F_FLOAT_the_extension_has_no_fused_multiply_add() -> None:
    """-ffp-contract=off: not one FMA instruction in the built extension (AVX-512F
    has FMA of its own; gcc must not contract `a * b + c` in any variant)."""
    code = disassembly()
    assert "vmulps" in code or platform.machine().lower() not in ("x86_64", "amd64")
    fused = [line for line in code.splitlines() if "vfmadd" in line or "vfmsub" in line
             or "vfnmadd" in line or "vfnmsub" in line]  # fmt: skip
    assert fused == []


def test_F_CHECKED_only_the_avx512_variant_scans_int64_by_the_binary64_test() -> None:
    """int64's checked scan: the avx512 build calls the binary64 test's block
    function (native/int64_binary64.py, its int64 -> double conversions are
    vcvtqq2pd), the other builds the halves test, which converts nothing."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("the variants are x86-64 builds")
    code = disassembly()
    bodies = dict(re.findall(r"<(sonnx_mul_\w*first_overflow_i64)>:\n(.*?)\n\n", code, re.S))
    assert set(bodies) == {
        "sonnx_mul_first_overflow_i64",
        "sonnx_mul_avx2_first_overflow_i64",
        "sonnx_mul_avx512_first_overflow_i64",
    }, sorted(bodies)
    assert "vcvtqq2pd" in bodies["sonnx_mul_avx512_first_overflow_i64"]
    for portable_or_avx2 in ("sonnx_mul_first_overflow_i64", "sonnx_mul_avx2_first_overflow_i64"):
        assert "cvtsi2sd" not in bodies[portable_or_avx2]
        assert "vcvtqq2pd" not in bodies[portable_or_avx2]
