{#-
    The market price of a GPU-hour, day by day: minimum, median and maximum $/GPU-hour per GPU model,
    pricing model and provider class (hyperscaler, specialized GPU cloud, marketplace), over every offer
    in effect that day. Answers "what does an H100-hour cost on-demand and spot, by provider class,
    today and 30 days ago", and per BF16 PFLOP-hour so different GPUs compare by work done.
-#}

with

offers as (

    select * from {{ ref('int_prices__offers_by_day') }}

),

specs as (

    select gpu_model, bf16_dense_tflops from {{ ref('gpu_specs') }}

),

indexed as (

    select
        price_date,
        gpu_model,
        pricing_model,
        provider_class,
        count(*) as offers,
        count(distinct provider) as providers,
        min(price_per_gpu_hour_usd) as min_price_per_gpu_hour_usd,
        {{ median('price_per_gpu_hour_usd') }} as median_price_per_gpu_hour_usd,
        max(price_per_gpu_hour_usd) as max_price_per_gpu_hour_usd,
        min(price_per_gpu_hour_reporting) as min_price_per_gpu_hour_reporting,
        {{ median('price_per_gpu_hour_reporting') }} as median_price_per_gpu_hour_reporting,
        max(price_per_gpu_hour_reporting) as max_price_per_gpu_hour_reporting,
        max(capture_age_days) as oldest_capture_age_days
    from offers
    where price_per_gpu_hour_usd is not null
    group by price_date, gpu_model, pricing_model, provider_class

),

final as (

    select
        indexed.price_date,
        indexed.gpu_model,
        indexed.pricing_model,
        indexed.provider_class,
        cast(indexed.offers as integer) as offers,
        cast(indexed.providers as integer) as providers,
        cast(indexed.min_price_per_gpu_hour_usd as decimal(38, 12)) as min_price_per_gpu_hour_usd,
        cast(indexed.median_price_per_gpu_hour_usd as decimal(38, 12)) as median_price_per_gpu_hour_usd,
        cast(indexed.max_price_per_gpu_hour_usd as decimal(38, 12)) as max_price_per_gpu_hour_usd,
        '{{ reporting_currency() }}' as reporting_currency,
        cast(indexed.min_price_per_gpu_hour_reporting as decimal(38, 12)) as min_price_per_gpu_hour_reporting,
        cast(indexed.median_price_per_gpu_hour_reporting as decimal(38, 12)) as median_price_per_gpu_hour_reporting,
        cast(indexed.max_price_per_gpu_hour_reporting as decimal(38, 12)) as max_price_per_gpu_hour_reporting,
        {{ decimal_divide('indexed.min_price_per_gpu_hour_usd * 1000', 'specs.bf16_dense_tflops', 12) }}
            as min_usd_per_bf16_pflop_hour,
        cast(indexed.oldest_capture_age_days as integer) as oldest_capture_age_days
    from indexed
    left join specs
        on indexed.gpu_model = specs.gpu_model

)

select * from final
