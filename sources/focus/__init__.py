"""FOCUS (FinOps Open Cost and Usage Specification) billing files."""

from sources.focus.deliveries import parse_focus_delivery, read_focus_file, read_focus_files
from sources.focus.reader import FocusFile, detect_focus_version

__all__ = ["FocusFile", "detect_focus_version", "parse_focus_delivery", "read_focus_file", "read_focus_files"]
