"""Upkeep inside the running service: maintenance on demand (designer key) and on a schedule,
one run at a time across the store's processes; a failed extraction tried again by the
service after a backoff (no append needed), its error cleared once an attempt succeeds. Runs
on the embedded DuckDB file and on PostgreSQL."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import pytest

from rolemem.service.core.settings import ServiceSettings
from rolemem.testing.scripted_llm import Status

from .conftest import error_of, memory_status, scripted_game

GAME, DESIGNER = {"X-API-Key": "game"}, {"X-API-Key": "designer"}
EXTRACTED = json.dumps(
    {"events": [{"description": "阿雅说想去看海", "keywords": ["海"]}], "entities": []},
    ensure_ascii=False,
)


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def game(request, tmp_path_factory):
    settings = ServiceSettings(
        api_key="game",
        designer_key="designer",
        # long enough for a poll every 20 ms to see the retry wait on a busy machine
        extraction_retry_seconds=1.5,
        extraction_retries=2,
    )
    with scripted_game(
        request, tmp_path_factory, "rolemem_upkeep", settings=settings, maintain_every=3600
    ) as served:
        yield served


def test_maintenance_runs_while_serving_one_run_at_a_time(game):
    client, app, _ = game
    assert client.post("/admin/maintenance", headers=GAME).status_code == 401
    answer = client.post("/admin/maintenance", headers=DESIGNER)
    assert answer.status_code == 200, answer.text
    report = answer.json()
    assert set(report) == {
        "started_at",
        "finished_at",
        "archived",
        "players_cleaned",
        "consolidated_entities",
        "context_vectors",
        "idempotency_records_forgotten",
    }
    # the server's clock, with its UTC offset
    started, finished = (datetime.fromisoformat(report[name]) for name in report if "_at" in name)
    assert started.tzinfo is not None and finished.tzinfo is not None
    assert started <= finished
    status = client.get("/status", headers=GAME).json()
    assert status["last_maintenance"] == report
    # another run under way (here: held by the test, as another process would hold it)
    with app.state.store.engine.only_one("maintenance") as mine:
        assert mine
        busy = client.post("/admin/maintenance", headers=DESIGNER)
    assert busy.status_code == 409
    assert error_of(busy)["message"].startswith("a maintenance run is under way")
    assert client.post("/admin/maintenance", headers=DESIGNER).status_code == 200


def test_a_run_asked_while_one_of_this_process_runs_is_refused_at_once(game, monkeypatch):
    """The worker runs one maintenance at a time: a second asked meanwhile is the documented
    409 at once, not a run queued behind the first."""
    client, app, _ = game
    loop = app.state.store.loop
    maintain, started, release = loop.maintain, threading.Event(), threading.Event()

    def held(**kwargs):
        started.set()
        release.wait(30)
        return maintain(**kwargs)

    monkeypatch.setattr(loop, "maintain", held)
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(client.post, "/admin/maintenance", headers=DESIGNER)
        assert started.wait(30)
        busy = client.post("/admin/maintenance", headers=DESIGNER)
        release.set()
        assert first.result().status_code == 200
    assert busy.status_code == 409
    assert error_of(busy)["message"].startswith("a maintenance run is under way")
    monkeypatch.undo()
    assert client.post("/admin/maintenance", headers=DESIGNER).status_code == 200


def test_a_run_that_stays_busy_says_what_ran_first_stays_done(game, monkeypatch):
    """Cleanup commits before the idempotency sweep: a sweep whose conflicts outlast the
    retries is the 503, saying what ran first stays done (it said "nothing changed")."""
    from rolemem.service.core import idempotency

    client, app, _ = game
    conflict = app.state.store.engine.conflicts[0]

    def busy(cur, **kwargs):
        raise conflict("a conflicting write")

    monkeypatch.setattr(idempotency, "forget_expired", busy)
    answer = client.post("/admin/maintenance", headers=DESIGNER)
    assert answer.status_code == 503
    assert error_of(answer)["message"] == (
        "maintenance kept meeting conflicting writes; what it finished first stays done "
        "(cleanup, then each consolidation batch, then the idempotency sweep commit one by "
        "one): run it again to finish"
    )


def test_a_failed_extraction_is_tried_again_without_an_append(game):
    client, _, llm = game
    save = client.post("/saves", headers=GAME, json={"user_id": "aya"}).json()["save_id"]
    observe = {"agent_id": "qiyu", "role_id": 1, "user_name": "阿雅"}
    # the first attempt fails (one LLM call), then the LLM answers the service's own retry
    llm.push(Status(500), EXTRACTED)
    # the scene change makes the gallery's turn due (the beach's stays pending)
    for scene in ("gallery", "beach"):
        answer = client.post(
            f"/saves/{save}/lines",
            headers=GAME,
            json={
                "user_id": "aya",
                "lines": [
                    {"attribute": "user", "content": f"去{scene}"},
                    {"attribute": "assistant", "content": "好", "role_id": 1},
                ],
                "observe": {**observe, "scene": scene},
            },
        )
        assert answer.status_code == 200, answer.text
    deadline = time.monotonic() + 30
    seen = []
    # (the status reads the pending turns and the batch in two statements: both settled)
    while (status := memory_status(client, save, "aya"))["last_batch_key"] is None or status[
        "pending_turns"
    ] != 1:
        seen.append((status["extraction"], status["failed_attempts"], status["last_error"]))
        assert time.monotonic() < deadline, seen
        time.sleep(0.02)
    assert ("retrying", 1) in [(state, attempts) for state, attempts, _ in seen]
    assert any(error and error.startswith("ExtractionError") for _, _, error in seen)
    # the success cleared the failure
    assert (status["failed_attempts"], status["last_error"], status["last_error_at"]) == (
        0,
        None,
        None,
    )
    assert status["extraction"] == "idle" and status["pending_turns"] == 1
