"""`gpu-finops`: the command line for people who run and read the warehouse.

Materializations run in-process through Dagster, against the instance in FINOPS_HOME/dagster,
so a CLI run shows up in the Dagster UI like a scheduled one.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import functools
import http.server
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from pipelines.lib.ingest.billing_sources import SOURCES_BY_NAME
from pipelines.lib.operations import signals
from pipelines.lib.operations.outages import console_to, failure_line, log_file
from pipelines.lib.operations.recovery import cli_run_tags, prepare_instance
from pipelines.lib.reporting.atomic_files import replaced_atomically
from pipelines.lib.reporting.csv_safety import neutralise
from pipelines.lib.settings import FinopsHome, finops_home
from pipelines.lib.transform.builds import owed_build
from pipelines.lib.warehouse.warehouse import WarehouseBusy, connect


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    home = finops_home().ensure()
    try:
        with signals.handled():
            return args.handler(home, args)
    except (FileNotFoundError, ValueError, WarehouseBusy) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return _stopped(home, args)


def _stopped(home: FinopsHome, args: argparse.Namespace) -> int:
    """SIGTERM or Ctrl-C: free what this process's runs held, say in one line what was and was not done."""
    import dagster as dg

    from pipelines.lib.operations.recovery import free_own_runs

    with dg.DagsterInstance.get() as instance:
        free_own_runs(instance)
    command = args.handler.__name__.strip("_").replace("_", " ")
    print(f"gpu-finops {command} stopped by {signals.signal_name()}: {signals.progress.summary()}", file=sys.stderr)
    return signals.exit_code()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpu-finops", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    demo = commands.add_parser("demo", help="generate sample data, load it, build the docs, print a summary")
    demo.add_argument("--seed", type=int, default=42, help="sample data seed (default 42)")
    demo.set_defaults(handler=_demo)

    ingest = commands.add_parser(
        "ingest", help="load billing files or folders, then rebuild what depends on them (once, if anything is new)"
    )
    ingest.add_argument("paths", type=Path, nargs="+", metavar="PATH")
    ingest.add_argument(
        "--source",
        choices=sorted(SOURCES_BY_NAME),
        help="the export format of every PATH (default: recognised from each file's header or folder's manifest)",
    )
    ingest.add_argument("--rebuild", action="store_true", help="rebuild the models even when nothing new was loaded")
    ingest.set_defaults(handler=_ingest)

    sql = commands.add_parser("sql", help="run a read-only SQL query against the warehouse")
    sql.add_argument("query")
    sql.add_argument("--format", choices=("table", "csv", "json"), default="table")
    sql.set_defaults(handler=_sql)

    docs = commands.add_parser("docs", help="build the dbt docs site into FINOPS_HOME/docs")
    docs.add_argument("--serve", action="store_true", help="then serve it on http://localhost:PORT")
    docs.add_argument("--port", type=int, default=8080)
    docs.set_defaults(handler=_docs)

    report = commands.add_parser("report", help="write the static HTML report (charts and tables) from the marts")
    report.add_argument(
        "--output", type=Path, default=None, help="the HTML file (default FINOPS_HOME/report/gpu-finops-report.html)"
    )
    report.set_defaults(handler=_report)

    prices = commands.add_parser("prices", help="market GPU prices and exchange rates")
    price_commands = prices.add_subparsers(required=True, metavar="ACTION")
    refresh = price_commands.add_parser("refresh", help="fetch a day's (or a range's) prices and rates")
    refresh.add_argument("--offline", action="store_true", help="read the bundled snapshots, no network")
    refresh.add_argument(
        "--date",
        type=date.fromisoformat,
        default=None,
        help="the (last) day to refresh, YYYY-MM-DD (default: today, UTC)",
    )
    refresh.add_argument(
        "--from",
        dest="first_day",
        type=date.fromisoformat,
        default=None,
        help="refresh every day from this one through --date, in one run",
    )
    refresh.set_defaults(handler=_prices_refresh)

    estimate = commands.add_parser("estimate", help="one-off finance estimates")
    estimate_commands = estimate.add_subparsers(required=True, metavar="WHAT")
    training = estimate_commands.add_parser(
        "training", help="GPU-hours and cost of a training run: FLOPs = 6 × parameters × tokens"
    )
    training.add_argument("--params", type=float, required=True, help="model parameters N, e.g. 7e9")
    training.add_argument("--tokens", type=float, required=True, help="training tokens T, e.g. 1e12")
    training.add_argument("--gpu", required=True, help="GPU model as in seed gpu_specs, e.g. H100")
    training.add_argument("--mfu", type=Decimal, default=Decimal("0.4"), help="model FLOPs utilization (default 0.4)")
    training.add_argument(
        "--price",
        type=Decimal,
        default=None,
        help="price per GPU-hour (default: our effective rate for the GPU from the warehouse, when it has one)",
    )
    training.add_argument(
        "--overhead", type=Decimal, default=Decimal("0.3"), help="share added for restarts and evaluation (default 0.3)"
    )
    training.add_argument("--gpus", type=int, default=None, help="GPUs used at once, for the wall-clock days")
    training.set_defaults(handler=_estimate_training)

    generate = commands.add_parser(
        "generate", help="write N billing line items per format (CUR 2.0, FOCUS, Azure) for benchmarks"
    )
    from sources.synthetic.scale import add_arguments as add_generate_arguments

    add_generate_arguments(generate)
    generate.set_defaults(handler=_generate)

    export = commands.add_parser("export", help="write warehouse data in an open format")
    export.add_argument("format", choices=("focus",))
    export.add_argument("directory", type=Path)
    export.set_defaults(handler=_export)
    return parser


