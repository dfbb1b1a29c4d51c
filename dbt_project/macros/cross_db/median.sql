{#-
    The median of a DECIMAL(38, 12) expression as an aggregate, as DECIMAL(38, 12): the middle value, or
    between two middle values the lower one plus half their difference rounded down (DuckDB's exact
    interpolation of decimals).
-#}
{% macro median(expression) -%}
    {{ return(adapter.dispatch('median', 'gpu_finops')(expression)) }}
{%- endmacro %}

{#- DuckDB: standard SQL's ordered-set aggregate keeps decimals decimal. -#}
{% macro duckdb__median(expression) -%}
    percentile_cont(0.5) within group (order by {{ expression }})
{%- endmacro %}

{#-
    Spark: percentile_cont returns a DOUBLE, so the middle values are picked from the sorted list of
    values. The difference is taken in DECIMAL(29, 12) (prices below 10^17) so that Spark keeps every digit
    of its half whether or not spark.sql.decimalOperations.allowPrecisionLoss is on.
-#}
{% macro spark__median(expression) -%}
    {%- set low = "element_at(sorted, cast((size(sorted) + 1) div 2 as int))" -%}
    {%- set high = "element_at(sorted, cast(size(sorted) div 2 + 1 as int))" -%}
    transform(
        array(array_sort(collect_list(cast({{ expression }} as decimal(38, 12))))),
        sorted -> case
            when size(sorted) > 0 then cast(
                cast({{ low }} as decimal(36, 12))
                + cast(floor((cast({{ high }} as decimal(29, 12)) - cast({{ low }} as decimal(29, 12))) / 2, 12) as decimal(36, 12))
                as decimal(38, 12)
            )
        end
    )[0]
{%- endmacro %}
