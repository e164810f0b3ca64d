"""Exhaustive verification of the compiled float16/bfloat16 code of the native kernel.

``python -m sonnx_mul_assurance.c.native_exhaustive`` builds the kernel and the
harness ``native/verify/exhaustive.c`` with the pinned flags
(``native/flags.mk``), runs the harness's negative control first (planted
wrong narrowings must be caught), then every check: all 2^32 binary32 inputs
of both narrowings, all 2^16 patterns of both widenings, all 2^32 pairs of
``sonnx_mul_f16`` and of ``sonnx_mul_bf16``, against oracles that share no
code with the kernel.  Writes ``proofs/out/native-exhaustive.json`` (inputs,
mismatches, seconds per check) and exits non-zero on any mismatch, on a
planted fault not caught, or on a check that did not run.

On x86-64 the loops the extension selects at run time are checked too
(``HW_CHECKS``), linked from objects compiled with exactly the extension's
compile commands (setup.py): all 2^32 pairs of the F16C float16 loop
(native/hw/sonnx_mul_f16c.c, 8- and 16-wide builds; WP proves the loop from the
admitted contract of its vector operation, which this verifies, with the
values) and every length 1..49 of it at every output misalignment, and
the AVX2 and AVX-512 builds of the proved bfloat16 loop, bit for bit against
the proved portable loops; all 2^16 pairs of int8 and of uint8 through the
streaming wrap loop (native/hw/sonnx_mul_stream8.c, 32- and 64-byte stores;
its products by the variants' proved loops, its copy admitted by WP) on a
buffer longer than its threshold, and every length 1..3*64+1 and those
around one and two blocks at every output misalignment 0..63, bit for bit
against the proved portable wrap loops; planted faults of the F16C loop
(rounding toward zero, the hardware's sign of a NaN, the tail one element
short) and of the streaming loop (a block's last vector uncopied, the tail
skipped) must be caught first.  A check whose
instructions this CPU lacks is recorded as skipped, with the reason.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from sonnx_mul_assurance.c import flags
from sonnx_mul_assurance.evidence import files, schema

HARNESS = Path("native/verify/exhaustive.c")
"""The harness's one translation unit: it includes its parts (native/verify/exhaustive/),
found beside it, so that the build compiles this file alone."""
BUILD = Path("build/c-kernel/gcc")
OUT = files.evidence_path(files.NATIVE_EXHAUSTIVE)
HW_CHECKS = (
    "mul-f16-f16c",
    "mul-f16-f16c-layouts",
    "mul-f16-f16c512",
    "mul-f16-f16c512-layouts",
    "mul-bf16-avx2",
    "mul-bf16-avx512",
    "wrap8-stream8",
    "wrap8-stream8-layouts",
    "wrap8-stream8512",
    "wrap8-stream8512-layouts",
)
CHECKS = (
    "widen-f16",
    "widen-bf16",
    "narrow-f16",
    "narrow-bf16",
    "views-f32",
    "views-f64",
    "mul-f16",
    "mul-bf16",
    *HW_CHECKS,
)


def build_of(check: str) -> str:
    """The hardware loop or ISA variant (native/isa.toml) a hardware check's code is
    compiled as: the last word of its name (``mul-f16-f16c512-layouts``: ``f16c512``)."""
    return check.removesuffix("-layouts").rsplit("-", 1)[1]


def hw_needs(root: Path) -> dict[str, tuple[str, ...]]:
    """The CPU features (/proc/cpuinfo flags) each hardware check needs, from native/isa.toml:
    a variant's, or a loop's with its variant's."""
    needs: dict[str, tuple[str, ...]] = {}
    for variant in flags.variants(root)[1:]:
        needs[variant.name] = tuple(variant.cpu)
        for loop in variant.loops:
            needs[loop.name] = tuple(dict.fromkeys([*variant.cpu, *loop.cpu]))
    return {check: needs[build_of(check)] for check in HW_CHECKS}


