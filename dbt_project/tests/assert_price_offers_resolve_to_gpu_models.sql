{#-
    Price offers that name a GPU but resolve to no GPU model of the vocabulary: they are left out of
    the market price marts, so list them (warn) for a row in seed gpu_instance_types or gpu_model_aliases.
-#}
{{ config(severity='warn') }}

with

observations as (

    select * from {{ ref('stg_prices__observations') }}

),

priced as (

    select distinct feed, price_day, sku, instance_type from {{ ref('int_prices__gpu_offers') }}

)

select distinct
    observations.provider,
    observations.instance_type,
    observations.gpu_name
from observations
left join priced
    on observations.feed = priced.feed
    and observations.price_day = priced.price_day
    and coalesce(observations.sku, '') = coalesce(priced.sku, '')
    and coalesce(observations.instance_type, '') = coalesce(priced.instance_type, '')
where priced.feed is null
    and coalesce(observations.gpu_name, '') <> ''
