"""The dbt project as Dagster sees it: one DbtProject and one translator for every dbt asset."""

from __future__ import annotations

import contextvars
import os
import pprint
import re
import shutil
import sys
import time
import uuid
import warnings
from collections.abc import Mapping
from functools import cached_property
from hashlib import sha256
from importlib.metadata import version as metadata_version
from pathlib import Path
from typing import Any

import dagster as dg
import msgpack
from dagster_dbt import DagsterDbtTranslator, DagsterDbtTranslatorSettings, DbtCliResource, DbtProject
from dagster_dbt.dbt_project import DagsterDbtProjectPreparer
from packaging import version as packaging_version

from pipelines.lib.settings import DBT_PROJECT_DIR

_BESIDE_PYTHON = Path(sys.executable).parent / "dbt"
DBT_EXECUTABLE = str(_BESIDE_PYTHON) if _BESIDE_PYTHON.exists() else shutil.which("dbt") or "dbt"
"""The dbt installed with this package, so the CLI works without an activated virtualenv."""


class _ParseWithOurDbt(DagsterDbtProjectPreparer):
    """dagster-dbt's preparer (it locks the manifest, so parallel processes never write it at once), run with
    the dbt beside this Python rather than whichever `dbt` is first on PATH. Always a full parse: dbt 1.11's
    partial parse, after a change to one properties file, has dropped the `meta` of singular tests declared in
    another (their Dagster checks vanished from the asset graph); a full parse costs about 16 s, only when a
    project file changed."""

    def _prepare_manifest(self, project: DbtProject) -> None:
        dbt_cli().cli(["parse", "--quiet", "--no-partial-parse"], target_path=project.target_path).wait()


dbt_project = DbtProject(project_dir=DBT_PROJECT_DIR, profiles_dir=DBT_PROJECT_DIR)

DBT_TARGET_DIR = DBT_PROJECT_DIR / dbt_project.target_path
"""dbt's target folder, absolute (the project's `target_path` is relative to the project, not to the caller)."""


PARSE_COMMAND = "python -m pipelines.lib.transform.dbt"
"""What writes the manifest: `make test-setup`, `make ui`, `make serve` and the CLI run it before loading the
definitions, which only read the manifest."""


def parse_project_if_changed() -> Path:
    """Run `dbt parse` when the manifest is missing or older than any project file; the manifest's path."""
    if not manifest_is_current():
        _ParseWithOurDbt().prepare(dbt_project)
    return dbt_project.manifest_path


def manifest_is_current() -> bool:
    """Whether the manifest exists and is newer than every file of the dbt project."""
    return _newer_than_the_project(dbt_project.manifest_path)


def _newer_than_the_project(path: Path) -> bool:
    sources = (
        path
        for folder in ("models", "macros", "seeds", "tests")
        for path in (DBT_PROJECT_DIR / folder).rglob("*")
        if path.is_file()
    )
    newest = max((path.stat().st_mtime for path in sources), default=0.0)
    newest = max(newest, (DBT_PROJECT_DIR / "dbt_project.yml").stat().st_mtime)
    return path.exists() and path.stat().st_mtime >= newest


DBT_PROFILE = "gpu_finops"
"""The connection profile dbt_project.yml names (profiles.yml)."""

PARTIAL_PARSE_FILE = "partial_parse.msgpack"
PROJECT_PARSE = DBT_TARGET_DIR / PARTIAL_PARSE_FILE
"""The parse `python -m pipelines.lib.transform.dbt` saves with the manifest (the default home's profile)."""


def run_target_path(op_name: str, run_id: str) -> Path:
    """A new target folder for one dbt invocation, named as dagster-dbt names its own (`prune_run_targets`)."""
    return DBT_TARGET_DIR / f"{op_name}-{run_id[:7]}-{uuid.uuid4().hex[:7]}"


