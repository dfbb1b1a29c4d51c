{#-
    LiteLLM's spend log, one row per request the gateway logged, renamed. The gateway's own `spend` is kept as
    gateway_spend and never used as money (docs/ai-workloads.md, "Gateway usage: API spend by team").
-#}

with

source as (

    select * from {{ source('raw', 'litellm_spend_logs') }}

),

final as (

    select
        cast(usage_date as date) as usage_date,
        request_id,
        call_type,
        api_key as api_key_hash,
        spend as gateway_spend,
        total_tokens,
        prompt_tokens,
        completion_tokens,
        cache_read_input_tokens,
        cache_creation_input_tokens,
        start_time,
        end_time,
        trim(model) as gateway_model,
        model_group,
        lower(trim(custom_llm_provider)) as custom_llm_provider,
        {{ adapter.quote('user') }} as gateway_user,
        team_id,
        team_alias,
        end_user,
        lower(trim(coalesce(cache_hit, ''))) in ('true', 't', '1') as is_cache_hit,
        lower(trim(status)) as status,
        source_file,
        source_row,
        _load_id as load_id
    from source

)

select * from final
