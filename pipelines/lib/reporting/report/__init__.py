"""`gpu-finops report`: one self-contained HTML page of charts and tables that finance can open offline.

The numbers come from the marts over a read-only connection: every total, ratio, share and ranking is a dbt
reporting model (`marts.rpt_*`, models/marts/reporting), which the sections only select, format and draw, so
the CLI summary and ad-hoc SQL read the same figures. Charts are Vega-Lite specs built with Altair. Amounts stay
Decimal: tables and tooltips show them formatted from the exact value, and only chart coordinates are floats.

`assemble` puts the sections (one module each in `sections/`) in page order; `render` draws and writes the page;
`marts` and `formatting` are what the sections share.
"""

from pipelines.lib.reporting.report.assemble import REPORT_FILE, Report, write_report
from pipelines.lib.reporting.report.render import render

__all__ = ["REPORT_FILE", "Report", "render", "write_report"]
