{#-
    Energy and location-based carbon per million tokens of our own serving, per day, served model, namespace, GPU
    model and provider. Each serving pod's energy of the day (fct_gpu_energy_daily: its share of the measured
    energy of the GPUs it held, idle hours included, as the allocation basis of the cost) is shared between the
    models it served by the weights of int_serving__model_costs_daily (model_share_rule: busy seconds, tokens or
    evenly), exactly as the cost is. kWh and kgCO2e per million tokens = facility kWh (or kgCO2e) × 1,000,000 ÷
    (prompt + generation tokens). A pod-day without energy telemetry keeps its tokens with null energy.
-#}

{%- set grain = ['usage_date', 'model_name', 'namespace', 'gpu_model', 'provider_name'] %}

with

model_days as (

    select
        usage_date,
        namespace,
        pod,
        model_name,
        max(gpu_model) as gpu_model,
        max(provider_name) as provider_name,
        max(team) as team,
        max(model_weight) as model_weight,
        max(prompt_tokens) as prompt_tokens,
        max(generation_tokens) as generation_tokens
    from {{ ref('int_serving__model_costs_daily') }}
    group by usage_date, namespace, pod, model_name

),

weighted as (

    select
        model_days.*,
        sum(model_weight) over (partition by usage_date, namespace, pod) as pod_weight
    from model_days

),

pod_energy as (

    select
        usage_date,
        namespace,
        pod,
        sum(gpu_hours) as gpu_hours,
        sum(facility_kwh) as facility_kwh,
        sum(kgco2e) as kgco2e,
        -- a day's carbon is only complete when every row of it had a grid factor
        min(case when gco2e_per_kwh is null then 0 else 1 end) as carbon_complete
    from {{ ref('fct_gpu_energy_daily') }}
    where allocation_type = 'pod'
    group by usage_date, namespace, pod

),

shared as (

    select
        weighted.*,
        case when pod_weight > 0 then {{ decimal_divide('model_weight', 'pod_weight', 12) }} end as model_share,
        pod_energy.gpu_hours as pod_gpu_hours,
        pod_energy.facility_kwh as pod_facility_kwh,
        case when pod_energy.carbon_complete = 1 then pod_energy.kgco2e end as pod_kgco2e
    from weighted
    left join pod_energy
        on weighted.usage_date = pod_energy.usage_date
        and weighted.namespace = pod_energy.namespace
        and weighted.pod = pod_energy.pod

),

summed as (

    select
        {{ grain | join(', ') }},
        max(team) as team,
        count(distinct pod) as pods,
        sum({{ decimal_product(['pod_gpu_hours', 'model_share']) }}) as gpu_hours,
        sum({{ decimal_product(['pod_facility_kwh', 'model_share']) }}) as facility_kwh,
        sum({{ decimal_product(['pod_kgco2e', 'model_share']) }}) as kgco2e,
        sum(coalesce(prompt_tokens, 0)) as prompt_tokens,
        sum(coalesce(generation_tokens, 0)) as generation_tokens
    from shared
    group by {{ grain | join(', ') }}

),

final as (

    select
        {{ generate_surrogate_key(grain) }} as inference_energy_per_million_tokens_key,
        usage_date,
        model_name,
        namespace,
        team,
        gpu_model,
        provider_name,
        cast(pods as bigint) as pods,
        cast(gpu_hours as decimal(38, 12)) as gpu_hours,
        cast(facility_kwh as decimal(38, 12)) as facility_kwh,
        cast(kgco2e as decimal(38, 12)) as kgco2e,
        cast(prompt_tokens as decimal(38, 0)) as prompt_tokens,
        cast(generation_tokens as decimal(38, 0)) as generation_tokens,
        cast(prompt_tokens + generation_tokens as decimal(38, 0)) as total_tokens,
        case when prompt_tokens + generation_tokens > 0 then
            {{ decimal_divide(decimal_product(['facility_kwh', 1000000]), 'prompt_tokens + generation_tokens', 12) }}
        end as facility_kwh_per_million_tokens,
        case when prompt_tokens + generation_tokens > 0 then
            {{ decimal_divide(decimal_product(['kgco2e', 1000000]), 'prompt_tokens + generation_tokens', 12) }}
        end as kgco2e_per_million_tokens
    from summed

)

select * from final
