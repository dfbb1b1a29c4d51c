"""Training jobs from the schedulers that ran them: Slurm `sacct` exports and SkyPilot `sky cost-report` captures."""
