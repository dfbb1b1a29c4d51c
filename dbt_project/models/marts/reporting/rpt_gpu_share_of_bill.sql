{#-
    The GPU share of the whole cloud bill, per billing currency (currencies are never added): GPU spend
    from fct_gpu_spend_daily, the bill from fct_cost_daily, and what one GPU-hour cost on average.
-#}

with

gpu as (

    select
        billing_currency,
        sum(effective_cost) as gpu_effective_cost,
        sum(billed_cost) as gpu_billed_cost,
        sum(gpu_hours) as gpu_hours
    from {{ ref('fct_gpu_spend_daily') }}
    group by billing_currency

),

bill as (

    select
        billing_currency,
        sum(effective_cost) as bill_effective_cost
    from {{ ref('fct_cost_daily') }}
    group by billing_currency

),

currencies as (

    select billing_currency from gpu
    union
    select billing_currency from bill

)

select
    cast(currencies.billing_currency as string) as billing_currency,
    cast(bill.bill_effective_cost as decimal(38, 12)) as bill_effective_cost,
    cast(gpu.gpu_effective_cost as decimal(38, 12)) as gpu_effective_cost,
    cast(gpu.gpu_billed_cost as decimal(38, 12)) as gpu_billed_cost,
    cast(gpu.gpu_hours as decimal(38, 12)) as gpu_hours,
    {{ per_gpu_hour('gpu.gpu_effective_cost', 'gpu.gpu_hours', 12) }} as cost_per_gpu_hour,
    {{ decimal_divide('gpu.gpu_effective_cost', 'bill.bill_effective_cost', 12) }} as gpu_share_of_bill
from currencies
left join gpu on currencies.billing_currency = gpu.billing_currency
left join bill on currencies.billing_currency = bill.billing_currency
