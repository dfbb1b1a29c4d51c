"""Run the FinOps Foundation's FOCUS validator on an exported file and read its verdict rule by rule.

The validator (PyPI `focus-validator`, rules model 1.2.0.1) needs Python 3.12, so it lives in its own
virtualenv, `.venv/focus-validator`, which `make install` creates (override the place with the
environment variable FOCUS_VALIDATOR_VENV). It opens its currency list by a relative path, so it runs
with its site-packages folder as working directory, offline (`--block-download`), and writes a JUnit
XML report that is parsed here; its exit code does not reflect failed rules.

A few rules of the 1.2.0.1 model fail on every dataset however correct, because of defects in the
rules model or the validator reported upstream (KNOWN_RULE_DEFECTS), and one recommendation cannot be
met from what the sources deliver (ACCEPTED_GAPS). Their failures come back as `waived`, with the
reason, never silently as passed; a composite rule that fails only because such a rule failed is
waived with it. Everything else that fails is in `failed`.

Not everything can be left to the validator: its allowed-values rules (ChargeCategory-C-003-M,
ServiceCategory-C-003-M, ...) pass as soon as one line has an allowed value, so one bad value among
good ones goes unreported, and it skips the SkuPriceDetails key rules. The dbt tests and unit tests of
marts.focus_cost_and_usage check those.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from pipelines.lib.settings import PROJECT_ROOT

RULES_VERSION = "1.2.0.1"
VENV_ENV = "FOCUS_VALIDATOR_VENV"
DEFAULT_VENV = PROJECT_ROOT / ".venv" / "focus-validator"
TIMEOUT_SECONDS = 900

SUPPORTED_CRITERIA = (
    "AVAILABILITY_ZONE_SUPPORTED",
    "CAPACITY_RESERVATION_SUPPORTED",
    "COMMITMENT_DISCOUNT_SUPPORTED",
    "MULTIPLE_BILLING_ACCOUNT_TYPES_SUPPORTED",
    "MULTIPLE_PRICING_CATEGORIES_SUPPORTED",
    "MULTIPLE_SUB_ACCOUNT_TYPES_SUPPORTED",
    "NEGOTIATED_PRICING_SUPPORTED",
    "PRICING_BILLING_CURRENCY_DIFFERENCES_SUPPORTED",
    "PUBLIC_PRICE_LIST_SUPPORTED",
    "SUB_ACCOUNT_SUPPORTED",
    "TAGGING_SUPPORTED",
    "UNIT_PRICING_SUPPORTED",
    "USAGE_MEASUREMENT_SUPPORTED",
)
"""Applicability criteria for a stricter run, met by the FOCUS and OCI sample data the tests load:
without criteria (the default) the validator skips the rules of the conditional columns (commitments,
account types, pricing currency, SKU prices...). Left out: VIRTUAL_CURRENCY_SUPPORTED (no source bills
in tokens or credits) and three that OCI cost report lines do not meet yet:
ACCOUNT_NAMING_SUPPORTED (no BillingAccountName), REGION_SUPPORTED (RegionId without RegionName),
BILLING_BASED_ON_PROVISIONED_RESOURCES_SUPPORTED with RESOURCE_TYPE_ASSIGNMENT_SUPPORTED (resources
whose OCID type is unknown have no ResourceType)."""

KNOWN_RULE_DEFECTS: Mapping[str, str] = {
    "InvoiceId-C-004-C": (
        "'MUST be null when the charge is not associated with an invoice' is encoded without its condition, "
        "so it fails on every line that has an InvoiceId (FOCUS_Spec#2394)"
    ),
    "InvoiceId-C-005-C": (
        "'MUST NOT be null when the charge is associated with an invoice' is encoded without its condition, "
        "so it fails on every line without one, and a dataset mixing lines with and without an InvoiceId "
        "fails both rules (FOCUS_Spec#2394); lines from sources that deliver no InvoiceId (FOCUS 1.0 and "
        "1.1 files) keep it null, as the export cannot know it"
    ),
    "CommitmentDiscountStatus-C-004-C": (
        "its condition is inverted: it demands a status where CommitmentDiscountId IS null, contradicting "
        "CommitmentDiscountStatus-C-003-C (FOCUS_Spec#2393)"
    ),
    "CapacityReservationStatus-C-004-C": (
        "the validator drops its {'AND': [...]} condition and demands a status on every line, with or "
        "without a capacity reservation (focus_validator#142)"
    ),
}
"""Rules that fail on correct data, with the upstream report. Their requirements are checked by the
dbt tests of marts.focus_cost_and_usage instead, where the data allows (commitment status)."""

ACCEPTED_GAPS: Mapping[str, str] = {
    "SkuMeter-C-005-C": (
        "a recommendation (SHOULD): not every source delivers SkuMeter (FOCUS 1.0 files have no such column, "
        "some exports leave it empty) and it cannot be derived"
    ),
}
"""Recommendations the export knowingly does not meet, and why."""


class ValidatorNotInstalled(FileNotFoundError):
    """The validator's virtualenv is missing: `make install` creates it."""