def _demo(home: FinopsHome, args: argparse.Namespace) -> int:
    import dagster as dg

    from pipelines.lib.ingest.landing import register
    from pipelines.lib.transform.asset_selections import transform_selection
    from sources.synthetic.demo_organisation import demo_first_day, demo_last_day, write_demo_organisation

    with tempfile.TemporaryDirectory() as scratch:
        deliveries = write_demo_organisation(Path(scratch), seed=args.seed)
        print(f"Generated {len(deliveries)} sample deliveries of one organisation, Acme AI (seed {args.seed}).")
        for delivery in deliveries:
            register(home, delivery.source, delivery.path)
    # Market prices and exchange rates from the bundled snapshots, captured daily over the sample's months.
    os.environ["FINOPS_OFFLINE"] = "1"
    if not _refresh_prices(demo_first_day(), demo_last_day()):
        return 1
    if not _demo_telemetry(home, args.seed):
        return 1
    # On-prem cost lines run to a cut-off day (default: yesterday); pin it to the sample's last day.
    dbt_vars = {"onprem_costs_through": demo_last_day().isoformat()}
    results, ok = _execute(transform_selection() | dg.AssetSelection.groups("ingest"), dbt_vars)
    _print_deliveries(results)
    if not ok:
        return 1
    _build_docs(home)
    _print_summary(home)
    print(f"Report: {_write_report(home, None)}")
    return 0


def _generate(home: FinopsHome, args: argparse.Namespace) -> int:
    from sources.synthetic.scale import generate

    for written in generate(args):
        print(f"{written.source}\t{written.billing_period}\t{written.rows}\t{written.path}")
    return 0


def _ingest(home: FinopsHome, args: argparse.Namespace) -> int:
    from pipelines.lib.ingest.landing import register
    from pipelines.lib.transform.asset_selections import load_selection, transform_selection
    from sources.detect import detect_source

    deliveries = []
    for path in args.paths:
        source = args.source
        if source is None:
            source = detect_source(path)
            print(f"Recognised {path} as {SOURCES_BY_NAME[source].title} (override with --source).")
        deliveries.append(register(home, source, path))
        print(f"Registered {path} as {source}/{deliveries[-1].name}")
    keys = sorted({SOURCES_BY_NAME[delivery.source].asset_key for delivery in deliveries})
    signals.progress.start(
        f"loading {', '.join(str(path) for path in args.paths)} (a delivery not yet committed was rolled back; "
        "run the same command again)",
        "model build",
    )
    results, ok = _execute(load_selection(*keys))
    signals.progress.finish(f"loaded {sum(r['status'] == 'loaded' for r in results)} of {len(results)} deliveries")
    _print_deliveries(results)
    loaded = any(result["status"] == "loaded" for result in results)
    # A crash can leave loads the models never saw (killed between load and build, or mid-build).
    owed = owed_build(home.warehouse) if ok and not (args.rebuild or loaded) else None
    if owed:
        print(f"Rebuilding the models: {owed}.")
    if ok and (args.rebuild or loaded or owed):
        signals.progress.start("model build (the next `gpu-finops ingest` rebuilds)")
        _, ok = _execute(transform_selection())
        signals.progress.finish("models built" if ok else "model build failed")
    elif ok:
        # Rebuilding would change nothing, and a rejected delivery leaves the warehouse as it was.
        print("Nothing new was loaded, so the models were not rebuilt (--rebuild forces it).")
    mine = {delivery.name for delivery in deliveries}
    if not ok or any(r["status"] == "rejected" and r["delivery"] in mine for r in results):
        return 1
    return 0


