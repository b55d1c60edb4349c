"""Keys and quotas: a key file with roles (game, designer, admin), `sha256:` secrets and players
globs, read again within 2 s of a change (a rotated key refused, its successor accepted, a
broken file keeping the keys in force); per-player and per-key rates answered 429 with
Retry-After and RateLimit-*; every refusal counted in /metrics. On the service under uvicorn,
on DuckDB and PostgreSQL where the store matters (saves, owners), and `rolemem serve` itself
for start-up and the access log."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from rolemem.service import create_app
from rolemem.service.core.child import free_port, wait_until_serving
from rolemem.service.core.keys import KeyRing
from rolemem.service.core.quotas import Buckets, Rate
from rolemem.service.core.settings import ServiceSettings

from .conftest import REPO, demo_store, error_of, scripted_game, serving

GAME = {"X-API-Key": "game-secret-1"}
STUDIO_A = {"X-API-Key": "studio-a-secret"}  # its file holds only the SHA-256
DESIGNER = {"X-API-Key": "designer-secret-1"}
ADMIN = {"X-API-Key": "ops-secret-1"}
NO_KEY = {
    "type": "Unauthorized",
    "message": "missing or wrong X-API-Key header",
    "field": "X-API-Key",
}
NOT_THEIRS = "this key may not act for that player (the key's players glob does not match)"
NAME_ONE = "this key acts for its players only (its players glob): name the player"
NAMES_NONE = (
    "this key acts for its players only (its players glob), and this route names no player "
    "(it reaches every player's data or the service's)"
)


def key_file(rotating: str = "rotate-old-1") -> str:
    studio_a = hashlib.sha256(b"studio-a-secret").hexdigest()
    return f"""
[[keys]]
name = "game-server"
secret = "game-secret-1"
role = "game"

[[keys]]
name = "studio-a"
secret = "sha256:{studio_a}"
role = "game"
players = "studio-a-*"

[[keys]]
name = "designer-tool"
secret = "designer-secret-1"
role = "designer"

[[keys]]
name = "ops"
secret = "ops-secret-1"
role = "admin"

