{#-
    The largest amounts we could have saved over the whole history, ranked within each currency
    (opportunity_rank 1 = largest; ties broken by opportunity, then scope). Four kinds, each from its
    mart: paying the median market price where we paid more, running on-demand GPU-hours on spot after
    the cost of interruptions, GPU-hours paid for while idle, commitments paid for but not used. They
    overlap (an idle on-demand hour is also forgone spot savings): never add them up.
-#}

with

lines as (

    select
        'Market overpay (vs median price)' as opportunity,
        'fct_market_benchmark' as source_mart,
        provider_name || ' · ' || gpu_model || ' · ' || pricing_category as scope,
        reporting_currency as currency,
        savings_moving_to_median as amount
    from {{ ref('fct_market_benchmark') }}

    union all

    select
        'Forgone spot savings',
        'fct_spot_savings_monthly',
        provider_name || ' · ' || gpu_model,
        reporting_currency,
        forgone_savings_interruption_adjusted
    from {{ ref('fct_spot_savings_monthly') }}

    union all

    select
        'Idle GPU-hours',
        'fct_gpu_utilization_daily',
        provider_name || ' · ' || gpu_model || ' · team ' || coalesce(team, '(untagged)'),
        billing_currency,
        idle_cost
    from {{ ref('fct_gpu_utilization_daily') }}

    union all

    select
        'Unused commitment',
        'fct_commitment_coverage_monthly',
        provider_name || ' · ' || coalesce(commitment_discount_name, commitment_discount_id),
        billing_currency,
        unused_commitment_cost
    from {{ ref('fct_commitment_coverage_monthly') }}
    where commitment_discount_id is not null

),

opportunities as (

    -- grouped by the scope as shown, so two rows that read the same are one opportunity
    select opportunity, source_mart, scope, currency, sum(amount) as amount
    from lines
    group by opportunity, source_mart, scope, currency

)

select
    cast(row_number() over (partition by currency order by amount desc, opportunity, scope) as integer)
        as opportunity_rank,
    cast(opportunity as string) as opportunity,
    cast(scope as string) as scope,
    cast(currency as string) as currency,
    cast(amount as decimal(38, 12)) as amount,
    cast(source_mart as string) as source_mart
from opportunities
where amount > 0 and currency is not null
