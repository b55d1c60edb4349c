"""Webhooks: the service's events POSTed to receivers on loopback that check each signature as
a game server would (HMAC-SHA256 of "<t>.<body>", Stripe's scheme); a receiver that is down
gets its deliveries retried, then kept in the store (across a restart) until replayed; one that
comes up while they are retried gets them then. /status shows the deliveries."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from rolemem.service import create_app
from rolemem.service.core.child import free_port
from rolemem.service.core.settings import ServiceSettings
from rolemem.testing.scripted_llm import Status

from .conftest import observe_scene, scripted_game, serving

KEY = {"X-API-Key": "game"}
DESIGNER = {"X-API-Key": "designer"}
SECRET = "whsec_test"
DUCKDB = SimpleNamespace(param="duckdb")  # scripted_game's engine, without parametrising
TOLERANCE = 300  # seconds a signature's timestamp may be off, as Stripe's libraries allow


class Receiver:
    """A webhook receiver on 127.0.0.1: 200 for a delivery whose signature holds, 400 (kept
    in `refused`) for one whose does not."""

    def __init__(self, port: int | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self.refused: list[str] = []
        received = threading.Condition()
        self.received = received
        events, refused = self.events, self.refused

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                problem = _signature_problem(self.headers.get("X-Rolemem-Signature", ""), body)
                with received:
                    if problem is None:
                        events.append(json.loads(body))
                    else:
                        refused.append(problem)
                    received.notify_all()
                self.send_response(400 if problem else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port or 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks"

    def __enter__(self) -> Receiver:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def wait_for(self, kind: str, count: int = 1, seconds: float = 30) -> list[dict[str, Any]]:
        with self.received:
            assert self.received.wait_for(lambda: len(self.of(kind)) >= count, timeout=seconds), (
                f"{kind}: {self.events}, refused {self.refused}"
            )
            return self.of(kind)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [event for event in self.events if event["type"] == kind]


def _signature_problem(header: str, body: bytes) -> str | None:
    """Why the signature does not hold (None: it does), as a receiver checks it."""
    parts = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    if not parts.get("t", "").isdigit() or "v1" not in parts:
        return f"malformed: {header!r}"
    if abs(time.time() - int(parts["t"])) > TOLERANCE:
        return "too old"
    expected = hmac.new(SECRET.encode(), f"{parts['t']}.".encode() + body, hashlib.sha256)
    if not hmac.compare_digest(expected.hexdigest(), parts["v1"]):
        return "wrong signature"
    return None


def _until(check: Callable[[], Any], seconds: float = 30) -> Any:
    deadline = time.monotonic() + seconds
    while not (value := check()):
        assert time.monotonic() < deadline, "gave up waiting"
        time.sleep(0.05)
    return value


def _webhooks(client: httpx.Client) -> dict[str, Any]:
    return dict(client.get("/status", headers=KEY).json()["webhooks"])


@pytest.fixture(params=["duckdb", "postgres"])
def engine(request: Any) -> Any:
    return request


def test_events_reach_a_receiver_signed_and_failed_ones_are_kept_and_replayed(
    engine, tmp_path_factory
):
    down = free_port()  # a receiver that is not up until after a restart
    with Receiver() as receiver:
        settings = ServiceSettings(
            api_key="game",
            designer_key="designer",
            webhooks=(receiver.url, f"http://127.0.0.1:{down}/hooks"),
            webhook_secret=SECRET,
            webhook_retries=2,
            webhook_backoff=0.1,
        )
        with scripted_game(engine, tmp_path_factory, "webhooks", settings=settings) as game:
            client, app, _ = game
            observe_scene(client, "gallery")
            observe_scene(client, "beach")
            (extracted,) = receiver.wait_for("extraction.succeeded")
            assert set(extracted) == {"id", "type", "created", "data"}
            assert (
                extracted["id"].startswith("evt_") and abs(extracted["created"] - time.time()) < 60
            )
            assert extracted["data"]["save_id"] == 2
            assert (extracted["data"]["user_id"], extracted["data"]["agent_id"]) == ("mumu", "qiyu")
            assert extracted["data"]["batch_keys"]
            assert client.post("/admin/maintenance", headers=DESIGNER).status_code == 200
            (maintained,) = receiver.wait_for("maintenance.finished")
            assert "players_cleaned" in maintained["data"]
            answer = client.post("/users/mumu/forget", headers=KEY, json={"purge": True})
            assert answer.status_code == 200
            (purged,) = receiver.wait_for("player.purged")
            assert purged["data"]["user_id"] == "mumu" and purged["data"]["agent_id"] is None
            # the receiver that is down: each event tried 1 + 2 times, then kept
            state = _until(lambda: (s := _webhooks(client))["kept"] == 3 and s)
            assert state["urls"] == 2 and state["pending"] == 0
            assert (state["delivered"], state["failed"], state["retried"]) == (3, 3, 6)
            assert "Connection refused" in state["last_error"]
            sent = {event["id"]: event for event in receiver.events}
            path = app.state.store.path
        # a restart: the kept deliveries are in the store; the receiver is up now
        with Receiver(port=down) as late:
            with serving(create_app(path, embedder=None, settings=settings)) as client:
                assert _webhooks(client)["kept"] == 3
                answer = client.post("/admin/webhooks/replay", headers=DESIGNER)
                assert answer.status_code == 200, answer.text
                assert answer.json() == {"queued": 3}
                _until(lambda: len(late.events) == 3)
                assert {event["id"]: event for event in late.events} == sent
                state = _until(lambda: (s := _webhooks(client))["kept"] == 0 and s)
                assert state["delivered"] == 3
                # nothing left to replay
                assert client.post("/admin/webhooks/replay", headers=DESIGNER).json() == {
                    "queued": 0
                }
        assert receiver.refused == [] and late.refused == []


@pytest.fixture
def failing_game(tmp_path_factory) -> Iterator[tuple[Any, int]]:
    """The service on DuckDB whose LLM always fails, one webhook URL whose receiver is down."""
    port = free_port()
    settings = ServiceSettings(
        api_key="game",
        webhooks=(f"http://127.0.0.1:{port}/hooks",),
        webhook_secret=SECRET,
        webhook_retries=8,
        webhook_backoff=0.1,
    )

    with scripted_game(
        DUCKDB,
        tmp_path_factory,
        "webhooks_late",
        settings=settings,
        responder=lambda _: Status(500),
    ) as (client, _, _):
        yield client, port


def test_a_receiver_that_comes_up_while_retried_gets_the_event(failing_game):
    client, port = failing_game
    observe_scene(client, "gallery")
    observe_scene(client, "beach")  # the extraction fails: an extraction.failed event
    _until(lambda: _webhooks(client)["retried"] >= 2)
    with Receiver(port=port) as late:
        (failed,) = late.wait_for("extraction.failed")
        assert failed["data"]["save_id"] == 2 and failed["data"]["error"]
        state = _until(lambda: (s := _webhooks(client))["delivered"] == 1 and s)
        assert (state["kept"], state["failed"]) == (0, 0) and state["retried"] >= 2
        assert late.refused == []


def test_no_webhook_no_state_and_no_replay(tmp_path_factory):
    settings = ServiceSettings(api_key="game", designer_key="designer")
    with scripted_game(DUCKDB, tmp_path_factory, "webhooks_none", settings=settings) as game:
        client = game[0]
        assert client.get("/status", headers=KEY).json()["webhooks"] is None
        answer = client.post("/admin/webhooks/replay", headers=DESIGNER)
        assert answer.status_code == 404
        assert answer.json()["error"]["message"].startswith("the service has no webhook")