[[keys]]
name = "rotating"
secret = "{rotating}"
role = "game"
"""


def replace(path: Path, text: str) -> None:
    """Write the file as an operator should: a new file renamed over the old one."""
    fresh = path.with_suffix(".new")
    fresh.write_text(text, encoding="utf-8")
    os.replace(fresh, path)


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def keyed(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("keys") / "keys.toml"
    path.write_text(key_file(), encoding="utf-8")
    settings = ServiceSettings(keys_file=str(path), player_rate="10/min")
    with scripted_game(request, tmp_path_factory, "rolemem_keys", settings=settings) as served:
        client, app, _ = served
        yield client, app, path


def refusals(client: httpx.Client) -> dict[str, float]:
    families = text_string_to_metric_families(client.get("/metrics").text)
    family = next(family for family in families if family.name == "rolemem_refusals")
    return {
        sample.labels["reason"]: sample.value
        for sample in family.samples
        if sample.name == "rolemem_refusals_total"
    }


def test_each_role_reaches_its_groups_only(keyed):
    client, _, _ = keyed
    routes = [
        ("GET", "/users/studio-a-roles/saves"),  # game
        ("GET", "/status"),  # game
        ("GET", "/config"),  # designer
        ("POST", "/admin/webhooks/replay"),  # admin (404: this service has no webhook)
        ("GET", "/no/such/route"),  # any key: 404
        ("GET", "/health"),  # open
    ]
    statuses = {
        name: [
            client.request(method, route, headers=headers).status_code for method, route in routes
        ]
        for name, headers in [
            ("game", GAME),
            ("studio-a", STUDIO_A),
            ("designer", DESIGNER),
            ("admin", ADMIN),
            ("none", {}),
            ("wrong", {"X-API-Key": "game-secret-2"}),
            (
                "the hash itself",
                {"X-API-Key": f"sha256:{hashlib.sha256(b'studio-a-secret').hexdigest()}"},
            ),
        ]
    }
    assert statuses == {
        "game": [200, 200, 401, 401, 404, 200],
        # /status names no player: a key with a players glob may not read it (403)
        "studio-a": [200, 403, 401, 401, 404, 200],
        "designer": [401, 401, 200, 401, 404, 200],
        "admin": [200, 200, 200, 404, 404, 200],
        "none": [401, 401, 401, 401, 401, 200],
        "wrong": [401, 401, 401, 401, 401, 200],
        "the hash itself": [401, 401, 401, 401, 401, 200],
    }
    answer = client.post("/saves", headers={"X-API-Key": "nope"}, json={"user_id": "x"})
    assert error_of(answer) == NO_KEY


def test_a_players_glob_refuses_another_player_wherever_named(keyed):
    client, _, _ = keyed
    line = {"attribute": "user", "content": "你好"}
    own = client.post("/saves", headers=STUDIO_A, json={"user_id": "studio-a-glob"})
    assert own.status_code == 201, own.text
    save = own.json()["save_id"]
    attempts = {
        "path": client.get("/users/studio-b-glob/memories", headers=STUDIO_A),
        "query": client.get(f"/saves/{save}", headers=STUDIO_A, params={"user_id": "b-glob"}),
        "body": client.post("/saves", headers=STUDIO_A, json={"user_id": "studio-b-glob"}),
        "observe": client.post(
            f"/saves/{save}/lines",
            headers=STUDIO_A,
            json={"lines": [line], "observe": {"role_id": 1, "user_id": "studio-b-glob"}},
        ),
        "observe list": client.post(
            f"/saves/{save}/lines",
            headers=STUDIO_A,
            json={
                "lines": [line],
                "observe": [{"role_id": 1}, {"role_id": 2, "user_id": "studio-b-glob"}],
            },
        ),
        "recall": client.post(
            "/query",
            headers=STUDIO_A,
            json={"query": "海", "user_id": "studio-b-glob", "agent_id": "qiyu"},
        ),
    }
    assert {where: (a.status_code, error_of(a)) for where, a in attempts.items()} == {
        where: (403, {"type": "Forbidden", "message": NOT_THEIRS, "field": field})
        for where, field in [
            ("path", "user_id"),
            ("query", "user_id"),
            ("body", "user_id"),
            ("observe", "observe.user_id"),
            ("observe list", "observe[1].user_id"),
            ("recall", "user_id"),
        ]
    }
    # the body read as the route reads it: without a Content-Type (FastAPI does not parse
    # it as JSON: the route's 415, nothing done), and a second Content-Type (refused:
    # Starlette would read the first)
    body = json.dumps({"query": "海", "user_id": "studio-b-glob", "agent_id": "qiyu"})
    untyped = client.post("/query", headers=STUDIO_A, content=body)  # no Content-Type
    assert (untyped.status_code, error_of(untyped)["field"]) == (415, "Content-Type")
    twice = client.post(
        "/query",
        headers=[
            *STUDIO_A.items(),
            ("content-type", "application/json"),
            ("content-type", "text/plain"),
        ],
        content=body,
    )
    assert (twice.status_code, error_of(twice)) == (
        400,
        {
            "type": "BadRequest",
            "message": "the Content-Type header is given more than once",
            "field": "Content-Type",
        },
    )
    # its own player, and a game key on any player
    assert client.get("/users/studio-a-glob/saves", headers=STUDIO_A).status_code == 200
    assert client.get("/users/studio-b-glob/saves", headers=GAME).status_code == 200


def test_a_header_given_twice_is_a_400_naming_it_before_any_key_is_judged(keyed):
    """Two X-API-Keys were judged by the first (a glob key's 403 or a wrong key's 401 while
    the second was good): now any route, /mcp and the open ones too, answers 400 first."""
    client, _, _ = keyed
    mcp = {"Accept": "application/json, text/event-stream"}
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    requests = {
        "glob key first": ("GET", "/users/studio-b-twice/saves", [STUDIO_A, GAME], None),
        "wrong key first": (
            "GET",
            "/users/studio-b-twice/saves",
            [{"X-API-Key": "no"}, GAME],
            None,
        ),
        "mcp": ("POST", "/mcp", [{"X-API-Key": "no"}, GAME, mcp], rpc),
        "open route": ("GET", "/health", [GAME, GAME], None),
        "type": ("POST", "/saves", [{"Content-Type": "application/json"}] * 2, None),
        "import type": (
            "POST",
            "/saves/1/import?user_id=mumu",
            [{"Content-Type": "application/x-ndjson"}] * 2,
            None,
        ),
        "idempotency": (
            "POST",
            "/saves",
            [{"Idempotency-Key": "a"}, {"Idempotency-Key": "b"}],
            None,
        ),
    }
    answers = {
        name: client.request(
            method,
            path,
            headers=[pair for headers in given for pair in headers.items()],
            content=json.dumps(body or {"user_id": "x"}),
        )
        for name, (method, path, given, body) in requests.items()
    }
    named = {
        "type": "Content-Type",
        "import type": "Content-Type",
        "idempotency": "Idempotency-Key",
    }
    assert {name: (a.status_code, error_of(a)) for name, a in answers.items()} == {
        name: (
            400,
            {
                "type": "BadRequest",
                "message": f"the {named.get(name, 'X-API-Key')} header is given more than once",
                "field": named.get(name, "X-API-Key"),
            },
        )
        for name in requests
    }
    # one key alone: its own answer
    assert client.get("/users/studio-b-twice/saves", headers=STUDIO_A).status_code == 403


def test_a_glob_keys_body_sent_without_json_is_the_415_not_the_name_the_player_403(keyed):
    """The body is not read as JSON, so the player it names is not seen: the route's 415
    (no work done), not the players check's 403 asking to name the player it named."""
    client, _, _ = keyed
    body = b'{"user_id": "studio-a-plain"}'
    for headers in (STUDIO_A, {**STUDIO_A, "Content-Type": "text/plain"}):
        answer = client.post("/saves", headers=headers, content=body)
        assert (answer.status_code, error_of(answer)["field"]) == (415, "Content-Type")
    as_json = {**STUDIO_A, "Content-Type": "application/json"}
    assert client.post("/saves", headers=as_json, content=body).status_code == 201


