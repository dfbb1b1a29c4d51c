{#-
    Every captured AI API token list price, one row per feed, capture day, model, token type, tier,
    deployment type and region, as published plus the connector's exact price per million tokens.
    Which capture is current, the maintained list prices of providers without a machine-readable list
    and reasoning priced as output happen once, in int_prices__ai_api_token_prices.

    Each feed is its own dbt source over raw.ai_api_token_prices (see _prices__sources.yml).
-#}

{%- set feeds = [
    'azure_openai',
    'aws_bedrock',
] -%}

with

{% for feed in feeds %}
{{ feed }}_prices as (

    select * from {{ source('prices', feed) }}
    where feed = '{{ feed }}'

),

{% endfor %}
token_prices as (

    {% for feed in feeds %}
    select * from {{ feed }}_prices
    {% if not loop.last %}union all{% endif %}
    {% endfor %}

),

final as (

    select
        feed,
        price_day,
        observed_at,
        provider,
        service,
        model,
        model_name,
        model_version,
        token_type,
        pricing_tier,
        deployment_type,
        region,
        cast(price as decimal(38, 12)) as price,
        unit_tokens,
        cast(price_per_million as decimal(38, 12)) as price_per_million,
        upper(currency) as currency,
        effective_date,
        sku,
        source_url,
        _load_id as load_id
    from token_prices

)

select * from final
