"""The service page's error table tells the truth: for each row, the request the row describes,
made against the running service on both engines, gets the row's status and `error.type` in
the one error shape. A row without a request here (or a request without a row) fails."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from starlette.routing import Match

from rolemem.service.core.access import flat_routes
from rolemem.service.core.settings import ServiceSettings

from .conftest import REPO, error_of, scripted_game

PAGE = "docs/service.md"
KEY = {"X-API-Key": "game"}
DESIGNER = {"X-API-Key": "designer"}
SETTINGS = ServiceSettings(api_key="game", designer_key="designer")


def error_table() -> list[tuple[int, str, str]]:
    """(status, error.type, when) per row of the page's error table."""
    text = (REPO / PAGE).read_text(encoding="utf-8")
    section = text.split("## Errors and limits", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d{3}) \| `(\w+)` \| (.+?) \|$", section, re.M)
    return [(int(status), kind, when) for status, kind, when in rows]


# beside the flags: a key for one studio's players only (the 403 of a players glob)
KEY_FILE = """
[[keys]]
name = "studio-a"
secret = "studio-a-key"
role = "game"
players = "studio-a-*"
"""


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def game(request, tmp_path_factory):
    keys = tmp_path_factory.mktemp("docs_errors") / "keys.toml"
    keys.write_text(KEY_FILE, encoding="utf-8")
    settings = SETTINGS.model_copy(update={"keys_file": str(keys), "player_rate": "30/s"})
    with scripted_game(request, tmp_path_factory, "rolemem_docs_errors", settings=settings) as g:
        yield g


class Game:
    """Saves of the test's own, made on the running service, for the rows to point at."""

    def __init__(self, client: httpx.Client, app: Any) -> None:
        self.client, self.app = client, app

    def post(self, route: str, body: dict[str, Any]) -> dict[str, Any]:
        answer = self.client.post(route, headers=KEY, json=body)
        assert answer.is_success, (route, answer.text)
        return answer.json()

    def save_with_a_line(self, attribute: str = "user") -> tuple[int, int]:
        save = self.post("/saves", {"user_id": "mumu"})["save_id"]
        line = {"attribute": attribute, "content": "你好"}
        if attribute == "assistant":
            line["role_id"] = 1
        appended = self.post(f"/saves/{save}/lines", {"user_id": "mumu", "lines": [line]})
        return save, appended["line_ids"][0]

    def ownerless_save(self) -> int:
        """A save the game wrote itself, without an owner."""

        def write(cur: Any) -> int:
            cur.execute("insert into save (id, name) values (880000, 'the game''s own')")
            return 880000

        return self.app.state.store.write(write)


def _another_saves_line(game: Game) -> httpx.Response:
    _, line = game.save_with_a_line()
    save, _ = game.save_with_a_line()
    return game.client.put(
        f"/saves/{save}/tip", headers=KEY, json={"user_id": "mumu", "line_id": line}
    )


def _observe_for_another_player(game: Game) -> httpx.Response:
    save, _ = game.save_with_a_line()
    return game.client.post(
        f"/saves/{save}/lines",
        headers=KEY,
        json={
            "user_id": "mumu",
            "lines": [{"attribute": "user", "content": "x"}],
            "observe": {"agent_id": "qiyu", "role_id": 1, "user_id": "bob"},
        },
    )


def _refused_config(game: Game) -> httpx.Response:
    return game.client.post(
        "/config/import",
        headers=DESIGNER,
        json={
            "character_id": "broken",
            "attributes": {"x": [{"关键词": ["a"], "内容": "c", "强度": 9, "queryParams": []}]},
        },
    )


def _ownerless(game: Game) -> httpx.Response:
    save = game.ownerless_save()
    return game.client.get(f"/saves/{save}", headers=KEY, params={"user_id": "mumu"})


def _another_players_save(game: Game) -> httpx.Response:
    save, _ = game.save_with_a_line()
    return game.client.get(f"/saves/{save}", headers=KEY, params={"user_id": "stranger"})


def _taken_id(game: Game) -> httpx.Response:
    return game.client.post("/roles", headers=KEY, json={"id": 1, "name": "又一个"})


