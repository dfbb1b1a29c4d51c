{#-
    Every captured GPU offer normalised to what it costs per instance-hour and per GPU-hour, in its own
    currency, in USD and in the reporting currency: the one place market prices become comparable.

    Providers publish in different units: hyperscalers price whole VMs per hour, GCP and RunPod price one
    GPU per hour, Azure prices reservations per whole term, AWS partial-upfront reservations add a one-time
    fee. An upfront fee or a term price spreads over the term's hours (365 × 24 per year, as AWS and Azure
    count reservation hours). The GPU model comes from the instance-type seed when the type is known, else
    from the provider's GPU name through the alias seed — the same resolution billing uses.
-#}

{%- set hours_per_year = 8760 -%}


with

observations as (

    select * from {{ ref('stg_prices__observations') }}

),

providers as (

    select provider, provider_class from {{ ref('price_providers') }}

),

instance_types as (

    select lower(instance_type) as instance_type_key, gpu_model, gpu_count
    from {{ ref('gpu_instance_types') }}

),

gpu_names as (

    {{ gpu_model_lookup() }}

),

resolved as (

    select
        observations.*,
        providers.provider_class,
        coalesce(instance_types.gpu_model, gpu_names.gpu_model) as gpu_model,
        cast(coalesce(observations.gpu_count, instance_types.gpu_count) as decimal(38, 12)) as resolved_gpu_count,
        observations.term_years * {{ hours_per_year }} as term_hours
    from observations
    left join providers
        on observations.provider = providers.provider
    left join instance_types
        on lower(observations.instance_type) = instance_types.instance_type_key
    left join gpu_names
        on {{ gpu_model_key('observations.gpu_name') }} = gpu_names.gpu_model_key

),

hourly as (

    select
        resolved.*,
        -- the published figure per hour of its own unit (instance or GPU), upfront fees spread over the term
        case
            when price_unit = 'term' then {{ decimal_divide('price', 'term_hours', 12) }}
            else price
        end
        + coalesce({{ decimal_divide('upfront_price', 'term_hours', 12) }}, 0) as price_per_unit_hour
    from resolved

),

normalised as (

    select
        hourly.*,
        case
            when price_unit = 'gpu-hour' then {{ decimal_product(['price_per_unit_hour', 'resolved_gpu_count']) }}
            else price_per_unit_hour
        end as price_per_instance_hour,
        case
            when price_unit = 'gpu-hour' then price_per_unit_hour
            else {{ decimal_divide('price_per_unit_hour', 'resolved_gpu_count', 12) }}
        end as price_per_gpu_hour
    from hourly

),

usd_rates as (

    select rate_day, from_currency, rate
    from {{ ref('int_fx__daily_rates') }}
    where to_currency = 'USD'

),

reporting_rates as (

    select rate_day, from_currency, rate
    from {{ ref('int_fx__daily_rates') }}
    where to_currency = '{{ reporting_currency() }}'

),

final as (

    select
        normalised.feed,
        normalised.price_day,
        normalised.observed_at,
        normalised.provider,
        normalised.provider_class,
        normalised.region,
        normalised.zone,
        normalised.instance_type,
        normalised.gpu_name,
        normalised.gpu_model,
        normalised.resolved_gpu_count as gpu_count,
        normalised.pricing_model,
        normalised.offer_statistic,
        normalised.offer_count,
        normalised.price,
        normalised.price_unit,
        normalised.upfront_price,
        normalised.term_years,
        cast(normalised.price_per_instance_hour as decimal(38, 12)) as price_per_instance_hour,
        cast(normalised.price_per_gpu_hour as decimal(38, 12)) as price_per_gpu_hour,
        normalised.currency,
        {{ amount_in_currency('normalised.price_per_gpu_hour', 'normalised.currency', 'USD', 'usd_rates.rate') }} as price_per_gpu_hour_usd,
        {{ amount_in_currency('normalised.price_per_instance_hour', 'normalised.currency', 'USD', 'usd_rates.rate') }} as price_per_instance_hour_usd,
        '{{ reporting_currency() }}' as reporting_currency,
        {{ amount_in_currency(
            'normalised.price_per_gpu_hour', 'normalised.currency', reporting_currency(), 'reporting_rates.rate'
        ) }} as price_per_gpu_hour_reporting,
        normalised.sku,
        normalised.source_url,
        normalised.load_id
    from normalised
    left join usd_rates
        on normalised.price_day = usd_rates.rate_day
        and normalised.currency = usd_rates.from_currency
    left join reporting_rates
        on normalised.price_day = reporting_rates.rate_day
        and normalised.currency = reporting_rates.from_currency
    -- offers of hardware outside the GPU vocabulary are reported by a test, not priced as GPUs
    where normalised.gpu_model is not null
        and normalised.resolved_gpu_count > 0

)

select * from final
