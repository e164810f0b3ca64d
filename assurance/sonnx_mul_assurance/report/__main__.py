"""``python -m sonnx_mul_assurance.report {lint,report,strictdoc} ...``."""

import sys

from .cli import main

sys.exit(main())
