"""/docs and /redoc in a real headless Chromium, with the network closed: the pages render and
list every operation from the service's own assets."""

from __future__ import annotations

import pytest

from rolemem.service import create_app

from .browser import offline_page
from .conftest import demo_store, serving


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("docs") / "docs.duckdb")
    demo_store(path)
    with serving(create_app(path, embedder=None, api_key="game")) as client:
        yield str(client.base_url)


def test_swagger_ui_lists_every_operation_offline(base_url):
    with offline_page() as (page, outside):
        page.goto(f"{base_url}/docs")
        page.wait_for_selector(".opblock-summary-path", timeout=30_000)
        paths = page.locator(".opblock-summary-path").all_inner_texts()
        spec = page.evaluate("fetch('/openapi.json').then(answer => answer.json())")
    operations = sum(len(methods) for methods in spec["paths"].values())
    assert len(paths) == operations == 48
    assert {"/saves/{save_id}/regenerate", "/users/{user_id}/forget", "/turn"} <= set(paths)
    assert outside == []


def test_redoc_renders_offline(base_url):
    with offline_page() as (page, outside):
        page.goto(f"{base_url}/redoc")
        page.wait_for_selector("text=Append lines", state="attached", timeout=30_000)
        assert page.title() == "rolemem - API reference"
        assert page.locator("h2:has-text('Regenerate the last reply')").count() == 1
    assert outside == []
