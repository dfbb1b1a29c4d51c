{#-
    What each served model cost per day and serving pod: the pod's GPU cost from the Kubernetes chargeback
    (fct_gpu_cost_allocation_daily, the allocation basis: every GPU-hour the pod held, idle ones included, at the
    bill's cost per GPU-hour) next to the tokens its model servers counted that day (int_serving__token_increases_hourly).

    A pod usually serves one model. Where several share one pod the pod's cost is split between them by a written
    rule (`model_share_rule`): their seconds in prefill and decode where every model of the pod-day reports them,
    else their tokens, else evenly. The split rounds cumulatively to the cent, so the models of a pod-day add up to
    the pod's cost exactly.

    Usage basis: the same cost weighted by measured GPU activity (GR-engine active, GPU utilization where the exporter
    has no profiling fields), i.e. the pod's active GPU-hours at the node's cost per GPU-hour; requested GPUs play no
    part. Input and output: the cost is split by prefill against decode seconds (`compute_time`), or, without timing
    histograms, by tokens with output tokens weighted by the dbt var inference_output_input_cost_ratio (2.5 by
    default, OpenCost's default) (`multiplier`). A serving pod the chargeback has no cost for that day keeps its
    tokens with null cost.
-#}

{%- set ratio = var('inference_output_input_cost_ratio', 2.5) %}
{%- if ratio is not number or ratio <= 0 %}
    {{ exceptions.raise_compiler_error("dbt var inference_output_input_cost_ratio: a positive number, got " ~ ratio) }}
{%- endif %}
{%- set pod_day = 'usage_date, namespace, pod' %}

with

served as (

    select
        usage_date,
        namespace,
        pod,
        model_name,
        sum(prompt_tokens) as prompt_tokens,
        sum(generation_tokens) as generation_tokens,
        sum(prefix_cache_queries) as prefix_cache_queries,
        sum(prefix_cache_hits) as prefix_cache_hits,
        sum(requests) as requests,
        sum(prefill_seconds) as prefill_seconds,
        sum(decode_seconds) as decode_seconds,
        sum(counter_resets) as counter_resets
    from {{ ref('int_serving__token_increases_hourly') }}
    group by usage_date, namespace, pod, model_name

),

pod_costs as (

    select
        usage_date,
        namespace,
        pod,
        provider_name,
        resource_id,
        host,
        gpu_model,
        billing_currency,
        team,
        gpus,
        gpu_hours,
        active_gpu_hours,
        cost_per_gpu_hour,
        allocated_cost
    from {{ ref('fct_gpu_cost_allocation_daily') }}
    where allocation_type = 'pod'

),

-- each model's weight within its pod-day, by the first rule every model of the pod-day can meet
weighted as (

    select
        served.*,
        coalesce(prefill_seconds, 0) + coalesce(decode_seconds, 0) as busy_seconds,
        coalesce(prompt_tokens, 0) + coalesce(generation_tokens, 0) as tokens,
        count(*) over (partition by {{ pod_day }}) as models_on_pod,
        min(coalesce(prefill_seconds, 0) + coalesce(decode_seconds, 0)) over (partition by {{ pod_day }})
            as least_busy_seconds,
        min(coalesce(prompt_tokens, 0) + coalesce(generation_tokens, 0)) over (partition by {{ pod_day }})
            as least_tokens
    from served

),

shares as (

    select
        weighted.*,
        case
            when models_on_pod = 1 then 'sole_model'
            when least_busy_seconds > 0 then 'busy_seconds'
            when least_tokens > 0 then 'tokens'
            else 'equal'
        end as model_share_rule,
        cast(
            case
                when models_on_pod = 1 then 1
                when least_busy_seconds > 0 then busy_seconds
                when least_tokens > 0 then tokens
                else 1
            end as decimal(38, 12)
        ) as model_weight
    from weighted

),

cumulative as (

    select
        shares.*,
        sum(model_weight) over (partition by {{ pod_day }}) as pod_weight,
        sum(model_weight) over (
            partition by {{ pod_day }} order by model_name rows between unbounded preceding and current row
        ) as weight_through
    from shares

),

costed as (

    select
        cumulative.*,
        pod_costs.provider_name,
        pod_costs.resource_id,
        pod_costs.host,
        pod_costs.gpu_model,
        pod_costs.billing_currency,
        pod_costs.team,
        pod_costs.gpus as pod_gpus,
        pod_costs.cost_per_gpu_hour,
        pod_costs.gpu_hours as pod_gpu_hours,
        pod_costs.active_gpu_hours as pod_active_gpu_hours,
        pod_costs.allocated_cost as pod_cost,
        -- cumulative rounding: the cents of the models through this one, less those through the one before
        {{ decimal_divide(decimal_product(['pod_costs.allocated_cost', 'cumulative.weight_through']), 'cumulative.pod_weight', 2) }}
        - {{ decimal_divide(
            decimal_product(['pod_costs.allocated_cost', 'cumulative.weight_through - cumulative.model_weight']),
            'cumulative.pod_weight',
            2,
        ) }} as allocation_cost,
        {{ decimal_divide(decimal_product(['pod_costs.gpu_hours', 'cumulative.model_weight']), 'cumulative.pod_weight', 12) }}
            as gpu_hours,
        {{ decimal_divide(decimal_product(['pod_costs.active_gpu_hours', 'cumulative.model_weight']), 'cumulative.pod_weight', 12) }}
            as active_gpu_hours
    from cumulative
    left join pod_costs
        on cumulative.usage_date = pod_costs.usage_date
        and cumulative.namespace = pod_costs.namespace
        and cumulative.pod = pod_costs.pod

),

split as (

    select
        costed.*,
        case when pod_gpu_hours > 0 then
            {{ decimal_divide(decimal_product(['allocation_cost', 'pod_active_gpu_hours']), 'pod_gpu_hours', 12) }}
        end as usage_cost,
        case
            when busy_seconds > 0 then 'compute_time'
            when tokens > 0 then 'multiplier'
        end as input_output_rule,
        case
            when busy_seconds > 0 then
                {{ decimal_divide(decimal_product(['allocation_cost', 'coalesce(prefill_seconds, 0)']), 'busy_seconds', 12) }}
            when tokens > 0 then
                {{ decimal_divide(
                    decimal_product(['allocation_cost', 'coalesce(prompt_tokens, 0)']),
                    'coalesce(prompt_tokens, 0) + ' ~ decimal_product(['coalesce(generation_tokens, 0)', ratio]),
                    12,
                ) }}
        end as input_cost
    from costed

),

final as (

    select
        usage_date,
        provider_name,
        resource_id,
        host,
        gpu_model,
        billing_currency,
        namespace,
        pod,
        team,
        model_name,
        cast(pod_gpus as bigint) as pod_gpus,
        cast(models_on_pod as bigint) as models_on_pod,
        model_share_rule,
        cast(model_weight as decimal(38, 12)) as model_weight,
        cast(gpu_hours as decimal(38, 12)) as gpu_hours,
        cast(active_gpu_hours as decimal(38, 12)) as active_gpu_hours,
        cast(cost_per_gpu_hour as decimal(38, 12)) as cost_per_gpu_hour,
        cast(allocation_cost as decimal(38, 12)) as allocation_cost,
        cast(usage_cost as decimal(38, 12)) as usage_cost,
        input_output_rule,
        cast(input_cost as decimal(38, 12)) as input_cost,
        cast(allocation_cost - input_cost as decimal(38, 12)) as output_cost,
        cast(prompt_tokens as decimal(38, 12)) as prompt_tokens,
        cast(generation_tokens as decimal(38, 12)) as generation_tokens,
        cast(prefix_cache_queries as decimal(38, 12)) as prefix_cache_queries,
        cast(prefix_cache_hits as decimal(38, 12)) as prefix_cache_hits,
        cast(requests as decimal(38, 12)) as requests,
        cast(prefill_seconds as decimal(38, 12)) as prefill_seconds,
        cast(decode_seconds as decimal(38, 12)) as decode_seconds,
        cast(counter_resets as bigint) as counter_resets
    from split

)

select * from final
