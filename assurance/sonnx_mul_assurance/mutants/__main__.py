"""``python -m sonnx_mul_assurance.mutants ...`` (:mod:`.cli`)."""

import sys

from sonnx_mul_assurance.mutants.cli import main

sys.exit(main())
