"""MISRA C:2012 check of the native kernel with cppcheck's misra addon.

``python -m sonnx_mul_assurance.c.misra check`` runs cppcheck on
``native/src/*.c`` as gcc sees them (gcc's predefined macros for the pinned
flags and its own ``float.h``, so the kernel's compile-time checks pass and
cppcheck analyses the real configuration), and on the hardware loops
``native/hw/*.c`` likewise under ``SONNX_CFLAGS_F16C`` (``-mavx2 -mf16c``,
the avx2 variant's configuration: their AVX-512 branches are not analysed;
gcc's ``immintrin.h`` is read, its findings dropped), compares the findings with the
recorded deviations ``proofs/misra-deviations.json`` (rule, file, count,
reason) and writes ``proofs/out/misra.json``.  It fails on a finding that is
not a recorded deviation, on a deviation whose count differs (new or gone
occurrences), and when cppcheck analysed nothing (no valid configuration,
which it otherwise reports only as "information" with exit code 0).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from sonnx_mul_assurance.evidence import binding, files, schema

DEVIATIONS = Path("proofs/misra-deviations.json")
OUT = files.evidence_path(files.MISRA)
SOURCES = Path("native/src")
HARDWARE = Path("native/hw")
# the hardware loops' configuration: native/flags.mk's SONNX_CFLAGS_F16C, which
# both compile under in the avx2 variant (without it they #error)
HARDWARE_FLAGS = ("-mavx2", "-mf16c")
INCLUDE = Path("native/include")
_FINDING_RE = re.compile(r"^(?P<file>[^:\s]+):(?P<line>\d+): \[(?P<id>[^\]]+)\]")
_NOT_ANALYSED = (
    "noValidConfiguration",
    "ConfigurationNotChecked",
    "syntaxError",
    "preprocessorErrorDirective",
)


def gcc_predefined(build: Path, flags: tuple[str, ...] = ()) -> Path:
    """gcc's predefined macros under the kernel's flags (and ``flags``), as a header."""
    build.mkdir(parents=True, exist_ok=True)
    header = build / ("predefined.h" if not flags else "predefined-hw.h")
    argv = ["gcc", "-std=c99", "-O2", "-fexcess-precision=standard", *flags, "-dM", "-E", "-"]
    if subprocess.run(["uname", "-m"], capture_output=True, text=True).stdout.strip() == "x86_64":
        argv[1:1] = ["-msse2", "-mfpmath=sse"]
    out = subprocess.run(argv, input="", capture_output=True, text=True, check=True)
    header.write_text(out.stdout)
    return header


def run_cppcheck(
    root: Path, sources: list[Path], include: Path, flags: tuple[str, ...] = ()
) -> tuple[list[tuple[str, str]], str]:
    """(file, rule) of every finding in the kernel's own files, and the raw output
    (``flags``: gcc flags added to the configuration, the hardware loops')."""
    exe = shutil.which("cppcheck")
    if exe is None:
        raise FileNotFoundError("cppcheck not found: run sh proofs/install-provers.sh")
    predefined = gcc_predefined(root / "build" / "misra", flags)
    gcc_include = subprocess.run(
        ["gcc", "-print-file-name=include"], capture_output=True, text=True, check=True
    ).stdout.strip()
    argv = [
        exe,
        "--addon=misra",
        "--std=c99",
        "--enable=information",
        "--max-configs=1",  # the one configuration gcc compiles (its predefined macros)
        f"--include={predefined}",
        # int64's two block scans, each compiled in the builds that run it
        # (native/int64_binary64.py): both analysed
        "-DSONNX_MUL_I64_BOTH_SCANS",
        f"-I{gcc_include}",
        f"-I{include}",
        "--template={file}:{line}: [{id}] {message}",
        *[str(s) for s in sources],
    ]
    proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, check=False)
    output = proc.stdout + proc.stderr
    findings: list[tuple[str, str]] = []
    for line in output.splitlines():
        match = _FINDING_RE.match(line)
        if match is None:
            continue
        ident = match["id"]
        path = Path(match["file"])
        if ident in _NOT_ANALYSED:
            findings.append((str(path), ident))
        elif ident.startswith("misra-c2012-"):
            try:
                rel = str((root / path).resolve().relative_to(root.resolve()))
            except ValueError:
                continue  # gcc's own headers: not the project's code
            if rel.startswith(("native/",)):
                findings.append((rel, ident.removeprefix("misra-c2012-")))
    return findings, output


