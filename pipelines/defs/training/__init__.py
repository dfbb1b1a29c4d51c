"""Training jobs as assets: Slurm sacct exports and SkyPilot cost reports from the landing zone."""
