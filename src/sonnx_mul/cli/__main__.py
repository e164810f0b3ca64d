"""``python -m sonnx_mul.cli``: the ``sonnx-mul`` command without its console script."""

import sys

from . import main

sys.exit(main())
