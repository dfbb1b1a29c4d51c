{#-
    What one GPU-hour would cost under each way of renting it, per scope of fct_gpu_usage_profile (provider × GPU
    model × region × billing currency), in the billing currency: the options fct_gpu_commitment_recommendations
    prices for the steady baseline. One row per scope and option the data can price:

    - on_demand: our effective on-demand rate from the bill (PricingCategory Standard), else the bill's list price,
      else the provider's on-demand offer in the price feeds;
    - commitment_1y, commitment_3y: the provider's cheapest 1- or 3-year offer for the GPU (AWS Savings Plans and
      Reserved Instances, Azure savings plans and reservations, Google Cloud committed use), in the scope's region
      where it has one, else in any region; per GPU-hour as int_prices__gpu_offers normalises them (term prices and
      upfront fees spread over the term's hours);
    - gpu_cloud: the cheapest on-demand offer of the same GPU model at a specialized GPU cloud (no term);
    - spot: the median of the provider's spot offers for the GPU, else of every spot and interruptible offer, with
      the extra hours of checkpoints and restarts (macro spot_checkpoint_overhead at var spot_default_reclaim_pct,
      the vars of fct_spot_savings_monthly) in `overhead`.

    Prices are the newest day of int_prices__offers_by_day, converted at that day's ECB rate (null where the billing
    currency has none: int_fx__daily_rates converts to EUR and USD).
-#}

{%- set checkpoint_hours = var('spot_checkpoint_hours', 0.1) -%}
{%- set restart_hours = var('spot_restart_hours', 0.5) -%}
{%- set job_nodes = var('spot_job_nodes', 1) -%}
{%- set default_reclaim_pct = var('spot_default_reclaim_pct', 15) -%}
{%- set scope = ['provider_name', 'gpu_model', 'region_id', 'billing_currency'] -%}
{%- set terms = {
    1: ['reserved_1y', 'savings_plan_1y', 'committed_1y'],
    3: ['reserved_3y', 'savings_plan_3y', 'committed_3y'],
} -%}

with

profile as (

    select * from {{ ref('int_commitments__usage_profile') }}

),

offers as (

    select * from {{ ref('int_prices__offers_by_day') }}
    where price_date = (select max(price_date) from {{ ref('int_prices__offers_by_day') }})

),

dynamic_models as (

    select pricing_model from {{ ref('market_pricing_models') }} where pricing_category = 'Dynamic'

),

priced as (

    -- every offer for a scope's GPU, in the scope's billing currency
    select
        {% for column in scope %}profile.{{ column }},
        {% endfor -%}
        offers.provider,
        offers.provider_class,
        offers.region,
        offers.pricing_model,
        offers.price_per_gpu_hour,
        offers.currency,
        cast(
            case
                when offers.currency = profile.billing_currency then offers.price_per_gpu_hour
                else offers.price_per_gpu_hour * fx.rate
            end as decimal(38, 12)
        ) as price_per_gpu_hour_billing
    from profile
    inner join offers
        on profile.gpu_model = offers.gpu_model
    left join {{ ref('int_fx__daily_rates') }} as fx
        on offers.price_date = fx.rate_day
        and offers.currency = fx.from_currency
        and profile.billing_currency = fx.to_currency
    where offers.price_per_gpu_hour is not null

),

candidates as (

    {%- for term, models in terms.items() %}
    select
        priced.*,
        'commitment_{{ term }}y' as option_name,
        {{ term * 12 }} as term_months,
        cast(null as decimal(38, 12)) as overhead,
        cast(null as integer) as reclaim_pct,
        -- the scope's own region first, then the cheapest
        row_number() over (
            partition by {% for column in scope %}priced.{{ column }}{{ ', ' if not loop.last }}{% endfor %}
            order by case when priced.region = priced.region_id then 0 else 1 end, priced.price_per_gpu_hour_billing,
                priced.region, priced.pricing_model
        ) as preference
    from priced
    where priced.provider = priced.provider_name
        and priced.pricing_model in ('{{ models | join("', '") }}')
        and priced.price_per_gpu_hour_billing is not null

    union all
    {%- endfor %}

    select
        priced.*,
        'gpu_cloud' as option_name,
        0 as term_months,
        cast(null as decimal(38, 12)) as overhead,
        cast(null as integer) as reclaim_pct,
        row_number() over (
            partition by {% for column in scope %}priced.{{ column }}{{ ', ' if not loop.last }}{% endfor %}
            order by priced.price_per_gpu_hour_billing, priced.provider, priced.region
        ) as preference
    from priced
    where priced.provider_class = 'specialized'
        and priced.pricing_model = 'on_demand'
        and priced.price_per_gpu_hour_billing is not null

    union all

    -- the provider's own on-demand offer: used only where the bill gives no on-demand or list rate
    select
        priced.*,
        'on_demand' as option_name,
        0 as term_months,
        cast(null as decimal(38, 12)) as overhead,
        cast(null as integer) as reclaim_pct,
        row_number() over (
            partition by {% for column in scope %}priced.{{ column }}{{ ', ' if not loop.last }}{% endfor %}
            order by case when priced.region = priced.region_id then 0 else 1 end, priced.price_per_gpu_hour_billing,
                priced.region
        ) as preference
    from priced
    where priced.provider = priced.provider_name
        and priced.pricing_model = 'on_demand'
        and priced.price_per_gpu_hour_billing is not null

),

