{#-
    Fails when fct_ai_api_spend_by_team_daily does not add up, per usage day and billing currency, to the AI API
    usage lines on the bill (int_ai_api__token_lines): an allocation that loses or invents a cent, or a bill row
    matched to the gateway twice, shows up here as a difference.
-#}

with

bill as (

    select usage_date, billing_currency, sum(billed_cost) as billed_cost, sum(effective_cost) as effective_cost
    from {{ ref('int_ai_api__token_lines') }}
    group by usage_date, billing_currency

),

mart as (

    select usage_date, billing_currency, sum(billed_cost) as billed_cost, sum(effective_cost) as effective_cost
    from {{ ref('fct_ai_api_spend_by_team_daily') }}
    group by usage_date, billing_currency

)

select
    coalesce(mart.usage_date, bill.usage_date) as usage_date,
    coalesce(mart.billing_currency, bill.billing_currency) as billing_currency,
    mart.billed_cost as mart_billed_cost,
    bill.billed_cost as bill_billed_cost,
    mart.effective_cost as mart_effective_cost,
    bill.effective_cost as bill_effective_cost
from mart
full outer join bill
    on mart.usage_date = bill.usage_date
    and mart.billing_currency = bill.billing_currency
where mart.usage_date is null
    or bill.usage_date is null
    or mart.billed_cost <> bill.billed_cost
    or mart.effective_cost <> bill.effective_cost
