"""Benchmark harness: DuckDB baseline vs the project's ingest and dbt build, at millions of CUR line items."""
