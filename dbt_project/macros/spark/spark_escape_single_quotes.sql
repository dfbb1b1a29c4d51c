{#-
    Text as the inside of a Spark string literal. Spark reads a backslash in a literal as an escape
    character, so dbt-spark's version (apostrophes only) turns a unit test fixture's `{\"a\": 1}` into
    `{"a": 1}` and a seed's `C:\path` into `C:path`: double the backslashes first. dbt's dispatch order
    (dbt_project.yml) picks this up for unit test fixtures, comments and the seed loader.
-#}
{% macro spark__escape_single_quotes(expression) -%}
    {{- expression | replace("\\", "\\\\") | replace("'", "\\'") -}}
{%- endmacro %}
