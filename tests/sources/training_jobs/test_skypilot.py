"""The `sky cost-report` reader on a capture of the table SkyPilot prints, and on broken ones."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from sources.common.errors import RejectedInput
from sources.training_jobs.skypilot import read_cost_report
from tests.support import FIXTURES_ROOT

CAPTURE = FIXTURES_ROOT / "training_jobs" / "sky-cost-report__1792497600.txt"
PRINTED = datetime(2026, 10, 20, 12)
HEADER = "NAME      LAUNCHED    DURATION   RESOURCES                          STATUS      HOURLY_PRICE  COST     "
ROW = "train-a   2 days ago  3h 0m 0s   1x Lambda(gpu_8x_h100, {'H100': 8})  TERMINATED  $ 23.92       $ 71.76  "


def test_every_cluster_is_read_with_its_launch_duration_resources_and_prices():
    frame = read_cost_report(CAPTURE)
    rows = {row["cluster_name"]: row for row in frame.iter_rows(named=True)}
    assert list(rows) == ["ft-llama-8b", "serve-test", "cpu-dev"]
    llama = rows["ft-llama-8b"]
    assert llama["launched_at"] == PRINTED - timedelta(days=3) and llama["launched_precision"] == "day"
    assert llama["duration_seconds"] == 7 * 3600 + 30 * 60
    assert (llama["node_count"], llama["cloud"], llama["instance_type"]) == (2, "AWS", "p4d.24xlarge")
    assert (llama["accelerator"], llama["accelerators_per_node"]) == ("A100", Decimal(8))
    assert (llama["hourly_price"], llama["cost"], llama["currency"]) == (Decimal("65.55"), Decimal("491.59"), "USD")
    assert llama["status"] == "TERMINATED"  # the ANSI colour codes are gone, the columns still line up
    assert rows["serve-test"]["launched_at"] == PRINTED - timedelta(hours=2)
    assert rows["cpu-dev"]["duration_seconds"] == 2 * 86400 + 3 * 3600
    assert (rows["cpu-dev"]["accelerator"], rows["cpu-dev"]["accelerators_per_node"]) == (None, Decimal(0))
    assert llama["source_row"] == 3


def test_the_other_spelling_of_the_price_columns_is_read(tmp_path: Path):
    path = tmp_path / "report__1792497600.txt"
    path.write_text(f"{HEADER}\n{ROW}\n", encoding="utf-8")
    (row,) = read_cost_report(path).iter_rows(named=True)
    assert (row["hourly_price"], row["cost"], row["accelerators_per_node"]) == (Decimal("23.92"), Decimal("71.76"), 8)


def test_a_relative_launch_without_the_capture_time_is_rejected(tmp_path: Path):
    path = tmp_path / "report.txt"
    path.write_text(f"{HEADER}\n{ROW}\n", encoding="utf-8")
    with pytest.raises(RejectedInput) as raised:
        read_cost_report(path)
    assert (raised.value.row, raised.value.column) == (2, "LAUNCHED")
    assert "<unix seconds>" in raised.value.reason


@pytest.mark.parametrize(
    ("row", "column", "message"),
    [
        (ROW.replace("$ 71.76", "$ 7x.76"), "COST (est.)", "is not a dollar amount"),
        (ROW.replace("3h 0m 0s", "3 hours!"), "DURATION", "is not a SkyPilot duration"),
        (ROW.replace("2 days ago", "last week"), "LAUNCHED", "relative time"),
        (ROW.replace("1x Lambda", "one Lambda"), "RESOURCES", "is not <nodes>x <Cloud>"),
    ],
)
def test_a_bad_value_rejects_the_file_naming_row_and_column(tmp_path: Path, row: str, column: str, message: str):
    path = tmp_path / "report__1792497600.txt"
    path.write_text(f"Clusters\n{HEADER}\n{ROW.replace('train-a', 'train-b')}\n{row}\n", encoding="utf-8")
    with pytest.raises(RejectedInput) as raised:
        read_cost_report(path, name="landing/skypilot_cost_report/report__1792497600.txt")
    error = raised.value
    assert (error.file, error.row, error.column) == ("landing/skypilot_cost_report/report__1792497600.txt", 4, column)
    assert message in error.reason


def test_a_file_without_the_table_is_rejected(tmp_path: Path):
    path = tmp_path / "report__1792497600.txt"
    path.write_text("No existing clusters.\n", encoding="utf-8")
    with pytest.raises(RejectedInput, match="no `sky cost-report` table"):
        read_cost_report(path)
