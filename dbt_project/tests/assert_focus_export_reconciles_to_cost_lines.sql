{#-
    The FOCUS export must hold the same money as the canonical cost lines: per billing period and
    billing currency, one delivered line per cost line and exactly the same sums of BilledCost and
    EffectiveCost (the unused-commitment lines it splits off a purchase move EffectiveCost, they do
    not add any). Returns one row per period and currency that differs.
-#}

with

cost_lines as (

    select
        BillingPeriodStart,
        BillingCurrency,
        count(*) as line_count,
        sum(BilledCost) as billed_cost,
        sum(EffectiveCost) as effective_cost
    from {{ ref('int_billing__cost_lines') }}
    group by BillingPeriodStart, BillingCurrency

),

exported as (

    select
        BillingPeriodStart,
        BillingCurrency,
        count(case when x_RowOrigin = 'Delivered' then 1 end) as line_count,
        sum(BilledCost) as billed_cost,
        sum(EffectiveCost) as effective_cost
    from {{ ref('focus_cost_and_usage') }}
    group by BillingPeriodStart, BillingCurrency

),

compared as (

    select
        coalesce(cost_lines.BillingPeriodStart, exported.BillingPeriodStart) as billing_period_start,
        coalesce(cost_lines.BillingCurrency, exported.BillingCurrency) as billing_currency,
        coalesce(cost_lines.line_count, 0) as expected_line_count,
        coalesce(exported.line_count, 0) as actual_line_count,
        coalesce(cost_lines.billed_cost, 0) as expected_billed_cost,
        coalesce(exported.billed_cost, 0) as actual_billed_cost,
        coalesce(cost_lines.effective_cost, 0) as expected_effective_cost,
        coalesce(exported.effective_cost, 0) as actual_effective_cost
    from cost_lines
    full outer join exported
        on cost_lines.BillingPeriodStart = exported.BillingPeriodStart
        and cost_lines.BillingCurrency = exported.BillingCurrency

)

select *
from compared
where expected_line_count <> actual_line_count
    or expected_billed_cost <> actual_billed_cost
    or expected_effective_cost <> actual_effective_cost
