"""/console in a real headless Chromium, with the network closed: the configured characters,
the unlock matrix, a dry-run recall preview with the names filled and a player's timeline,
memories (their strength over time plotted) and archive, as the JSON routes give them, times
to the minute; pinning and forgetting a memory from the page; everything loaded on open when
the service needs no key."""

from __future__ import annotations

import os
import re

import pytest

from rolemem.service import create_app
from rolemem.service.core.settings import ServiceSettings

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


@pytest.fixture(scope="module")
def open_client(tmp_path_factory):
    """A service without keys, where mumu's newest save names the player."""
    path = str(tmp_path_factory.mktemp("console-open") / "console.duckdb")
    demo_store(path)
    with serving(create_app(path, embedder=None, settings=ServiceSettings())) as client:
        made = client.post("/saves", json={"user_id": "mumu", "user_name": "木木"})
        assert made.status_code == 201, made.text
        yield client


def test_the_characters_route_lists_the_config(client):
    answer = client.get("/config", headers={"X-API-Key": "designer"})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "characters": [
            {
                "character_id": "qinling",
                "entries": {"attribute": 6, "dialogue_style": 3, "event": 3},
            },
            {"character_id": "qiyu", "entries": {"attribute": 5, "dialogue_style": 5, "event": 6}},
        ]
    }
    assert client.get("/config", headers={"X-API-Key": "game"}).status_code == 401


def minute(time: str) -> str:
    return time.replace("T", " ")[:16]


def test_the_console_loads_on_open_when_no_key_is_needed(open_client):
    client = open_client
    base = str(client.base_url)
    with offline_page() as (page, outside):
        from playwright.sync_api import expect  # installed: offline_page skips otherwise

        page.goto(f"{base}/console")
        # nothing pressed: the characters, the matrix, the preview and the player's memories
        page.wait_for_selector("#timeline li")
        page.wait_for_selector("#explain tr.shown")
        assert page.locator("#character option").all_inner_texts() == ["qinling", "qiyu"]
        assert page.input_value("#character") == "qiyu"
        assert page.is_hidden("#hint") and page.is_hidden("#error")
        cells = client.get("/config/qiyu/unlock_matrix").json()["cells"]
        assert page.locator("#matrix tbody tr").count() == len({c["entry_key"] for c in cells})
        # the player's name is the save's; the character's, unknown, is its id
        assert page.input_value("#user-name") == "木木"
        assert page.input_value("#char-name") == ""
        expected = client.post(
            "/recall",
            json={
                "character_id": "qiyu",
                "user_id": "mumu",
                "text": "今天画画时你好温柔",
                "user_name": "木木",
                "char_name": "qiyu",
                "context": {"intimacy": 3, "exploration": 3},
                "explain": True,
                "dry_run": True,
            },
        ).json()
        for name in ("character_memory_attributes", "character_memory_event"):
            assert page.inner_text(f"[data-block={name}]") == (expected[name] or "(empty)")
        # an entry written with {{user}}: the player's name in its place
        page.fill("#text", "谁在保护我")
        page.click("#preview button")
        # locator waits: the page's Content-Security-Policy refuses evaluated strings
        expect(page.locator("[data-block=character_memory_event]")).to_contain_text("保护")
        shown = page.inner_text("#blocks")
        assert "{{" not in shown and "为了保护木木，主动请缨成为她的保镖" in shown
        # times to the minute
        timeline = client.get("/users/mumu/timeline", params={"agent_id": "qiyu"}).json()
        assert page.locator("#timeline li").all_inner_texts() == [
            f"{minute(e['created_at'])} {e['place'] or ''}：{e['description']}" for e in timeline
        ]
        assert all(
            re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d ", item)
            for item in page.locator("#timeline li").all_inner_texts()
        )
        # another character: its matrix, its memories
        page.select_option("#character", "qinling")
        expect(page.locator("#player-agent")).to_have_value("qinling")
        cells = client.get("/config/qinling/unlock_matrix").json()["cells"]
        expect(page.locator("#matrix tbody tr")).to_have_count(len({c["entry_key"] for c in cells}))
        assert (
            page.locator("#matrix tbody tr[data-entry]").first.get_attribute("data-entry")
            == (cells[0]["entry_key"])
        )
    assert outside == []


def test_the_unlock_matrix_route_answers_the_mart(client):
    answer = client.get("/config/qiyu/unlock_matrix", headers={"X-API-Key": "designer"})
    assert answer.status_code == 200, answer.text
    cells = answer.json()["cells"]
    assert len(cells) == 16 * 25  # the demo's 16 entries of qiyu at 5 x 5 levels
    game = client.get("/config/qiyu/unlock_matrix", headers={"X-API-Key": "game"})
    assert game.status_code == 401  # a designer route
    # the export says the same (it offered a list of the configured, always empty: the
    # service reads one character's rows)
    for path in ("/config/nobody/unlock_matrix", "/config/nobody", "/config/nobody/sillytavern"):
        unknown = client.get(path, headers={"X-API-Key": "designer"})
        assert (unknown.status_code, unknown.json()) == (
            404,
            {
                "error": {
                    "type": "CharacterNotFoundError",
                    "message": "no config for character 'nobody'",
                    "field": "character_id",
                }
            },
        )


def test_the_console_shows_matrix_preview_and_timeline_offline(client, tmp_path):
    base = str(client.base_url)
    with offline_page() as (page, outside):
        page.set_viewport_size({"width": 1400, "height": 1000})
        page.goto(f"{base}/console")
        # a service with keys: the page says what to type, and shows nothing until then
        page.wait_for_selector("#hint:not([hidden])")
        assert page.inner_text("#hint") == (
            "This service needs a key: type it above and press Load."
        )
        assert page.locator("#matrix tr").count() == 0
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
                # no save of mumu's names the player here: the ids fill the names
                "user_name": "mumu",
                "char_name": "qiyu",
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