def kernel_sources(root: Path) -> list[Path]:
    """Every C file the check analyses: ``native/src/*.c`` and ``native/hw/*.c``."""
    return sorted((root / SOURCES).glob("*.c")) + sorted((root / HARDWARE).glob("*.c"))


def run_kernel(root: Path, sources: list[Path]) -> list[tuple[str, str]]:
    """The findings of ``sources``: those of ``native/hw`` in the hardware
    loops' configuration, the others in the portable one, one cppcheck run each."""
    hardware = [s for s in sources if s.resolve().parent == (root / HARDWARE).resolve()]
    portable = [s for s in sources if s not in hardware]
    findings: list[tuple[str, str]] = []
    for group, flags in ((portable, ()), (hardware, HARDWARE_FLAGS)):
        if group:
            findings += run_cppcheck(root, group, root / INCLUDE, flags)[0]
    return findings


def compare(findings: list[tuple[str, str]], deviations: list[dict[str, Any]]) -> list[str]:
    """Every reason the findings do not match the recorded deviations."""
    errors = [
        f"{f}: cppcheck did not analyse it ({rule})"
        for f, rule in findings
        if rule in _NOT_ANALYSED
    ]
    counts = Counter((f, rule) for f, rule in findings if rule not in _NOT_ANALYSED)
    recorded = {(d["file"], d["rule"]): int(d["count"]) for d in deviations}
    for key, count in sorted(counts.items()):
        if key not in recorded:
            errors.append(
                f"{key[0]}: MISRA rule {key[1]}: {count} finding(s), no recorded deviation"
            )
        elif recorded[key] != count:
            errors.append(
                f"{key[0]}: MISRA rule {key[1]}: {count} finding(s),"
                f" deviation records {recorded[key]}"
            )
    for key in sorted(set(recorded) - set(counts)):
        errors.append(f"{key[0]}: deviation for rule {key[1]} recorded but no longer found")
    return errors


def inputs(root: Path, sources: list[Path] | None = None) -> list[Path]:
    """Every file the verdict depends on: the analysed sources (every
    ``native/src/*.c`` and ``native/hw/*.c`` unless ``sources``), the headers, the recorded
    deviations and this checker's own code.  ``misra.json`` records their
    SHA-256; the gate compares them with the tree's (:mod:`..evidence.binding`)."""
    files = sources if sources is not None else kernel_sources(root)
    headers = sorted((root / INCLUDE).glob("*.h"))
    own = binding.own_code(__spec__, __name__)
    return sorted({*files, *headers, root / DEVIATIONS, *own})


def check(root: Path, sources: list[Path] | None = None) -> int:
    """Run the check, write proofs/out/misra.json (:class:`~sonnx_mul_assurance.
    evidence.schema.MisraEvidence`, through ``schema.dump``); 0 when clean or as deviated."""
    files = sources if sources is not None else kernel_sources(root)
    bound = binding.digest(root, inputs(root, sources))
    findings = run_kernel(root, files)
    deviations = json.loads((root / DEVIATIONS).read_text())["deviations"]
    errors = compare(findings, deviations)
    # the record says what was analysed: files edited while cppcheck ran are not
    errors += binding.changed_during(OUT.name, root, bound, inputs(root, sources))
    record = schema.MisraEvidence(
        tool=tool_version(),
        files=[str(Path(f).resolve().relative_to(root.resolve())) for f in files],
        findings=[schema.MisraFinding(f, r) for f, r in findings],
        deviations=[
            schema.from_json(schema.MisraDeviation, d, DEVIATIONS.name) for d in deviations
        ],
        verdict="pass" if not errors else "fail",
        errors=errors,
        inputs=bound,
    )
    schema.dump(record, root / OUT)
    for error in errors:
        print(f"misra: FAIL {error}", file=sys.stderr)
    print(
        f"misra: {len(findings)} finding(s),"
        f" {'all recorded deviations' if not errors else 'FAILED'}"
    )
    return 0 if not errors else 1


def tool_version() -> str:
    """cppcheck's version line, as ``misra.json`` records it."""
    return subprocess.run(["cppcheck", "--version"], capture_output=True, text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("command", choices=("check",))
    parser.add_argument("--root", type=Path, default=Path.cwd())
    args = parser.parse_args(argv)
    return check(args.root)


if __name__ == "__main__":
    sys.exit(main())