def _execute(selection: Any, dbt_vars: dict[str, str] | None = None) -> tuple[list[dict[str, Any]], bool]:
    """One in-process run of `selection` (a Dagster AssetSelection): the deliveries it loaded, and success.

    `dbt_vars` are passed to this run's `dbt build` as `--vars`.
    """
    import dagster as dg

    from pipelines.definitions import defs
    from pipelines.defs.transform.dbt import gpu_finops_dbt_models

    definitions = defs()
    job = definitions.resolve_implicit_global_asset_job_def()
    run_config = None
    if dbt_vars:
        run_config = {"ops": {gpu_finops_dbt_models.op.name: {"config": {"vars": dbt_vars}}}}
    with dg.DagsterInstance.get() as instance:
        prepare_instance(instance)
        result = job.execute_in_process(
            instance=instance,
            asset_selection=list(selection.resolve(definitions.resolve_asset_graph())),
            raise_on_error=False,
            run_config=run_config,
            tags=cli_run_tags(),
        )
    signals.raise_if_stopped()
    deliveries: list[dict[str, Any]] = []
    for event in result.get_asset_materialization_events():
        metadata = event.step_materialization_data.materialization.metadata
        if "deliveries" in metadata:
            deliveries.extend(metadata["deliveries"].value)
    if not result.success:
        for event in result.all_events:
            if event.is_step_failure:
                print(
                    f"error in {event.step_key}: {event.step_failure_data.error.message.strip()}",
                    file=sys.stderr,
                )
        for check in result.get_asset_check_evaluations():
            if not check.passed:
                print(f"failed check: {check.asset_key.to_user_string()} {check.check_name}", file=sys.stderr)
    return deliveries, result.success


def _prices_refresh(home: FinopsHome, args: argparse.Namespace) -> int:
    if args.offline:
        os.environ["FINOPS_OFFLINE"] = "1"
    last = args.date or datetime.now(UTC).date()
    first = args.first_day or last
    if first > last:
        print(f"--from {first} is after {last}", file=sys.stderr)
        return 2
    signals.progress.start("price refresh (feeds are loaded one by one; each is whole or absent)")
    return 0 if _refresh_prices(first, last) else 1


def _refresh_prices(first: date, last: date) -> bool:
    """Materialize the daily-partitioned price and exchange-rate assets for the days first…last, in one run."""
    import dagster as dg

    from pipelines.definitions import defs
    from pipelines.lib.prices.price_feeds import PRICE_FEEDS

    definitions = defs()
    job = definitions.resolve_implicit_global_asset_job_def()
    selection = dg.AssetSelection.groups("prices").resolve(definitions.resolve_asset_graph())
    if first == last:
        partitions: dict[str, Any] = {"partition_key": last.isoformat(), "tags": cli_run_tags()}
    else:
        partitions = {
            "tags": {
                "dagster/asset_partition_range_start": first.isoformat(),
                "dagster/asset_partition_range_end": last.isoformat(),
            }
            | cli_run_tags()
        }
    # Dagster's console log (retries, stack traces) goes to a log file: an outage is one line per feed here.
    log = log_file(finops_home().logs, "prices-refresh")
    with dg.DagsterInstance.get() as instance, console_to(log):
        prepare_instance(instance)
        result = job.execute_in_process(
            instance=instance, asset_selection=list(selection), raise_on_error=False, **partitions
        )
    signals.raise_if_stopped()
    days = f"{first}" if first == last else f"{first}…{last}"
    reported: set[str] = set()
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        asset = materialization.asset_key.to_user_string()
        if asset in reported:
            continue
        reported.add(asset)
        metadata = {key: value.value for key, value in materialization.metadata.items()}
        print(
            f"{asset} {days}: {metadata.get('status', 'loaded')}, "
            f"{metadata.get('rows_loaded', 0)} rows from {metadata.get('source_url', '-')}"
        )
    failed = set()
    for event in result.all_events:
        if event.is_step_failure:
            failed.add(event.step_key)
            print(failure_line(event.step_key.replace("__", "/"), event.step_failure_data.error), file=sys.stderr)
    keys_needed = {f"prices/{feed.name}": feed.credential_env for feed in PRICE_FEEDS if feed.credential_env}
    for key in sorted(selection, key=lambda key: key.to_user_string()):
        if key.to_user_string() not in reported and "__".join(key.path) not in failed:
            needed = keys_needed.get(key.to_user_string())
            why = f"set {needed} to fetch it" if needed and not os.environ.get(needed) else "see the log file for why"
            print(f"{key.to_user_string()} {days}: skipped ({why})")
    print(f"Log (Dagster's events, retries, stack traces): {log}", file=sys.stderr if failed else sys.stdout)
    return result.success


