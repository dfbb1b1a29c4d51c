"""Python code run as a child process of a test (`python -c`), safe where pyspark is installed."""

from __future__ import annotations

import sys


def python_code(code: str) -> list[str]:
    """The command that runs `code` in a new interpreter.

    pyspark.sql.connect ends, with exit status 0, any process whose `__main__` has neither `__spec__` nor
    `__file__` (it takes that for a doctest run), which is exactly what `python -c` gives; Great Expectations
    imports it when pyspark is installed (the `spark` extra). Naming the code as a file keeps the child alive.
    """
    return [sys.executable, "-c", f"__file__ = '<test child>'\n{code}"]
