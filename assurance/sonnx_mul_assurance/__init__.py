"""Proof drivers: run the project's Why3 proofs against a committed manifest."""