def test_a_glob_restricted_key_never_reaches_another_players_save(keyed):
    client, app, _ = keyed
    theirs = client.post("/saves", headers=GAME, json={"user_id": "studio-b-save"}).json()
    save = theirs["save_id"]
    appended = client.post(
        f"/saves/{save}/lines",
        headers=GAME,
        json={"user_id": "studio-b-save", "lines": [{"attribute": "user", "content": "秘密"}]},
    ).json()
    line = appended["line_ids"][0]
    lines = [{"attribute": "user", "content": "x"}]
    # each attempt as another of the key's players (within the per-player rate)
    players = (f"studio-a-save-{n}" for n in range(100))

    def me() -> dict[str, str]:
        return {"user_id": next(players)}

    # naming no player at all: refused before anything is read (the key acts for players)
    unnamed = {
        "read": client.get(f"/saves/{save}", headers=STUDIO_A),
        "append": client.post(f"/saves/{save}/lines", headers=STUDIO_A, json={"lines": lines}),
    }
    assert {where: (a.status_code, error_of(a)) for where, a in unnamed.items()} == {
        where: (403, {"type": "Forbidden", "message": NAME_ONE, "field": "user_id"})
        for where in unnamed
    }
    attempts = {
        "read": client.get(f"/saves/{save}", headers=STUDIO_A, params=me()),
        "lines": client.get(f"/saves/{save}/lines", headers=STUDIO_A, params=me()),
        "append": client.post(
            f"/saves/{save}/lines", headers=STUDIO_A, json={**me(), "lines": lines}
        ),
        "legacy append": client.post(
            "/lines", headers=STUDIO_A, json={**me(), "save_id": save, "lines": lines}
        ),
        "tip": client.put(f"/saves/{save}/tip", headers=STUDIO_A, json={**me(), "line_id": line}),
        "delete": client.delete(f"/saves/{save}", headers=STUDIO_A, params=me()),
        "status": client.get(
            f"/saves/{save}/memory_status", headers=STUDIO_A, params={**me(), "role_id": 1}
        ),
        "turn": client.post(
            "/turn",
            headers=STUDIO_A,
            json={**me(), "save_id": save, "role_id": 1, "message": "你好"},
        ),
        "query": client.post(
            "/query",
            headers=STUDIO_A,
            json={**me(), "save_id": save, "query": "秘密", "agent_id": "qiyu"},
        ),
        "timeline": client.get(
            f"/users/{me()['user_id']}/timeline",
            headers=STUDIO_A,
            params={"save_id": save, "agent_id": "qiyu"},
        ),
        "import": client.post(
            f"/saves/{save}/import",
            headers={**STUDIO_A, "Content-Type": "application/x-ndjson"},
            params=me(),
            content=b'{"attribute": "user", "content": "x"}\n',
        ),
        "fork": client.post("/saves", headers=STUDIO_A, json={**me(), "from_line_id": line}),
    }
    # as if the save did not exist (a line of it: as if the line did not)
    assert {where: (a.status_code, error_of(a)["type"]) for where, a in attempts.items()} == {
        where: (404, "NotFoundError" if where == "fork" else "SaveNotFoundError")
        for where in attempts
    }
    # nothing was written: the save still holds its one line, its owner's
    page = client.get(f"/saves/{save}/lines", headers=GAME, params={"user_id": "studio-b-save"})
    assert [row["content"] for row in page.json()["lines"]] == ["秘密"]
    with app.state.store.engine.reading() as cur:
        sql = "select count(*) from save where user_id like 'studio-a-save%'"
        assert cur.execute(sql).fetchone()[0] == 0


