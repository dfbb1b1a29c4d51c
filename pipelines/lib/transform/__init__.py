"""The dbt project as Dagster assets: the project and translator, which assets a run builds, `audit.builds`."""
