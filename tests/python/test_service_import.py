"""Bulk import over HTTP (issue 33 item 5): a 2,000-line chat onto a save's tip in one request
(`application/x-ndjson`), the memory loop catching up in the background with the scripted LLM
(`memory_status`: pending turns going down to what is not yet a batch), a retry with the same
key stored once, a bad row refused with nothing written, the import's own size limit. Every
test runs on the embedded DuckDB file and on PostgreSQL."""

from __future__ import annotations

import json
import time

import pytest

from rolemem.service.core.settings import ServiceSettings

from .conftest import error_of, memory_status, new_save, scripted_game

KEY = {"X-API-Key": "game"}
NDJSON = {**KEY, "Content-Type": "application/x-ndjson"}
TURNS = 1000


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def game(request, tmp_path_factory):
    settings = ServiceSettings(
        api_key="game",
        max_body_bytes=100_000,
        import_max_bytes=400_000,
        import_max_lines=2 * TURNS + 2,
    )
    with scripted_game(request, tmp_path_factory, "rolemem_import", settings=settings) as served:
        yield served


def chat(turns: int, role_id: int) -> list[dict]:
    """A player and a character taking turns, a minute apart."""
    rows = []
    for turn in range(turns):
        hour, minute = divmod(turn, 60)
        at = f"2024-05-{1 + hour // 24:02d}T{hour % 24:02d}:{minute:02d}:00"
        rows.append({"attribute": "user", "content": f"第{turn}句：今天画了什么", "created_at": at})
        rows.append(
            {
                "attribute": "assistant",
                "content": f"第{turn}幅：海",
                "role_id": role_id,
                "created_at": at,
            }
        )
    return rows


def ndjson(rows: list) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()


def count(app, sql: str) -> int:
    return app.state.store.engine.run(sql, {})[0][0]


@pytest.fixture(scope="module")
def role(game):
    client, _, _ = game
    answer = client.post(
        "/roles", headers=KEY, json={"name": "祁煜", "character_id": "qiyu", "agent_id": "qiyu"}
    )
    assert answer.status_code == 201, answer.text
    return answer.json()["role_id"]


def lines_of(app, save_id: int) -> int:
    return count(app, f"select count(*) from line where save_id = {int(save_id)}")


def test_a_2000_line_chat_is_imported_and_the_loop_catches_up(game, role):
    client, app, llm = game
    save = new_save(client, "nana", headers=KEY)
    calls = len(llm.requests)
    body = ndjson(chat(TURNS, role))
    # larger than any other request may be (max_body_bytes), within the import's own limit
    assert 100_000 < len(body) < 400_000
    answer = client.post(
        f"/saves/{save}/import",
        params={"user_id": "nana"},
        headers=NDJSON,
        content=body,
        timeout=120,
    )
    assert answer.status_code == 200, answer.text
    imported = answer.json()
    first = imported["first_line_id"]
    assert imported == {
        "save_id": save,
        "line_count": 2000,
        "first_line_id": first,
        "tip_line_id": first + 1999,
        "observed": [{"role_id": role, "agent_id": "qiyu", "extraction": "scheduled"}],
    }
    # the rows chained in order onto the tip
    detail = client.get(f"/saves/{save}", headers=KEY, params={"user_id": "nana"}).json()
    assert (detail["tip_line_id"], detail["line_count"]) == (first + 1999, 2000)
    page = client.get(
        f"/saves/{save}/lines", headers=KEY, params={"user_id": "nana", "limit": 2}
    ).json()
    assert [(row["content"], row["created_at"]) for row in page["lines"]] == [
        ("第999句：今天画了什么", "2024-05-01T16:39:00"),
        ("第999幅：海", "2024-05-01T16:39:00"),
    ]
    # the loop catches up in the background, a batch (10 turns) at a time, until what is
    # left is not a batch yet
    seen = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = memory_status(client, save, "nana", role, agent_id=None)
        seen.append(status["pending_turns"])
        if status["extraction"] == "idle":
            break
        time.sleep(0.1)
    # (a status reads the pending turns before the queue's state: read it once more)
    status = memory_status(client, save, "nana", role, agent_id=None)
    # progress is sampled, never asserted: how many distinct counts a poll sees depends on load
    assert seen == sorted(seen, reverse=True) and seen[0] <= 1000
    assert (status["pending_turns"], status["watermark_line_id"]) == (10, first + 1979)
    assert status["last_batch_key"] == f"{save}:role_id={role}:{first + 1960}:{first + 1979}"
    assert (status["failed_attempts"], status["last_error"]) == (0, None)
    assert len(llm.requests) - calls == 99


