"""/metrics: Prometheus' text format, parsed by prometheus-client's own parser, with the
families a game's operator watches (requests, refusals, extraction, LLM calls, maintenance,
memories per kind) counting exactly what happened; several worker processes on PostgreSQL
answer for all of them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from rolemem.cli import main
from rolemem.service.core.child import free_port, wait_until_serving
from rolemem.service.core.settings import ServiceSettings

from .conftest import REPO, fresh_database, observe_scene, scripted_game

KEY = {"X-API-Key": "game"}
DESIGNER = {"X-API-Key": "designer"}
FAMILIES = {
    "rolemem_http_request_duration_seconds": "histogram",
    "rolemem_http_requests": "counter",
    "rolemem_extraction_attempts": "counter",
    "rolemem_extraction_failures": "counter",
    "rolemem_extraction_duration_seconds": "histogram",
    "rolemem_extraction_queue_depth": "gauge",
    "rolemem_llm_call_duration_seconds": "histogram",
    "rolemem_maintenance_runs": "counter",
    "rolemem_refusals": "counter",
    "rolemem_memories": "gauge",
}


def scrape(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the exposition, by name and labels (families checked on the way)."""
    families = {family.name: family for family in text_string_to_metric_families(text)}
    ours = {name: family.type for name, family in families.items() if name.startswith("rolemem")}
    assert ours == FAMILIES
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in families.values()
        for sample in family.samples
    }


@pytest.fixture(params=["duckdb", "postgres"])
def game(request, tmp_path_factory) -> Iterator[tuple]:
    settings = ServiceSettings(api_key="game", designer_key="designer")
    with scripted_game(request, tmp_path_factory, "metrics", settings=settings) as served:
        yield request.param, *served


def test_metrics_count_requests_extraction_llm_calls_maintenance_and_memories(game):
    engine, client, app, llm = game
    assert observe_scene(client, "gallery")["extraction"] in ("not_due", "scheduled")
    assert observe_scene(client, "beach")["extraction"] == "scheduled"
    deadline = time.monotonic() + 30
    status = "/saves/2/memory_status?user_id=mumu&role_id=1"
    # idle once the job is done (its metrics are moved before it leaves the queue)
    while client.get(status, headers=KEY).json()["extraction"] != "idle":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert client.post("/admin/maintenance", headers=DESIGNER).status_code == 200
    assert client.get("/saves/999?user_id=mumu", headers=KEY).status_code == 404
    assert client.get("/status", headers=DESIGNER).status_code == 401  # not the designer's
    store = app.state.store
    if engine == "postgres":  # the estimate PostgreSQL keeps, made current
        for table in ("memory_event", "memory_entity", "memory_archive"):
            store.engine.run(f"analyze {table}", {})
            store.engine.run(f"analyze {table.replace('memory_', 'official_')}", {})
    # the players' memories and the designers' (official, in tables of their own)
    counted = {
        kind: sum(
            store.engine.run(f"select count(*) from {name}", {})[0][0]
            for name in (table, table.replace("memory_", "official_"))
        )
        for kind, table in (
            ("event", "memory_event"),
            ("entity", "memory_entity"),
            ("archived", "memory_archive"),
        )
    }
    answer = client.get("/metrics")  # no key
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    samples = scrape(answer.text)
    lines = (("method", "POST"), ("route", "/saves/{save_id}/lines"))
    assert samples["rolemem_http_requests_total", (*lines, ("status", "200"))] == 2
    assert samples["rolemem_http_request_duration_seconds_count", lines] == 2
    missing = (("method", "GET"), ("route", "/saves/{save_id}"), ("status", "404"))
    assert samples["rolemem_http_requests_total", missing] == 1
    assert samples["rolemem_extraction_attempts_total", ()] == 1
    assert samples["rolemem_extraction_failures_total", ()] == 0
    assert samples["rolemem_extraction_duration_seconds_count", ()] == 1
    assert samples["rolemem_extraction_queue_depth", ()] == 0
    calls = samples["rolemem_llm_call_duration_seconds_count", (("outcome", "ok"),)]
    assert calls == len(llm.requests) >= 1  # the extraction's, and consolidation's if any
    assert samples["rolemem_maintenance_runs_total", (("outcome", "finished"),)] == 1
    assert samples["rolemem_refusals_total", (("reason", "key"),)] == 1
    assert samples["rolemem_refusals_total", (("reason", "rate_player"),)] == 0
    for kind, count in counted.items():
        assert samples["rolemem_memories", (("kind", kind),)] == count, kind
    assert counted["event"] > 0


def test_several_workers_answer_for_all_of_them(postgres_url, tmp_path):
    url = fresh_database(postgres_url, "metrics_workers")
    assert main(["init-db", "--db", url, "--demo"]) == 0
    port = free_port()
    folder = tmp_path / "prometheus"
    folder.mkdir()
    server = subprocess.Popen(
        [sys.executable, "-m", "rolemem.cli", "serve", "--db", url, "--port", str(port)]
        + ["--workers", "2", "--keyword-only", "--no-access-log"],
        cwd=REPO,
        env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(folder)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base, server, timeout=90)
        for _ in range(40):  # a connection each: both workers take some
            assert httpx.get(f"{base}/health", timeout=10).status_code == 200
        # a request is counted as its answer finishes, which may be just after the client
        # has it: wait for the last one's count (the end state), then scrape four times
        health = (("method", "GET"), ("route", "/health"), ("status", "200"))
        deadline = time.monotonic() + 10
        while (
            scrape(httpx.get(f"{base}/metrics", timeout=10).text)[
                "rolemem_http_requests_total", health
            ]
            < 40
            and time.monotonic() < deadline
        ):
            time.sleep(0.05)
        scrapes = [scrape(httpx.get(f"{base}/metrics", timeout=10).text) for _ in range(4)]
    finally:
        server.terminate()
        _, err = server.communicate(timeout=60)
    assert b"Traceback" not in err, err.decode()[-2000:]
    assert [samples["rolemem_http_requests_total", health] for samples in scrapes] == [40] * 4
    writers = {path.stem.rsplit("_", 1)[1] for path in folder.glob("counter_*.db")}
    assert len(writers) >= 3  # the two workers and the parent that started them