def compile_flags(root: Path) -> list[str]:
    """The kernel's compile flags for gcc on this machine (native/flags.py)."""
    return flags.cflags(root, "gcc")


def is_x86_64() -> bool:
    return platform.machine().lower() in ("x86_64", "amd64")


def _cpuinfo(key: str) -> str | None:
    """The value of the first ``key`` line of Linux's /proc/cpuinfo (None elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(key):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_flags() -> set[str]:
    """The feature flags of this CPU (Linux /proc/cpuinfo; empty elsewhere)."""
    return set((_cpuinfo("flags") or "").split())


def hw_objects(root: Path) -> list[Path]:
    """The objects of the run-time selected loops, compiled with exactly the
    extension's commands (setup.py: -fPIC, the pinned and warning flags, the
    variant's flags): the F16C loop, the streaming int8/uint8 loop, the planted
    faults (a second build of each), and the kernel's units (``native/src/*.c``)
    of both ISA variants."""
    rows = flags.table(root)
    base = ["gcc", "-fPIC", *compile_flags(root), *rows["SONNX_WARNFLAGS"], "-I", "native/include"]
    out = root / BUILD / "hw"
    out.mkdir(parents=True, exist_ok=True)
    commands: dict[Path, list[str]] = {}
    for variant, loop in flags.hardware_loops(root):
        stem = Path(loop.source).stem.removeprefix("sonnx_mul_").upper()  # F16C, STREAM8
        planted = f"-DSONNX_MUL_{stem}_PLANTED_FAULTS"
        extra = list(variant.loop_cflags(loop))
        commands[out / f"sonnx_mul_{loop.name}.o"] = [*extra, loop.source]
        commands[out / f"sonnx_mul_{loop.name}_planted.o"] = [*extra, planted, loop.source]
    # every unit, as the extension builds them: the harness compares each
    # variant's float loops with the portable ones, and the streaming loop
    # calls the variant's int8 loop
    units = sorted(p.relative_to(root) for p in (root / "native" / "src").glob("*.c"))
    for variant in flags.variants(root)[1:]:
        for unit in units:
            commands[out / f"{unit.stem}.{variant.name}.o"] = [
                *variant.cflags,
                f"-DSONNX_MUL_VARIANT=sonnx_mul_{variant.name}",
                "-include",
                "sonnx_mul_rename.h",
                str(unit),
            ]
    for obj, args in commands.items():
        subprocess.run([*base, *args[:-1], "-c", args[-1], "-o", str(obj)], cwd=root, check=True)
    return list(commands)


def build(root: Path) -> Path:
    """Build the static library (make c-kernel) and the harness; return the harness."""
    subprocess.run(["make", "-s", f"{BUILD}/libsonnx_mul_kernel.a"], cwd=root, check=True)
    exe = root / BUILD / "exhaustive"
    hw = hw_objects(root) if is_x86_64() else []
    argv = [
        "gcc",
        *compile_flags(root),
        "-Wall",
        "-Wextra",
        "-mf16c",  # the harness only: the F16C oracle (the kernel is built without it)
        *(["-DSONNX_MUL_HW"] if hw else []),
        f"-I{root / 'native/include'}",
        str(root / HARNESS),
        *(str(o) for o in hw),
        str(root / BUILD / "libsonnx_mul_kernel.a"),
        "-lm",
        "-o",
        str(exe),
    ]
    subprocess.run(argv, check=True)
    return exe


def skipped_checks(root: Path, checks: tuple[str, ...]) -> dict[str, str]:
    """The hardware checks this machine cannot run, with the reason."""
    if not is_x86_64():
        return {c: f"not x86-64 ({platform.machine()})" for c in checks if c in HW_CHECKS}
    have = cpu_flags()
    needs = hw_needs(root)
    reasons = {}
    for check in checks:
        missing = [f for f in needs.get(check, ()) if f not in have]
        if missing:
            reasons[check] = f"this CPU lacks {', '.join(missing)}"
    return reasons


NARROWING_FAULTS = 6
"""The selftest's wrong narrowings: each must be caught on its sample."""


