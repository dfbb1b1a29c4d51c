{#-
    AI API token spend per day: the token lines (int_ai_api__token_lines) summed per usage day, provider, model,
    token type, team and billing currency, with the cost of a million tokens. Lines the rules could not read are
    here too, under token_type `unknown` with no tokens, so a day's cost per currency is the sum of every AI API
    usage line (tests/assert_ai_api_token_spend_reconciles.sql).
-#}

{%- set grain = ['usage_date', 'provider_name', 'model', 'token_type', 'team', 'billing_currency'] -%}

with

token_lines as (

    select * from {{ ref('int_ai_api__token_lines') }}

),

daily as (

    select
        usage_date,
        provider_name,
        model,
        token_type,
        team,
        billing_currency,
        sum(tokens) as tokens,
        sum(billed_cost) as billed_cost,
        sum(effective_cost) as effective_cost,
        sum(list_cost) as list_cost,
        count(*) as cost_line_count
    from token_lines
    group by usage_date, provider_name, model, token_type, team, billing_currency

),

final as (

    select
        {{ generate_surrogate_key(grain) }} as ai_api_token_spend_daily_key,
        usage_date,
        provider_name,
        model,
        token_type,
        team,
        billing_currency,
        cast(tokens as decimal(38, 12)) as tokens,
        cast(billed_cost as decimal(38, 12)) as billed_cost,
        cast(effective_cost as decimal(38, 12)) as effective_cost,
        cast(list_cost as decimal(38, 12)) as list_cost,
        case
            when tokens > 0 then {{ decimal_divide(decimal_product(['effective_cost', '1000000']), 'tokens', 6) }}
        end as effective_cost_per_million_tokens,
        case
            when tokens > 0 then {{ decimal_divide(decimal_product(['billed_cost', '1000000']), 'tokens', 6) }}
        end as billed_cost_per_million_tokens,
        cast(cost_line_count as {{ dbt.type_bigint() }}) as cost_line_count
    from daily

)

select * from final