def test_a_players_glob_key_reaches_only_routes_that_name_its_player(tmp_path):
    """A key with a players glob acts for those players only: a route that names no player
    (the service's state, every player's data, what all players share but may not change)
    is refused, but for reads of what all players share (the config, the official
    memories, the word lists); where the route takes the player, it must be named."""
    path = tmp_path / "keys.toml"
    text = key_file() + (
        '\n[[keys]]\nname = "studio-a-designer"\nsecret = "studio-a-designer-1"\n'
        'role = "designer"\nplayers = "studio-a-*"\n'
    )
    path.write_text(text, encoding="utf-8")
    settings = ServiceSettings(keys_file=str(path))
    app = create_app(demo_store(str(tmp_path / "glob.duckdb")), embedder=None, settings=settings)
    designer = {"X-API-Key": "studio-a-designer-1"}
    with serving(app) as client:
        game = client.post("/saves", headers=STUDIO_A, json={"user_id": "studio-a-1"})
        assert game.status_code == 201
        names_none = {
            "status": client.get("/status", headers=STUDIO_A),
            "roles": client.post(
                "/roles", headers=STUDIO_A, json={"name": "木木", "character_id": "qiyu"}
            ),
            "official": client.post(
                "/official/events",
                headers=designer,
                json={"agent_id": "qiyu", "description": "新的官方记忆"},
            ),
            "config import": client.post(
                "/config/import", headers=designer, json={"character_id": "qiyu"}
            ),
        }
        assert {where: (a.status_code, error_of(a)) for where, a in names_none.items()} == {
            where: (403, {"type": "Forbidden", "message": NAMES_NONE}) for where in names_none
        }
        name_one = {
            "save": client.post("/saves", headers=STUDIO_A, json={}),
            "read": client.get(f"/saves/{game.json()['save_id']}", headers=STUDIO_A),
            "query": client.post(
                "/query", headers=STUDIO_A, json={"query": "海", "agent_id": "qiyu"}
            ),
            "recall": client.post(
                "/recall", headers=STUDIO_A, json={"character_id": "qiyu", "text": "海"}
            ),
            "preview": client.post(
                "/recall_preview", headers=designer, json={"character_id": "qiyu", "text": "海"}
            ),
        }
        assert {where: (a.status_code, error_of(a)) for where, a in name_one.items()} == {
            where: (403, {"type": "Forbidden", "message": NAME_ONE, "field": "user_id"})
            for where in name_one
        }
        shared = {
            "expand": client.post("/expand_words", headers=STUDIO_A, json={"sentence": "海"}),
            "config": client.get("/config", headers=designer),
            "character": client.get("/config/qiyu", headers=designer),
            "matrix": client.get("/config/qiyu/unlock_matrix", headers=designer),
            "official": client.get("/official/qiyu", headers=designer),
            "own player": client.post(
                "/recall",
                headers=STUDIO_A,
                json={"character_id": "qiyu", "user_id": "studio-a-1", "text": "海"},
            ),
        }
        assert {where: a.status_code for where, a in shared.items()} == dict.fromkeys(shared, 200)
        # a method no route of the path takes is that path's 405, as for any key
        wrong = client.put(f"/saves/{game.json()['save_id']}", headers=STUDIO_A, json={})
        assert (wrong.status_code, wrong.headers["allow"]) == (405, "DELETE, GET, HEAD")
        # the same routes for keys without a glob
        assert client.get("/status", headers=GAME).status_code == 200
        assert client.get("/official/qiyu", headers=DESIGNER).status_code == 200
        assert refusals(client)["players"] == len(names_none) + len(name_one)


