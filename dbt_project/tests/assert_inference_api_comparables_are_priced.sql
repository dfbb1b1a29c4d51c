{#-
    Every API model named comparable in seed inference_api_comparables must have a current input and output
    price at the standard tier for the deployment type and region it names: without them the self-host or API
    comparison has nothing to compare with. Returns each unpriced comparable and which price it lacks.
-#}

with

comparables as (

    select * from {{ ref('inference_api_comparables') }}

),

prices as (

    select * from {{ ref('int_prices__ai_api_token_prices') }}
    where pricing_tier = 'standard'
        and token_type in ('input', 'output')

),

priced as (

    select
        comparables.served_model,
        comparables.api_provider,
        comparables.api_model,
        comparables.api_deployment_type,
        comparables.api_region,
        count(case when prices.token_type = 'input' then 1 end) as input_prices,
        count(case when prices.token_type = 'output' then 1 end) as output_prices
    from comparables
    left join prices
        on prices.provider = comparables.api_provider
        and prices.model = comparables.api_model
        and prices.deployment_type = comparables.api_deployment_type
        and coalesce(prices.region, '') = coalesce(comparables.api_region, '')
    group by
        comparables.served_model,
        comparables.api_provider,
        comparables.api_model,
        comparables.api_deployment_type,
        comparables.api_region

)

select * from priced
where input_prices <> 1 or output_prices <> 1
