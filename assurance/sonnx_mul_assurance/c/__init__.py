"""The C kernel's evidence: Frama-C WP (``wp``, ``wp_plan``, ``wp_statements``),
MISRA C (``misra``) and the compiled kernel's exhaustive runs (``native_exhaustive``)."""
