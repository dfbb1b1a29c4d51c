"""Azure Cost Management exports: ActualCost and AmortizedCost (EA, MCA) share one parser."""

from sources.azure.cost_details import (
    parse_actual_cost_delivery,
    parse_amortized_cost_delivery,
    parse_cost_details_delivery,
    read_cost_details_file,
)

__all__ = [
    "parse_actual_cost_delivery",
    "parse_amortized_cost_delivery",
    "parse_cost_details_delivery",
    "read_cost_details_file",
]
