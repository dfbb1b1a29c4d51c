{#-
    Money must not be lost or invented between the loaded files and the marts. Per billing period
    and billing currency, compares the line count and the sums of BilledCost and EffectiveCost:
      raw FOCUS table = canonical cost lines from the FOCUS source,
      canonical cost lines (all sources) = fct_cost_daily,
      canonical GPU cost lines = fct_gpu_spend_daily.
    Returns one row per period, currency and check that differs; the comparison is exact.
-#}

with

raw_focus as (

    select
        BillingPeriodStart as billing_period_start,
        BillingCurrency as billing_currency,
        count(*) as line_count,
        sum(BilledCost) as billed_cost,
        sum(EffectiveCost) as effective_cost
    from {{ source('raw', 'focus_cost_and_usage') }}
    group by BillingPeriodStart, BillingCurrency

),

cost_lines_focus as (

    select
        BillingPeriodStart as billing_period_start,
        BillingCurrency as billing_currency,
        count(*) as line_count,
        sum(BilledCost) as billed_cost,
        sum(EffectiveCost) as effective_cost
    from {{ ref('int_billing__cost_lines') }}
    where x_source = 'focus'
    group by BillingPeriodStart, BillingCurrency

),

cost_lines_all as (

    select
        BillingPeriodStart as billing_period_start,
        BillingCurrency as billing_currency,
        count(*) as line_count,
        sum(BilledCost) as billed_cost,
        sum(EffectiveCost) as effective_cost
    from {{ ref('int_billing__cost_lines') }}
    group by BillingPeriodStart, BillingCurrency

),

cost_lines_gpu as (

    select
        BillingPeriodStart as billing_period_start,
        BillingCurrency as billing_currency,
        count(*) as line_count,
        sum(BilledCost) as billed_cost,
        sum(EffectiveCost) as effective_cost
    from {{ ref('int_billing__cost_lines') }}
    where x_gpu_model is not null
    group by BillingPeriodStart, BillingCurrency

),

cost_daily as (

    select
        billing_period_start,
        billing_currency,
        sum(cost_line_count) as line_count,
        sum(billed_cost) as billed_cost,
        sum(effective_cost) as effective_cost
    from {{ ref('fct_cost_daily') }}
    group by billing_period_start, billing_currency

),

gpu_spend_daily as (

    select
        billing_period_start,
        billing_currency,
        sum(cost_line_count) as line_count,
        sum(billed_cost) as billed_cost,
        sum(effective_cost) as effective_cost
    from {{ ref('fct_gpu_spend_daily') }}
    group by billing_period_start, billing_currency

),

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
