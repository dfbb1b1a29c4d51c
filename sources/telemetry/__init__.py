"""GPU utilization telemetry: DCGM metrics through Prometheus, and nvidia-smi CSV logs, as one long frame."""
