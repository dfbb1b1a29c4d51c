"""The summary `gpu-finops demo` ends with: spend, the GPU share, cost per GPU-hour and H100 market prices."""

from __future__ import annotations

from pipelines.cli._output import money, table
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect


def print_summary(home: FinopsHome) -> None:
    with connect(home.warehouse, read_only=True) as con:
        totals = con.execute(
            """
            select billing_currency, bill_effective_cost, gpu_effective_cost, gpu_share_of_bill
            from marts.rpt_gpu_share_of_bill where bill_effective_cost is not null order by billing_currency
            """
        ).fetchall()
        reporting = con.execute(
            """
            select reporting_currency, effective_cost_reporting, rows_without_exchange_rate
            from marts.rpt_gpu_spend_in_reporting_currency
            """
        ).fetchall()
        providers = con.execute(
            """
            select provider_name, billing_currency, effective_cost, gpu_hours, cost_per_gpu_hour
            from marts.rpt_gpu_cost_per_hour_by_provider
            order by effective_cost desc
            """
        ).fetchall()
        market = con.execute(
            """
            with newest as (select max(price_date) as day from marts.fct_gpu_price_index)
            select price_date, pricing_model, provider_class, min_price_per_gpu_hour_usd,
                   median_price_per_gpu_hour_usd, offers
            from marts.fct_gpu_price_index, newest
            where gpu_model = 'H100' and pricing_model in ('on_demand', 'spot')
              and price_date in (newest.day, newest.day - interval 30 day)
            order by price_date desc, pricing_model, provider_class
            """
        ).fetchall()
    print("\nGPU FinOps summary (effective cost: amortized, after discounts and commitments)")
    for currency, spend, gpu_spend, gpu_share in totals:
        share = f" ({gpu_share:.0%} of the bill)" if gpu_share else ""
        print(f"  total spend {currency} {money(spend)}; GPU spend {currency} {money(gpu_spend or 0)}{share}")
    if reporting and reporting[0][1] is not None:
        currency, gpu_spend, unconverted = reporting[0]
        missing = f" ({unconverted} rows without an exchange rate left out)" if unconverted else ""
        print(f"  all GPU spend in the reporting currency: {currency} {money(gpu_spend)}{missing}")
    rows = [
        [
            provider,
            currency,
            money(spend),
            f"{hours:,.1f}",
            "-" if per_hour is None else money(per_hour),
        ]
        for provider, currency, spend, hours, per_hour in providers
    ]
    print(table(["provider", "currency", "GPU spend", "GPU-hours", "per GPU-hour"], rows))
    if market:
        newest = market[0][0]
        print(f"\nMarket price of an H100-hour (USD, cheapest / median), {newest} and 30 days earlier")
        print(
            table(
                ["day", "pricing model", "provider class", "cheapest", "median", "offers"],
                [[str(day), model, klass, money(low), money(mid), str(n)] for day, model, klass, low, mid, n in market],
            )
        )
    print(f"\nWarehouse: {home.warehouse}\nDocs site: {home.docs / 'index.html'}")
    print('Try: gpu-finops sql "select * from marts.fct_gpu_spend_daily limit 5"')
