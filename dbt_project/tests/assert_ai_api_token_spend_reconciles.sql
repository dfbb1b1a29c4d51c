{#-
    Fails when fct_ai_api_token_spend_daily does not add up, per usage day and billing currency, to the cost lines
    int_ai_api__token_lines recognised, read again from int_billing__cost_lines (a model alias matched twice, or a
    line lost between the token lines and the mart, shows up here as a difference).
-#}

with

recognised as (

    select distinct x_source, x_load_id, x_source_file, x_source_row
    from {{ ref('int_ai_api__token_lines') }}

),

cost_lines as (

    select
        cast({{ dbt.date_trunc('day', 'lines.ChargePeriodStart') }} as date) as usage_date,
        lines.BillingCurrency as billing_currency,
        sum(lines.BilledCost) as billed_cost,
        sum(lines.EffectiveCost) as effective_cost
    from {{ ref('int_billing__cost_lines') }} as lines
    inner join recognised
        on lines.x_source = recognised.x_source
        and lines.x_load_id = recognised.x_load_id
        and lines.x_source_file = recognised.x_source_file
        and lines.x_source_row = recognised.x_source_row
    where lines.ChargeCategory = 'Usage'
    group by cast({{ dbt.date_trunc('day', 'lines.ChargePeriodStart') }} as date), lines.BillingCurrency

),

mart as (

    select usage_date, billing_currency, sum(billed_cost) as billed_cost, sum(effective_cost) as effective_cost
    from {{ ref('fct_ai_api_token_spend_daily') }}
    group by usage_date, billing_currency

)

select
    coalesce(mart.usage_date, cost_lines.usage_date) as usage_date,
    coalesce(mart.billing_currency, cost_lines.billing_currency) as billing_currency,
    mart.billed_cost as mart_billed_cost,
    cost_lines.billed_cost as cost_lines_billed_cost,
    mart.effective_cost as mart_effective_cost,
    cost_lines.effective_cost as cost_lines_effective_cost
from mart
full outer join cost_lines
    on mart.usage_date = cost_lines.usage_date
    and mart.billing_currency = cost_lines.billing_currency
where mart.usage_date is null
    or cost_lines.usage_date is null
    or mart.billed_cost <> cost_lines.billed_cost
    or mart.effective_cost <> cost_lines.effective_cost
