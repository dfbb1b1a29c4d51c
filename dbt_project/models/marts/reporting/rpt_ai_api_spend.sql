{#-
    AI API token spend for the report, over the whole history: per billing currency, provider, model, token type and
    team the tokens and effective cost of fct_ai_api_spend_by_team_daily (the bill's cost split by an AI gateway's
    tokens per team where it saw the model, else the bill's team), and the cost of a million tokens.
-#}

with

summed as (

    select
        billing_currency,
        provider_name,
        model,
        token_type,
        team,
        sum(tokens) as tokens,
        sum(effective_cost) as effective_cost
    from {{ ref('fct_ai_api_spend_by_team_daily') }}
    group by billing_currency, provider_name, model, token_type, team

)

select
    cast(billing_currency as {{ dbt.type_string() }}) as billing_currency,
    cast(provider_name as {{ dbt.type_string() }}) as provider_name,
    cast(model as {{ dbt.type_string() }}) as model,
    cast(token_type as {{ dbt.type_string() }}) as token_type,
    cast(team as {{ dbt.type_string() }}) as team,
    cast(tokens as decimal(38, 12)) as tokens,
    cast(effective_cost as decimal(38, 12)) as effective_cost,
    {{ decimal_divide('effective_cost', decimal_divide('tokens', 1000000, 12), 6) }} as effective_cost_per_million_tokens
from summed
