"""The Dagster instance's settings file, FINOPS_HOME/dagster/dagster.yaml, with its storage chosen from the environment.

The repository's `dagster.yaml` holds everything the instance needs (the run queue, the `duckdb_writer` pool of one,
run monitoring) with SQLite storage under DAGSTER_HOME, the default. When DAGSTER_PG_HOST is set, the installed file
takes its `storage:` block from `dagster-postgres.yaml` instead and keeps every other section of `dagster.yaml`, so
the two modes share one copy of the settings that matter and cannot drift apart. The PostgreSQL block names
environment variables only (`{env: DAGSTER_PG_PASSWORD}`), which Dagster reads when it starts: no secret is ever
written to a file.

`python -m pipelines.lib.operations.instance` installs the file and prints which storage it chose (`make serve`,
`make ui` and the systemd units in docs/operations.md run it before starting Dagster).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

import yaml

from pipelines.lib.settings import DAGSTER_POSTGRES_YAML, DAGSTER_YAML, FinopsHome, Settings

POSTGRES_ENV = ("DAGSTER_PG_HOST", "DAGSTER_PG_PORT", "DAGSTER_PG_DB", "DAGSTER_PG_USER", "DAGSTER_PG_PASSWORD")
"""The variables dagster-postgres.yaml reads; DAGSTER_PG_HOST being set is what turns PostgreSQL on."""


class InstanceConfigError(ValueError):
    """The environment does not say enough to reach PostgreSQL, or disagrees with the installed instance on where
    Dagster's runs are kept."""


def postgres_configured(env: Mapping[str, str] = os.environ) -> bool:
    return bool(env.get("DAGSTER_PG_HOST", "").strip())


def instance_config(base: Path, postgres: Path, env: Mapping[str, str] = os.environ) -> str:
    """The text of the instance's dagster.yaml: `base` as it is, or with `postgres`'s storage block when configured."""
    if not postgres_configured(env):
        return base.read_text()
    missing = [name for name in POSTGRES_ENV if not env.get(name, "").strip()]
    if missing:
        raise InstanceConfigError(
            f"DAGSTER_PG_HOST is set, so the Dagster instance keeps its runs in PostgreSQL, but {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not: set {', '.join(POSTGRES_ENV)} (docs/operations.md, "
            "'Running it every day in production'), or unset DAGSTER_PG_HOST for the embedded SQLite storage."
        )
    config = yaml.safe_load(base.read_text())
    config["storage"] = yaml.safe_load(postgres.read_text())["storage"]
    header = (
        f"# Installed from {base.name} with the storage block of {postgres.name} (DAGSTER_PG_HOST is set).\n"
        "# Rewritten on every start: edit those files, not this copy.\n"
    )
    return header + yaml.safe_dump(config, sort_keys=False)


def install_instance_config(dagster_home: Path, base: Path, postgres: Path) -> Path:
    """Write the instance's dagster.yaml into `dagster_home` when it differs from what the environment asks for."""
    target = dagster_home / "dagster.yaml"
    if not postgres_configured() and target.exists() and storage_kind(target) == "postgres":
        # Writing SQLite here would split the instance: this process's runs (and their duckdb_writer pool) in one
        # store, the daemon's in PostgreSQL.
        raise InstanceConfigError(
            f"{target} keeps Dagster's runs in PostgreSQL, but DAGSTER_PG_HOST is not set in this environment: set "
            f"{', '.join(POSTGRES_ENV)} as the daemon has them, or delete {target} to go back to SQLite."
        )
    text = instance_config(base, postgres)
    if not target.exists() or target.read_text() != text:
        temporary = target.with_name(f".dagster.yaml.{os.getpid()}.tmp")
        temporary.write_text(text)
        temporary.replace(target)
    return target


def install_instance_config_into(home: FinopsHome) -> Path:
    """Create the home's folders and install the project's dagster.yaml into its Dagster instance: what a process
    that starts Dagster on this home (the CLI, `make ui`/`make serve`, a test running a real instance) does first."""
    return install_instance_config(home.create_folders().dagster_home, DAGSTER_YAML, DAGSTER_POSTGRES_YAML)


def storage_kind(installed: Path) -> str:
    """`postgres` or `sqlite`: the storage the installed file configures."""
    return next(iter(yaml.safe_load(installed.read_text())["storage"]))


def main() -> int:
    home = Settings.from_environment().home
    try:
        installed = install_instance_config_into(home)
    except ValueError as error:  # InstanceConfigError (run as __main__, this module's class is another object)
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"Dagster instance {home.dagster_home}: {storage_kind(installed)} storage ({installed})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
