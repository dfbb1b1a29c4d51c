{#-
    AI API spend by team: the bill's cost of each model, day and token type (int_ai_api__token_lines) allocated to the
    teams by their share of the tokens an AI gateway saw (int_ai_api__gateway_tokens_daily). The gateway's own cost is
    never used: it gives the shares, the bill gives the money.

    Each bill row (usage day × API family × provider × model × token type × the bill's team tag × billing currency) is
    split by one rule, recorded in allocation_rule:
    - `gateway_token_share`: the gateway saw tokens of that model, day and token type (reasoning compared with output):
      each gateway team gets the row's cost × its tokens ÷ max(bill tokens, gateway tokens), bill and gateway tokens
      counted over the whole model, day and token type. Bill tokens the gateway did not see (the bill counted more)
      stay with the bill's team as `bill_team_unseen_tokens`.
    - `gateway_model_token_share`: the bill row has no tokens of a type the gateway counts (a line the rules could not
      read, or a cache type the log does not report) but the gateway saw the model that day: split by each team's
      tokens of the model that day, all types.
    - `bill_team_no_gateway_usage`: the gateway saw nothing of the model that day (or the line names no model): the
      row stays with the bill's team.
    The shares are rounded cumulatively to the cent (the row's amount times its fraction through each share, the
    fraction to 12 decimals), the last share of a row taking the row's remaining amount, so the teams add up to the
    bill row exactly (tests/assert_ai_api_spend_by_team_reconciles.sql).
-#}

{%- set grain = [
    'usage_date', 'api_family', 'provider_name', 'model', 'token_type', 'bill_team', 'billing_currency', 'team',
    'allocation_rule',
] -%}
{%- set bill_row = 'usage_date, api_family, provider_name, model, token_type, bill_team, billing_currency' -%}

with

bill as (

    select
        usage_date,
        api_family,
        provider_name,
        model,
        token_type,
        team as bill_team,
        billing_currency,
        case when token_type = 'reasoning' then 'output' else token_type end as gateway_token_type,
        sum(tokens) as bill_tokens,
        sum(billed_cost) as billed_cost,
        sum(effective_cost) as effective_cost
    from {{ ref('int_ai_api__token_lines') }}
    group by usage_date, api_family, provider_name, model, token_type, team, billing_currency

),

bill_keys as (

    -- the model, day and token type whose bill tokens the gateway's are compared with
    select
        usage_date,
        api_family,
        model,
        gateway_token_type,
        sum(coalesce(bill_tokens, 0)) as key_bill_tokens
    from bill
    where model is not null
    group by usage_date, api_family, model, gateway_token_type

),

gateway as (

    select usage_date, api_family, model, team, token_type, tokens
    from {{ ref('int_ai_api__gateway_tokens_daily') }}

),

-- a gateway that names no provider (api_family null) is matched on the model alone
type_teams as (

    select
        bill_keys.usage_date,
        bill_keys.api_family,
        bill_keys.model,
        bill_keys.gateway_token_type,
        gateway.team,
        sum(gateway.tokens) as team_tokens
    from bill_keys
    inner join gateway
        on bill_keys.usage_date = gateway.usage_date
        and bill_keys.model = gateway.model
        and bill_keys.gateway_token_type = gateway.token_type
        and (bill_keys.api_family = gateway.api_family or gateway.api_family is null)
    group by bill_keys.usage_date, bill_keys.api_family, bill_keys.model, bill_keys.gateway_token_type, gateway.team

),

type_totals as (

    select
        usage_date,
        api_family,
        model,
        gateway_token_type,
        sum(team_tokens) as gateway_tokens
    from type_teams
    group by usage_date, api_family, model, gateway_token_type

),

model_days as (

    select distinct usage_date, api_family, model from bill_keys

),

model_teams as (

    select
        model_days.usage_date,
        model_days.api_family,
        model_days.model,
        gateway.team,
        sum(gateway.tokens) as team_tokens
    from model_days
    inner join gateway
        on model_days.usage_date = gateway.usage_date
        and model_days.model = gateway.model
        and (model_days.api_family = gateway.api_family or gateway.api_family is null)
    group by model_days.usage_date, model_days.api_family, model_days.model, gateway.team

),

model_totals as (

    select usage_date, api_family, model, sum(team_tokens) as gateway_tokens
    from model_teams
    group by usage_date, api_family, model

),

ruled as (

    select
        bill.*,
        bill_keys.key_bill_tokens,
        type_totals.gateway_tokens as type_gateway_tokens,
        model_totals.gateway_tokens as model_gateway_tokens,
        case
            when bill.bill_tokens > 0 and type_totals.gateway_tokens > 0 then 'gateway_token_share'
            when model_totals.gateway_tokens > 0 then 'gateway_model_token_share'
            else 'bill_team_no_gateway_usage'
        end as row_rule
    from bill
    left join bill_keys
        on bill.usage_date = bill_keys.usage_date
        and bill.api_family = bill_keys.api_family
        and bill.model = bill_keys.model
        and bill.gateway_token_type = bill_keys.gateway_token_type
    left join type_totals
        on bill.usage_date = type_totals.usage_date
        and bill.api_family = type_totals.api_family
        and bill.model = type_totals.model
        and bill.gateway_token_type = type_totals.gateway_token_type
    left join model_totals
        on bill.usage_date = model_totals.usage_date
        and bill.api_family = model_totals.api_family
        and bill.model = model_totals.model

),

-- the weights of each bill row's shares: the gateway's teams, and what stays with the bill's team
weights as (

    select
        ruled.*,
        type_teams.team,
        'gateway_token_share' as allocation_rule,
        1 as share_order,
        type_teams.team_tokens as gateway_team_tokens,
        cast(type_teams.team_tokens as decimal(38, 12)) as weight
    from ruled
    inner join type_teams
        on ruled.usage_date = type_teams.usage_date
        and ruled.api_family = type_teams.api_family
        and ruled.model = type_teams.model
        and ruled.gateway_token_type = type_teams.gateway_token_type
    where ruled.row_rule = 'gateway_token_share'

    union all

    select
        ruled.*,
        ruled.bill_team as team,
        'bill_team_unseen_tokens' as allocation_rule,
        2 as share_order,
        cast(null as decimal(38, 12)) as gateway_team_tokens,
        cast(ruled.key_bill_tokens - ruled.type_gateway_tokens as decimal(38, 12)) as weight
    from ruled
    where ruled.row_rule = 'gateway_token_share'
        and ruled.key_bill_tokens > ruled.type_gateway_tokens

    union all

    select
        ruled.*,
        model_teams.team,
        'gateway_model_token_share' as allocation_rule,
        1 as share_order,
        model_teams.team_tokens as gateway_team_tokens,
        cast(model_teams.team_tokens as decimal(38, 12)) as weight
    from ruled
    inner join model_teams
        on ruled.usage_date = model_teams.usage_date
        and ruled.api_family = model_teams.api_family
        and ruled.model = model_teams.model
    where ruled.row_rule = 'gateway_model_token_share'

    union all

    select
        ruled.*,
        ruled.bill_team as team,
        'bill_team_no_gateway_usage' as allocation_rule,
        1 as share_order,
        cast(null as decimal(38, 12)) as gateway_team_tokens,
        cast(1 as decimal(38, 12)) as weight
    from ruled
    where ruled.row_rule = 'bill_team_no_gateway_usage'

),

cumulative as (

    select
        weights.*,
        sum(weight) over (partition by {{ bill_row }}) as row_weight,
        sum(weight) over (
            partition by {{ bill_row }}
            order by share_order, team nulls last
            rows between unbounded preceding and current row
        ) as weight_through
    from weights

),

fractions as (

    -- the row's fraction through this share and before it, to 12 decimals (weights are tokens: a cost times a
    -- day's tokens would not fit 38 digits)
    select
        cumulative.*,
        {{ decimal_divide('weight_through', 'row_weight', 12) }} as fraction_through,
        {{ decimal_divide('weight_through - weight', 'row_weight', 12) }} as fraction_before,
        {{ decimal_divide('weight', 'row_weight', 12) }} as allocation_share
    from cumulative

),

allocated as (

    select
        fractions.*,
        {%- for amount in ['billed_cost', 'effective_cost'] %}
        -- the cents of the shares through this one (the whole amount once every share is counted), less those before
        -- (both branches as DECIMAL(38, 12): a case mixing it with the cents' DECIMAL(38, 2) drops the sub-cents)
        case
            when weight_through = row_weight then cast({{ amount }} as decimal(38, 12))
            else cast({{ decimal_divide(decimal_product([amount, 'fraction_through']), '1', 2) }} as decimal(38, 12))
        end
        - cast({{ decimal_divide(decimal_product([amount, 'fraction_before']), '1', 2) }} as decimal(38, 12))
            as allocated_{{ amount }},
        {%- endfor %}
        {{ decimal_product(['bill_tokens', 'allocation_share']) }} as allocated_tokens
    from fractions

),

final as (

    select
        {{ generate_surrogate_key(grain) }} as ai_api_spend_by_team_daily_key,
        usage_date,
        api_family,
        provider_name,
        model,
        token_type,
        team,
        bill_team,
        billing_currency,
        allocation_rule,
        cast(allocation_share as decimal(38, 12)) as allocation_share,
        cast(allocated_tokens as decimal(38, 12)) as tokens,
        cast(gateway_team_tokens as decimal(38, 12)) as gateway_team_tokens,
        cast(bill_tokens as decimal(38, 12)) as bill_row_tokens,
        cast(
            case allocation_rule
                when 'gateway_model_token_share' then model_gateway_tokens
                when 'bill_team_no_gateway_usage' then null
                else type_gateway_tokens
            end as decimal(38, 12)
        ) as gateway_tokens,
        cast(key_bill_tokens as decimal(38, 12)) as bill_tokens,
        cast(allocated_billed_cost as decimal(38, 12)) as billed_cost,
        cast(allocated_effective_cost as decimal(38, 12)) as effective_cost
    from allocated

)

select * from final