def test_a_flooding_player_gets_429_and_another_player_does_not(keyed):
    client, _, _ = keyed
    before = refusals(client)
    answers = [client.get("/users/flood-1/saves", headers=GAME) for _ in range(11)]
    assert [answer.status_code for answer in answers] == [200] * 10 + [429]
    # every answer says what is left, in the 429's headers
    assert [answer.headers["RateLimit-Remaining"] for answer in answers] == [
        *(str(left) for left in range(9, -1, -1)),
        "0",
    ]
    assert {answer.headers["RateLimit-Limit"] for answer in answers} == {"10"}
    assert all(1 <= int(answer.headers["RateLimit-Reset"]) <= 60 for answer in answers)
    assert "Retry-After" not in answers[0].headers
    # a route that names no player takes no player's token, and says nothing of it
    assert "RateLimit-Limit" not in client.get("/status", headers=GAME).headers
    flooded = answers[-1]
    retry = flooded.headers["Retry-After"]
    assert error_of(flooded) == {
        "type": "TooManyRequests",
        "message": f"over the player rate limit (10/min): try again in {retry} s",
        "field": "user_id",
    }
    # 10/min: a token every 6 s, the bucket full in 60 s
    assert 1 <= int(retry) <= 6
    assert flooded.headers["RateLimit-Limit"] == "10"
    assert flooded.headers["RateLimit-Remaining"] == "0"
    assert 54 <= int(flooded.headers["RateLimit-Reset"]) <= 60
    # the same player named in a body: refused once the body is parsed, before any work
    body = client.post(
        "/query", headers=GAME, json={"query": "海", "user_id": "flood-1", "agent_id": "qiyu"}
    )
    assert (body.status_code, error_of(body)["field"]) == (429, "user_id")
    assert client.get("/users/calm-1/saves", headers=GAME).status_code == 200
    after = refusals(client)
    assert after["rate_player"] - before["rate_player"] == 2


def test_every_refusal_is_counted(keyed):
    client, _, _ = keyed
    before = refusals(client)
    assert client.get("/status").status_code == 401
    assert client.get("/config", headers=GAME).status_code == 401
    assert client.get("/users/studio-z-1/saves", headers=STUDIO_A).status_code == 403
    after = refusals(client)
    assert {reason: after[reason] - before[reason] for reason in after} == {
        "key": 2.0,
        "players": 1.0,
        "rate_key": 0.0,
        "rate_player": 0.0,
    }