def reuse_partial_parse(saved: Path, target_path: Path, environment: Mapping[str, str]) -> None:
    """Start a dbt invocation in `target_path` from a parse of the current project rather than a full parse (~15 s).

    The parse `saved` from the last invocation on the same warehouse when no project file is newer than it (dbt
    would re-parse the changed files partially, which has dropped properties before: `_ParseWithOurDbt`); else the
    project's own parse (`python -m pipelines.lib.transform.dbt`, made for the default home) when it is current,
    marked as made with the connection profile `environment` gives (`_parse_for_profile`).
    """
    target_path.mkdir(parents=True, exist_ok=True)
    if _newer_than_the_project(saved):
        shutil.copy2(saved, target_path / PARTIAL_PARSE_FILE)
    elif _newer_than_the_project(PROJECT_PARSE):
        _parse_for_profile(PROJECT_PARSE, target_path / PARTIAL_PARSE_FILE, environment)


def _parse_for_profile(parse: Path, destination: Path, environment: Mapping[str, str]) -> None:
    """Write `parse` to `destination` as if dbt had made it with the connection profile of `environment`.

    dbt keeps a hash of every connection setting in its saved parse and parses the whole project again when the
    hash differs, because a model could read the connection while it is parsed; the warehouse's path is one of the
    settings, so every new home would cost a full parse. No model of this project reads the connection at parse time
    (tests/pipelines/test_dbt_parse_reuse.py compares a reused parse with a full one), so the project's parse holds
    for any home on the same engine: only the hash is replaced. A parse of another engine, or anything dbt no
    longer reads as this code expects, is left alone, and dbt parses in full.
    """
    try:
        state = msgpack.unpackb(parse.read_bytes(), raw=False, strict_map_key=False)
        credentials = contextvars.copy_context().run(_credentials, environment, state["metadata"]["adapter_type"])
        if credentials is None:
            return
        settings = pprint.pformat(sorted(credentials.connection_info()))
        state["state_check"]["profile_hash"] = {"name": "sha256", "checksum": sha256(settings.encode()).hexdigest()}
    except Exception as exc:  # an optimisation: dbt's own full parse is the fallback
        warnings.warn(f"dbt parses the project in full: its saved parse could not be reused ({exc!r})", stacklevel=2)
        return
    destination.write_bytes(msgpack.packb(state, use_bin_type=True))


def _credentials(environment: Mapping[str, str], adapter_type: str) -> Any:
    """The connection credentials dbt renders from profiles.yml in `environment`, or None when they are not for
    `adapter_type` (run in a copied context: dbt reads the environment from a context variable)."""
    from dbt.config.profile import Profile, read_profile
    from dbt.config.renderer import ProfileRenderer
    from dbt_common.context import set_invocation_context

    set_invocation_context(dict(environment))
    raw_profile = read_profile(str(DBT_PROJECT_DIR))[DBT_PROFILE]
    target_name, connection = Profile.render_profile(raw_profile, DBT_PROFILE, None, ProfileRenderer({}))
    if connection.get("type") != adapter_type:
        return None
    connection.pop("threads", None)
    return Profile._credentials_from_profile(connection, DBT_PROFILE, target_name)


def save_partial_parse(target_path: Path, saved: Path) -> None:
    """Keep the parse a dbt invocation wrote in `target_path` for the next one on the same warehouse."""
    parsed = target_path / PARTIAL_PARSE_FILE
    if parsed.exists():
        saved.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(parsed, saved.with_suffix(".tmp"))
        saved.with_suffix(".tmp").replace(saved)


def require_manifest() -> Path:
    """The manifest the dbt assets are read from: an error naming the command that writes it when it is missing, a
    warning when a project file is newer (the asset graph would miss the change until the project is parsed)."""
    manifest = dbt_project.manifest_path
    if not manifest.exists():
        raise FileNotFoundError(
            f"The dbt manifest {manifest} is missing, so the Dagster definitions cannot be loaded: "
            f"run `{PARSE_COMMAND}` (or `make test-setup`) first"
        )
    if not manifest_is_current():
        warnings.warn(
            f"The dbt manifest {manifest} is older than the dbt project: run `{PARSE_COMMAND}` so the asset graph "
            "shows the project's latest models",
            stacklevel=2,
        )
    return manifest


