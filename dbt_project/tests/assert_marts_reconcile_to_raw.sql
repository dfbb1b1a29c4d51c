{#-
    Money must not be lost or invented between the loaded files and the marts. Per billing period
    and billing currency, compares the line count and the sums of BilledCost and EffectiveCost:
      raw FOCUS table = canonical cost lines from the FOCUS source,
      canonical cost lines (all sources) = fct_cost_daily,
      canonical GPU cost lines = fct_gpu_spend_daily.
    Returns one row per period, currency and check that differs; the comparison is exact.
-#}

{#- One totals query per side of a comparison: relation, period and currency columns, line count, filter. -#}
{%- set canonical = ('BillingPeriodStart', 'BillingCurrency', 'count(*)', 'BilledCost', 'EffectiveCost') -%}
{%- set mart = ('billing_period_start', 'billing_currency', 'sum(cost_line_count)', 'billed_cost', 'effective_cost') -%}
{%- set totals = [
    ('raw_focus', source('raw', 'focus_cost_and_usage'), canonical, 'true'),
    ('cost_lines_focus', ref('int_billing__cost_lines'), canonical, "x_source = 'focus'"),
    ('cost_lines_all', ref('int_billing__cost_lines'), canonical, 'true'),
    ('cost_lines_gpu', ref('int_billing__cost_lines'), canonical, 'x_gpu_model is not null'),
    ('cost_daily', ref('fct_cost_daily'), mart, 'true'),
    ('gpu_spend_daily', ref('fct_gpu_spend_daily'), mart, 'true'),
] -%}

with

{% for name, relation, columns, condition in totals -%}
{%- set period, currency, line_count, billed, effective = columns -%}
{{ name }} as (

    select
        {{ period }} as billing_period_start,
        {{ currency }} as billing_currency,
        {{ line_count }} as line_count,
        sum({{ billed }}) as billed_cost,
        sum({{ effective }}) as effective_cost
    from {{ relation }}
    where {{ condition }}
    group by {{ period }}, {{ currency }}

),

{% endfor -%}
{%- set comparisons = [
    ('raw focus table vs int_billing__cost_lines (focus)', 'raw_focus', 'cost_lines_focus'),
    ('int_billing__cost_lines vs fct_cost_daily', 'cost_lines_all', 'cost_daily'),
    ('int_billing__cost_lines (gpu) vs fct_gpu_spend_daily', 'cost_lines_gpu', 'gpu_spend_daily'),
] %}

compared as (

    {% for check, expected, actual in comparisons -%}
    select
        '{{ check }}' as check_name,
        coalesce(expected.billing_period_start, actual.billing_period_start) as billing_period_start,
        coalesce(expected.billing_currency, actual.billing_currency) as billing_currency,
        coalesce(expected.line_count, 0) as expected_line_count,
        coalesce(actual.line_count, 0) as actual_line_count,
        coalesce(expected.billed_cost, 0) as expected_billed_cost,
        coalesce(actual.billed_cost, 0) as actual_billed_cost,
        coalesce(expected.effective_cost, 0) as expected_effective_cost,
        coalesce(actual.effective_cost, 0) as actual_effective_cost
    from {{ expected }} as expected
    full outer join {{ actual }} as actual
        on expected.billing_period_start = actual.billing_period_start
        and expected.billing_currency = actual.billing_currency
    {% if not loop.last %}
    union all
    {% endif -%}
    {%- endfor %}

)

select *
from compared
where expected_line_count <> actual_line_count
    or expected_billed_cost <> actual_billed_cost
    or expected_effective_cost <> actual_effective_cost