def planted_faults(root: Path) -> int:
    """How many planted faults the harness's selftest runs on this CPU: the
    six wrong narrowings (truncation, a wrong mask, ties to odd and the
    wrong quiet bit in both formats) and the float64 loop without the NaN
    rule everywhere, and the hardware loops the CPU can execute (five
    256-bit ones with AVX2 and F16C: three float16, two streaming; five
    512-bit ones with AVX-512)."""
    if not is_x86_64():
        return NARROWING_FAULTS + 1
    have = cpu_flags()
    needs = hw_needs(root)
    count = NARROWING_FAULTS + 1
    if set(needs["mul-f16-f16c"]) <= have:
        count += 5
        if set(needs["mul-f16-f16c512"]) <= have:
            count += 5
    return count


def run(root: Path, checks: tuple[str, ...] = CHECKS) -> int:
    """Run the negative control then the checks; write the evidence file."""
    exe = build(root)
    skipped = skipped_checks(root, checks)
    checks = tuple(c for c in checks if c not in skipped)
    record: dict[str, Any] = {
        "flags": compile_flags(root),
        "checks": {},
        "selftest": {},
        "skipped": skipped,
        "cpu": cpu_model(),
    }
    errors: list[str] = []
    proc = subprocess.run([str(exe), "selftest"], capture_output=True, text=True, check=False)
    for line in proc.stdout.splitlines():
        name, caught, _, seconds = line.split()
        record["selftest"][name] = {"caught": int(caught), "seconds": float(seconds)}
    planted = planted_faults(root)
    if proc.returncode != 0 or len(record["selftest"]) != planted:
        errors.append(f"negative control failed: a planted fault was not caught\n{proc.stdout}")
    for check, reason in skipped.items():
        print(f"native-exhaustive: {check}: SKIPPED ({reason})")
    start = time.perf_counter()
    proc = subprocess.run([str(exe), *checks], capture_output=True, text=True, check=False)
    for line in proc.stdout.splitlines():
        name, inputs, bad, seconds, cpu = line.split()
        record["checks"][name] = {
            "inputs": int(inputs),
            "mismatches": int(bad),
            "seconds": float(seconds),
            "cpu_seconds": float(cpu),
        }
        print(
            f"native-exhaustive: {name}: {inputs} inputs, {bad} mismatches,"
            f" {seconds} s wall, {cpu} s CPU"
        )
    missing = [c for c in checks if c not in record["checks"]]
    if missing:
        errors.append(f"checks that did not run: {missing}")
    bad_checks = [c for c, v in record["checks"].items() if v["mismatches"] != 0]
    if bad_checks or proc.returncode != 0:
        errors.append(f"mismatches in {bad_checks} (exit {proc.returncode}):\n{proc.stderr}")
    record["seconds"] = time.perf_counter() - start
    record["verdict"] = "pass" if not errors else "fail"
    record["errors"] = errors
    schema.dump(schema.from_json(schema.NativeExhaustiveEvidence, record, OUT.name), root / OUT)
    for error in errors:
        print(f"native-exhaustive: FAIL {error}", file=sys.stderr)
    return 0 if not errors else 1


def cpu_model() -> str:
    """The CPU the hardware checks ran on (their evidence is about that CPU)."""
    return _cpuinfo("model name") or platform.processor() or "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path.cwd())
    parser.add_argument("checks", nargs="*", help=f"some of {', '.join(CHECKS)} (default: all)")
    args = parser.parse_args(argv)
    unknown = [c for c in args.checks if c not in CHECKS]
    if unknown:
        parser.error(f"unknown checks {unknown}")
    return run(args.root, tuple(args.checks) or CHECKS)


if __name__ == "__main__":
    sys.exit(main())
