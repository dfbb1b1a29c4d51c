"""Values as the page shows them: amounts rounded half up from the exact decimal, and floats only for drawing."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from pipelines.lib.reporting.report.render import Cell


def coordinate(value: Decimal | None) -> float | None:
    """Chart coordinates only: amounts shown as text keep their exact decimal value."""
    return None if value is None else float(value)


def money(value: Decimal | None, currency: str, places: int = 2) -> str:
    """Rounded half up at `places` (as an invoice would), from the exact decimal."""
    if value is None:
        return "-"
    return f"{currency} {_round(value, places):,.{places}f}"


def money_cell(value: Decimal | None, currency: str, places: int = 2) -> Cell:
    return Cell(money(value, currency, places), None if value is None else Decimal(value))


def number(value: Decimal | None, places: int) -> str:
    return "-" if value is None else f"{_round(value, places):,.{places}f}"


def number_cell(value: Decimal | None, places: int) -> Cell:
    return Cell(number(value, places), None if value is None else Decimal(value))


def percent(value: Decimal | None) -> str:
    return "-" if value is None else f"{Decimal(value) * 100:,.1f}%"


def _round(value: Decimal, places: int) -> Decimal:
    return Decimal(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
