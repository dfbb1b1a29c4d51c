{#-
    DuckDB override of dbt's cross-database `dbt.safe_cast`: dbt-duckdb falls back to a plain `cast`,
    which stops the whole build on one malformed value (for example a GpuCount of "N/A"). `try_cast`
    returns null instead, as `safe_cast` does on the engines that have it. dbt finds this macro because
    dbt_project.yml puts this project first in the search order of the `dbt` macro namespace.
-#}
{% macro duckdb__safe_cast(field, type) -%}
    try_cast({{ field }} as {{ type }})
{%- endmacro %}
