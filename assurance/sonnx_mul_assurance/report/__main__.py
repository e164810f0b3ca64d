"""``python -m sonnx_mul_assurance.report {lint,report,strictdoc} ...``."""

import sys

from sonnx_mul_assurance.report.cli import main

sys.exit(main())