@dataclass(frozen=True)
class ValidationReport:
    """The validator's verdict on one file: rule id -> what the rule requires."""

    data_file: Path
    passed: dict[str, str]
    failed: dict[str, str]
    waived: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def checked(self) -> int:
        """Rules the validator actually evaluated on the data."""
        return len(self.passed) + len(self.failed) + len(self.waived)

    def summary(self) -> str:
        lines = [
            f"{self.data_file.name}: {len(self.passed)} rules passed, {len(self.failed)} failed, "
            f"{len(self.waived)} waived, {len(self.skipped)} skipped"
        ]
        lines += [f"  FAILED {rule}: {requirement}" for rule, requirement in sorted(self.failed.items())]
        lines += [f"  waived {rule}: {reason}" for rule, reason in sorted(self.waived.items())]
        return "\n".join(lines)


def assert_passes(report: ValidationReport, required: Iterable[str] = ()) -> None:
    """No rule failed, every rule in `required` was evaluated and passed, and only the listed defects and gaps,
    CSV type inference and composites failing through them were waived."""
    assert not report.failed, report.summary()
    missing = [rule for rule in required if rule not in report.passed]
    assert not missing, f"not evaluated or not passed: {missing}\n{report.summary()}"
    for rule, reason in report.waived.items():
        assert (
            rule in KNOWN_RULE_DEFECTS or rule in ACCEPTED_GAPS or reason.startswith(("fails only", "CSV has no types"))
        ), rule


def validate_focus_file(
    data_file: Path,
    *,
    applicability_criteria: Iterable[str] = (),
    accepted: Mapping[str, str] = ACCEPTED_GAPS,
    venv: Path | None = None,
) -> ValidationReport:
    """Validate a FOCUS 1.2 CSV or Parquet file against rules model 1.2.0.1.

    Without `applicability_criteria` the validator runs as `focus-validator --validate-version 1.2.0.1`
    does; pass SUPPORTED_CRITERIA to check the conditional columns too. `accepted` lists further rules
    (id -> reason) whose failure is waived, on top of KNOWN_RULE_DEFECTS.
    """
    site_packages = _site_packages(venv or Path(os.environ.get(VENV_ENV, DEFAULT_VENV)))
    model = json.loads((site_packages / "focus_validator" / "rules" / f"model-{RULES_VERSION}.json").read_text())
    rules = model["ModelRules"]
    criteria = ",".join(applicability_criteria)
    with tempfile.TemporaryDirectory(prefix="focus-validator-") as scratch:
        report_path = Path(scratch) / "report.xml"
        command = [
            str(site_packages.parents[2] / "bin" / "focus-validator"),
            *("--data-file", str(data_file.resolve())),
            *("--validate-version", RULES_VERSION),
            "--block-download",
            *("--output-type", "unittest"),
            *("--output-destination", str(report_path)),
            *(("--applicability-criteria", criteria) if criteria else ()),
        ]
        run = subprocess.run(
            command, cwd=site_packages, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, check=False
        )
        if run.returncode != 0 or not report_path.exists():
            raise RuntimeError(f"focus-validator failed on {data_file} (exit {run.returncode}):\n{run.stderr[-4000:]}")
        statuses = _statuses(report_path)
    waivers = {**KNOWN_RULE_DEFECTS, **accepted}
    if data_file.suffix.lower() == ".csv":
        waivers.update(_csv_inference_waivers(data_file, statuses, rules))
    return _report(data_file, statuses, rules, waivers)


