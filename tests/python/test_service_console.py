"""/console in a real headless Chromium, with the network closed: the unlock matrix, a dry-run
recall preview and a player's timeline, memories (their strength over time plotted) and
archive, as the JSON routes give them; pinning and forgetting a memory from the page."""

from __future__ import annotations

import os

import pytest

from rolemem.service import create_app
from rolemem.service.settings import ServiceSettings

from .browser import offline_page
from .conftest import REPO, demo_store, serving

SCREENSHOT = REPO / "docs" / "console.jpg"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("console") / "console.duckdb")
    demo_store(path)
    settings = ServiceSettings(api_key="game", designer_key="designer")
    with serving(create_app(path, embedder=None, settings=settings)) as client:
        yield client


def test_the_unlock_matrix_route_answers_the_mart(client):
    answer = client.get("/config/qiyu/unlock_matrix", headers={"X-API-Key": "designer"})
    assert answer.status_code == 200, answer.text
    cells = answer.json()["cells"]
    assert len(cells) == 16 * 25  # the demo's 16 entries of qiyu at 5 x 5 levels
    game = client.get("/config/qiyu/unlock_matrix", headers={"X-API-Key": "game"})
    assert game.status_code == 401  # a designer route
    unknown = client.get("/config/nobody/unlock_matrix", headers={"X-API-Key": "designer"})
    assert unknown.status_code == 400
    assert unknown.json() == {
        "error": {"type": "ConfigError", "message": "no config for character 'nobody'"}
    }


def test_the_console_shows_matrix_preview_and_timeline_offline(client, tmp_path):
    base = str(client.base_url)
    with offline_page() as (page, outside):
        page.set_viewport_size({"width": 1400, "height": 1000})
        page.goto(f"{base}/console")
        # the game's key for the game's routes, the designers' for theirs: both typed once
        page.fill("#key", "game")
        page.fill("#designer-key", "designer")
        page.click("#connection button")
        page.wait_for_selector("#matrix tbody tr")
        matrix = client.get("/config/qiyu/unlock_matrix", headers={"X-API-Key": "designer"})
        cells = matrix.json()["cells"]
        assert page.locator("#matrix tbody tr").count() == len({c["entry_key"] for c in cells})
        assert page.locator("#matrix td.unlocked").count() == sum(c["is_unlocked"] for c in cells)
        assert page.locator("#matrix td.needs-other").count() == sum(
            c["is_unlocked_by_levels"] and not c["is_unlocked"] for c in cells
        )

        # the preview: a dry run, so the same recall twice shows the same thing
        page.click("#preview button")
        page.wait_for_selector("#explain tr.shown")
        first = page.inner_text("[data-block=character_memory_attributes]")
        page.click("#preview button")
        page.wait_for_selector("#explain tr.shown")
        assert page.inner_text("[data-block=character_memory_attributes]") == first
        expected = client.post(
            "/recall",
            headers={"X-API-Key": "game"},
            json={
                "character_id": "qiyu",
                "user_id": "mumu",
                "text": "今天画画时你好温柔",
                "context": {"intimacy": 3, "exploration": 3},
                "explain": True,
                "dry_run": True,
            },
        ).json()
        assert first == expected["character_memory_attributes"] != ""
        assert page.locator("#explain tr.shown").count() == sum(
            row["status"] == "shown" for row in expected["explain"]
        )

        page.click("#player button")
        page.wait_for_selector("#timeline li")
        timeline = client.get(
            "/users/mumu/timeline", params={"agent_id": "qiyu"}, headers={"X-API-Key": "game"}
        ).json()
        items = page.locator("#timeline li").all_inner_texts()
        assert len(items) == len(timeline) > 0
        assert all(e["description"] in item for e, item in zip(timeline, items, strict=True))
        rows = page.locator("#memories tr[data-memory]")
        count = rows.count()
        assert count > 0
        # one point per event memory, at its strength
        game = {"X-API-Key": "game"}
        listed = client.get(
            "/users/mumu/memories", params={"agent_id": "qiyu", "limit": 100}, headers=game
        ).json()["items"]
        events = {f"event:{m['memory_id']}" for m in listed if m["memory_type"] == "event"}
        points = page.locator("#strength circle.point")
        assert {points.nth(i).get_attribute("data-memory") for i in range(points.count())} == (
            events
        )
        # pin the first memory, then forget it: the routes the game calls, the page redrawn
        memory = rows.first.get_attribute("data-memory")
        kind, memory_id = memory.split(":")
        row = f'#memories tr[data-memory="{memory}"]'
        page.click(f"{row} button.pin")
        page.wait_for_selector(f"{row}.pinned")
        assert page.inner_text(f"{row} button.pin") == "unpin"
        listed = client.get(
            "/users/mumu/memories", params={"agent_id": "qiyu", "limit": 100}, headers=game
        ).json()["items"]
        pinned = [(m["memory_type"], str(m["memory_id"])) for m in listed if m["is_pinned"]]
        assert pinned == [(kind, memory_id)]
        page.click(f"{row} button.forget")
        page.wait_for_selector(row, state="detached")
        assert rows.count() == count - 1
        archived = client.get("/users/mumu/archive", params={"agent_id": "qiyu"}, headers=game)
        assert (kind, memory_id) in {
            (m["memory_type"], str(m["memory_id"])) for m in archived.json()["items"]
        }
        # the archive on the page: the forgotten memory, with its reason
        gone = f'#archive tr[data-memory="{memory}"]'
        page.wait_for_selector(gone)
        assert page.inner_text(f"{gone} td:nth-child(3)") == "deleted"
        assert page.locator("#archive tr[data-memory]").count() == len(archived.json()["items"])
        # a wrong key is said on the page, in the error shape's words
        page.fill("#designer-key", "wrong")
        page.click("#connection button")
        page.wait_for_selector("#error:not([hidden])")
        assert "401" in page.inner_text("#error")
        page.fill("#designer-key", "designer")
        page.click("#connection button")
        page.wait_for_selector("#error", state="hidden")
        # docs/service.md's picture, made here (ROLEMEM_SCREENSHOT=1 writes docs/console.jpg)
        shot = SCREENSHOT if os.environ.get("ROLEMEM_SCREENSHOT") else tmp_path / "console.jpg"
        page.screenshot(path=str(shot), type="jpeg", quality=55, full_page=True)
    assert outside == []
