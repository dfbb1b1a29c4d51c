{#-
    Every captured market offer, one row per offer per feed and capture day, as published: the
    price in the provider's own unit (instance-hour, GPU-hour or whole term). Normalising to
    $/GPU-hour happens once, in int_prices__gpu_offers.

    Each feed is its own dbt source over raw.price_observations (see _prices__sources.yml), so the
    union below reads each feed's rows once.
-#}

{%- set feeds = [
    'lambda',
    'aws_price_list',
    'aws_spot',
    'runpod',
    'vast',
    'oci',
    'coreweave',
] -%}

with

{% for feed in feeds %}
{{ feed }}_offers as (

    select * from {{ source('prices', feed) }}
    where feed = '{{ feed }}'

),

{% endfor %}
observations as (

    {% for feed in feeds %}
    select * from {{ feed }}_offers
    {% if not loop.last %}union all{% endif %}
    {% endfor %}

),

final as (

    select
        feed,
        price_day,
        observed_at,
        provider,
        region,
        zone,
        instance_type,
        gpu_name,
        cast(gpu_count as decimal(38, 12)) as gpu_count,
        pricing_model,
        cast(price as decimal(38, 12)) as price,
        price_unit,
        cast(upfront_price as decimal(38, 12)) as upfront_price,
        term_years,
        upper(currency) as currency,
        offer_statistic,
        offer_count,
        sku,
        source_url,
        _load_id as load_id
    from observations

)

select * from final
