"""Headless Chromium for page tests: the system's Chromium (Debian's `chromium` package)
driven by Playwright, never a browser Playwright downloads. Every request a page makes is
recorded; any that leaves loopback is refused, so a page that needs the network fails."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("no system Chromium (apt-get install chromium): the page tests need one")
    return path


@contextlib.contextmanager
def offline_page() -> Iterator[tuple[Any, list[str]]]:
    """A page, and the list of off-loopback URLs it tried (and was refused)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed")
    executable = chromium_path()
    outside: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()

            def guard(route: Any) -> None:
                url = route.request.url
                if url.startswith(("http://127.0.0.1", "data:", "blob:")):
                    route.continue_()
                else:
                    outside.append(url)
                    route.abort()

            page.route("**/*", guard)
            yield page, outside
        finally:
            browser.close()
