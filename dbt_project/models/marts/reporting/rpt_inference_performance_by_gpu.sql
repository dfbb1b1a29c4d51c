{#-
    Performance per euro for the report, over the whole history: per GPU model, provider class and served model, the
    tokens, GPU-hours and cost of fct_inference_performance_per_euro summed, the throughput per GPU-second, the cost
    of a GPU-hour and the tokens per second one euro an hour buys, ours and on the cheapest on-demand offer (null
    when a month had a day without such an offer).
-#}

with

summed as (

    select
        gpu_model,
        provider_class,
        model_name,
        sum(total_tokens) as total_tokens,
        sum(gpu_hours) as gpu_hours,
        sum(cost_eur) as cost_eur,
        case when count(*) = count(market_cost_eur) then sum(market_cost_eur) end as market_cost_eur
    from {{ ref('fct_inference_performance_per_euro') }}
    group by gpu_model, provider_class, model_name

)

select
    cast(gpu_model as {{ dbt.type_string() }}) as gpu_model,
    cast(provider_class as {{ dbt.type_string() }}) as provider_class,
    cast(model_name as {{ dbt.type_string() }}) as model_name,
    cast(total_tokens as decimal(38, 0)) as total_tokens,
    cast(gpu_hours as decimal(38, 12)) as gpu_hours,
    cast(cost_eur as decimal(38, 12)) as cost_eur,
    cast(market_cost_eur as decimal(38, 12)) as market_cost_eur,
    {{ decimal_divide('total_tokens', decimal_product(['gpu_hours', 3600]), 6) }} as tokens_per_gpu_second,
    {{ per_gpu_hour('cost_eur', 'gpu_hours', 6) }} as eur_per_gpu_hour,
    {{ decimal_divide('total_tokens', decimal_product(['cost_eur', 3600]), 6) }} as tokens_per_second_per_eur,
    {{ decimal_divide('total_tokens', decimal_product(['market_cost_eur', 3600]), 6) }}
        as market_tokens_per_second_per_eur
from summed