KEPT_RUN_TARGETS = 5
"""How many per-run dbt target folders (about 26 MB each) stay for debugging; older ones are deleted."""

RUN_TARGET_IDLE_SECONDS = 3600
"""A run folder written to more recently than this may belong to a build still running: it is never deleted."""

_RUN_TARGET = re.compile(r"^(?:\w+-[0-9a-f]{7}-)?[0-9a-f]{7}$")
"""dagster-dbt's name for one invocation's target folder: `<op>-<run id[:7]>-<uuid[:7]>`, or `<uuid[:7]>`."""


def prune_run_targets(
    target: Path | None = None, *, keep: int = KEPT_RUN_TARGETS, idle_seconds: float = RUN_TARGET_IDLE_SECONDS
) -> list[Path]:
    """Delete all but the `keep` newest per-run target folders; dagster-dbt makes one per dbt call, never removed.

    Only folders named as dagster-dbt names them are touched (not manifest.json, partial_parse.msgpack nor a
    folder a person made), and none written to in the last `idle_seconds`: another process may be building there.
    Returns the folders deleted.
    """
    target = target or DBT_TARGET_DIR
    if not target.is_dir():
        return []
    runs = sorted(
        ((_last_written(path), path) for path in target.iterdir() if path.is_dir() and _RUN_TARGET.match(path.name)),
        reverse=True,
    )
    now = time.time()
    deleted = [path for written, path in runs[keep:] if now - written > idle_seconds]
    for path in deleted:
        shutil.rmtree(path, ignore_errors=True)
    return deleted


def _last_written(folder: Path) -> float:
    """The newest modification time of the folder and anything under it (a build writes files as it goes)."""
    newest = folder.stat().st_mtime
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            try:
                newest = max(newest, os.lstat(os.path.join(root, name)).st_mtime)
            except FileNotFoundError:
                continue
    return newest


class _DbtCli(DbtCliResource):
    """dagster-dbt's dbt CLI resource without two costs it adds to every build, a few seconds each.

    - It runs `dbt --version` in a subprocess (dbt's whole start-up) to learn the version: the dbt it runs is the
      one installed beside this Python (DBT_EXECUTABLE), whose version the package metadata gives.
    - It opens a dbt adapter in this process (dbt imported, the project and profile loaded) that only its row count
      and column metadata fetchers use, which these assets do not; dbt itself runs in its own process either way.

    Both hooks are private to dagster-dbt, whose version pyproject.toml pins.
    """

    @cached_property
    def _cli_version(self) -> packaging_version.Version:
        return packaging_version.parse(metadata_version("dbt-core"))

    def _initialize_dbt_core_adapter(self, args: Any) -> None:
        return None


def dbt_cli() -> DbtCliResource:
    return _DbtCli(project_dir=dbt_project, dbt_executable=DBT_EXECUTABLE)


class FinopsDbtTranslator(DagsterDbtTranslator):
    """Asset keys are `<schema>/<name>`, groups are the dbt layers (staging, intermediate, marts)."""

    def __init__(self) -> None:
        super().__init__(
            settings=DagsterDbtTranslatorSettings(enable_asset_checks=True, enable_source_tests_as_checks=True)
        )

    def get_asset_key(self, dbt_resource_props: Mapping[str, Any]) -> dg.AssetKey:
        if dbt_resource_props["resource_type"] == "source":
            return dg.AssetKey([dbt_resource_props["source_name"], dbt_resource_props["name"]])
        schema = dbt_resource_props.get("config", {}).get("schema") or dbt_resource_props["schema"]
        return dg.AssetKey([schema, dbt_resource_props["name"]])

    def get_group_name(self, dbt_resource_props: Mapping[str, Any]) -> str | None:
        fqn = dbt_resource_props.get("fqn", [])
        if dbt_resource_props["resource_type"] == "seed":
            return "reference"
        return fqn[1] if len(fqn) > 2 else "transform"


def main() -> int:
    print(f"dbt manifest: {parse_project_if_changed()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
