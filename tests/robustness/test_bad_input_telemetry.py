"""Telemetry parsers under the billing parsers' hostile inputs: refused naming the file (and row), never half-read."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from sources.common.errors import RejectedInput
from sources.telemetry.nvidia_smi import read_nvidia_smi_log
from sources.telemetry.prometheus import PrometheusError, parse_query_range
from tests.support import FIXTURES_ROOT

FIXTURES = FIXTURES_ROOT / "telemetry"
GOOD_LOG = (FIXTURES / "nvidia-smi-node-a.csv").read_bytes()
GOOD_RANGE = (FIXTURES / "query_range_sm_active.json").read_bytes()
HEADER, FIRST, *REST = GOOD_LOG.decode().splitlines(keepends=True)


def _with_first_sample(cell_index: int, value: str) -> bytes:
    cells = FIRST.rstrip("\n").split(", ")
    cells[cell_index] = value
    return (HEADER + ", ".join(cells) + "\n" + "".join(REST)).encode()


NVIDIA_SMI_CASES = {
    "truncated_gzip": ("node-a.csv.gz", gzip.compress(GOOD_LOG, mtime=0)[:40], None),
    "header_only": ("node-a.csv", HEADER.encode(), None),
    "empty": ("node-a.csv", b"", 1),
    "wrong_delimiter": ("node-a.csv", GOOD_LOG.replace(b", ", b";"), 1),
    "utf16_spreadsheet_export": ("node-a.csv", GOOD_LOG.decode().encode("utf-16"), None),
    "binary_garbage": ("node-a.csv", bytes(range(256)) * 64, None),
    "ten_mb_field": ("node-a.csv", _with_first_sample(1, "x" * (10 * 1024 * 1024)), 2),
    "timestamp_not_a_time": ("node-a.csv", _with_first_sample(0, "yesterday-ish"), 2),
    "date_out_of_range": ("node-a.csv", _with_first_sample(0, "1970/01/01 00:00:00.000"), 2),
    "utilization_not_a_number": ("node-a.csv", _with_first_sample(3, "lots %"), 2),
}


@pytest.mark.parametrize("case", sorted(NVIDIA_SMI_CASES))
def test_nvidia_smi_parser_rejects_bad_logs_naming_the_file(tmp_path: Path, case: str):
    name, content, row = NVIDIA_SMI_CASES[case]
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(RejectedInput) as rejected:
        read_nvidia_smi_log(path)
    assert name in str(rejected.value)
    if row is not None:
        assert rejected.value.row == row, str(rejected.value)


PROMETHEUS_CASES = {
    "truncated_json": GOOD_RANGE[: len(GOOD_RANGE) // 2],
    "binary_garbage": bytes(range(256)) * 8,
    "html_error_page": b"<html><body>502 Bad Gateway</body></html>",
    "vector_not_matrix": b'{"status": "success", "data": {"resultType": "vector", "result": []}}',
    "changed_schema": b'{"status": "success", "data": {"resultType": "matrix", "series": []}}',
    "value_not_a_number": GOOD_RANGE.replace(b'"0.', b'"zero.', 1),
}


@pytest.mark.parametrize("case", sorted(PROMETHEUS_CASES))
def test_prometheus_parser_refuses_broken_answers_naming_the_query(case: str):
    with pytest.raises(PrometheusError) as refused:
        parse_query_range(
            PROMETHEUS_CASES[case],
            metric="DCGM_FI_PROF_SM_ACTIVE",
            query="avg_over_time(DCGM_FI_PROF_SM_ACTIVE[60s])",
            step_seconds=60,
            source_ref="recorded:sm_active",
        )
    assert "recorded:sm_active" in str(refused.value)