def _reused_key(game: Game) -> httpx.Response:
    save, _ = game.save_with_a_line()
    headers = {**KEY, "Idempotency-Key": "docs-errors-1"}
    for content in ("第一次", "另一句"):
        answer = game.client.post(
            f"/saves/{save}/lines",
            headers=headers,
            json={"user_id": "mumu", "lines": [{"attribute": "user", "content": content}]},
        )
    return answer


def _regenerate_a_player_line(game: Game) -> httpx.Response:
    save, _ = game.save_with_a_line("user")
    return game.client.post(
        f"/saves/{save}/regenerate", headers=KEY, json={"user_id": "mumu", "line": {"content": "x"}}
    )


def _turn_regenerating_a_player_line(game: Game) -> httpx.Response:
    save, _ = game.save_with_a_line("user")
    return game.client.post(
        "/turn",
        headers=KEY,
        json={"save_id": save, "role_id": 1, "user_id": "mumu", "regenerate": True},
    )


def _reload_onto_a_player_line(game: Game) -> httpx.Response:
    save, line = game.save_with_a_line("user")
    return game.client.put(
        f"/saves/{save}/tip", headers=KEY, json={"user_id": "mumu", "line_id": line}
    )


def _not_the_roles_character(game: Game) -> httpx.Response:
    # the demo's role 1 plays qiyu
    return game.client.post(
        "/turn",
        headers=KEY,
        json={
            "save_id": 2,
            "role_id": 1,
            "character_id": "qinling",
            "user_id": "mumu",
            "message": "你好",
        },
    )


def _role_without_a_character(game: Game) -> httpx.Response:
    role = game.post("/roles", {"name": "路人"})["role_id"]
    save, _ = game.save_with_a_line()
    body = {"save_id": save, "user_id": "mumu", "role_id": role, "message": "你好"}
    return game.client.post("/turn", headers=KEY, json=body)


def _delete_a_forked_save(game: Game) -> httpx.Response:
    save, line = game.save_with_a_line()
    game.post("/saves", {"user_id": "mumu", "from_line_id": line})
    return game.client.delete(f"/saves/{save}", headers=KEY, params={"user_id": "mumu"})


def _maintenance_under_way(game: Game) -> httpx.Response:
    # held by the test, as another process of the store would hold it
    with game.app.state.store.engine.only_one("maintenance") as mine:
        assert mine
        return game.client.post("/admin/maintenance", headers=DESIGNER)


def _past_the_time_budget(game: Game) -> httpx.Response:
    store = game.app.state.store
    settings = store.settings
    store.settings = settings.model_copy(update={"request_timeout": 0.001})
    try:
        return game.client.post(
            "/turn",
            headers=KEY,
            json={
                "save_id": 2,
                "character_id": "qiyu",
                "role_id": 1,
                "user_id": "mumu",
                "message": "今天画画时你好温柔",
            },
        )
    finally:
        store.settings = settings


def _flooding_player(game: Game) -> httpx.Response:
    for _ in range(300):  # 30/s: faster than that (loopback answers in a few ms)
        answer = game.client.get("/users/flooder/saves", headers=KEY)
        if answer.status_code != 200:
            break
    return answer


