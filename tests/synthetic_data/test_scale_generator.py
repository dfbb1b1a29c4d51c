"""The `--rows N` generator: exact row counts per billing period, deterministic, accepted by the real readers."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from sources.aws import parse_cur_delivery
from sources.azure import parse_actual_cost_delivery
from sources.common.delivery import Delivery
from sources.focus import parse_focus_delivery
from synthetic_data import scale
from synthetic_data.cli.scale import main
from synthetic_data.scale import write_azure, write_cur2, write_focus


def _parquet_rows(path: Path) -> list[dict]:
    return [row for file in sorted(path.rglob("*.parquet")) for row in pq.read_table(file).to_pylist()]


def test_rows_split_by_billing_period_and_parts(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(scale, "ROWS_PER_PART", 1000)
    # 3,100 rows over 31 days from 20 January: 100 a day; 12 January days, 19 February days.
    written = write_cur2(tmp_path, rows=3100, seed=5, start=date(2026, 1, 20), days=31)
    assert [(w.billing_period, w.rows) for w in written] == [("2026-01", 1200), ("2026-02", 1900)]
    february = written[1].path
    parts = sorted(p.name for p in february.rglob("*.parquet"))
    assert parts == ["bench-cur2-00001.snappy.parquet", "bench-cur2-00002.snappy.parquet"]
    manifest = next(february.rglob("*-Manifest.json")).read_text()
    assert all(part in manifest for part in parts)
    rows = _parquet_rows(february)
    assert len(rows) == 1900
    assert {row["line_item_usage_start_date"].date() for row in rows} == {date(2026, 2, day) for day in range(1, 20)}


def test_same_seed_same_rows_and_the_next_day_redelivers_the_month(tmp_path: Path):
    first = write_cur2(tmp_path / "a", rows=2000, seed=9, start=date(2026, 3, 1), days=10)
    again = write_cur2(tmp_path / "b", rows=2000, seed=9, start=date(2026, 3, 1), days=10)
    other = write_cur2(tmp_path / "c", rows=2000, seed=10, start=date(2026, 3, 1), days=10)
    nextday = write_cur2(tmp_path / "d", rows=2200, seed=9, start=date(2026, 3, 1), days=11, last_month_only=True)
    rows = _parquet_rows(first[0].path)
    assert rows == _parquet_rows(again[0].path)
    assert rows != _parquet_rows(other[0].path)
    redelivered = _parquet_rows(nextday[0].path)
    # The month to date again: the same 2,000 lines, then 200 lines of 11 March.
    assert redelivered[:2000] == rows
    assert {row["line_item_usage_start_date"].date() for row in redelivered[2000:]} == {date(2026, 3, 11)}


def test_every_format_parses_and_the_same_rows_cost_the_same(tmp_path: Path):
    kwargs = {"rows": 6000, "seed": 3, "start": date(2026, 5, 1), "days": 30}
    cur = write_cur2(tmp_path, **kwargs)[0]
    focus = write_focus(tmp_path, **kwargs)[0]
    azure = write_azure(tmp_path, **kwargs)[0]

    cur_frame = parse_cur_delivery(Delivery("aws_cur", cur.path, cur.path.parent)).to_polars()
    focus_frame = parse_focus_delivery(Delivery("focus", focus.path, focus.path.parent)).to_polars()
    azure_frame = parse_actual_cost_delivery(Delivery("azure_actual", azure.path, azure.path.parent)).frame
    assert cur_frame.height == focus_frame.height == azure_frame.height == 6000

    # Summed from the files with Python's Decimal, independently of the readers.
    expected = sum((Decimal(repr(row["line_item_unblended_cost"])) for row in _parquet_rows(cur.path)), Decimal(0))
    assert cur_frame["line_item_unblended_cost"].sum() == expected
    assert focus_frame["BilledCost"].sum() == expected
    assert azure_frame["CostInBillingCurrency"].sum() == expected

    # About 12% of lines are GPU instance-hours, and they carry most of the cost.
    gpu = cur_frame.filter(pl.col("product_instance_type").is_in([name for name, _, _ in scale.GPU_TYPES]))
    assert 0.10 < gpu.height / 6000 < 0.14
    assert gpu["line_item_unblended_cost"].sum() > expected / 2


def test_command_line(tmp_path: Path, capsys):
    assert main(["--rows", "400", "--days", "4", "--out", str(tmp_path), "--formats", "cur2,azure"]) == 0
    lines = capsys.readouterr().out.splitlines()
    expected = [["aws_cur", "2026-01", "400"], ["azure_actual", "2026-01", "400"]]
    assert [line.split("\t")[:3] for line in lines] == expected
    with pytest.raises(ValueError, match="unknown format"):
        main(["--rows", "400", "--days", "4", "--out", str(tmp_path), "--formats", "gcp"])


def test_gpu_finops_generate(tmp_path: Path, monkeypatch, capsys):
    from pipelines.cli import main as gpu_finops

    monkeypatch.setenv("FINOPS_HOME", str(tmp_path / "home"))
    out = tmp_path / "out"
    assert gpu_finops(["generate", "--rows", "620", "--days", "31", "--start", "2026-07-01", "--out", str(out)]) == 0
    lines = [line.split("\t")[:3] for line in capsys.readouterr().out.splitlines()]
    assert lines == [["aws_cur", "2026-07", "620"], ["focus", "2026-07", "620"], ["azure_actual", "2026-07", "620"]]
    assert (out / "azure" / "azure-actual-cost-2026-07.csv").read_text().count("\n") == 621
