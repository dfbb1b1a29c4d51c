{#-
    One capture group of a regular expression match, or null when the text does not match.
    (DuckDB and Spark return '' on no match: this macro returns null.)
    Patterns use the syntax that RE2 (DuckDB) and Java (Spark) share: no backreferences, no lookaround.

    regexp_extract_group("x_UsageType", '^(BoxUsage|SpotUsage):(.+)$', 2)  ->  'p5.48xlarge'
-#}
{#- Both engines spell the call alike; only the string literal's escaping differs (dbt.escape_single_quotes). -#}
{% macro regexp_extract_group(text, pattern, group) -%}
    nullif(regexp_extract({{ text }}, '{{ dbt.escape_single_quotes(pattern) }}', {{ group }}), '')
{%- endmacro %}
