"""Holes a careless or hostile client could find, each closed and tested over HTTP on a real
server on loopback: server ids never pushed out of range by a chosen one, the query decoded
once (the rates read `?user%5Fid=`), no answer that reveals another player's save or echoes a
request value, the 16 KiB head limit answered 431, a malformed body counted as the client's
400, every keyed route declaring its 401 and 429 (and each that may, its 503), expired
idempotency records swept by maintenance, deletes and edits racing for one memory answered
200, 404 or 503 and archiving it once, and `rolemem serve` refusing to start open off
loopback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from rolemem.character_memory.config import ConfigError, parse_designer_json
from rolemem.memory_loop.llm import LLMError, OpenAICompatibleLLM
from rolemem.service import create_app
from rolemem.service.core.connections import server_options
from rolemem.service.core.settings import ServiceSettings
from rolemem.testing.scripted_llm import ScriptedChatServer, Status, Trickle

from .conftest import (
    REPO,
    demo_store,
    demo_store_on,
    error_of,
    memory_status,
    raw_connection,
    serving,
)

GAME = {"X-API-Key": "game"}
TURN = {"save_id": 2, "user_id": "mumu", "role_id": 1, "message": "你好", "dry_run": True}
DESIGNER = {"X-API-Key": "designer"}
SETTINGS = ServiceSettings(
    api_key="game",
    designer_key="designer",
    player_rate="20/min",
    idempotency_hours=1 / 3600,  # a second: the sweep is seen within the test
)


@pytest.fixture(scope="module")
def service(tmp_path_factory: Any) -> Iterator[httpx.Client]:
    path = demo_store(str(tmp_path_factory.mktemp("holes") / "holes.duckdb"))
    app = create_app(path, embedder=None, settings=SETTINGS)
    with serving(app, **server_options(SETTINGS)) as client:
        yield client


def _requests(client: httpx.Client) -> dict[tuple[str, str, str], float]:
    counted = {}
    for family in text_string_to_metric_families(client.get("/metrics").text):
        for sample in family.samples:
            if sample.name == "rolemem_http_requests_total":
                labels = sample.labels
                counted[(labels["method"], labels["route"], labels["status"])] = sample.value
    return counted


def test_a_chosen_id_at_the_ceiling_leaves_later_saves_usable(service):
    top = 2**53 - 1
    chosen = service.post("/saves", json={"id": top, "user_id": "ceil"}, headers=GAME)
    assert chosen.status_code == 201, chosen.text
    assert service.post("/roles", json={"id": top, "name": "顶"}, headers=GAME).status_code == 201
    for _ in range(2):
        save = service.post("/saves", json={"user_id": "ceil"}, headers=GAME).json()["save_id"]
        assert save < 1000  # the sequence's, not max(id) + 1
        line = {"attribute": "user", "content": "还在吗"}
        appended = service.post(
            f"/saves/{save}/lines", json={"user_id": "ceil", "lines": [line]}, headers=GAME
        )
        assert appended.status_code == 200, appended.text
        assert service.get(f"/saves/{save}", params={"user_id": "ceil"}, headers=GAME).is_success
    role = service.post("/roles", json={"name": "下一个"}, headers=GAME).json()["role_id"]
    assert role < 1000


def test_another_players_save_id_is_unavailable_without_saying_whose(service):
    mine = service.post("/saves", json={"id": 777, "user_id": "ann"}, headers=GAME)
    assert mine.status_code == 201
    answers = [
        service.post("/saves", json={"id": save_id, "user_id": "bob"}, headers=GAME)
        for save_id in (1, 777)  # mumu's (the demo's), ann's
    ]
    again = service.post("/saves", json={"id": 777, "user_id": "ann"}, headers=GAME)
    for answer in (*answers, again):  # the same answer whoever holds it, the asker too
        assert answer.status_code == 409
        assert error_of(answer) == {
            "type": "ConflictError",
            "message": "this save id is not available: choose another id, or leave id out",
            "field": "id",
        }


def test_a_reused_idempotency_key_is_not_echoed(service):
    key = {"Idempotency-Key": "k-9f3c-secret-looking"}
    first = service.post("/saves", json={"user_id": "dee"}, headers={**GAME, **key})
    assert first.status_code == 201
    reused = service.post("/saves", json={"user_id": "dee", "name": "x"}, headers={**GAME, **key})
    assert reused.status_code == 409
    assert "k-9f3c" not in reused.text
    assert error_of(reused)["field"] == "Idempotency-Key"


def test_a_body_not_sent_as_json_is_a_415_naming_the_content_type(service):
    """FastAPI reads a body as JSON only under application/json or application/*+json;
    another (or none) was validated as bytes, a 422 naming no field."""
    body = json.dumps(TURN).encode()
    expected = {
        "type": "UnsupportedMediaType",
        "message": "the body must be JSON: send it with Content-Type: application/json",
        "field": "Content-Type",
    }
    for content_type in ("text/plain", "application/x-www-form-urlencoded", None):
        headers = GAME if content_type is None else {**GAME, "Content-Type": content_type}
        answer = service.post("/turn", content=body, headers=headers)
        assert (answer.status_code, error_of(answer)) == (415, expected)
    suffixed = {**GAME, "Content-Type": "application/vnd.rolemem+json"}
    assert service.post("/turn", content=body, headers=suffixed).status_code == 200
    # no body at all: the 422 says what is missing
    empty = service.post("/turn", headers={**GAME, "Content-Type": "application/json"})
    assert (empty.status_code, error_of(empty)) == (
        422,
        {"type": "ValidationError", "message": "the body is required (a JSON object)"},
    )


def test_a_json_body_in_utf_16_is_refused_as_not_utf_8(service):
    """JSON between systems is UTF-8 (RFC 8259); json.loads of bytes took UTF-16 and 32."""
    typed = {**GAME, "Content-Type": "application/json"}
    for encoding in ("utf-16", "utf-16-le", "utf-32"):
        answer = service.post("/turn", content=json.dumps(TURN).encode(encoding), headers=typed)
        assert (answer.status_code, error_of(answer)["message"]) == (
            422,
            "the body is not valid JSON (UTF-8)",
        )


def _bounded(text: str) -> str:
    """What an error quotes of `text`: at most 500 characters, its start and end kept."""
    return text if len(text) <= 500 else f"{text[:249]}…{text[-250:]}"


def test_a_huge_field_name_is_quoted_within_the_bound(service):
    """An unknown key 50,000 characters long was echoed whole, twice (a 100 KB 422): the
    message and the field keep its start and end, at most 500 characters each."""
    key = "a" + "k" * 49_998 + "z"
    line = {"attribute": "user", "content": "在吗", key: 1}
    answers = {
        key: service.post("/saves", json={"user_id": "huge", key: 1}, headers=GAME),
        f"lines[0].{key}": service.post(
            "/saves/1/lines", json={"user_id": "huge", "lines": [line]}, headers=GAME
        ),
    }
    for field, answer in answers.items():
        assert (answer.status_code, error_of(answer)) == (
            422,
            {
                "type": "ValidationError",
                "message": _bounded(f"{field}: Extra inputs are not permitted"),
                "field": _bounded(field),
            },
        )
        assert len(answer.content) < 1200
    # a parameter's name the guard refuses, as well
    name = "q" * 10_000
    refused = service.get(f"/users/huge/saves?{name}=%00", headers=GAME)
    assert error_of(refused)["field"] == _bounded(name)
    assert len(refused.content) < 1200
    # a path id is at most 128 characters: a 404 quotes it whole
    character = "c" * 128
    missing = service.get(f"/config/{character}", headers=DESIGNER)
    assert (missing.status_code, error_of(missing)["message"]) == (
        404,
        f"no config for character '{character}'",
    )
    assert service.get(f"/config/{character}c", headers=DESIGNER).status_code == 422


def test_an_imports_advice_and_report_quote_a_long_name_cut_short(service):
    """A category (a lorebook's comment) 400,000 characters long came back whole in each line
    of advice, and a lorebook's uid whole in its report (an answer four times the body): a
    name is cut to 60 characters (the document a lorebook import returns carries it whole)."""
    group = "g" * 400_000
    cut = "g" * 59 + "…"
    config = {
        "character_id": "long",
        "attributes": {group: [{"关键词": ["画"], "内容": "短", "强度": 3}]},
    }
    answer = service.post("/config/import", json=config, headers=DESIGNER)
    assert answer.status_code == 200, answer.text
    assert answer.json()["advice"] == [
        f"<designer config>: attributes.{cut}[0]: content: is 1 characters; 10-30 are advised",
        f"<designer config>: attributes.{cut}[0]: keywords: has 1 keywords; 3-30 are advised",
    ]
    assert len(answer.content) < 1000
    uid = "u" * 100_000
    entry = {"key": ["画画", "画室", "画布"], "content": "艺术天赋" * 3, "probability": 50}
    lorebook = {"entries": {uid: {**entry, "comment": group}}}
    answer = service.post("/config/import/sillytavern/long", json=lorebook, headers=DESIGNER)
    assert answer.status_code == 200, answer.text
    assert answer.json()["report"] == [
        "probability: probability is carried, not applied (recall is deterministic) "
        f"(entries {'u' * 59}…)"
    ]
    assert answer.json()["advice"] == []
    # a group with no entries, named the same way
    config["attributes"] = {group: []}
    empty = service.post("/config/import", json=config, headers=DESIGNER)
    assert (empty.status_code, error_of(empty)["message"]) == (
        400,
        f"<designer config>: attributes.{cut} has no entries",
    )


def test_an_imports_advice_is_bounded_whatever_the_entries(service):
    """20,000 small entries gave 40,000 lines of advice (an answer six times the body): the
    first 50, then one line counting the rest."""
    config = {
        "character_id": "many",
        "attributes": {"g": [{"关键词": [f"画{n}"], "内容": "短", "强度": 3} for n in range(60)]},
    }
    answer = service.post("/config/import", json=config, headers=DESIGNER)
    assert answer.status_code == 200, answer.text
    advice = answer.json()["advice"]
    assert advice[:2] == [
        "<designer config>: attributes.g[0]: content: is 1 characters; 10-30 are advised",
        "<designer config>: attributes.g[0]: keywords: has 1 keywords; 3-30 are advised",
    ]
    assert len(advice) == 51 and advice[-1] == "70 more lines of advice (not shown)"


def test_a_dot_segment_is_no_character_id(service):
    """A config imported as `..` or `.` could never be exported or looked at: clients and
    proxies resolve those segments of a URL path. Refused (422 naming character_id) in the
    body and in the path, and by the Python API; `...` is an id like any other."""
    entry = {
        "关键词": ["温柔", "体贴", "细心"],
        "内容": "对{{user}}格外温柔，总是细心照顾",
        "强度": 3,
    }
    refused = {
        "type": "ValidationError",
        "message": "character_id: cannot be . or .. (a URL path cannot name it)",
        "field": "character_id",
    }
    lorebook = {"entries": {"0": {"key": ["画画"], "content": "艺术天赋"}}}
    for character in (".", ".."):
        config = {"character_id": character, "attributes": {"性格": [entry]}}
        answer = service.post("/config/import", json=config, headers=DESIGNER)
        assert (answer.status_code, error_of(answer)) == (422, refused)
        segment = character.replace(".", "%2E")
        for path in (segment, f"{segment}/sillytavern", f"{segment}/unlock_matrix"):
            answer = service.get(f"/config/{path}", headers=DESIGNER)
            assert (answer.status_code, error_of(answer)) == (422, refused)
        imported = f"/config/import/sillytavern/{segment}"
        answer = service.post(imported, json=lorebook, headers=DESIGNER)
        assert (answer.status_code, error_of(answer)) == (422, refused)
        with pytest.raises(ConfigError) as python:
            parse_designer_json(config)
        assert (str(python.value), python.value.field) == (
            "<designer config>: character_id cannot be . or .. (a URL path cannot name it)",
            "character_id",
        )
    listed = service.get("/config", headers=DESIGNER).json()["characters"]
    assert {".", ".."}.isdisjoint(listed_one["character_id"] for listed_one in listed)
    config = {"character_id": "...", "attributes": {"性格": [entry]}}
    assert service.post("/config/import", json=config, headers=DESIGNER).status_code == 200
    assert service.get("/config/...", headers=DESIGNER).json()["character_id"] == "..."


def test_the_rates_read_the_query_as_the_route_does(service):
    statuses = {service.get("/users/eve/saves", headers=GAME).status_code for _ in range(20)}
    assert statuses == {200}  # eve's twenty a minute
    # `user%5Fid` is user_id to the route: the gate counts it too
    encoded = service.get("/saves/1/memory_status?user%5Fid=eve&role_id=1", headers=GAME)
    assert encoded.status_code == 429, encoded.text
    assert error_of(encoded)["type"] == "TooManyRequests"


def test_head_is_answered_as_get_without_a_body(service):
    """HEAD was a 405 on every GET route, /health too: now the GET's status and headers
    (RFC 9110 9.3.2), no body, the keys and the player's rate as for the GET."""
    targets = [
        ("/health", {}),
        ("/console", {}),
        ("/saves/1?user_id=mumu", GAME),
        ("/config/qiyu", DESIGNER),
        ("/config/qiyu", GAME),  # another role's route: 401
        ("/saves/1_0?user_id=mumu", GAME),  # 422
        ("/no/such/route", GAME),  # 404
        ("/mcp", GAME),  # POST only: 405
    ]
    varying = {"date", "x-request-id", "ratelimit-remaining", "ratelimit-reset"}

    def seen(answer: httpx.Response) -> tuple[int, dict[str, str]]:
        kept = {name: value for name, value in answer.headers.items() if name not in varying}
        return answer.status_code, kept

    gets = [seen(service.get(target, headers=headers)) for target, headers in targets]
    heads = [seen(service.head(target, headers=headers)) for target, headers in targets]
    assert heads == gets
    assert [status for status, _ in heads] == [200] * 4 + [401, 422, 404, 405]
    assert heads[-1][1]["allow"] == "POST"
    # the server sends the head only: the next answer on the connection follows at once
    with raw_connection(service) as sock:
        sock.sendall(
            b"HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n"
            b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, rest = received.partition(b"\r\n\r\n")
    assert b"content-length: 15" in head and rest.startswith(b"HTTP/1.1 200 OK\r\n")
    assert rest.endswith(b'\r\n\r\n{"status":"ok"}')
    # a HEAD takes the player's token as the GET does (twenty a minute)
    statuses = [service.head("/users/hal/saves", headers=GAME).status_code for _ in range(21)]
    assert statuses == [200] * 20 + [429]
    assert service.get("/users/hal/saves", headers=GAME).status_code == 429


def _status_of_answer(sock: socket.socket) -> tuple[int, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"closed without an answer: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def test_a_head_over_16_kib_is_a_431_whole_or_trickled(service):
    before = _requests(service).get(("GET", "/users/{user_id}/saves", "431"), 0)
    big = service.get("/users/fay/saves", headers={**GAME, "X-Big": "a" * 40_000})
    assert big.status_code == 431
    assert error_of(big)["type"] == "HeadersTooLarge"
    assert _requests(service)[("GET", "/users/{user_id}/saves", "431")] == before + 1
    # a head still arriving past the limit (h11's own limit): 431 in the error shape too
    with raw_connection(service) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        for _ in range(17):  # just past 16 KiB, then the client waits
            sock.sendall(b"X-Pad: " + b"p" * 1000 + b"\r\n")
            time.sleep(0.01)
        status, body = _status_of_answer(sock)
    assert status == 431
    assert b"HeadersTooLarge" in body


def test_a_malformed_chunked_body_counts_as_a_400(service):
    with raw_connection(service) as sock:
        sock.sendall(
            b"POST /saves HTTP/1.1\r\nHost: x\r\nX-API-Key: game\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"zz\r\nabc\r\n0\r\n\r\n"
        )
        status, body = _status_of_answer(sock)
    assert status == 400 and b'"BadRequest"' in body
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        counted = _requests(service)
        if counted.get(("POST", "/saves", "400")):
            break
        time.sleep(0.05)
    assert counted.get(("POST", "/saves", "400")) == 1
    assert not [labels for labels in counted if labels[2].startswith("5")]


def test_every_keyed_route_declares_its_401_and_429(service):
    document = service.get("/openapi.json").json()
    missing = [
        (method, path, status)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if path not in ("/health", "/ready", "/metrics")
        for status in ("401", "429")
        if status not in operation["responses"]
    ]
    assert missing == []


# the routes that never answer 503: no time budget and no write retried by the store
# (store.write, store.retried), whose conflicts past their retries are the 503
NEVER_BUSY = {
    ("get", "/health"),
    ("get", "/metrics"),
    ("get", "/status"),
    ("post", "/snapshot"),
    ("post", "/admin/webhooks/replay"),
}


def test_every_route_that_can_answer_503_declares_it(service):
    """The reads (their time budget), the writes the store retries (POST /roles, /saves, the
    lines, a player's and the official memory edits and deletes, the imports, forget,
    maintenance) and the exports (a client gone): every other route declares none."""
    document = service.get("/openapi.json").json()
    undeclared = {
        (method, path)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if "503" not in operation["responses"]
    }
    assert undeclared == NEVER_BUSY


def test_maintenance_sweeps_expired_idempotency_records(service):
    key = {"Idempotency-Key": "sweep-me"}
    assert service.post("/saves", json={"user_id": "gus"}, headers={**GAME, **key}).is_success
    time.sleep(1.2)  # past the retention of a second
    report = service.post("/admin/maintenance", headers=DESIGNER)
    assert report.status_code == 200, report.text
    assert report.json()["idempotency_records_forgotten"] >= 1


def test_a_bad_context_value_is_named_by_its_key(service):
    """A context value of no accepted kind was named by pydantic's tag for one member of the
    union (`context.a.constrained-str`): it is named by its key, with what a value may be."""
    kinds = (
        "a context value is a text of at most 256 characters, a number, true or false, null, "
        "or a list of at most 64 texts, numbers or true/false"
    )
    for value in ({"b": "x"}, "x" * 300, [None], [[1]]):
        body = {**TURN, "context": {"intimacy": 2, "a": value}}
        answer = service.post("/turn", json=body, headers=GAME)
        assert answer.status_code == 422, answer.text
        error = error_of(answer)
        assert (error["field"], error["message"]) == ("context.a", f"context.a: {kinds}")


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def racing(request: Any, tmp_path_factory: Any) -> Iterator[httpx.Client]:
    """The service without a player rate: one player's clients racing each other (DuckDB's
    conflicts; PostgreSQL's waits on a row another transaction deleted)."""
    path = demo_store_on(request, tmp_path_factory, "rolemem_races")
    settings = ServiceSettings(api_key="game", designer_key="designer")
    app = create_app(path, embedder=None, settings=settings)
    with serving(app, **server_options(settings)) as client:
        yield client


def _race(client: httpx.Client, calls: list[list[tuple[str, str, Any]]]) -> list[Any]:
    """Each list of (method, route, body) on a thread of its own, the threads started
    together; every (method, route, body, answer)."""
    start = threading.Barrier(len(calls))
    answers: list[Any] = []

    def play(mine: list[tuple[str, str, Any]]) -> None:
        with httpx.Client(base_url=client.base_url, headers=GAME, timeout=60) as own:
            start.wait()
            for method, route, body in mine:
                answer = own.request(method, route, json=body)
                answers.append((method, route, body, answer))

    threads = [threading.Thread(target=play, args=(mine,)) for mine in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return answers


def test_racing_deletes_and_edits_of_one_memory_answer_no_500(racing):
    """8 clients delete and edit (pin, strength, text) the same events at once: each answer
    is 200, 404 (gone already) or the declared 503 (conflicts outlasting the retries), and
    each event is gone at most once: archived once (deleted or edited, as the 200 said) or
    still live, and an edited text is one new event."""
    listed = racing.get("/users/mumu/memories", params={"kind": "event"}, headers=GAME).json()
    before = {item["memory_id"] for item in listed["items"]}
    ids = sorted(before)[:3]
    edits = [{"is_pinned": True}, {"strength": 7}, {"description": "改过的记忆"}]
    calls = [
        [
            ("DELETE", f"/users/mumu/memories/event/{ids[(n + i) % 3]}", None)
            if (n + i) % 2 == 0
            else ("PATCH", f"/users/mumu/memories/event/{ids[(n + i) % 3]}", edits[(n + i) % 3])
            for i in range(4)
        ]
        for n in range(8)
    ]
    answers = _race(racing, calls)
    assert len(answers) == 32
    statuses = {answer.status_code for *_, answer in answers}
    assert statuses <= {200, 404, 503}, [(a.status_code, a.text) for *_, a in answers]
    for *_, answer in answers:
        if answer.status_code == 503:
            assert error_of(answer)["type"] == "BusyError"
    archive = racing.get("/users/mumu/archive", params={"limit": 1000}, headers=GAME).json()
    archived = [(row["memory_id"], row["reason"]) for row in archive["items"]]
    listed = racing.get("/users/mumu/memories", params={"kind": "event"}, headers=GAME).json()
    live = {item["memory_id"] for item in listed["items"]}
    # the answers that removed an event: a delete's, a new text's
    removed = [
        (path, "deleted" if method == "DELETE" else "edited")
        for method, path, body, answer in answers
        if answer.status_code == 200 and (body is None or "description" in body)
    ]
    for memory_id in ids:
        won = [why for path, why in removed if path.endswith(f"/{memory_id}")]
        reasons = [reason for archived_id, reason in archived if archived_id == memory_id]
        assert reasons == won, (memory_id, reasons, won)
        assert (memory_id in live) == (not won)
    replaced = {
        answer.json()["memory_id"]
        for method, _, body, answer in answers
        if method == "PATCH" and "description" in body and answer.status_code == 200
    }
    assert live - before == replaced


def _serve(*arguments: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("ROLEMEM_")
    }
    return subprocess.run(
        [sys.executable, "-m", "rolemem.cli", "serve", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={**environment, **(env or {})},
    )


def test_serve_without_a_key_refuses_a_host_others_reach(tmp_path):
    store = demo_store(str(tmp_path / "open.duckdb"))
    refused = _serve("--db", store, "--host", "0.0.0.0", "--keyword-only")
    assert refused.returncode != 0
    assert refused.stderr.strip().splitlines() == [
        "rolemem: error: refusing to serve without a key on 0.0.0.0, which other machines "
        "may reach: give --api-key (or $ROLEMEM_API_KEY) or --keys FILE, or --host 127.0.0.1"
    ]


def test_an_llm_trickling_a_byte_a_second_is_abandoned_at_the_deadline():
    with ScriptedChatServer([Trickle(1.0)]) as server:
        llm = OpenAICompatibleLLM(base_url=server.base_url, model="slow", timeout=2, max_retries=0)
        started = time.monotonic()
        with pytest.raises(LLMError, match="timed out"):
            llm.complete([{"role": "user", "content": "你好"}])
        took = time.monotonic() - started
    assert took < 3.0, took  # the whole call within its timeout (+1 s), not a read's


@pytest.fixture(scope="module")
def failing(tmp_path_factory: Any) -> Iterator[tuple[httpx.Client, ScriptedChatServer]]:
    """The service with an LLM that always fails: 3 attempts in a row, a back-off of 0.5 s
    doubling."""
    path = demo_store(str(tmp_path_factory.mktemp("failing") / "failing.duckdb"))
    settings = ServiceSettings(api_key="game", extraction_retries=3, extraction_retry_seconds=0.5)
    with ScriptedChatServer(responder=lambda request: Status(500)) as server:
        llm = OpenAICompatibleLLM(base_url=server.base_url, model="failing", max_retries=0)
        app = create_app(path, llm=llm, embedder=None, settings=settings)
        with serving(app) as client:
            yield client, server


def _append(client: httpx.Client, save: int, scene: str, minute: int) -> dict[str, Any]:
    lines = [
        {"attribute": "user", "content": f"第{minute}句"},
        {"attribute": "assistant", "content": "嗯", "role_id": 1},
    ]
    observe = {"agent_id": "qiyu", "role_id": 1, "scene": scene}
    body = {"user_id": "ivy", "lines": lines, "observe": observe}
    answer = client.post(f"/saves/{save}/lines", json=body, headers=GAME)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_a_failing_batch_costs_at_most_its_retries_whatever_the_appends(failing):
    client, server = failing
    attempts: list[datetime] = []  # when each LLM call came, by the service's clock
    server.responder = lambda request: attempts.append(datetime.now().astimezone()) or Status(500)
    save = client.post("/saves", json={"user_id": "ivy"}, headers=GAME).json()["save_id"]
    for minute in range(3):
        assert _append(client, save, "gallery", minute)["extraction"] == "not_due"
    assert _append(client, save, "beach", 3)["extraction"] == "scheduled"  # a scene change
    # appends all through the three attempts (the end state, however loaded the machine),
    # then more right after the third: none of them calls the LLM before the back-off ends
    deadline = time.monotonic() + 60
    minute = 4
    while (status := memory_status(client, save, "ivy"))["failed_attempts"] < 3:
        assert time.monotonic() < deadline, len(attempts)
        _append(client, save, "beach", minute)
        minute += 1
        time.sleep(0.05)
    retry_at = datetime.fromisoformat(status["next_attempt_at"])
    assert retry_at.utcoffset() is not None  # the service's clock, with its offset
    for late in range(5):
        _append(client, save, "beach", minute + late)
    # the end state: the late appends' observations out of the queue (a loaded machine may
    # still hold one), each having found the batch backing off
    deadline = time.monotonic() + 30
    while (status := memory_status(client, save, "ivy"))["extraction"] == "queued":
        assert time.monotonic() < deadline, status
        time.sleep(0.05)
    assert status["extraction"] == "idle"  # the cap: only an append after the back-off tries
    # three calls before the back-off ended; a machine slow enough to append past it may
    # rightly have tried once more after it, never before
    assert sum(at < retry_at for at in attempts) == 3, (attempts, retry_at)
    assert len(attempts) <= 4, attempts


def test_a_store_created_before_the_back_off_gets_its_column(tmp_path, postgres_url):
    """next_attempt_at is added to memory_loop_state on open, on both engines."""
    import duckdb
    import psycopg

    from rolemem.dynamic_memory import DynamicMemory
    from rolemem.engines.postgres_setup import init_database

    from .conftest import fresh_database

    path = demo_store(str(tmp_path / "older.duckdb"))
    with duckdb.connect(path) as con:
        # (DuckDB drops no column an index depends on: the table as an older store had it)
        con.execute(
            "create table older as select * exclude (next_attempt_at) from memory_loop_state"
        )
        con.execute("drop table memory_loop_state")
        con.execute("alter table older rename to memory_loop_state")
        # nor the migration adding it recorded (schema.migrations)
        con.execute("delete from rolemem_migration where name = 'model_columns'")
    DynamicMemory(path, embedder=None).close()
    with duckdb.connect(path) as con:
        columns = {row[0] for row in con.execute("describe memory_loop_state").fetchall()}
    assert "next_attempt_at" in columns

    url = fresh_database(postgres_url, "rolemem_older_loop_state")
    init_database(url)
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("alter table memory_loop_state drop column next_attempt_at")
        con.execute("delete from rolemem_migration where name = 'model_columns'")
    init_database(url)
    with psycopg.connect(url, autocommit=True) as con:
        found = con.execute(
            "select count(*) from information_schema.columns "
            "where table_name = 'memory_loop_state' and column_name = 'next_attempt_at'"
        ).fetchone()
    assert found == (1,)
