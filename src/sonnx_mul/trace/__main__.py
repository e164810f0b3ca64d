"""``python -m sonnx_mul.trace {lint,report,strictdoc} ...``."""

import sys

from .cli import main

sys.exit(main())
