{#-
    For the daily marts built incrementally from int_billing__cost_lines: the billing periods whose cost lines
    were rebuilt (x_built_at) after this table last summed them (its cost_lines_built_at), or are new to it.
    Used as `where BillingPeriodStart in ({{ billing_periods_to_rebuild() }})`.
-#}
{% macro billing_periods_to_rebuild() %}
    select lines.BillingPeriodStart
    from (
        select BillingPeriodStart, max(x_built_at) as built_at
        from {{ ref('int_billing__cost_lines') }}
        group by BillingPeriodStart
    ) as lines
    left join (
        select billing_period_start, max(cost_lines_built_at) as built_at
        from {{ this }}
        group by billing_period_start
    ) as summed
        on cast(lines.BillingPeriodStart as timestamp) = summed.billing_period_start
    where summed.built_at is null or lines.built_at > summed.built_at
{% endmacro %}
