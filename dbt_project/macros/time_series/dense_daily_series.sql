{#-
    Every series of `daily` (its distinct `keys`) on every day from the first to the last charge_date of `daily`,
    with `value_column` from `daily` or 0 on days without a row: the gap-free daily series that rolling baselines
    and run rates are computed over, so a day without spend counts as a day of 0 and not as a missing one.
-#}
{% macro dense_daily_series(daily, keys, value_column) -%}
    {%- set bounds -%}
        (
            select
                min(charge_date) as first_day,
                {{ dbt.datediff('min(charge_date)', 'max(charge_date)', 'day') }} as day_count
            from {{ daily }}
        )
    {%- endset %}
    select
        {% for key in keys %}series.{{ key }}, {% endfor %}calendar.charge_date,
        coalesce({{ daily }}.{{ value_column }}, 0) as {{ value_column }}
    from (select distinct {{ keys | join(', ') }} from {{ daily }}) as series
    cross join ({{ calendar_days(bounds, 'charge_date') }}) as calendar
    left join {{ daily }}
        on {{ keys_match('series', daily, keys) }} and calendar.charge_date = {{ daily }}.charge_date
{%- endmacro %}
