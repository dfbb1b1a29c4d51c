"""Running it: schedule and sensor decisions, signals, feed outages, crash recovery, the tests' pause hook."""
