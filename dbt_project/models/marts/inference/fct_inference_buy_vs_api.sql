{#-
    Self-host or call an API? Per month, served model and GPU model, for each API model named comparable in seed
    inference_api_comparables and each way of holding the GPUs (on-demand, one-year commitment, owned):

    - what our tokens cost self-hosted (allocation basis, idle included: int_serving__model_costs_daily) and what the
      same tokens, with our input/output mix, cost at the API's current list prices (int_prices__ai_api_token_prices,
      standard tier, the deployment type and region the seed names);
    - the monthly token volume at which self-hosting on that GPU option breaks even with the API: the option's
      monthly cost for the GPUs we hold on average (730 hours) ÷ the API's price per token at our mix;
    - the GPU activity that volume assumes: break-even tokens ÷ what the GPUs would serve in a month at full activity,
      at our measured tokens per active GPU-hour. Above 1, self-hosting on that option cannot break even.

    GPU options: on_demand and committed_1y at the market's typical price (int_finance__market_gpu_prices, newest
    price day), owned at the servers' depreciation plus running costs at full use (int_finance__owned_server_costs).
    Amounts in the reporting currency: our cost at each day's ECB rate, list prices and options at the newest rate.
-#}

{%- set hours_per_month = 730 %}
{%- set grain = ['usage_month', 'model_name', 'gpu_model', 'api_provider', 'api_model', 'api_deployment_type', 'gpu_option'] %}

with

model_days as (

    select * from {{ ref('int_serving__model_costs_daily') }}
    where allocation_cost is not null

),

rates as (

    select rate_day, from_currency, to_currency, rate
    from {{ ref('int_fx__daily_rates') }}
    where to_currency = '{{ reporting_currency() }}'

),

newest_rates as (

    select rates.from_currency, rates.rate
    from rates
    inner join (select max(rate_day) as rate_day from rates) as newest
        on rates.rate_day = newest.rate_day

),

served as (

    select
        cast({{ dbt.date_trunc('month', 'model_days.usage_date') }} as date) as usage_month,
        model_days.model_name,
        model_days.gpu_model,
        count(distinct model_days.usage_date) as serving_days,
        sum(model_days.gpu_hours) as gpu_hours,
        sum(model_days.active_gpu_hours) as active_gpu_hours,
        sum(coalesce(model_days.prompt_tokens, 0)) as prompt_tokens,
        sum(coalesce(model_days.generation_tokens, 0)) as generation_tokens,
        sum({{ amount_in_currency('model_days.allocation_cost', 'model_days.billing_currency', reporting_currency(), 'rates.rate') }})
            as self_hosted_cost,
        count(*) - count(
            {{ amount_in_currency('model_days.allocation_cost', 'model_days.billing_currency', reporting_currency(), 'rates.rate') }}
        ) as unconverted_rows
    from model_days
    left join rates
        on model_days.usage_date = rates.rate_day
        and model_days.billing_currency = rates.from_currency
    group by {{ dbt.date_trunc('month', 'model_days.usage_date') }}, model_days.model_name, model_days.gpu_model

),

api_prices as (

    select
        comparables.served_model,
        comparables.api_provider,
        comparables.api_service,
        comparables.api_model,
        comparables.api_deployment_type,
        comparables.comparison,
        max(case when prices.token_type = 'input' then
            {{ amount_in_currency('prices.price_per_million', 'prices.currency', reporting_currency(), 'newest_rates.rate') }}
        end) as api_input_price_per_million,
        max(case when prices.token_type = 'output' then
            {{ amount_in_currency('prices.price_per_million', 'prices.currency', reporting_currency(), 'newest_rates.rate') }}
        end) as api_output_price_per_million
    from {{ ref('inference_api_comparables') }} as comparables
    inner join {{ ref('int_prices__ai_api_token_prices') }} as prices
        on prices.provider = comparables.api_provider
        and prices.model = comparables.api_model
        and prices.deployment_type = comparables.api_deployment_type
        and coalesce(prices.region, '') = coalesce(comparables.api_region, '')
        and prices.pricing_tier = 'standard'
        and prices.token_type in ('input', 'output')
    left join newest_rates
        on prices.currency = newest_rates.from_currency
    group by
        comparables.served_model,
        comparables.api_provider,
        comparables.api_service,
        comparables.api_model,
        comparables.api_deployment_type,
        comparables.comparison

),

market as (

    select * from {{ ref('int_finance__market_gpu_prices') }}

),

owned as (

    select
        gpu_model,
        {{ decimal_divide('depreciation_per_month + opex_per_month', 'gpus_per_server * ' ~ hours_per_month, 12) }}
            as owned_price_per_gpu_hour
    from {{ ref('int_finance__owned_server_costs') }}

),

