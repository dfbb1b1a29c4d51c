"""`gpu-finops`: the command line for people who run and read the warehouse.

Materializations run in-process through Dagster, against the instance in FINOPS_HOME/dagster,
so a CLI run shows up in the Dagster UI like a scheduled one.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from datetime import date
from decimal import Decimal
from importlib.metadata import version
from pathlib import Path

import duckdb

from pipelines.cli import console
from pipelines.cli.demo import demo as demo_command
from pipelines.cli.docs import docs as docs_command
from pipelines.cli.estimate import estimate_training as estimate_training_command
from pipelines.cli.export import export as export_command
from pipelines.cli.generate import generate as generate_command
from pipelines.cli.ingest import ingest as ingest_command
from pipelines.cli.prices import prices_refresh as prices_refresh_command
from pipelines.cli.report import report as report_command
from pipelines.cli.sql import sql as sql_command
from pipelines.lib.catalog.billing import SOURCES_BY_NAME
from pipelines.lib.operations import signals
from pipelines.lib.operations.instance import install_instance_config_into
from pipelines.lib.settings import FinopsHome, Settings
from pipelines.lib.warehouse.connection import WarehouseBusy

LOGGED_COMMANDS = {"demo", "ingest", "prices refresh", "generate", "docs", "report", "export"}
"""Commands that run Dagster, dbt or long steps: they get a log file under FINOPS_HOME/logs/ (see console.py)."""
DAGSTER_COMMANDS = {"demo", "ingest", "prices refresh"}
"""Commands that load the Dagster definitions, whose dbt assets are read from the manifest: parsed first if stale."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    # Line by line also into a pipe (CI, cron), so each phase shows when it is done, not at exit.
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)
    # The edge: the settings are read from the environment once, here, and passed down; the processes this one
    # starts (dbt) and the Dagster instance it opens read their part from the environment this sets.
    settings = Settings.from_environment()
    os.environ.update(settings.child_environment())
    home = settings.home
    install_instance_config_into(home)
    command = _command_name(args)
    if command in LOGGED_COMMANDS:
        console.start(home.logs, command, verbose=args.verbose)
    try:
        if command in DAGSTER_COMMANDS:
            from pipelines.lib.transform.dbt import parse_project_if_changed

            with console.console.detail():
                parse_project_if_changed()
        with signals.handled():
            code = args.handler(settings, args)
        console.console.name_log()
        return code
    except (FileNotFoundError, ValueError, WarehouseBusy) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except duckdb.CatalogException as exc:
        # A table the command reads is missing: the models were never built in this warehouse.
        print(
            f"error: {str(exc).strip().splitlines()[0]}. The models are not built in {home.warehouse}: "
            "run `gpu-finops demo`, or `gpu-finops ingest --rebuild` to build them",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        return _stopped(home, args)
    finally:
        console.console.clear_status()


def _command_name(args: argparse.Namespace) -> str:
    """The handler's name is the command: prices_refresh → "prices refresh"."""
    return args.handler.__name__.strip("_").replace("_", " ")


def _stopped(home: FinopsHome, args: argparse.Namespace) -> int:
    """SIGTERM or Ctrl-C: free what this process's runs held, say in one line what was and was not done."""
    import dagster as dg

    from pipelines.lib.operations.recovery import free_own_runs

    with dg.DagsterInstance.get() as instance:
        free_own_runs(instance)
    command = _command_name(args)
    print(f"gpu-finops {command} stopped by {signals.signal_name()}: {signals.progress.summary()}", file=sys.stderr)
    return signals.exit_code()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpu-finops", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('gpu-finops')}")
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also show Dagster's and dbt's logs on the screen (they always go to FINOPS_HOME/logs/)",
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    demo = commands.add_parser("demo", help="generate sample data, load it, build the docs, print a summary")
    demo.add_argument("--seed", type=int, default=42, help="sample data seed (default 42)")
    demo.set_defaults(handler=demo_command)

    ingest = commands.add_parser(
        "ingest", help="load billing files or folders, then rebuild what depends on them (once, if anything is new)"
    )
    ingest.add_argument(
        "paths",
        type=Path,
        nargs="*",
        metavar="PATH",
        help="a billing export file, or a folder holding one delivery (none with --rebuild: only rebuild the models)",
    )
    ingest.add_argument(
        "--source",
        choices=sorted(SOURCES_BY_NAME),
        help="the export format of every PATH (default: recognised from each file's header or folder's manifest)",
    )
    ingest.add_argument(
        "--rebuild",
        action="store_true",
        help="rebuild every model, even when nothing new was loaded (or no PATH given); without it, a build covers "
        "what the loads and the day changed",
    )
    ingest.add_argument(
        "--full-refresh",
        action="store_true",
        help="rebuild every model and the incremental ones from scratch (dbt build --full-refresh); implies --rebuild",
    )
    ingest.add_argument(
        "--retry",
        action="append",
        metavar="LOAD_ID",
        help="load a delivery the models withheld again, from quarantine, after a fix of the models (repeatable; "
        "audit.withheld_loads lists them)",
    )
    ingest.set_defaults(handler=ingest_command)

    sql = commands.add_parser("sql", help="run a read-only SQL query against the warehouse")
    sql.add_argument("query", help='the SQL, e.g. "select * from marts.fct_cost_daily limit 5"')
    sql.add_argument(
        "--format", choices=("table", "csv", "json"), default="table", help="how to print the rows (default table)"
    )
    sql.set_defaults(handler=sql_command)

    docs = commands.add_parser("docs", help="build the dbt docs site into FINOPS_HOME/docs")
    docs.add_argument("--serve", action="store_true", help="then serve it on http://localhost:PORT")
    docs.add_argument("--port", type=int, default=8080, help="the port --serve listens on (default 8080)")
    docs.set_defaults(handler=docs_command)

    report = commands.add_parser("report", help="write the static HTML report (charts and tables) from the marts")
    report.add_argument(
        "--output", type=Path, default=None, help="the HTML file (default FINOPS_HOME/report/gpu-finops-report.html)"
    )
    report.set_defaults(handler=report_command)

    prices = commands.add_parser("prices", help="market GPU prices and exchange rates")
    price_commands = prices.add_subparsers(required=True, metavar="ACTION")
    refresh = price_commands.add_parser(
        "refresh", help="fetch a day's (or a range's) prices and rates, then rebuild the models that read them"
    )
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
    refresh.add_argument(
        "--no-build", action="store_true", help="load the prices only; do not rebuild the models (price marts)"
    )
    refresh.set_defaults(handler=prices_refresh_command)

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
    training.set_defaults(handler=estimate_training_command)

    generate = commands.add_parser(
        "generate", help="write N billing line items per format (CUR 2.0, FOCUS, Azure) for benchmarks"
    )
    from synthetic_data.cli.scale import add_arguments as add_generate_arguments

    add_generate_arguments(generate)
    generate.set_defaults(handler=generate_command)

    export = commands.add_parser("export", help="write warehouse data in an open format")
    export.add_argument("format", choices=("focus",), help="the format: focus (FOCUS 1.2, Parquet and CSV)")
    export.add_argument("directory", type=Path, help="the folder the files are written to (created if missing)")
    export.set_defaults(handler=export_command)
    return parser