spot_offers as (

    select priced.*
    from priced
    inner join dynamic_models
        on priced.pricing_model = dynamic_models.pricing_model
    where priced.price_per_gpu_hour_billing is not null

),

spot as (

    select
        {% for column in scope %}market.{{ column }},
        {% endfor -%}
        coalesce(own.spot_price, market.spot_price) as price_per_gpu_hour,
        case when own.spot_price is not null then market.provider_name else 'market' end as offer_provider,
        case when own.spot_price is not null then 'spot (provider median)' else 'spot (market median)' end
            as offer_pricing_model
    from (
        select
            {{ scope | join(', ') }},
            {{ median('price_per_gpu_hour_billing') }} as spot_price
        from spot_offers
        group by {{ scope | join(', ') }}
    ) as market
    left join (
        select
            {{ scope | join(', ') }},
            {{ median('price_per_gpu_hour_billing') }} as spot_price
        from spot_offers
        where provider = provider_name
        group by {{ scope | join(', ') }}
    ) as own
        on {{ keys_match('market', 'own', ['provider_name', 'gpu_model', 'billing_currency']) }}
        and coalesce(market.region_id, '') = coalesce(own.region_id, '')

),

bill_on_demand as (

    select
        {% for column in scope %}profile.{{ column }},
        {% endfor -%}
        coalesce(profile.on_demand_rate_per_gpu_hour, profile.list_rate_per_gpu_hour, feed.price_per_gpu_hour_billing)
            as price_per_gpu_hour,
        case
            when profile.on_demand_rate_per_gpu_hour is not null then profile.provider_name
            when profile.list_rate_per_gpu_hour is not null then profile.provider_name
            else feed.provider
        end as offer_provider,
        case
            when profile.on_demand_rate_per_gpu_hour is not null then 'on-demand rate on the bill'
            when profile.list_rate_per_gpu_hour is not null then 'list price on the bill'
            else 'on_demand'
        end as offer_pricing_model,
        case when profile.on_demand_rate_per_gpu_hour is null and profile.list_rate_per_gpu_hour is null then feed.region
        end as offer_region
    from profile
    left join candidates as feed
        on {{ keys_match('profile', 'feed', ['provider_name', 'gpu_model', 'billing_currency']) }}
        and coalesce(profile.region_id, '') = coalesce(feed.region_id, '')
        and feed.option_name = 'on_demand'
        and feed.preference = 1

),

priced_options as (

    select
        {{ scope | join(', ') }},
        'on_demand' as option_name,
        0 as term_months,
        offer_provider,
        offer_pricing_model,
        offer_region,
        price_per_gpu_hour,
        cast(0 as decimal(38, 12)) as overhead,
        cast(null as integer) as reclaim_pct
    from bill_on_demand
    where price_per_gpu_hour is not null

    union all

    select
        {{ scope | join(', ') }},
        option_name,
        term_months,
        provider as offer_provider,
        pricing_model as offer_pricing_model,
        region as offer_region,
        price_per_gpu_hour_billing as price_per_gpu_hour,
        cast(0 as decimal(38, 12)) as overhead,
        reclaim_pct
    from candidates
    where preference = 1
        and option_name <> 'on_demand'

    union all

    select
        {{ scope | join(', ') }},
        'spot' as option_name,
        0 as term_months,
        offer_provider,
        offer_pricing_model,
        cast(null as {{ dbt.type_string() }}) as offer_region,
        price_per_gpu_hour,
        cast(
            {{ spot_checkpoint_overhead('cast(' ~ default_reclaim_pct ~ ' as double) / 100', checkpoint_hours, restart_hours, job_nodes) }}
            as decimal(38, 12)
        ) as overhead,
        cast({{ default_reclaim_pct }} as integer) as reclaim_pct
    from spot

),

final as (

    select
        {{ scope | join(',\n        ') }},
        option_name,
        cast(term_months as integer) as term_months,
        offer_provider,
        offer_pricing_model,
        offer_region,
        cast(price_per_gpu_hour as decimal(38, 12)) as price_per_gpu_hour,
        cast(overhead as decimal(38, 12)) as overhead,
        reclaim_pct
    from priced_options

)

select * from final