-- each GPU option's price per GPU-hour, one row per GPU model and option
gpu_options as (

    select gpu_model, 'on_demand' as gpu_option, on_demand_price_per_gpu_hour as price_per_gpu_hour from market
    union all
    select gpu_model, 'committed_1y' as gpu_option, committed_1y_price_per_gpu_hour as price_per_gpu_hour from market
    union all
    select gpu_model, 'owned' as gpu_option, owned_price_per_gpu_hour as price_per_gpu_hour from owned

),

compared as (

    select
        served.*,
        api_prices.api_provider,
        api_prices.api_service,
        api_prices.api_model,
        api_prices.api_deployment_type,
        api_prices.comparison,
        api_prices.api_input_price_per_million,
        api_prices.api_output_price_per_million,
        gpu_options.gpu_option,
        gpu_options.price_per_gpu_hour as option_price_per_gpu_hour,
        {{ decimal_divide('served.gpu_hours', 'served.serving_days * 24', 12) }} as average_gpus,
        {{ decimal_divide(
            decimal_product(['served.prompt_tokens', 'api_prices.api_input_price_per_million'])
            ~ ' + ' ~ decimal_product(['served.generation_tokens', 'api_prices.api_output_price_per_million']),
            1000000,
            12,
        ) }} as api_cost
    from served
    inner join api_prices
        on served.model_name = api_prices.served_model
    inner join gpu_options
        on served.gpu_model = gpu_options.gpu_model

),

sized as (

    select
        compared.*,
        {{ decimal_divide('api_cost', decimal_divide('prompt_tokens + generation_tokens', 1000000, 12), 6) }}
            as api_cost_per_million_tokens,
        {{ decimal_product(['average_gpus', hours_per_month, 'option_price_per_gpu_hour']) }} as option_monthly_cost,
        -- tokens a month at our measured throughput per active GPU-hour, were the GPUs active all the time
        {{ decimal_divide(
            decimal_product(['prompt_tokens + generation_tokens', 'average_gpus', hours_per_month]),
            'active_gpu_hours',
            0,
        ) }} as capacity_tokens_per_month,
        {{ decimal_divide(
            decimal_product(['prompt_tokens + generation_tokens', hours_per_month]),
            'serving_days * 24',
            0,
        ) }} as tokens_per_month
    from compared

),

final as (

    select
        {{ generate_surrogate_key(grain) }} as inference_buy_vs_api_key,
        usage_month,
        model_name,
        gpu_model,
        api_provider,
        api_service,
        api_model,
        api_deployment_type,
        comparison,
        gpu_option,
        '{{ reporting_currency() }}' as reporting_currency,
        cast(serving_days as bigint) as serving_days,
        cast(gpu_hours as decimal(38, 12)) as gpu_hours,
        cast(average_gpus as decimal(38, 12)) as average_gpus,
        cast(prompt_tokens as decimal(38, 0)) as prompt_tokens,
        cast(generation_tokens as decimal(38, 0)) as generation_tokens,
        cast(self_hosted_cost as decimal(38, 12)) as self_hosted_cost,
        cast(unconverted_rows as integer) as unconverted_rows,
        {{ decimal_divide('self_hosted_cost', decimal_divide('prompt_tokens + generation_tokens', 1000000, 12), 6) }}
            as self_hosted_cost_per_million_tokens,
        cast(api_input_price_per_million as decimal(38, 12)) as api_input_price_per_million,
        cast(api_output_price_per_million as decimal(38, 12)) as api_output_price_per_million,
        cast(api_cost as decimal(38, 12)) as api_cost,
        api_cost_per_million_tokens,
        cast(api_cost - self_hosted_cost as decimal(38, 12)) as self_hosting_saving,
        case when self_hosted_cost < api_cost then 'self_hosted' when api_cost is not null then 'api' end
            as cheaper_today,
        cast(option_price_per_gpu_hour as decimal(38, 12)) as option_price_per_gpu_hour,
        cast(option_monthly_cost as decimal(38, 12)) as option_monthly_cost,
        cast(tokens_per_month as decimal(38, 0)) as tokens_per_month,
        {{ decimal_divide(decimal_product(['option_monthly_cost', 1000000]), 'api_cost_per_million_tokens', 0) }}
            as break_even_tokens_per_month,
        cast(capacity_tokens_per_month as decimal(38, 0)) as capacity_tokens_per_month,
        {{ decimal_divide(
            decimal_divide(decimal_product(['option_monthly_cost', 1000000]), 'api_cost_per_million_tokens', 0),
            'capacity_tokens_per_month',
            6,
        ) }} as break_even_utilization,
        {{ decimal_divide('active_gpu_hours', 'gpu_hours', 6) }} as measured_utilization
    from sized

)

select * from final
