"""The C kernel's evidence: Frama-C WP (``wp``, ``wp_plan``), MISRA C
(``misra``) and the compiled kernel's exhaustive runs (``native_exhaustive``)."""
