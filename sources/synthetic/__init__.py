"""Deterministic synthetic data for development, demos and tests: no real account's data is needed.

Modules here are run with `python -m`, so this package imports none of them (which would make
runpy warn that the module was imported twice).
"""