def _csv_inference_waivers(data_file: Path, statuses: dict[str, str], rules: dict[str, dict]) -> dict[str, str]:
    """String-type rules that fail on a CSV only because every value of the column is a number.

    CSV has no types: the validator lets polars infer them, so a String column whose every value is
    digits (AWS account and invoice ids) reads as a number. Only such columns are waived; a String
    column with any other text that still fails its type rule stays failed.
    """
    failing_types: dict[str, str] = {}
    for rule, status in statuses.items():
        requirement = rules.get(rule, {}).get("ValidationCriteria", {}).get("Requirement", {})
        if status in ("failed", "errored") and requirement.get("CheckFunction") == "TypeString":
            failing_types[rule] = requirement["ColumnName"]
    if not failing_types:
        return {}
    columns = sorted(set(failing_types.values()))
    table = pa_csv.read_csv(
        data_file,
        convert_options=pa_csv.ConvertOptions(
            include_columns=columns, column_types=dict.fromkeys(columns, pa.string()), strings_can_be_null=True
        ),
    )
    numeric = {
        column
        for column in columns
        if table[column].null_count < len(table)
        and pc.all(pc.match_substring_regex(table[column].drop_null(), r"^-?[0-9]+(\.[0-9]+)?$")).as_py()
    }
    return {
        rule: f"CSV has no types: every {column} value is a number, which the validator reads as one"
        for rule, column in failing_types.items()
        if column in numeric
    }


def _site_packages(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python3*/site-packages/focus_validator"))
    if not found:
        raise ValidatorNotInstalled(f"the FOCUS validator is not installed in {venv}: run `make install`")
    return found[-1].parent


def _statuses(report_path: Path) -> dict[str, str]:
    """Rule id -> passed, failed, skipped or errored, from the JUnit XML report."""
    statuses: dict[str, str] = {}
    for case in ET.parse(report_path).getroot().iter("testcase"):
        rule = case.get("name", "").split(" :: ")[0]
        if case.find("failure") is not None:
            statuses[rule] = "failed"
        elif case.find("error") is not None:
            statuses[rule] = "errored"
        elif case.find("skipped") is not None:
            statuses[rule] = "skipped"
        else:
            statuses[rule] = "passed"
    return statuses


def _report(
    data_file: Path, statuses: dict[str, str], rules: dict[str, dict], waivers: Mapping[str, str]
) -> ValidationReport:
    def requirement(rule: str) -> str:
        return rules.get(rule, {}).get("ValidationCriteria", {}).get("MustSatisfy", "")

    failing = {rule for rule, status in statuses.items() if status in ("failed", "errored")}
    waived = {rule: waivers[rule] for rule in failing if rule in waivers}
    # A composite that fails only because waived rules failed is waived too (repeat up the tree).
    changed = True
    while changed:
        changed = False
        for rule in sorted(failing - waived.keys()):
            children = set(_referenced_rules(rules.get(rule, {}).get("ValidationCriteria", {}).get("Requirement")))
            failing_children = children & failing
            if failing_children and failing_children <= waived.keys():
                waived[rule] = f"fails only through waived rules {', '.join(sorted(failing_children))}"
                changed = True
    by_status = {
        status: {rule: requirement(rule) for rule, found in statuses.items() if found == status}
        for status in ("passed", "skipped")
    }
    return ValidationReport(
        data_file=data_file,
        passed=by_status["passed"],
        failed={rule: requirement(rule) for rule in sorted(failing - waived.keys())},
        waived=dict(sorted(waived.items())),
        skipped=by_status["skipped"],
    )


def _referenced_rules(requirement: object) -> Iterable[str]:
    """Rule ids a composite requirement refers to (CheckModelRule items, at any depth)."""
    if isinstance(requirement, dict):
        if requirement.get("CheckFunction") == "CheckModelRule" and "ModelRuleId" in requirement:
            yield requirement["ModelRuleId"]
        for value in requirement.values():
            yield from _referenced_rules(value)
    elif isinstance(requirement, list):
        for item in requirement:
            yield from _referenced_rules(item)