def test_a_retry_with_the_same_key_is_stored_once(game, role):
    client, app, _ = game
    save = new_save(client, "rui", headers=KEY)
    body = ndjson(chat(3, role))
    headers = {**NDJSON, "Idempotency-Key": "import-1"}
    answers = [
        client.post(
            f"/saves/{save}/import", params={"user_id": "rui"}, headers=headers, content=body
        )
        for _ in range(2)
    ]
    assert [answer.status_code for answer in answers] == [200, 200]
    assert answers[0].json()["line_count"] == 6
    assert answers[0].json() == {**answers[1].json(), "observed": answers[0].json()["observed"]}
    assert lines_of(app, save) == 6
    other = client.post(
        f"/saves/{save}/import",
        params={"user_id": "rui"},
        headers=headers,
        content=ndjson(chat(2, role)),
    )
    assert other.status_code == 409
    assert error_of(other)["field"] == "Idempotency-Key"
    assert lines_of(app, save) == 6


def test_a_bad_row_is_refused_and_nothing_is_written(game, role):
    client, app, _ = game
    save = new_save(client, "kai", headers=KEY)
    rows = chat(3, role)

    def refused(body: bytes, **headers: str) -> tuple[int, str | None]:
        answer = client.post(
            f"/saves/{save}/import",
            params={"user_id": "kai"},
            headers={**NDJSON, **headers},
            content=body,
        )
        return answer.status_code, error_of(answer).get("field")

    empty = [*rows[:3], {**rows[3], "content": ""}, *rows[4:]]
    assert refused(ndjson(empty)) == (422, "lines[3].content")
    unknown = [*rows[:1], {**rows[1], "mood": "好"}, *rows[2:]]
    assert refused(ndjson(unknown)) == (422, "lines[1].mood")
    text = ndjson(rows).split(b"\n")
    broken = b"\n".join([*text[:2], b'{"attribute": "user", "content": ', *text[2:]])
    assert refused(broken) == (422, "lines[2]")
    nan = b"\n".join([*text[:4], b'{"attribute": "user", "content": NaN}', *text[4:]])
    assert refused(nan) == (422, "lines[4].content")
    no_role = [*rows[:5], {**rows[5], "role_id": 999}]
    assert refused(ndjson(no_role)) == (404, "lines[5].role_id")
    assert refused(b"\n\n") == (422, "lines")
    assert refused(ndjson(rows), **{"Content-Type": "text/plain"}) == (415, "Content-Type")
    assert refused(ndjson(rows), **{"X-API-Key": "wrong"}) == (401, "X-API-Key")
    # a second Content-Type is refused before the body is read, as every request's is
    twice = client.post(
        f"/saves/{save}/import",
        params={"user_id": "kai"},
        headers=[
            *KEY.items(),
            ("content-type", "application/json"),
            ("content-type", "application/x-ndjson"),
        ],
        content=ndjson(rows),
    )
    assert (twice.status_code, error_of(twice)["field"]) == (400, "Content-Type")
    # another player's save is not revealed to exist
    answer = client.post(
        f"/saves/{save}/import", params={"user_id": "lou"}, headers=NDJSON, content=ndjson(rows)
    )
    assert (answer.status_code, error_of(answer)["field"]) == (404, "save_id")
    assert lines_of(app, save) == 0


def test_an_import_past_its_limit_is_refused_before_any_work(game, role):
    client, app, _ = game
    save = new_save(client, "lou", headers=KEY)
    too_many = ndjson(chat(TURNS + 2, role))  # 2,004 lines: past 2,002
    assert len(too_many) < 400_000
    answer = client.post(
        f"/saves/{save}/import", params={"user_id": "lou"}, headers=NDJSON, content=too_many
    )
    assert answer.status_code == 413
    assert error_of(answer) == {
        "type": "PayloadTooLarge",
        "message": "the import holds more lines than the service accepts (2002)",
    }
    long = ndjson([{"attribute": "user", "content": "海" * 1000}] * 150)  # 450 kB
    answer = client.post(
        f"/saves/{save}/import", params={"user_id": "lou"}, headers=NDJSON, content=long
    )
    assert answer.status_code == 413
    assert error_of(answer)["message"] == (
        "the import is larger than the service accepts (400000 bytes)"
    )
    assert lines_of(app, save) == 0
