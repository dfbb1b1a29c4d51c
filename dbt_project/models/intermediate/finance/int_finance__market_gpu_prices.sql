{#-
    The market's price of a GPU-hour per GPU model on the newest day of the price index, in the reporting
    currency: the typical on-demand, spot and one-year committed price and the cheapest offer one can rent
    without a term.
    Shared by the finance marts so "the market" means the same thing everywhere.

    typical = the lowest median among provider classes (hyperscaler, specialized GPU cloud, marketplace):
    what renting costs in the cheaper kind of cloud, not one outlier offer; for one-year commitments, among
    reservations, savings plans and committed-use prices too. cheapest = the lowest offer of
    any no-term pricing model (on-demand, spot, interruptible, community); reserved and committed prices
    need a 1-3 year term and are left out. Null where the market has no such offer that day.
-#}

with

index_rows as (

    select * from {{ ref('fct_gpu_price_index') }}

),

newest as (

    select max(price_date) as price_date from index_rows

),

latest as (

    select index_rows.*
    from index_rows
    inner join newest
        on index_rows.price_date = newest.price_date

),

final as (

    select
        gpu_model,
        price_date,
        reporting_currency as currency,
        cast(min(case when pricing_model = 'on_demand' then median_price_per_gpu_hour_reporting end) as decimal(38, 12))
            as on_demand_price_per_gpu_hour,
        cast(min(case when pricing_model = 'spot' then median_price_per_gpu_hour_reporting end) as decimal(38, 12))
            as spot_price_per_gpu_hour,
        cast(
            min(
                case
                    when pricing_model in ('reserved_1y', 'savings_plan_1y', 'committed_1y')
                        then median_price_per_gpu_hour_reporting
                end
            ) as decimal(38, 12)
        ) as committed_1y_price_per_gpu_hour,
        cast(
            min(
                case
                    when pricing_model in ('on_demand', 'spot', 'interruptible', 'community')
                        then min_price_per_gpu_hour_reporting
                end
            ) as decimal(38, 12)
        ) as cheapest_price_per_gpu_hour
    from latest
    group by gpu_model, price_date, reporting_currency

)

select * from final
