"""Concurrent clients of the service (issue 18): /turn requests of several players and
characters that arrive together are answered by shared recall statements, and each gets
exactly the answer it gets alone, over the embedded file and over PostgreSQL."""

from __future__ import annotations

import threading

import httpx
import pytest

from rolemem.service import create_app

from .conftest import demo_store_on, serving
from .test_batch import gated

CONTEXT = {"intimacy": 5, "exploration": 5, "scene": "studio"}


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def game(request, tmp_path_factory):
    path = demo_store_on(request, tmp_path_factory, "rolemem_batching")
    app = create_app(path, embedder=None)
    with serving(app) as client:
        roles = {
            name: client.post("/roles", json={"name": name}).json()["role_id"]
            for name in ("祁煜", "钦灵")
        }
        turns = []
        for player in ("mumu", "lulu"):
            for character, name in (("qiyu", "祁煜"), ("qinling", "钦灵")):
                save = client.post("/saves", json={"user_id": player, "name": character}).json()
                lines = [
                    {"attribute": "user", "content": "今天画画了"},
                    {"attribute": "assistant", "content": "画了什么", "role_id": roles[name]},
                ]
                answer = client.post(
                    f"/saves/{save['save_id']}/lines", json={"user_id": player, "lines": lines}
                )
                assert answer.status_code == 200, answer.text
                turns.append(
                    {
                        "save_id": save["save_id"],
                        "user_id": player,
                        "character_id": character,
                        "role_id": roles[name],
                        "message": "你还记得火锅吗" if player == "mumu" else "画画好开心",
                        "context": CONTEXT,
                        "now": "2021-02-21T20:00:00",
                        "dry_run": True,
                    }
                )
        yield client, app, turns


def test_turns_arriving_together_share_statements_and_answer_as_alone(game):
    client, app, turns = game
    alone = []
    for body in turns:
        answer = client.post("/turn", json=body)
        assert answer.status_code == 200, answer.text
        alone.append(answer.json())
    assert alone[0]["messages"][-1] == {"role": "user", "content": "你还记得火锅吗"}
    store = app.state.store
    before = client.get("/status").json()
    # the first turn's recalls hold their statements until the other three queue behind them
    gated(store.memory._recall.batches, waiting=len(turns) - 1)
    gated(store._shared_library()._batches, waiting=len(turns) - 1)
    together: list = [None] * len(turns)  # type: ignore[type-arg]

    def play(index: int) -> None:
        with httpx.Client(base_url=str(client.base_url), timeout=60) as own:
            together[index] = own.post("/turn", json=turns[index])

    threads = [threading.Thread(target=play, args=(i,)) for i in range(len(turns))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    assert [answer.status_code for answer in together] == [200] * len(turns)
    for answer, expected in zip(together, alone, strict=True):
        got = answer.json()
        assert got["messages"] == expected["messages"]
        assert got["trace"] == expected["trace"]
        assert got == expected
    after = client.get("/status").json()
    for kind in ("dynamic_recall", "character_recall"):
        assert after[kind]["largest_batch"] == len(turns) - 1, after
        # four more requests in two statements: the first alone, then the three waiting
        assert after[kind]["requests"] - before[kind]["requests"] == len(turns)
        assert after[kind]["statements"] - before[kind]["statements"] == 2
    assert after["extraction_queued"] == 0
