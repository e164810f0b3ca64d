"""``python -m sonnx_mul.cli``: the same command line as ``sonnx-mul``."""

import sys

from . import main

sys.exit(main())