def test_a_rotated_key_is_refused_within_2_s_and_its_successor_accepted(keyed):
    client, _, path = keyed
    old, new = {"X-API-Key": "rotate-old-1"}, {"X-API-Key": "rotate-new-1"}
    assert client.get("/status", headers=old).status_code == 200
    assert client.get("/status", headers=new).status_code == 401
    replace(path, key_file(rotating="rotate-new-1"))
    rotated = time.monotonic()
    while client.get("/status", headers=old).status_code != 401:
        assert time.monotonic() - rotated < 2.0, "the old key still works after 2 s"
        time.sleep(0.05)
    assert client.get("/status", headers=new).status_code == 200
    # a broken file keeps the keys in force, with an error in the log
    errors = Recorded()
    logger = logging.getLogger("rolemem.service.core.keys")
    logger.addHandler(errors)
    try:
        broken = key_file(rotating="rotate-newer-1").replace('role = "admin"', 'role = "root"')
        replace(path, broken)
        time.sleep(2.0)
        assert client.get("/status", headers=new).status_code == 200
        assert client.get("/status", headers={"X-API-Key": "rotate-newer-1"}).status_code == 401
    finally:
        logger.removeHandler(errors)
        replace(path, key_file(rotating="rotate-new-1"))
    assert errors.lines == [
        "ERROR the key file was not reloaded, the previous keys stay: key file "
        f"{path}: key 'ops': role must be one of game, designer, admin"
    ]


