"""The DuckDB warehouse: connections, transactional loads with their audit trail, the raw tables dbt reads."""
