{#-
    What should we commit to? Per provider × GPU model × region × billing currency (a scope of fct_gpu_usage_profile),
    the cost per year of running the steady baseline (baseline_gpus, every hour of a year: 8,760 hours, 730 a month as
    in fct_buy_vs_rent) under each option the data can price (int_commitments__option_prices: on demand, the
    provider's 1- and 3-year commitments, the cheapest GPU cloud, spot with its interruption overhead; owning from
    int_finance__owned_server_costs), against what the same GPUs cost a year at our current effective rate.

    - savings_per_year = current cost − option cost (current: the baseline at the effective rate we pay now);
    - break_even_utilization = option cost ÷ on-demand cost: the share of hours the baseline GPUs must be busy for the
      commitment or purchase to cost no more than paying on demand for the busy hours only;
    - break_even_month: commitments are owed whole, so the month m at which the on-demand cost avoided (m months of
      the baseline) reaches the whole term's commitment, ceil(term months × break-even utilization); owning, the month
      capex is paid back by on-demand cost avoided less running cost (gpu-metrics reference 8.2, u = 1);
    - is_recommended: the cheapest option of the scope; `current` (keep paying what we pay now) when none costs less.

    A scope with too little history, or with no GPU running in most hours, gets one row saying so instead.
-#}

{%- set hours_per_year = 8760 -%}
{%- set hours_per_month = 730 -%}
{%- set scope = ['provider_name', 'gpu_model', 'region_id', 'billing_currency'] -%}
{%- set option_order = ['current', 'on_demand', 'gpu_cloud', 'spot', 'commitment_1y', 'commitment_3y', 'own'] -%}

with

profile as (

    select * from {{ ref('int_commitments__usage_profile') }}

),

prices as (

    select * from {{ ref('int_commitments__option_prices') }}

),

owned as (

    select * from {{ ref('int_finance__owned_server_costs') }}

),

fx as (

    select rate_day, from_currency, to_currency, rate from {{ ref('int_fx__daily_rates') }}

),

newest_fx as (

    select fx.from_currency, fx.to_currency, fx.rate
    from fx
    inner join (select max(rate_day) as rate_day from fx) as newest
        on fx.rate_day = newest.rate_day

),

steady as (

    select
        profile.*,
        {{ decimal_product(['profile.baseline_gpus', hours_per_year, 'profile.effective_rate_per_gpu_hour']) }}
            as current_cost_per_year
    from profile
    where profile.has_enough_history
        and profile.baseline_gpus > 0

),

rented as (

    select
        {% for column in scope %}steady.{{ column }},
        {% endfor -%}
        prices.option_name,
        prices.term_months,
        prices.offer_provider,
        prices.offer_pricing_model,
        prices.offer_region,
        {{ decimal_product(['prices.price_per_gpu_hour', '1 + prices.overhead']) }} as price_per_gpu_hour,
        prices.overhead,
        prices.reclaim_pct,
        cast(null as integer) as servers,
        cast(null as decimal(38, 12)) as upfront_cost,
        cast(null as decimal(38, 12)) as running_cost_per_month,
        {{ decimal_product(['steady.baseline_gpus', hours_per_year, 'prices.price_per_gpu_hour', '1 + prices.overhead']) }}
            as cost_per_year
    from steady
    inner join prices
        on {{ keys_match('steady', 'prices', ['provider_name', 'gpu_model', 'billing_currency']) }}
        and coalesce(steady.region_id, '') = coalesce(prices.region_id, '')

),

owned_converted as (

    select
        owned.gpu_model,
        owned.server_description,
        owned.gpus_per_server,
        owned.life_months,
        currencies.billing_currency,
        case
            when owned.currency = currencies.billing_currency then cast(1 as decimal(38, 12))
            else newest_fx.rate
        end as fx_rate,
        owned.capex_per_server,
        owned.depreciation_per_month,
        owned.opex_per_month
    from owned
    cross join (select distinct billing_currency from steady) as currencies
    left join newest_fx
        on owned.currency = newest_fx.from_currency
        and currencies.billing_currency = newest_fx.to_currency

),

bought as (

    select
        {% for column in scope %}steady.{{ column }},
        {% endfor -%}
        'own' as option_name,
        owned_converted.life_months as term_months,
        cast(null as {{ dbt.type_string() }}) as offer_provider,
        owned_converted.server_description as offer_pricing_model,
        cast(null as {{ dbt.type_string() }}) as offer_region,
        cast(ceil(steady.baseline_gpus / cast(owned_converted.gpus_per_server as decimal(38, 12))) as integer) as servers,
        owned_converted.gpus_per_server,
        owned_converted.fx_rate,
        owned_converted.capex_per_server,
        owned_converted.depreciation_per_month,
        owned_converted.opex_per_month
    from steady
    inner join owned_converted
        on steady.gpu_model = owned_converted.gpu_model
        and steady.billing_currency = owned_converted.billing_currency
    where owned_converted.fx_rate is not null

),

bought_priced as (

    select
        {{ scope | join(', ') }},
        option_name,
        term_months,
        offer_provider,
        offer_pricing_model,
        offer_region,
        servers,
        {{ decimal_product(['servers', 'capex_per_server', 'fx_rate']) }} as upfront_cost,
        {{ decimal_product(['servers', 'opex_per_month', 'fx_rate']) }} as running_cost_per_month,
        {{ decimal_product(['servers', 'depreciation_per_month + opex_per_month', 12, 'fx_rate']) }} as cost_per_year
    from bought

),

priced_options as (

    select
        {{ scope | join(', ') }},
        option_name,
        term_months,
        offer_provider,
        offer_pricing_model,
        offer_region,
        price_per_gpu_hour,
        overhead,
        reclaim_pct,
        servers,
        upfront_cost,
        running_cost_per_month,
        cost_per_year
    from rented

    union all

    select
        {{ scope | join(', ') }},
        option_name,
        term_months,
        offer_provider,
        offer_pricing_model,
        offer_region,
        cast(null as decimal(38, 12)) as price_per_gpu_hour,
        cast(null as decimal(38, 12)) as overhead,
        cast(null as integer) as reclaim_pct,
        servers,
        upfront_cost,
        running_cost_per_month,
        cost_per_year
    from bought_priced

    union all

    -- keeping what we have: the yardstick, and the recommendation when no option costs less
    select
        {{ scope | join(', ') }},
        'current' as option_name,
        0 as term_months,
        provider_name as offer_provider,
        'effective rate on the bill' as offer_pricing_model,
        cast(null as {{ dbt.type_string() }}) as offer_region,
        effective_rate_per_gpu_hour as price_per_gpu_hour,
        cast(0 as decimal(38, 12)) as overhead,
        cast(null as integer) as reclaim_pct,
        cast(null as integer) as servers,
        cast(null as decimal(38, 12)) as upfront_cost,
        cast(null as decimal(38, 12)) as running_cost_per_month,
        current_cost_per_year as cost_per_year
    from steady
    where current_cost_per_year is not null

),

compared as (

    select
        candidate.*,
        steady.window_start,
        steady.window_end,
        steady.hours_observed,
        steady.baseline_percentile,
        steady.baseline_gpus,
        steady.baseline_busy_share,
        steady.current_cost_per_year,
        on_demand.cost_per_year as on_demand_cost_per_year,
        cast(steady.current_cost_per_year - candidate.cost_per_year as decimal(38, 12)) as savings_per_year,
        case
            when candidate.option_name in ('commitment_1y', 'commitment_3y', 'own')
                then {{ decimal_divide('candidate.cost_per_year', 'on_demand.cost_per_year', 4) }}
        end as break_even_utilization,
        -- on-demand cost avoided a month by the baseline, less what owned servers cost to run
        {{ decimal_divide('on_demand.cost_per_year', 12, 12) }} - coalesce(candidate.running_cost_per_month, 0)
            as monthly_net_avoided
    from priced_options as candidate
    inner join steady
        on {{ keys_match('candidate', 'steady', ['provider_name', 'gpu_model', 'billing_currency']) }}
        and coalesce(candidate.region_id, '') = coalesce(steady.region_id, '')
    left join priced_options as on_demand
        on {{ keys_match('candidate', 'on_demand', ['provider_name', 'gpu_model', 'billing_currency']) }}
        and coalesce(candidate.region_id, '') = coalesce(on_demand.region_id, '')
        and on_demand.option_name = 'on_demand'

),

timed as (

    select
        compared.*,
        case
            when option_name in ('commitment_1y', 'commitment_3y') and break_even_utilization <= 1
                then cast(ceil(term_months * break_even_utilization) as integer)
            when option_name = 'own' and monthly_net_avoided > 0
                and ceil({{ decimal_divide('upfront_cost', 'monthly_net_avoided', 6) }}) <= term_months
                then cast(ceil({{ decimal_divide('upfront_cost', 'monthly_net_avoided', 6) }}) as integer)
        end as break_even_month,
        row_number() over (
            partition by {{ scope | join(', ') }}
            order by cost_per_year, case option_name
                {%- for name in option_order %} when '{{ name }}' then {{ loop.index }}{% endfor %} end
        ) as cost_rank
    from compared

),

{%- set whole = "cast(cast(round(%s, 0) as integer) as " ~ dbt.type_string() ~ ")" -%}
{%- set percent = "cast(cast(round(100 * %s, 0) as integer) as " ~ dbt.type_string() ~ ")" -%}
{%- set days_observed = "cast(cast(floor(hours_observed / 24) as integer) as " ~ dbt.type_string() ~ ")" %}

recommended as (

    select
        timed.*,
        cost_rank = 1 as is_recommended,
        coalesce(case option_name
            when 'current' then 'what we pay now, at the effective rate on the bill (commitments and discounts included)'
            when 'on_demand' then 'no commitment: pays only for the hours used'
            when 'gpu_cloud' then {{ dbt.concat([
                "'no term, but moves the workload to '", "offer_provider",
                "'; data transfer and migration are not priced'"
            ]) }}
            when 'spot' then {{ dbt.concat([
                "'can be interrupted: '", "cast(cast(round(100 * overhead, 1) as decimal(10, 1)) as " ~ dbt.type_string() ~ ")", "'% more hours for checkpoints and restarts at '",
                "cast(reclaim_pct as " ~ dbt.type_string() ~ ")", "'% of nodes reclaimed a month; jobs must checkpoint'"
            ]) }}
            when 'own' then {{ dbt.concat([
                "'buys '", "cast(servers as " ~ dbt.type_string() ~ ")", "' server(s) for '",
                whole % 'term_months / 12.0', "' years: needs the '", "cast(baseline_gpus as " ~ dbt.type_string() ~ ")",
                "' GPUs busy '", percent % 'break_even_utilization', "'% of hours to beat on-demand (last '",
                days_observed, "' days: '", percent % 'baseline_busy_share', "'%)'",
                "coalesce(" ~ dbt.concat(["'; pays back in month '", "cast(break_even_month as " ~ dbt.type_string() ~ ")"]) ~ ", '; never pays back'"
                ~ ")"
            ]) }}
            else {{ dbt.concat([
                "'needs the '", "cast(baseline_gpus as " ~ dbt.type_string() ~ ")", "' GPUs busy '",
                percent % 'break_even_utilization', "'% of hours for '", whole % 'term_months / 12.0',
                "' year(s) to beat on-demand (last '", days_observed, "' days: '", percent % 'baseline_busy_share',
                "'%)'"
            ]) }}
        end, 'no on-demand price to compare with') as risk
    from timed

),

unrecommendable as (

    select
        {% for column in scope %}{{ column }},
        {% endfor -%}
        case when has_enough_history then 'no_steady_usage' else 'insufficient_history' end as option_name,
        window_start,
        window_end,
        hours_observed,
        baseline_percentile,
        baseline_gpus,
        case
            when has_enough_history then {{ dbt.concat([
                "'fewer than one GPU ran in '", "cast(100 - baseline_percentile as " ~ dbt.type_string() ~ ")",
                "'% of the hours: nothing steady to commit to'"
            ]) }}
            else {{ dbt.concat([
                "'insufficient history: '", days_observed, "' day(s) billed in the window, '",
                "'" ~ var('commitment_min_history_days', 14) ~ "'", "' needed to recommend a commitment'"
            ]) }}
        end as risk
    from profile
    where not has_enough_history
        or baseline_gpus = 0

),

final as (

    select
        {{ generate_surrogate_key(scope + ['option_name']) }} as commitment_recommendation_key,
        {% for column in scope %}{{ column }},
        {% endfor -%}
        option_name,
        window_start,
        window_end,
        hours_observed,
        baseline_percentile,
        baseline_gpus,
        baseline_busy_share,
        offer_provider,
        offer_pricing_model,
        offer_region,
        cast(term_months as integer) as term_months,
        cast(price_per_gpu_hour as decimal(38, 12)) as price_per_gpu_hour,
        cast(overhead as decimal(38, 12)) as spot_overhead,
        servers,
        cast(upfront_cost as decimal(38, 12)) as upfront_cost,
        cast(cost_per_year as decimal(38, 12)) as cost_per_year,
        cast(current_cost_per_year as decimal(38, 12)) as current_cost_per_year,
        cast(on_demand_cost_per_year as decimal(38, 12)) as on_demand_cost_per_year,
        savings_per_year,
        break_even_utilization,
        break_even_month,
        is_recommended,
        risk
    from recommended

    union all

    select
        {{ generate_surrogate_key(scope + ['option_name']) }} as commitment_recommendation_key,
        {% for column in scope %}{{ column }},
        {% endfor -%}
        option_name,
        window_start,
        window_end,
        hours_observed,
        baseline_percentile,
        baseline_gpus,
        cast(null as decimal(38, 6)) as baseline_busy_share,
        cast(null as {{ dbt.type_string() }}) as offer_provider,
        cast(null as {{ dbt.type_string() }}) as offer_pricing_model,
        cast(null as {{ dbt.type_string() }}) as offer_region,
        cast(null as integer) as term_months,
        cast(null as decimal(38, 12)) as price_per_gpu_hour,
        cast(null as decimal(38, 12)) as spot_overhead,
        cast(null as integer) as servers,
        cast(null as decimal(38, 12)) as upfront_cost,
        cast(null as decimal(38, 12)) as cost_per_year,
        cast(null as decimal(38, 12)) as current_cost_per_year,
        cast(null as decimal(38, 12)) as on_demand_cost_per_year,
        cast(null as decimal(38, 12)) as savings_per_year,
        cast(null as decimal(38, 4)) as break_even_utilization,
        cast(null as integer) as break_even_month,
        false as is_recommended,
        risk
    from unrecommendable

)

select * from final
