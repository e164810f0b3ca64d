"""The Why3 side: the proof driver (``driver``: ``python -m
sonnx_mul_assurance.why3.driver check``), its limits per run (``plan``) and
its runs of Why3 (``runner``) on the pinned proofs' core
(``sonnx_mul_assurance.pinned``), the prover configuration shared with WP
(``config``), statement pinning (``statements``), the
WhyML reader (``whyml``), the generated instances and tables (``instances``,
``tables``, ``templates/``) and the check that ``api.mul`` runs its checks
in the order ``why3/api.mlw`` proves (``check_order``)."""
