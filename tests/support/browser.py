"""Pages opened in a real headless Chromium (Debian's `chromium`, driven by playwright; no browser download).

Every page is opened offline: any request that is not for a local file (or the test's own loopback server) is
aborted and recorded, so a test can assert that a page needs no network. Console errors, uncaught page errors and
JavaScript dialogs (an injected `alert`) are recorded too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass
class PageLog:
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    network: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def assert_clean(self) -> None:
        assert self.console_errors == [], self.console_errors
        assert self.page_errors == [], self.page_errors
        assert self.network == [], f"the page asked the network for {self.network}"
        assert self.dialogs == [], self.dialogs


LOCAL_SCHEMES = ("file:", "data:", "about:", "blob:")


@contextmanager
def open_page(path: Path, *, width: int = 1280, height: int = 900) -> Iterator[tuple[object, PageLog]]:
    """The page at `path` in headless Chromium, loaded, with its log; the browser is closed afterwards."""
    with open_url(path.resolve().as_uri(), width=width, height=height) as opened:
        yield opened


@contextmanager
def open_url(
    url: str, *, allowed: tuple[str, ...] = (), width: int = 1280, height: int = 900
) -> Iterator[tuple[object, PageLog]]:
    """`url` in headless Chromium with its log. Requests to local schemes and to URLs starting with one of `allowed`
    (a loopback server of the test's own) go through; any other is aborted and recorded."""
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (`make test` installs it)")
    from playwright.sync_api import sync_playwright

    log = PageLog()

    def route(route) -> None:
        if route.request.url.startswith(LOCAL_SCHEMES + allowed):
            route.continue_()
        else:
            log.network.append(route.request.url)
            route.abort()

    def dialog(opened) -> None:
        log.dialogs.append(opened.message)
        opened.dismiss()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.on("console", lambda message: message.type == "error" and log.console_errors.append(message.text))
            page.on("pageerror", lambda error: log.page_errors.append(str(error)))
            page.on("dialog", dialog)
            page.route("**/*", route)
            page.goto(url, wait_until="load")
            yield page, log
        finally:
            browser.close()


def broken_images(page) -> list[str]:
    """The images of a loaded page that did not load (a broken-image icon), as their alt text or source."""
    return page.evaluate(
        """() => [...document.images]
            .filter(image => image.complete && image.naturalWidth === 0)
            .map(image => image.alt || image.getAttribute('src') || image.outerHTML)"""
    )
