"""The Python code's evidence: CrossHair (``crosshair`` over the PEP 316
``contracts``) and the exhaustive agreement runs through ``mul``
(``exhaustive``)."""
