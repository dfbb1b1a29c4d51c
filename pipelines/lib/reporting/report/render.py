"""The page: sections of text, one chart and tables each, drawn as one self-contained HTML file.

Every value from the warehouse is escaped (HTML text with `html.escape`, chart data as JSON with `<`, `>` and `&`
escaped so no text can close the script that carries it). Charts are Vega-Lite specs drawn by the Vega
JavaScript that vl-convert bundles, inlined once in the page (no CDN, no network).
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from pipelines.lib.foundation.atomic_files import replaced_atomically

CHART_WIDTH = 760


@dataclass(frozen=True)
class Cell:
    """One table cell: the text shown, and for amounts the exact decimal (kept in a data attribute)."""

    text: str
    exact: Decimal | None = None


@dataclass(frozen=True)
class Table:
    caption: str
    header: Sequence[str]
    rows: Sequence[Sequence[Cell]]


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    how_to_read: str
    marts: Sequence[str]
    chart: dict[str, Any] | None = None
    tables: Sequence[Table] = field(default_factory=tuple)
    empty: str | None = None

    def drawn(self, chart: dict[str, Any] | None, *tables: Table) -> Section:
        """This heading with what the marts gave it: a chart (or none) and its tables."""
        return replace(self, chart=chart, tables=tables)

    def left_empty(self, message: str) -> Section:
        """This heading with no chart or table, only `message` saying why."""
        return replace(self, chart=None, tables=(), empty=message)


def write_page(output: Path, sections: Sequence[Section], *, generated_at: datetime) -> None:
    """Replace `output` whole (its folder is created): a reader never sees half a page."""
    with replaced_atomically(output) as (temporary,):
        temporary.write_text(render(sections, generated_at=generated_at), encoding="utf-8")


def render(sections: Sequence[Section], *, generated_at: datetime) -> str:
    charts = [section.key for section in sections if section.chart is not None]
    contents = "".join(
        f'<li><a href="#{html.escape(section.key)}">{html.escape(section.title)}</a></li>' for section in sections
    )
    body = "\n".join(_render_section(section) for section in sections)
    script = (
        "const charts = " + _script_json(charts) + ";\n"
        "window.chartsRendered = Promise.all(charts.map((key) => {\n"
        "  const spec = JSON.parse(document.getElementById('spec-' + key).textContent);\n"
        "  return vegaEmbed('#chart-' + key, spec, {renderer: 'svg', actions: false});\n"
        "}));\n"
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GPU FinOps report</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1040px; color: #1d2430; padding: 0 1rem; }}
h1 {{ margin-bottom: 0.2rem; }}
section {{ margin: 2.5rem 0; }}
p.how {{ background: #f3f6fa; padding: 0.6rem 0.8rem; border-left: 4px solid #4c78a8; }}
p.source, p.generated {{ color: #5b6675; font-size: 0.9rem; }}
p.empty {{ font-style: italic; color: #8a5a00; }}
table {{ border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }}
caption {{ text-align: left; font-weight: 600; padding-bottom: 0.3rem; }}
th, td {{ border-bottom: 1px solid #dde3ea; padding: 0.3rem 0.6rem; text-align: left; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }}
</style>
<script>
{_vega_bundle()}
</script>
</head>
<body>
<h1>GPU FinOps report</h1>
<p class="generated">Generated {html.escape(generated_at.strftime("%Y-%m-%d %H:%M UTC"))} from the warehouse's marts.
Amounts in tables are exact to the cent; charts round them for drawing. Effective cost is what was paid after
discounts, with commitment fees spread over the hours they covered.</p>
<ol>{contents}</ol>
{body}
<script>
{script}</script>
</body>
</html>
"""


def _render_section(section: Section) -> str:
    marts = ", ".join(f"<code>{html.escape(mart if '.' in mart else f'marts.{mart}')}</code>" for mart in section.marts)
    parts = [
        f'<section id="{html.escape(section.key)}">',
        f"<h2>{html.escape(section.title)}</h2>",
        f'<p class="how"><strong>How to read this.</strong> {html.escape(section.how_to_read)}</p>',
        f'<p class="source">From {marts}.</p>',
    ]
    if section.empty is not None:
        parts.append(f'<p class="empty">{html.escape(section.empty)}</p>')
    if section.chart is not None:
        key = html.escape(section.key)
        parts.append(
            f'<div class="chart" id="chart-{key}"></div>'
            f'<script type="application/json" id="spec-{key}">{_script_json(section.chart)}</script>'
        )
    parts.extend(_render_table(table) for table in section.tables)
    parts.append("</section>")
    return "\n".join(parts)


def _render_table(table: Table) -> str:
    head = "".join(f"<th>{html.escape(name)}</th>" for name in table.header)
    body = []
    for row in table.rows:
        cells = []
        for cell in row:
            exact = (
                f' data-exact="{html.escape(format(cell.exact, "f"))}" class="num"' if cell.exact is not None else ""
            )
            cells.append(f"<td{exact}>{html.escape(cell.text)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (
        f"<table><caption>{html.escape(table.caption)}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _script_json(value: Any) -> str:
    """JSON that is safe inside <script>: no text in it can end the element or open a comment."""
    text = json.dumps(value, separators=(",", ":"), default=_json_default)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, date | datetime):
        return value.isoformat()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def _vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script (from vl-convert, so no network is needed)."""
    import vl_convert
    from altair.utils._importers import vl_version_for_vl_convert

    bundle = vl_convert.javascript_bundle(vl_version=vl_version_for_vl_convert())
    return bundle.replace("</script", "<\\/script")
