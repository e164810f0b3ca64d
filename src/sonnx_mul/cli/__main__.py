"""``python -m sonnx_mul.cli``: the ``sonnx-mul`` command."""

import sys

from . import main

sys.exit(main())
