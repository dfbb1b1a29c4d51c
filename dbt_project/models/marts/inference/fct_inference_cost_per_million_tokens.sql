{#-
    What a million tokens of our own serving cost, per day, served model, namespace, GPU model and provider
    (int_serving__model_costs_daily). Allocation basis: every GPU-hour the serving pods held, idle ones included,
    so a day's rows add up to the serving pods' GPU cost in the Kubernetes chargeback to the cent; this is the basis
    to set against an API's price or a purchase. Usage basis: only the GPU-hours measured active. Input and output
    costs follow the split rule of each model-day (compute_time or multiplier, `input_output_rule`); the cache hit
    fraction and the estimated saving are what the prefix cache spared the prefill. Rows with tokens but no GPU cost
    (a serving pod the bill does not cover that day) keep their tokens and have no cost per million.
-#}

{%- set grain = ['usage_date', 'model_name', 'namespace', 'gpu_model', 'provider_name', 'billing_currency'] %}

with

model_days as (

    select * from {{ ref('int_serving__model_costs_daily') }}

),

summed as (

    select
        {{ grain | join(', ') }},
        max(team) as team,
        count(distinct pod) as pods,
        case when min(input_output_rule) = max(input_output_rule) then min(input_output_rule) else 'mixed' end
            as input_output_rule,
        case when min(model_share_rule) = max(model_share_rule) then min(model_share_rule) else 'mixed' end
            as model_share_rule,
        sum(gpu_hours) as gpu_hours,
        sum(active_gpu_hours) as active_gpu_hours,
        sum(allocation_cost) as allocation_cost,
        sum(usage_cost) as usage_cost,
        sum(input_cost) as input_cost,
        sum(output_cost) as output_cost,
        sum(coalesce(prompt_tokens, 0)) as prompt_tokens,
        sum(coalesce(generation_tokens, 0)) as generation_tokens,
        sum(prefix_cache_hits) as prefix_cache_hits,
        sum(requests) as requests,
        sum(counter_resets) as counter_resets
    from model_days
    group by {{ grain | join(', ') }}

),

final as (

    select
        {{ generate_surrogate_key(grain) }} as inference_cost_per_million_tokens_key,
        usage_date,
        model_name,
        namespace,
        team,
        gpu_model,
        provider_name,
        billing_currency,
        cast(pods as bigint) as pods,
        cast(gpu_hours as decimal(38, 12)) as gpu_hours,
        cast(active_gpu_hours as decimal(38, 12)) as active_gpu_hours,
        cast(allocation_cost as decimal(38, 12)) as allocation_cost,
        cast(usage_cost as decimal(38, 12)) as usage_cost,
        input_output_rule,
        model_share_rule,
        cast(input_cost as decimal(38, 12)) as input_cost,
        cast(output_cost as decimal(38, 12)) as output_cost,
        cast(prompt_tokens as decimal(38, 0)) as prompt_tokens,
        cast(generation_tokens as decimal(38, 0)) as generation_tokens,
        cast(prompt_tokens + generation_tokens as decimal(38, 0)) as total_tokens,
        cast(requests as decimal(38, 0)) as requests,
        {{ decimal_divide('allocation_cost', decimal_divide('prompt_tokens + generation_tokens', 1000000, 12), 6) }}
            as cost_per_million_tokens,
        {{ decimal_divide('usage_cost', decimal_divide('prompt_tokens + generation_tokens', 1000000, 12), 6) }}
            as usage_cost_per_million_tokens,
        {{ decimal_divide('input_cost', decimal_divide('prompt_tokens', 1000000, 12), 6) }}
            as input_cost_per_million_tokens,
        {{ decimal_divide('output_cost', decimal_divide('generation_tokens', 1000000, 12), 6) }}
            as output_cost_per_million_tokens,
        {{ decimal_divide('prefix_cache_hits', 'prompt_tokens', 6) }} as cache_hit_fraction,
        -- the prefill the cached tokens spared, at the input cost of a token computed
        case when prompt_tokens > prefix_cache_hits then
            {{ decimal_divide(decimal_product(['input_cost', 'prefix_cache_hits']), 'prompt_tokens - prefix_cache_hits', 12) }}
        end as estimated_cache_savings,
        cast(counter_resets as bigint) as counter_resets
    from summed

)

select * from final
