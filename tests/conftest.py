"""Options and fixtures every test folder shares."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-snapshots",
        action="store_true",
        help="rewrite checked-in snapshots (tests/pipelines/snapshots/) from the code instead of comparing",
    )
