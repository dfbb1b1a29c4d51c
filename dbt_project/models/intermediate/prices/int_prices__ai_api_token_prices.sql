{#-
    The current list price per million tokens of every AI API model we know, per provider, model, token
    type, pricing tier, deployment type and region: what an API alternative to our own serving costs.

    Current: each token-price feed's latest capture (a model it no longer lists drops out), plus the
    maintained seed ai_api_list_prices for APIs without a machine-readable list, unless a feed captures
    the same price. Reasoning tokens are billed as output: where a list has no reasoning price, the
    output price is repeated as the reasoning price (price_basis says so), so a token line of any type
    finds its price.
-#}

with

captured as (

    select * from {{ ref('stg_prices__ai_api_token_prices') }}

),

with_latest_day as (

    select
        *,
        max(price_day) over (partition by feed) as latest_price_day
    from captured

),

feed_prices as (

    select
        provider,
        service,
        model,
        model_version,
        token_type,
        pricing_tier,
        deployment_type,
        region,
        price_per_million,
        currency,
        effective_date,
        price_day as captured_on,
        'feed' as price_source,
        feed as source_name,
        source_url
    from with_latest_day
    where price_day = latest_price_day

),

seed_prices as (

    select
        seed.provider,
        seed.service,
        seed.model,
        cast(null as {{ dbt.type_string() }}) as model_version,
        seed.token_type,
        seed.pricing_tier,
        seed.deployment_type,
        seed.region,
        cast(seed.price_per_million as decimal(38, 12)) as price_per_million,
        upper(seed.currency) as currency,
        seed.effective_date,
        seed.recorded_on as captured_on,
        'seed' as price_source,
        'ai_api_list_prices' as source_name,
        seed.source_url
    from {{ ref('ai_api_list_prices') }} as seed
    where not exists (
        select 1
        from feed_prices
        where feed_prices.provider = seed.provider
            and feed_prices.model = seed.model
            and feed_prices.token_type = seed.token_type
            and feed_prices.pricing_tier = seed.pricing_tier
            and feed_prices.deployment_type = seed.deployment_type
            and coalesce(feed_prices.region, '') = coalesce(seed.region, '')
    )

),

listed as (

    select * from feed_prices
    union all
    select * from seed_prices

),

reasoning_as_output as (

    select
        output_price.provider,
        output_price.service,
        output_price.model,
        output_price.model_version,
        'reasoning' as token_type,
        output_price.pricing_tier,
        output_price.deployment_type,
        output_price.region,
        output_price.price_per_million,
        output_price.currency,
        output_price.effective_date,
        output_price.captured_on,
        output_price.price_source,
        output_price.source_name,
        output_price.source_url
    from listed as output_price
    where output_price.token_type = 'output'
        and not exists (
            select 1
            from listed as reasoning
            where reasoning.token_type = 'reasoning'
                and reasoning.provider = output_price.provider
                and reasoning.model = output_price.model
                and reasoning.pricing_tier = output_price.pricing_tier
                and reasoning.deployment_type = output_price.deployment_type
                and coalesce(reasoning.region, '') = coalesce(output_price.region, '')
        )

),

final as (

    select *, 'list' as price_basis from listed
    union all
    select *, 'output' as price_basis from reasoning_as_output

)

select * from final
