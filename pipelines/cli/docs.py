"""`gpu-finops docs`: the dbt docs site as one static page, optionally served."""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
from pathlib import Path

from pipelines.cli.console import console
from pipelines.lib.foundation.atomic_files import replaced_atomically
from pipelines.lib.settings import FinopsHome, Settings


def docs(settings: Settings, args: argparse.Namespace) -> int:
    home = settings.home
    index = build_docs(home)
    print(f"Docs site: {index}")
    if args.serve:
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(home.docs))
        with http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler) as server:
            print(f"Serving on http://127.0.0.1:{args.port}/ (Ctrl-C to stop)")
            with contextlib.suppress(KeyboardInterrupt):
                server.serve_forever()
    return 0


def build_docs(home: FinopsHome) -> Path:
    """Generate dbt's static, self-contained docs page into FINOPS_HOME/docs/index.html."""
    from pipelines.lib.transform.dbt import dbt_cli, parse_project_if_changed, prune_run_targets

    with console.detail():
        parse_project_if_changed()
        prune_run_targets()
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
    'unsafe attempt to load URL' each. AngularJS's ng-attr-/ng-src set those attributes once they are bound (dbt
    1.11's logo already has ng-src: only a bare ` src=` is rewritten, or it would become a broken `ng-ng-src`).
    The favicon link is an unbuilt `${require(…)}` placeholder: it becomes an empty inline icon."""
    return (
        page.replace('<use xlink:href="{{', '<use ng-attr-xlink:href="{{')
        .replace(' src="{{ logo }}"', ' ng-src="{{ logo }}"')
        .replace("href=\"${require('./assets/favicons/favicon.ico')}\"", 'href="data:,"')
    )
