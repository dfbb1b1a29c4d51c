"""Loading deliveries: the billing source registry, the landing zone and quarantine, the ingest run, telemetry loads."""
