"""Generate native/src/sonnx_mul_int.c, native/include/sonnx_mul_kernel.h and
native/include/sonnx_mul_rename.h: the wrap and checked loops of the 8
integer types and their ACSL contracts, one instance of a fixed template per
type, and the kernel's API renamed for the ISA variants.

The generated files are committed (Frama-C, cppcheck and gcc read them, not
this script); ``tests/assurance/test_native_tie.py`` checks that they are
what this script writes, so the eight instances cannot drift apart.

    python native/generate.py            # rewrite the files
    python native/generate.py --check    # exit 1 if a file is stale
    python native/generate.py --list     # print the files written, nothing else

Where the text comes from (docs/dev/generators.md):

* native/int_types.py: the integer types (the registry's, src/sonnx_mul/dtypes.py)
  with the C facts of their widths;
* native/int_unit.py, native/int_scans.py: the C unit, from the templates of
  native/templates/ (the checked mode's tests in int_scans.py);
* native/kernel_header.py: the header and the rename header, from
  the header_*.h.in of native/include/ and native/include/sonnx_mul_rename.h.in;
* native/templating.py: how a template is read and filled (string.Template).

Every run, whatever the mode, prints the files it wrote or checked, one a
line, on standard output (the same lines as ``--list``); a stale file is
reported on standard error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from int_unit import render
from kernel_header import render_header, render_rename

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "native" / "src" / "sonnx_mul_int.c"
HEADER_OUT = ROOT / "native" / "include" / "sonnx_mul_kernel.h"
RENAME_OUT = ROOT / "native" / "include" / "sonnx_mul_rename.h"

OUTPUTS = (OUT, HEADER_OUT, RENAME_OUT)
"""The files this script writes, in the order it writes them."""

__all__ = ["OUTPUTS", "main", "render", "render_all", "render_header", "render_rename"]


def render_all() -> dict[Path, str]:
    """Each file of :data:`OUTPUTS` with its text (the rename header is read
    off the kernel header's declarations)."""
    kernel_header = render_header()
    return {OUT: render(), HEADER_OUT: kernel_header, RENAME_OUT: render_rename(kernel_header)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--check", action="store_true", help="fail if a file is stale")
    parser.add_argument("--list", action="store_true", help="print the files written, nothing else")
    args = parser.parse_args(argv)
    texts = {} if args.list else render_all()
    stale = 0
    for path in OUTPUTS:
        if args.check:
            if not path.exists() or path.read_text() != texts[path]:
                print(f"{path} is stale: run python native/generate.py", file=sys.stderr)
                stale = 1
        elif not args.list:
            path.write_text(texts[path])
        print(path.relative_to(ROOT))
    return stale


if __name__ == "__main__":
    sys.exit(main())