# the beginning of each row's "when", and the request it describes
REQUESTS: dict[str, Callable[[Game], httpx.Response]] = {
    "a line of another save's tree": _another_saves_line,
    "a header given twice": lambda game: game.client.post(
        "/roles",
        headers=[*KEY.items(), ("idempotency-key", "a"), ("idempotency-key", "b")],
        json={"name": "x"},
    ),
    "`observe.user_id` is not the request's": _observe_for_another_player,
    "designer config the rules refuse": _refused_config,
    "a missing or wrong key": lambda game: game.client.get(
        "/saves/2", headers={"X-API-Key": "wrong"}, params={"user_id": "mumu"}
    ),
    "a save without an owner": _ownerless,
    "a player outside the key's `players` glob": lambda game: game.client.get(
        "/users/mumu/saves", headers={"X-API-Key": "studio-a-key"}
    ),
    "no such save, or another player's": _another_players_save,
    "no such line": lambda game: game.client.post(
        "/saves", headers=KEY, json={"user_id": "mumu", "from_line_id": 999_999}
    ),
    "no such role": lambda game: game.client.get(
        "/saves/2/memory_status", headers=KEY, params={"user_id": "mumu", "role_id": 99999}
    ),
    "no such memory, or not the player's": lambda game: game.client.patch(
        "/users/mumu/memories/event/999999", headers=KEY, json={"is_pinned": True}
    ),
    "no such route": lambda game: game.client.get("/no/such/route", headers=KEY),
    "a body sent without": lambda game: game.client.post(
        "/saves", headers={**KEY, "Content-Type": "text/plain"}, content=b'{"user_id": "mumu"}'
    ),
    "no designer config for the character": lambda game: game.client.get(
        "/config/nobody", headers=DESIGNER
    ),
    "a role without the `character_id`": _role_without_a_character,
    "an id already taken": _taken_id,
    "an `Idempotency-Key` reused with another body": _reused_key,
    "a regenerate whose tip is not a reply": _regenerate_a_player_line,
    "a `/turn` with `regenerate` whose tip": _turn_regenerating_a_player_line,
    "a reload onto a player line": _reload_onto_a_player_line,
    "a `character_id` or `agent_id` that is not its role's": _not_the_roles_character,
    "deleting a save others were forked from": _delete_a_forked_save,
    "a maintenance run under way": _maintenance_under_way,
    "a body over `--max-body-bytes`": lambda game: game.client.post(
        "/turn",
        headers={**KEY, "content-type": "application/json"},
        content=b'{"message": "' + b"x" * (1024 * 1024 + 1) + b'"}',
    ),
    "a missing field": lambda game: game.client.post("/saves", headers=KEY, json={}),
    "a wrong type": lambda game: game.client.post(
        "/saves/2/lines", headers=KEY, json={"user_id": "mumu", "lines": "你好"}
    ),
    "an id out of range": lambda game: game.client.post(
        "/roles", headers=KEY, json={"id": 2**53, "name": "x"}
    ),
    "an unknown field": lambda game: game.client.post(
        "/roles", headers=KEY, json={"name": "x", "nickname": "y"}
    ),
    "JSON rolemem cannot store": lambda game: game.client.post(
        "/roles",
        headers={**KEY, "content-type": "application/json"},
        content=b'{"name": "x\\ud800"}',
    ),
    "work past `--request-timeout`": _past_the_time_budget,
    "over `--player-rate`": _flooding_player,
    "a request head": lambda game: game.client.get(
        "/saves/2", headers={**KEY, "X-Padding": "p" * 20_000}, params={"user_id": "mumu"}
    ),
}


def _request_for(when: str) -> Callable[[Game], httpx.Response]:
    matches = [request for start, request in REQUESTS.items() if when.startswith(start)]
    assert len(matches) == 1, f"one request per row: {when}"
    return matches[0]


def test_every_row_has_its_request_and_every_request_its_row():
    rows = error_table()
    assert len(rows) >= 20
    assert {status for status, _, _ in rows} == {
        400,
        401,
        403,
        404,
        409,
        413,
        415,
        422,
        429,
        431,
        503,
    }
    for _, _, when in rows:
        _request_for(when)
    assert len(rows) == len(REQUESTS)


@pytest.mark.parametrize(
    ("status", "kind", "when"), error_table(), ids=[row[2][:40] for row in error_table()]
)
def test_each_row_of_the_error_table(game, status, kind, when):
    client, app, _ = game
    answer = _request_for(when)(Game(client, app))
    assert (answer.status_code, error_of(answer)["type"]) == (status, kind), answer.text
    # and the OpenAPI document declares it on the route that answered (if one did)
    method = answer.request.method
    scope = {"type": "http", "path": answer.request.url.path, "method": method}
    for route in flat_routes(app.routes):
        if route.matches(scope)[0] == Match.FULL:
            declared = app.openapi()["paths"][route.path][method.lower()]["responses"]
            assert str(status) in declared, (route.path, sorted(declared))