class Recorded(logging.Handler):
    """The lines logged to the logger it is added to, at warning and above."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname} {record.getMessage()}")


def test_a_key_rate_limits_each_key_apart(tmp_path):
    path = tmp_path / "keys.toml"
    path.write_text(key_file(), encoding="utf-8")
    settings = ServiceSettings(keys_file=str(path), key_rate="3/min")
    app = create_app(demo_store(str(tmp_path / "rate.duckdb")), embedder=None, settings=settings)
    with serving(app) as client:
        answers = [client.get(route, headers=GAME) for route in ["/status"] * 3 + ["/config"]]
        # a route the key may not call takes no token; the next one it may is over the rate
        answers.append(client.get("/users/x/saves", headers=GAME))
        assert [answer.status_code for answer in answers] == [200, 200, 200, 401, 429]
        # the answers that took a token say what is left (the 401 took none)
        assert [answer.headers.get("RateLimit-Remaining") for answer in answers] == [
            "2",
            "1",
            "0",
            None,
            "0",
        ]
        assert [answer.headers.get("RateLimit-Limit") for answer in answers[:3]] == ["3"] * 3
        assert all(1 <= int(answer.headers["RateLimit-Reset"]) <= 60 for answer in answers[:3])
        limited = answers[-1]
        retry = limited.headers["Retry-After"]
        assert error_of(limited) == {
            "type": "TooManyRequests",
            "message": f"over the key rate limit (3/min): try again in {retry} s",
            "field": "X-API-Key",
        }
        assert 1 <= int(retry) <= 20  # a token every 20 s
        assert limited.headers["RateLimit-Limit"] == "3"
        assert limited.headers["RateLimit-Remaining"] == "0"
        assert 40 <= int(limited.headers["RateLimit-Reset"]) <= 60
        # another key has its own budget
        assert client.get("/status", headers=ADMIN).status_code == 200
        assert refusals(client) == {"key": 1.0, "players": 0.0, "rate_key": 1.0, "rate_player": 0.0}


def test_the_flags_keep_their_reach_beside_a_key_file(tmp_path):
    path = tmp_path / "keys.toml"
    path.write_text(key_file(), encoding="utf-8")
    reach = {
        "api-key alone": KeyRing(api_key="g"),
        "both": KeyRing(api_key="g", designer_key="d"),
        "designer-key alone": KeyRing(designer_key="d"),
        "none": KeyRing(),
        "both and a file": KeyRing(api_key="g", designer_key="d", path=str(path)),
    }
    table = {
        name: {
            secret: [
                group
                for group in ("game", "designer", "snapshot", "admin")
                if ring.allows(ring.identify(secret), group)
            ]
            for secret in (b"g", b"d", b"", b"ops-secret-1")
        }
        for name, ring in reach.items()
    }
    everything = ["game", "designer", "snapshot", "admin"]
    assert table == {
        "api-key alone": {b"g": everything, b"d": [], b"": [], b"ops-secret-1": []},
        "both": {
            b"g": ["game", "snapshot"],
            b"d": ["designer", "admin"],
            b"": [],
            b"ops-secret-1": [],
        },
        # no game key: the game's groups stay open, as they always were
        "designer-key alone": {
            b"g": ["game", "snapshot"],
            b"d": everything,
            b"": ["game", "snapshot"],
            b"ops-secret-1": ["game", "snapshot"],
        },
        "none": {secret: everything for secret in (b"g", b"d", b"", b"ops-secret-1")},
        "both and a file": {
            b"g": ["game", "snapshot"],
            b"d": ["designer", "admin"],
            b"": [],
            b"ops-secret-1": everything,
        },
    }


def test_a_token_bucket_refills_and_forgets_the_least_recent_player():
    now = [0.0]
    buckets = Buckets(Rate.parse("2/s", "player_rate"), most=2, clock=lambda: now[0])
    assert [buckets.take("a"), buckets.take("a")] == [None, None]
    limited = buckets.take("a")
    assert (limited.retry_after, limited.reset, limited.limit) == (1, 1, 2)
    now[0] = 0.5  # one token back
    assert buckets.take("a") is None and buckets.take("a") is not None
    buckets.take("b")
    buckets.take("c")  # a third player: the least recent ("a") is forgotten
    assert len(buckets) == 2 and buckets.take("a") is None
    assert [str(Rate.parse(text, "x")) for text in ("5/s", "100/min", " 7 / minute ")] == [
        "5/s",
        "100/min",
        "7/min",
    ]


def test_serve_refuses_a_broken_key_file_and_logs_key_names_never_secrets(tmp_path):
    db = demo_store(str(tmp_path / "serve.duckdb"))
    broken = tmp_path / "broken.toml"
    broken.write_text('[[keys]]\nname = "x"\nsecret = "s"\nrole = "game"\nplayer = "a*"\n')
    run = subprocess.run(
        [sys.executable, "-m", "rolemem.cli", "serve", "--db", db, "--keys", str(broken)]
        + ["--keyword-only", "--port", str(free_port())],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (run.returncode, run.stderr.splitlines()[-1]) == (
        2,
        f"rolemem: error: key file {broken}: key 'x': unknown field 'player' "
        "(name, secret, role, players)",
    )
    keys = tmp_path / "keys.toml"
    keys.write_text(key_file(), encoding="utf-8")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "rolemem.cli", "serve", "--db", db, "--keys", str(keys)]
        + ["--keyword-only", "--port", str(port), "--player-rate", "2/min", "--log-format", "json"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until_serving(f"http://127.0.0.1:{port}", server, timeout=60)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            statuses = [client.get("/users/mumu/saves", headers=GAME).status_code for _ in range(3)]
            replace(keys, key_file().replace("game-secret-1", "game-secret-2"))
            time.sleep(2.0)
            rotated = client.get("/users/someone/saves", headers=GAME).status_code
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert (statuses, rotated) == ([200, 200, 429], 401)
    log = err.decode()
    assert "game-secret" not in log and "studio-a-secret" not in log
    served = [line for line in log.splitlines() if '"route": "/users/{user_id}/saves"' in line]
    assert [('"key": "game-server"' in line, '"status": 429' in line) for line in served] == [
        (True, False),
        (True, False),
        (True, True),
        (False, False),
    ]
    assert f"key file {keys} reloaded: 5 keys" in log
