{#-
    Every calendar day from `bounds`.first_day through first_day + `bounds`.day_count, as a column
    named `day_column`: the date spine that forward-filled daily models (exchange rates, prices in
    effect) join their sparse observations to. `bounds` is a one-row relation (a CTE's name or a
    parenthesised subquery) with first_day (date) and day_count (integer); `max_days` caps the series
    (20,000 days is over 50 years).
-#}
{% macro calendar_days(bounds, day_column, max_days=20000) -%}
    select cast({{ dbt.dateadd('day', 'day_numbers.generated_number - 1', 'day_bounds.first_day') }} as date)
        as {{ day_column }}
    from ({{ dbt.generate_series(max_days) }}) as day_numbers
    cross join {{ bounds }} as day_bounds
    where day_numbers.generated_number - 1 <= day_bounds.day_count
{%- endmacro %}
