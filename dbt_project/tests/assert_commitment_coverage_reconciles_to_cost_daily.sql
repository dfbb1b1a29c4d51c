{#-
    The commitments mart must hold the whole bill: per billing month, provider and billing currency, its
    billed cost equals fct_cost_daily's exactly (owned servers, which carry no commitments, left out of
    both). Returns one row per month, provider and currency that differs.
-#}

with

commitments as (

    select billing_month, provider_name, billing_currency, sum(billed_cost) as billed_cost
    from {{ ref('fct_commitment_coverage_monthly') }}
    group by billing_month, provider_name, billing_currency

),

cost_daily as (

    select
        cast({{ dbt.date_trunc('month', 'billing_period_start') }} as date) as billing_month,
        provider_name,
        billing_currency,
        sum(billed_cost) as billed_cost
    from {{ ref('fct_cost_daily') }}
    where coalesce(provider_name, '') <> 'On-premises'
    group by cast({{ dbt.date_trunc('month', 'billing_period_start') }} as date), provider_name, billing_currency

)

select
    coalesce(commitments.billing_month, cost_daily.billing_month) as billing_month,
    coalesce(commitments.provider_name, cost_daily.provider_name) as provider_name,
    coalesce(commitments.billing_currency, cost_daily.billing_currency) as billing_currency,
    commitments.billed_cost as commitments_billed_cost,
    cost_daily.billed_cost as cost_daily_billed_cost
from commitments
full outer join cost_daily
    on commitments.billing_month = cost_daily.billing_month
    and coalesce(commitments.provider_name, '') = coalesce(cost_daily.provider_name, '')
    and commitments.billing_currency = cost_daily.billing_currency
where commitments.billed_cost is distinct from cost_daily.billed_cost