def _demo_telemetry(home: FinopsHome, seed: int) -> bool:
    """The demo fleet's GPU telemetry: nvidia-smi logs and the host map into the landing zone, and the
    recorded Prometheus answers loaded offline, all demo days in one run (see docs/gpu-telemetry.md)."""
    import dagster as dg

    from pipelines.definitions import defs
    from pipelines.lib.ingest.landing import register
    from pipelines.lib.ingest.telemetry import HOST_MAP_SOURCE, NVIDIA_SMI_SOURCE, prometheus_payloads
    from sources.synthetic.demo_organisation import DEFAULT_START_MONTH, demo_first_day, demo_last_day
    from sources.synthetic.demo_telemetry import write_demo_telemetry

    first_day = demo_first_day()
    with tempfile.TemporaryDirectory() as scratch:
        written = write_demo_telemetry(Path(scratch), seed=seed, start_month=DEFAULT_START_MONTH)
        register(home, NVIDIA_SMI_SOURCE, written["nvidia_smi"])
        register(home, HOST_MAP_SOURCE, written["host_map"])
        recordings = prometheus_payloads(home, first_day).parent
        shutil.copytree(written["prometheus"], recordings, dirs_exist_ok=True)
    definitions = defs()
    job = definitions.resolve_implicit_global_asset_job_def()
    selection = dg.AssetSelection.groups("telemetry").resolve(definitions.resolve_asset_graph())
    with dg.DagsterInstance.get() as instance:
        prepare_instance(instance)
        result = job.execute_in_process(
            instance=instance,
            asset_selection=list(selection),
            tags={
                "dagster/asset_partition_range_start": first_day.isoformat(),
                "dagster/asset_partition_range_end": demo_last_day().isoformat(),
            }
            | cli_run_tags(),
            raise_on_error=False,
        )
    signals.raise_if_stopped()
    for event in result.get_asset_materialization_events():
        metadata = {key: value.value for key, value in event.step_materialization_data.materialization.metadata.items()}
        print(
            f"loaded    Prometheus GPU metrics (recorded): {metadata.get('days_loaded')} days, "
            f"{metadata.get('hosts')} hosts, {metadata.get('rows_loaded')} samples"
        )
    for event in result.all_events:
        if event.is_step_failure:
            print(f"error in {event.step_key}: {event.step_failure_data.error.message.strip()}", file=sys.stderr)
    return result.success


def _estimate_training(home: FinopsHome, args: argparse.Namespace) -> int:
    """The formula of fct_training_cost_estimates for one run; the price defaults to our own rate."""
    from pipelines.lib.reporting.training_estimate import estimate_training, peak_bf16_tflops

    gpu_model, peak = peak_bf16_tflops(args.gpu)
    price, price_source = args.price, "given"
    if price is None:
        price, price_source = _our_effective_rate(home, gpu_model)
    estimate = estimate_training(
        gpu_model=gpu_model,
        parameters=args.params,
        tokens=args.tokens,
        peak_tflops=peak,
        mfu=args.mfu,
        overhead=args.overhead,
        price_per_gpu_hour=price,
        gpus=args.gpus,
    )
    overhead = f"{(estimate.overhead * 100).normalize():f}%"
    print(f"Training {estimate.parameters:.3g} parameters on {estimate.tokens:.3g} tokens on {gpu_model}")
    print(f"  compute      {estimate.training_flops:.4g} FLOPs (6 × parameters × tokens)")
    print(f"  throughput   {peak:g} TFLOPS peak dense BF16 (seed gpu_specs) at MFU {estimate.mfu:g}")
    if estimate.mfu_outside_typical_range:
        print("               (MFU outside 0.15-0.60: dense LLM training usually reaches 0.35-0.45)")
    print(
        f"  GPU-hours    {estimate.compute_gpu_hours:,.2f} compute only; "
        f"{estimate.gpu_hours:,.2f} with {overhead} overhead"
    )
    if estimate.wall_clock_days is not None:
        print(f"  wall clock   {estimate.wall_clock_days:,.2f} days on {estimate.gpus} GPUs")
    if estimate.cost is None:
        print("  cost         no price: pass --price (no effective rate for this GPU in the warehouse)")
    else:
        print(
            f"  cost         {_money(estimate.compute_cost)} compute only; {_money(estimate.cost)} with {overhead} "
            f"overhead, at {estimate.price_per_gpu_hour:g} per GPU-hour ({price_source})"
        )
    return 0


