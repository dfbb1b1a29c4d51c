{#-
    A 64-bit hash of a whole row of the relation aliased `alias`, every column included, so that a change to any
    column changes it. Summed over a month's rows it fingerprints them (int_gpu_usage__month_fingerprints).
    Deterministic within one engine version; an engine upgrade that changes it only makes every month look changed.
-#}
{% macro row_hash(alias) -%}
    {{ return(adapter.dispatch('row_hash', 'gpu_finops')(alias)) }}
{%- endmacro %}

{#- DuckDB: the alias is the row as a struct; hash() gives a UBIGINT. -#}
{% macro duckdb__row_hash(alias) -%}
    hash({{ alias }})
{%- endmacro %}

{#- Spark: xxhash64 over every column (a BIGINT). -#}
{% macro spark__row_hash(alias) -%}
    xxhash64({{ alias }}.*)
{%- endmacro %}
