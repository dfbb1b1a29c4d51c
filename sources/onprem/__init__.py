"""Owned (on-premises) GPU servers: the asset inventory from which their daily cost is computed."""

from sources.onprem.assets import output_schema, parse_onprem_gpu_assets, read_inventory_file

__all__ = ["output_schema", "parse_onprem_gpu_assets", "read_inventory_file"]
