{#-
    Our own serving's cost per million tokens for the report, over the whole history: per billing currency, served
    model, GPU model and provider, the tokens and GPU cost of fct_inference_cost_per_million_tokens summed, and the
    cost of a million tokens on the allocation and usage bases, for input and for output.
-#}

with

summed as (

    select
        billing_currency,
        model_name,
        gpu_model,
        provider_name,
        sum(prompt_tokens) as prompt_tokens,
        sum(generation_tokens) as generation_tokens,
        sum(total_tokens) as total_tokens,
        sum(gpu_hours) as gpu_hours,
        sum(allocation_cost) as allocation_cost,
        sum(usage_cost) as usage_cost,
        sum(input_cost) as input_cost,
        sum(output_cost) as output_cost
    from {{ ref('fct_inference_cost_per_million_tokens') }}
    where allocation_cost is not null
    group by billing_currency, model_name, gpu_model, provider_name

)

select
    cast(billing_currency as {{ dbt.type_string() }}) as billing_currency,
    cast(model_name as {{ dbt.type_string() }}) as model_name,
    cast(gpu_model as {{ dbt.type_string() }}) as gpu_model,
    cast(provider_name as {{ dbt.type_string() }}) as provider_name,
    cast(prompt_tokens as decimal(38, 0)) as prompt_tokens,
    cast(generation_tokens as decimal(38, 0)) as generation_tokens,
    cast(total_tokens as decimal(38, 0)) as total_tokens,
    cast(gpu_hours as decimal(38, 12)) as gpu_hours,
    cast(allocation_cost as decimal(38, 12)) as allocation_cost,
    cast(usage_cost as decimal(38, 12)) as usage_cost,
    {{ decimal_divide('allocation_cost', decimal_divide('total_tokens', 1000000, 12), 6) }} as cost_per_million_tokens,
    {{ decimal_divide('usage_cost', decimal_divide('total_tokens', 1000000, 12), 6) }}
        as usage_cost_per_million_tokens,
    {{ decimal_divide('input_cost', decimal_divide('prompt_tokens', 1000000, 12), 6) }}
        as input_cost_per_million_tokens,
    {{ decimal_divide('output_cost', decimal_divide('generation_tokens', 1000000, 12), 6) }}
        as output_cost_per_million_tokens
from summed
