"""Oracle Cloud Infrastructure cost reports."""

from sources.oci.cost_report import output_schema, parse_cost_report_delivery, read_cost_report

__all__ = ["output_schema", "parse_cost_report_delivery", "read_cost_report"]
