{#-
    One capture group of a regular expression match, or null when the text does not match.
    (DuckDB and Spark return '' on no match: this macro returns null.)
    Patterns use the syntax that RE2 (DuckDB) and Java (Spark) share: no backreferences, no lookaround.

    regexp_extract_group("x_UsageType", '^(BoxUsage|SpotUsage):(.+)$', 2)  ->  'p5.48xlarge'
-#}
{% macro regexp_extract_group(text, pattern, group) -%}
    {{ return(adapter.dispatch('regexp_extract_group', 'gpu_finops')(text, pattern, group)) }}
{%- endmacro %}

{% macro default__regexp_extract_group(text, pattern, group) -%}
    nullif(regexp_extract({{ text }}, '{{ pattern | replace("'", "''") }}', {{ group }}), '')
{%- endmacro %}

{% macro duckdb__regexp_extract_group(text, pattern, group) -%}
    {{ gpu_finops.default__regexp_extract_group(text, pattern, group) }}
{%- endmacro %}

{#- Spark string literals treat backslash as an escape character: double it. -#}
{% macro spark__regexp_extract_group(text, pattern, group) -%}
    nullif(regexp_extract({{ text }}, '{{ pattern | replace("\\", "\\\\") | replace("'", "\\'") }}', {{ group }}), '')
{%- endmacro %}
