"""Specialized GPU clouds (Lambda, CoreWeave, RunPod, Vast.ai, …) in the project's GPU cloud usage CSV layout."""

from sources.gpu_clouds.usage import output_schema, parse_gpu_cloud_usage, read_usage_file

__all__ = ["output_schema", "parse_gpu_cloud_usage", "read_usage_file"]
