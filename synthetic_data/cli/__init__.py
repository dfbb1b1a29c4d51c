"""The generators' command lines, each run with `python -m synthetic_data.cli.<name>`.

This package imports none of them (which would make runpy warn that the module was imported twice).
"""
