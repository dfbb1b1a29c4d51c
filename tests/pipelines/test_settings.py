"""`Settings.from_environment`: the telemetry settings read at the edge, their defaults, and a bad value refused
naming the variable before any asset runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.lib.settings import Settings


def test_telemetry_settings_are_read_from_the_environment_with_their_defaults(tmp_path: Path):
    defaults = Settings.from_environment({"FINOPS_HOME": str(tmp_path)})
    assert (defaults.prometheus_step_seconds, defaults.nvidia_smi_timezone, defaults.slurm_timezone) == (
        60,
        "UTC",
        "UTC",
    )
    given = Settings.from_environment(
        {
            "FINOPS_HOME": str(tmp_path),
            "FINOPS_PROMETHEUS_STEP_SECONDS": " 900 ",
            "FINOPS_NVIDIA_SMI_TIMEZONE": "Europe/Berlin",
            "FINOPS_SLURM_TIMEZONE": "America/Chicago",
        }
    )
    assert (given.prometheus_step_seconds, given.nvidia_smi_timezone) == (900, "Europe/Berlin")
    assert given.slurm_timezone == "America/Chicago"
    # the reader's own rule: polars also reads lower-case utc and fixed offsets
    for zone in ("utc", "+01:00"):
        assert Settings.from_environment({"FINOPS_NVIDIA_SMI_TIMEZONE": zone}).nvidia_smi_timezone == zone


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("FINOPS_PROMETHEUS_STEP_SECONDS", "1m", "FINOPS_PROMETHEUS_STEP_SECONDS='1m' is not a query step"),
        ("FINOPS_PROMETHEUS_STEP_SECONDS", "0", "FINOPS_PROMETHEUS_STEP_SECONDS=0 is not a query step"),
        ("FINOPS_PROMETHEUS_STEP_SECONDS", "86401", "whole number of seconds from 1 to 86400"),
        ("FINOPS_NVIDIA_SMI_TIMEZONE", "Mars/Olympus_Mons", "'Mars/Olympus_Mons' is not a time zone"),
        ("FINOPS_SLURM_TIMEZONE", "Moon/Tycho", "FINOPS_SLURM_TIMEZONE='Moon/Tycho' is not a time zone"),
    ],
)
def test_a_bad_telemetry_setting_is_refused_naming_the_variable(tmp_path: Path, variable, value, message):
    with pytest.raises(ValueError, match=message):
        Settings.from_environment({"FINOPS_HOME": str(tmp_path), variable: value})
