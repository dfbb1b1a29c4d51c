{#-
    What the model servers did per UTC hour, model and pod: tokens in and out, prefix-cache lookups and hits,
    finished requests and the seconds spent in prefill and decode, from vLLM's and SGLang's counters.
    A counter restarts at 0 when its server restarts, so increases are taken per series (model, namespace, pod,
    engine index, metric, finished reason) before anything is summed: a drop means a restart, and the increase
    since it is the new value. Summing the series first would hide a restart whenever another series grew by more
    than the restarted one lost. An increase covers the time since the series' previous sample and belongs to the
    hour that interval starts in (as a GPU sample does); a series' first sample has no increase. A metric no
    series reported in the hour stays null, never 0.
-#}

{%- set series = ['engine', 'model_name', 'namespace', 'pod', 'engine_index', 'metric', 'finished_reason'] %}

with

samples as (

    select * from {{ ref('stg_telemetry__serving_metric_samples') }}
    where value is not null

),

-- one value per series and instant: a capture and a range query of the same moment count once
series_points as (

    select
        {{ series | join(', ') }},
        sampled_at,
        max(value) as value
    from samples
    group by {{ series | join(', ') }}, sampled_at

),

steps as (

    select
        series_points.*,
        lag(value) over (partition by {{ series | join(', ') }} order by sampled_at) as previous_value,
        lag(sampled_at) over (partition by {{ series | join(', ') }} order by sampled_at) as previous_sampled_at
    from series_points

),

increases as (

    select
        {{ series | join(', ') }},
        {{ dbt.date_trunc('hour', 'previous_sampled_at') }} as hour_start,
        case when value < previous_value then value else value - previous_value end as increase,
        case when value < previous_value then 1 else 0 end as is_reset
    from steps
    where previous_value is not null

),

final as (

    select
        hour_start,
        cast(hour_start as date) as usage_date,
        model_name,
        namespace,
        pod,
        cast(sum(case when metric in ('vllm:prompt_tokens_total', 'sglang:prompt_tokens_total') then increase end)
            as decimal(38, 12)) as prompt_tokens,
        cast(sum(case when metric in ('vllm:generation_tokens_total', 'sglang:generation_tokens_total')
            then increase end) as decimal(38, 12)) as generation_tokens,
        cast(sum(case when metric = 'vllm:prefix_cache_queries_total' then increase end) as decimal(38, 12))
            as prefix_cache_queries,
        cast(sum(case when metric = 'vllm:prefix_cache_hits_total' then increase end) as decimal(38, 12))
            as prefix_cache_hits,
        cast(sum(case when metric = 'vllm:request_success_total' then increase end) as decimal(38, 12)) as requests,
        cast(sum(case when metric = 'vllm:request_prefill_time_seconds_sum' then increase end) as decimal(38, 12))
            as prefill_seconds,
        cast(sum(case when metric = 'vllm:request_decode_time_seconds_sum' then increase end) as decimal(38, 12))
            as decode_seconds,
        cast(sum(is_reset) as bigint) as counter_resets
    from increases
    group by hour_start, model_name, namespace, pod

)

select * from final
