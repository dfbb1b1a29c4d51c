"""The summary `gpu-finops demo` ends with: spend, the GPU share, cost per GPU-hour, H100 market prices, and what our
AI workloads cost: a million tokens of our own serving against the cheapest comparable API, planned training runs."""

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
        marts = {
            row[0]
            for row in con.execute(
                "select table_name from information_schema.tables where table_schema = 'marts'"
            ).fetchall()
        }
        inference = (
            con.execute(
                """
                with latest as (
                    select *, row_number() over (
                        partition by model_name, gpu_model order by api_cost_per_million_tokens, api_model
                    ) as api_rank
                    from marts.fct_inference_buy_vs_api
                    where usage_month = (select max(usage_month) from marts.fct_inference_buy_vs_api)
                        and gpu_option = 'on_demand'
                )
                select usage_month, model_name, gpu_model, reporting_currency, self_hosted_cost_per_million_tokens,
                       api_provider || ' ' || api_model, api_cost_per_million_tokens, tokens_per_month,
                       break_even_tokens_per_month, break_even_utilization
                from latest where api_rank = 1 order by model_name, gpu_model
                """
            ).fetchall()
            if "fct_inference_buy_vs_api" in marts
            else []
        )
        training = (
            con.execute(
                """
                select run_name, gpu_hours, estimated_gpu_hours, currency, actual_cost, estimated_cost, realized_mfu,
                       planned_mfu
                from marts.fct_training_runs where is_planned_run order by started_at, run_name
                """
            ).fetchall()
            if "fct_training_runs" in marts
            else []
        )
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
        earlier = {(model, klass): (low, mid) for day, model, klass, low, mid, _ in market if day != newest}
        print(f"\nMarket price of an H100-hour (USD, cheapest / median), {newest} and 30 days earlier")
        print(
            table(
                ["pricing model", "provider class", "cheapest", "median", "offers", "30 days earlier"],
                [
                    [
                        model,
                        klass,
                        money(low),
                        money(mid),
                        str(n),
                        "-" if (model, klass) not in earlier else " / ".join(map(money, earlier[(model, klass)])),
                    ]
                    for day, model, klass, low, mid, n in market
                    if day == newest
                ],
            )
        )
    if inference:
        month, currency = inference[0][0], inference[0][3]
        print(
            f"\nAI workloads, {month:%B %Y} ({currency} per million tokens: our serving against the cheapest "
            "comparable API; break-even on on-demand GPUs, at the GPU activity it needs)"
        )
        for _, model, gpu, _, ours, api, api_price, volume, even, activity in inference:
            needs = "-" if even is None else f"{even / 1_000_000:,.0f} M at {activity:.0%}"
            print(
                f"  {model} on {gpu or '-'}: {'-' if ours is None else f'{ours:,.4f}'} against {api} "
                f"{'-' if api_price is None else f'{api_price:,.4f}'}; {volume / 1_000_000:,.0f} M tokens a month, "
                f"break-even {needs}"
            )
    for run, hours, estimated_hours, currency, cost, estimated, mfu, planned_mfu in training:
        print(
            f"  planned training run {run}: {hours:,.0f} GPU-hours (estimate {estimated_hours or 0:,.0f}), "
            f"{currency} {money(cost)} (estimate {money(estimated or 0)})"
            + ("" if mfu is None else f", MFU {mfu:.1%} (planned {planned_mfu:.1%})")
        )
    print(f"\nWarehouse: {home.warehouse}\nDocs site: {home.docs / 'index.html'}")
    print('Try: gpu-finops sql "select * from marts.fct_gpu_spend_daily limit 5"')
