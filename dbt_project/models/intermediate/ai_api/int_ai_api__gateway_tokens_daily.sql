{#-
    The tokens an AI gateway (LiteLLM) saw per day, model, team and token type: the key by which
    fct_ai_api_spend_by_team_daily allocates the bill's cost of a model and day to teams.

    Requests LiteLLM answered from its own response cache (cache_hit) never reached the provider, and failed requests
    (status `failure`) are not billed as tokens: both are left out. The team is the virtual key's team
    (`metadata.user_api_key_team_alias`, else `team_id`); null when the key has none.

    Token types, as the bills split them: `cache_read` and `cache_write` from the log's cache counts where it has them;
    `input` = prompt tokens less those (LiteLLM counts cached prompt tokens in prompt_tokens); `output` = completion
    tokens (reasoning included, as reasoning is billed as output).

    The model: the gateway's string as an id (macro ai_gateway_model_id), then seed ai_gateway_models (an Azure
    deployment's name -> the model it runs), else the id itself when seed ai_api_models has it, else seed
    ai_api_models by its letters-and-digits key within the family (`nova-pro` -> `amazon.nova-pro`), else the id as
    the gateway spells it (model_source `gateway_spelling`).
-#}

with

requests as (

    select
        usage_date,
        gateway_model,
        {{ ai_gateway_api_family('custom_llm_provider', 'gateway_model') }} as api_family,
        {{ ai_gateway_model_id('gateway_model') }} as gateway_model_id,
        coalesce(nullif(trim(team_alias), ''), nullif(trim(team_id), '')) as team,
        cast(prompt_tokens as decimal(38, 12)) as prompt_tokens,
        cast(completion_tokens as decimal(38, 12)) as completion_tokens,
        cast(coalesce(cache_read_input_tokens, 0) as decimal(38, 12)) as cache_read_tokens,
        cast(coalesce(cache_creation_input_tokens, 0) as decimal(38, 12)) as cache_write_tokens
    from {{ ref('stg_litellm__spend_logs') }}
    where not is_cache_hit
        and coalesce(status, 'success') <> 'failure'

),

gateway_aliases as (

    select gateway_model, api_family, model from {{ ref('ai_gateway_models') }}

),

bill_ids as (

    select distinct model from {{ ref('ai_api_models') }}

),

bill_keys as (

    select api_family, billed_model_key, model from {{ ref('ai_api_models') }}

),

modelled as (

    select
        requests.*,
        coalesce(gateway_aliases.model, bill_ids.model, bill_keys.model, requests.gateway_model_id) as model,
        case
            when gateway_aliases.model is not null then 'ai_gateway_models'
            when bill_ids.model is not null or bill_keys.model is not null then 'ai_api_models'
            else 'gateway_spelling'
        end as model_source
    from requests
    left join gateway_aliases
        on requests.gateway_model_id = gateway_aliases.gateway_model
        and (requests.api_family = gateway_aliases.api_family or requests.api_family is null)
    left join bill_ids
        on requests.gateway_model_id = bill_ids.model
    left join bill_keys
        on requests.api_family = bill_keys.api_family
        and {{ ai_api_model_key('requests.gateway_model_id') }} = bill_keys.billed_model_key

),

typed as (

    select usage_date, api_family, gateway_model, model, model_source, team, 'input' as token_type,
        case
            when prompt_tokens - cache_read_tokens - cache_write_tokens >= 0
                then prompt_tokens - cache_read_tokens - cache_write_tokens
            else prompt_tokens
        end as tokens
    from modelled
    union all
    select usage_date, api_family, gateway_model, model, model_source, team, 'output' as token_type,
        completion_tokens as tokens
    from modelled
    union all
    select usage_date, api_family, gateway_model, model, model_source, team, 'cache_read' as token_type,
        cache_read_tokens as tokens
    from modelled
    union all
    select usage_date, api_family, gateway_model, model, model_source, team, 'cache_write' as token_type,
        cache_write_tokens as tokens
    from modelled

),

final as (

    select
        usage_date,
        api_family,
        gateway_model,
        model,
        model_source,
        team,
        token_type,
        cast(sum(tokens) as decimal(38, 12)) as tokens,
        cast(count(*) as {{ dbt.type_bigint() }}) as request_count
    from typed
    group by usage_date, api_family, gateway_model, model, model_source, team, token_type
    having sum(tokens) > 0

)

select * from final