def _our_effective_rate(home: FinopsHome, gpu_model: str) -> tuple[Decimal | None, str]:
    """Our effective rate for the GPU as the finance marts compute it, when the warehouse has one."""
    import duckdb

    if not home.warehouse.exists():
        return None, "none"
    try:
        with connect(home.warehouse, read_only=True) as con:
            row = con.execute(
                "select effective_rate_per_gpu_hour, currency, window_start, window_end "
                "from intermediate.int_finance__gpu_rates where gpu_model = ?",
                [gpu_model],
            ).fetchone()
    except duckdb.CatalogException:
        return None, "none"
    if row is None or row[0] is None:
        return None, "none"
    rate, currency, first, last = row
    return rate, f"our effective rate, {currency}, {first} to {last}"


def _print_deliveries(results: list[dict[str, Any]]) -> None:
    for result in results:
        status = result["status"]
        if status == "rejected":
            print(f"REJECTED  {result['delivery']}\n          {result['reason']}\n          moved to quarantine/")
            continue
        if status == "duplicate":
            print(f"unchanged {result['delivery']} (loaded before as {result['load_id']})")
            continue
        totals = "; ".join(
            f"{currency} billed {_money(Decimal(t['billed']))} effective {_money(Decimal(t['effective']))}"
            for currency, t in result["totals"].items()
        )
        replaced = f", replaced {result['replaced_rows']} restated rows" if result["replaced_rows"] else ""
        warnings = result.get("warnings") or []
        label = f"loaded with {len(warnings)} warning{'s' if len(warnings) > 1 else ''}" if warnings else "loaded"
        print(
            f"{label}  {result['delivery']}: {result['rows']} rows, billing periods "
            f"{', '.join(result['billing_periods'])}{replaced}\n          {totals}"
        )
        for warning in warnings:
            first = f", first at {warning['example']}" if warning.get("example") else ""
            print(f"          warning: {warning['rule']}: {warning['rows']} row(s){first}")


