{#-
    Overrides of dbt's cross-database `dbt.safe_cast` (dbt finds them because dbt_project.yml puts this
    project first in the search order of the `dbt` macro namespace). dbt-duckdb and dbt-spark fall back
    to a plain `cast`, which stops the whole build on one malformed value (for example a GpuCount of
    "N/A", and on Spark with ANSI mode on). `try_cast` returns null instead, as `safe_cast` does on the
    engines that have it.
-#}
{% macro duckdb__safe_cast(field, type) -%}
    try_cast({{ field }} as {{ type }})
{%- endmacro %}

{% macro spark__safe_cast(field, type) -%}
    try_cast({{ field }} as {{ type }})
{%- endmacro %}
