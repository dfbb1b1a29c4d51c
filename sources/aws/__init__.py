"""AWS billing: Cost and Usage Report deliveries (CUR 2.0 and legacy CUR)."""

from sources.aws.cur import output_schema
from sources.aws.deliveries import parse_cur_delivery, read_cur_file

__all__ = ["output_schema", "parse_cur_delivery", "read_cur_file"]
