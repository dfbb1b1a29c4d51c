{#-
    For the models built incrementally from int_billing__cost_lines by billing period: the billing periods
    whose cost lines were rebuilt (x_built_at) after this table last read them (its `built_at_column`), or
    are new to it. Used as `where BillingPeriodStart in ({{ billing_periods_to_rebuild() }})`.
-#}
{% macro billing_periods_to_rebuild(period_column='billing_period_start', built_at_column='cost_lines_built_at') %}
    select lines.BillingPeriodStart
    from (
        select BillingPeriodStart, max(x_built_at) as built_at
        from {{ ref('int_billing__cost_lines') }}
        group by BillingPeriodStart
    ) as lines
    left join (
        select {{ period_column }} as period_start, max({{ built_at_column }}) as built_at
        from {{ this }}
        group by {{ period_column }}
    ) as summed
        on cast(lines.BillingPeriodStart as timestamp) = summed.period_start
    where summed.built_at is null or lines.built_at > summed.built_at
{% endmacro %}
