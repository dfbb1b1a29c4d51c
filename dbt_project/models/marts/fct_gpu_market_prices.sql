{#-
    The market as last seen: per provider, region, GPU model and pricing model, the cheapest offer per
    GPU-hour in each feed's latest capture, with the instance type that gives it, its price per
    instance-hour and per GPU-hour (own currency, USD, reporting currency), per BF16 PFLOP-hour, and
    how old the capture is. The question it answers: "where could this GPU be rented right now, and for
    how much?"
-#}

with

offers as (

    select * from {{ ref('int_prices__gpu_offers') }}

),

latest_capture as (

    select feed, max(price_day) as price_day
    from offers
    group by feed

),

latest_offers as (

    select offers.*
    from offers
    inner join latest_capture
        on offers.feed = latest_capture.feed
        and offers.price_day = latest_capture.price_day
    where offers.price_per_gpu_hour_usd is not null

),

ranked as (

    select
        latest_offers.*,
        count(*) over (
            partition by provider, region, gpu_model, pricing_model
        ) as offers_in_market,
        row_number() over (
            partition by provider, region, gpu_model, pricing_model
            order by price_per_gpu_hour_usd, gpu_count desc, instance_type
        ) as price_rank
    from latest_offers

),

specs as (

    select gpu_model, memory_gb, bf16_dense_tflops from {{ ref('gpu_specs') }}

),

newest_day as (

    select max(price_day) as price_day from latest_capture

),

final as (

    select
        ranked.provider,
        ranked.provider_class,
        ranked.region,
        ranked.gpu_model,
        ranked.pricing_model,
        ranked.instance_type,
        ranked.gpu_count,
        ranked.offer_statistic,
        cast(ranked.offers_in_market as integer) as offers_in_market,
        ranked.price_per_instance_hour,
        ranked.price_per_gpu_hour,
        ranked.currency,
        ranked.price_per_instance_hour_usd,
        ranked.price_per_gpu_hour_usd,
        ranked.reporting_currency,
        ranked.price_per_gpu_hour_reporting,
        {{ decimal_divide('ranked.price_per_gpu_hour_usd * 1000', 'specs.bf16_dense_tflops', 12) }}
            as usd_per_bf16_pflop_hour,
        specs.memory_gb as gpu_memory_gb,
        ranked.term_years,
        ranked.price_day,
        ranked.observed_at,
        cast({{ dbt.datediff('ranked.price_day', 'newest_day.price_day', 'day') }} as integer) as days_behind_newest_capture,
        ranked.sku,
        ranked.source_url
    from ranked
    cross join newest_day
    left join specs
        on ranked.gpu_model = specs.gpu_model
    where ranked.price_rank = 1

)

select * from final
