"""The realistic corpus table: python benchmarks/checker_corpus.py [OUT.md].

Per model of tests/checker_corpus.py: the Mul nodes checked, conforming,
violating and undecided; written to docs/checker-corpus.md by default.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from checker_corpus import table  # noqa: E402

HEAD = """# Checker corpus

Realistic blocks built with `onnx.helper` (tests/checker_corpus.py), every one
with a symbolic batch `N` (and sequence length `T`); regenerate with
`python benchmarks/checker_corpus.py`. "violating" Muls broadcast a scalar or
per-channel operand (layer scale, attention scale, LayerNorm gamma,
squeeze-excitation, Swish's beta), which the profile forbids (R4).
The gating Muls (SiLU, Swish, h-swish, GLU, GELU) are checked against
onnxruntime in tests/checker/test_checker_false_conforms.py.

| model | Mul nodes checked | conforming | violating | undecided |
|---|---|---|---|---|
"""


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "checker-corpus.md"
    rows = table()
    lines = [f"| {n} | {c} | {ok} | {bad} | {un} |" for n, c, ok, bad, un in rows]
    total = [sum(r[i] for r in rows) for i in range(1, 5)]
    lines.append("| **total** | " + " | ".join(str(t) for t in total) + " |")
    out.write_text(HEAD + "\n".join(lines) + "\n")
    print(out.read_text())


if __name__ == "__main__":
    main()
