"""The scaling curve of `make bench`: wall time and peak memory of each phase against N, with DuckDB's own load beside.

Drawn from the benchmark's JSON (docs/benchmarks.json), never from a separate measurement, so the picture in
docs/scaling.md and the tables in docs/benchmarks.md always show the same run. `python -m bench.curve` redraws it;
`bench.run` redraws it after every size it finishes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import altair as alt

from pipelines.lib.settings import PROJECT_ROOT

DEFAULT_JSON = PROJECT_ROOT / "docs" / "benchmarks.json"
DEFAULT_PNG = PROJECT_ROOT / "docs" / "benchmarks-scaling.png"
SERIES = {
    "(a) DuckDB's own load (baseline)": ("baseline",),
    "(b) ingest": ("ingest",),
    "(b) + (c) ingest and full dbt build": ("ingest", "transform"),
    "(d) daily run (ingest + dbt)": ("daily_ingest", "daily_transform"),
}
"""Each line of the curve and the phases whose wall seconds it sums; peak memory is the largest of those phases'."""


def curve_points(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One point per (N, line): the line's wall seconds and the peak resident memory of its phases' process tree."""
    points = []
    for run in sorted(report["runs"], key=lambda run: run["rows"]):
        for series, names in SERIES.items():
            phases = [run["phases"][name] for name in names if name in run["phases"]]
            if len(phases) != len(names):
                continue
            points.append(
                {
                    "rows": run["rows"],
                    "series": series,
                    "seconds": round(sum(phase["seconds"] for phase in phases), 1),
                    "peak_gb": round(max(phase["peak_rss_bytes"] for phase in phases) / 1e9, 2),
                }
            )
    return points


def curve_spec(report: dict[str, Any], *, memory_target_gb: float) -> dict[str, Any]:
    """Two panels side by side, N on a log axis in both: wall seconds (log) and peak memory with its target."""
    points = curve_points(report)
    data = alt.Data(values=points)
    sizes = [point["rows"] for point in points] or [1]
    domain = [min(sizes) / 1.25, max(sizes) * 1.25]
    rows = alt.X(
        "rows:Q",
        title="CUR 2.0 line items (N)",
        scale=alt.Scale(type="log", domain=domain, nice=False),
        axis=alt.Axis(format=".2~s", values=sorted(set(sizes))),
    )
    color = alt.Color("series:N", title="", sort=list(SERIES), legend=alt.Legend(orient="bottom", columns=2))
    seconds = (
        alt.Chart(data, title="Wall time")
        .mark_line(point=True)
        .encode(x=rows, y=alt.Y("seconds:Q", title="seconds", scale=alt.Scale(type="log")), color=color)
    )
    memory = alt.Chart(data, title="Peak memory of each phase's process tree").mark_line(point=True)
    memory = memory.encode(x=rows, y=alt.Y("peak_gb:Q", title="GB", scale=alt.Scale(zero=True)), color=color)
    target = (
        alt.Chart(alt.Data(values=[{"target": memory_target_gb, "label": f"target {memory_target_gb:g} GB"}]))
        .mark_rule(strokeDash=[4, 4], color="#d62728")
        .encode(y="target:Q")
    )
    label = target.mark_text(align="left", dx=4, dy=-6, color="#d62728").encode(x=alt.value(0), text="label:N")
    machine = report["machine"]
    subtitle = (
        f"{machine['cores']} cores, {machine['memory_gb']} GB; dbt on {machine.get('engine', 'duckdb')}; "
        f"finished {report.get('finished', '?')}"
    )
    chart = alt.hconcat(
        seconds.properties(width=360, height=260),
        alt.layer(memory, target, label).properties(width=360, height=260),
        title=alt.TitleParams("make bench: cost against N", subtitle=subtitle),
    )
    return chart.to_dict()


def write_curve(report: dict[str, Any], png: Path, *, memory_target_gb: float) -> Path:
    """Render the curve to PNG with vl-convert (bundled Vega, no network)."""
    import vl_convert

    png.parent.mkdir(parents=True, exist_ok=True)
    png.write_bytes(vl_convert.vegalite_to_png(curve_spec(report, memory_target_gb=memory_target_gb), scale=2))
    return png


def main(argv: list[str] | None = None) -> int:
    from bench.run import TARGETS

    parser = argparse.ArgumentParser(prog="python -m bench.curve", description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="the benchmark's results")
    parser.add_argument("--png", type=Path, default=DEFAULT_PNG, help="where the picture goes")
    args = parser.parse_args(argv)
    report = json.loads(args.json.read_text(encoding="utf-8"))
    print(write_curve(report, args.png, memory_target_gb=TARGETS["peak_rss_gb"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
