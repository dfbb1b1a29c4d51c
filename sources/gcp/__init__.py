"""Google Cloud billing data: the Cloud Billing export to BigQuery, as extracted files."""

from sources.gcp.billing_export import output_schema, parse_billing_export_delivery, read_billing_export_file

__all__ = ["output_schema", "parse_billing_export_delivery", "read_billing_export_file"]