def _print_summary(home: FinopsHome) -> None:
    with connect(home.warehouse, read_only=True) as con:
        totals = con.execute(
            """
            select billing_currency, sum(effective_cost) as spend, sum(gpu_effective_cost) as gpu_spend
            from marts.fct_cost_daily group by billing_currency order by billing_currency
            """
        ).fetchall()
        reporting = con.execute(
            """
            select any_value(reporting_currency), sum(effective_cost_reporting),
                   count(*) filter (where effective_cost_reporting is null)
            from marts.fct_gpu_spend_daily
            """
        ).fetchall()
        providers = con.execute(
            """
            select provider_name, billing_currency, sum(effective_cost), sum(gpu_hours)
            from marts.fct_gpu_spend_daily
            group by provider_name, billing_currency
            order by sum(effective_cost) desc
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
    for currency, spend, gpu_spend in totals:
        share = f" ({gpu_spend / spend:.0%} of the bill)" if spend and gpu_spend else ""
        print(f"  total spend {currency} {_money(spend)}; GPU spend {currency} {_money(gpu_spend or 0)}{share}")
    if reporting and reporting[0][1] is not None:
        currency, gpu_spend, unconverted = reporting[0]
        missing = f" ({unconverted} rows without an exchange rate left out)" if unconverted else ""
        print(f"  all GPU spend in the reporting currency: {currency} {_money(gpu_spend)}{missing}")
    rows = [
        [
            provider,
            currency,
            _money(spend),
            f"{hours:,.1f}",
            _money(spend / hours) if hours else "-",
        ]
        for provider, currency, spend, hours in providers
    ]
    print(_table(["provider", "currency", "GPU spend", "GPU-hours", "per GPU-hour"], rows))
    if market:
        newest = market[0][0]
        print(f"\nMarket price of an H100-hour (USD, cheapest / median), {newest} and 30 days earlier")
        print(
            _table(
                ["day", "pricing model", "provider class", "cheapest", "median", "offers"],
                [
                    [str(day), model, klass, _money(low), _money(mid), str(n)]
                    for day, model, klass, low, mid, n in market
                ],
            )
        )
    print(f"\nWarehouse: {home.warehouse}\nDocs site: {home.docs / 'index.html'}")
    print('Try: gpu-finops sql "select * from marts.fct_gpu_spend_daily limit 5"')


def _sql(home: FinopsHome, args: argparse.Namespace) -> int:
    import duckdb

    with connect(home.warehouse, read_only=True) as con:
        try:
            cursor = con.execute(args.query)
        except duckdb.Error as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        if cursor.description is None:
            return 0
        header = [column[0] for column in cursor.description]
        rows = cursor.fetchall()
    if args.format == "json":
        print(json.dumps([dict(zip(header, row, strict=True)) for row in rows], default=_json_value, indent=2))
    elif args.format == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(header)
        writer.writerows([[_csv_cell(value) for value in row] for row in rows])
    else:
        print(_table(header, [[_text(value) for value in row] for row in rows]))
        print(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return 0


def _docs(home: FinopsHome, args: argparse.Namespace) -> int:
    index = _build_docs(home)
    print(f"Docs site: {index}")
    if args.serve:
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(home.docs))
        with http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler) as server:
            print(f"Serving on http://127.0.0.1:{args.port}/ (Ctrl-C to stop)")
            with contextlib.suppress(KeyboardInterrupt):
                server.serve_forever()
    return 0


def _report(home: FinopsHome, args: argparse.Namespace) -> int:
    path = _write_report(home, args.output)
    print(f"Report: {path}")
    return 0


def _write_report(home: FinopsHome, output: Path | None) -> Path:
    """The static HTML report of the marts; opens offline in any browser."""
    from pipelines.lib.reporting.report import REPORT_FILE, write_report

    return write_report(home.warehouse, output or home.reports / REPORT_FILE).path


def _build_docs(home: FinopsHome) -> Path:
    """Generate dbt's static, self-contained docs page into FINOPS_HOME/docs/index.html."""
    from pipelines.lib.transform.dbt import dbt_cli, ensure_manifest

    ensure_manifest()
    invocation = dbt_cli().cli(["docs", "generate", "--static"], raise_on_error=True)
    invocation.wait()
    index = home.docs / "index.html"
    page = (invocation.target_path / "static_index.html").read_text(encoding="utf-8")
    with replaced_atomically(index) as (temporary,):
        temporary.write_text(_bind_template_urls(page), encoding="utf-8")
    return index


def _bind_template_urls(page: str) -> str:
    """dbt-docs' templates put `{{ … }}` straight into URL attributes (menu icons, the logo), so the browser
    fetches the literal text before AngularJS fills it in: a console error per icon, and from file:// an
    'unsafe attempt to load URL' each. AngularJS's ng-attr-/ng-src set those attributes once they are bound.
    The favicon link is an unbuilt `${require(…)}` placeholder: it becomes an empty inline icon."""
    return (
        page.replace('<use xlink:href="{{', '<use ng-attr-xlink:href="{{')
        .replace('src="{{ logo }}"', 'ng-src="{{ logo }}"')
        .replace("href=\"${require('./assets/favicons/favicon.ico')}\"", 'href="data:,"')
    )


def _export(home: FinopsHome, args: argparse.Namespace) -> int:
    from pipelines.lib.reporting.focus_export import export_focus

    signals.progress.start(f"FOCUS export to {args.directory} (files there are as they were)")
    written = export_focus(home.warehouse, args.directory)
    for path, rows in written:
        print(f"wrote {path} ({rows} rows)")
    return 0


def _money(value: Decimal | float | int) -> str:
    return f"{Decimal(value):,.2f}"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)


def _csv_cell(value: Any) -> str:
    """Text that a spreadsheet would run as a formula is neutralised; numbers and dates are written as they are."""
    return neutralise(value) if isinstance(value, str) else _text(value)


def _json_value(value: Any) -> Any:
    """Decimals as exact strings (a JSON number would be read back as a binary float)."""
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, date | datetime):
        return value.isoformat()
    return str(value)


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(header)]
    lines = [
        "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
