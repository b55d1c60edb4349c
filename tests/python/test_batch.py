"""Micro-batching (rolemem.sql.batching): requests waiting while a statement runs are answered
together by the next one; alone, a request runs at once; a failed batch fails nobody else."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from datetime import datetime, timedelta

import duckdb
import pytest

from rolemem import DynamicMemory
from rolemem.character_memory import CharacterLibrary, CharacterMemory
from rolemem.errors import BusyError
from rolemem.sql import cancel
from rolemem.sql.batching import Coalescer

from .conftest import demo_store, recall_shown


class Gate:
    """A batch function that records its batches and holds the first one until `waiting`
    requests queue behind it (so what is batched is decided, not raced)."""

    def __init__(self, waiting: int = 0) -> None:
        self.batches: list[list[int]] = []
        self.waiting = waiting
        self.coalescer: Coalescer[int, int] = Coalescer(self.run, max_batch=4)

    def run(self, items: Sequence[int]) -> list[int]:
        if not self.batches:
            deadline = time.monotonic() + 10
            while len(self.coalescer._waiting) < self.waiting:
                assert time.monotonic() < deadline, "the other requests never queued"
                time.sleep(0.001)
        self.batches.append(list(items))
        if any(item < 0 for item in items):
            raise ValueError(f"negative: {[i for i in items if i < 0]}")
        return [item * 10 for item in items]


def submit_all(gate: Gate, items: list[int]) -> dict[int, object]:
    """items[0] first (it leads), then the rest while it runs; each item's answer or error."""
    answers: dict[int, object] = {}

    def one(item: int) -> None:
        try:
            answers[item] = gate.coalescer.submit(item)
        except Exception as exc:
            answers[item] = exc

    first = threading.Thread(target=one, args=(items[0],))
    first.start()
    while not gate.coalescer._busy:
        time.sleep(0.001)
    others = [threading.Thread(target=one, args=(item,)) for item in items[1:]]
    for thread in others:
        thread.start()
        time.sleep(0.005)  # arrival order is queue order
    for thread in [first, *others]:
        thread.join(10)
    return answers


def test_a_request_alone_runs_at_once_in_a_statement_of_its_own():
    gate = Gate()
    assert gate.coalescer.submit(3) == 30
    assert gate.coalescer.submit(4) == 40
    assert gate.batches == [[3], [4]]
    assert gate.coalescer.stats() == {
        "statements": 2,
        "requests": 2,
        "largest_batch": 1,
        "max_batch": 4,
    }


def test_requests_arriving_during_a_statement_share_the_next_at_most_max_batch():
    gate = Gate(waiting=6)
    answers = submit_all(gate, [1, 2, 3, 4, 5, 6, 7])
    assert answers == {i: i * 10 for i in range(1, 8)}
    # the first alone (nothing was running), then the six waiting in arrival order, four at
    # most per statement
    assert gate.batches == [[1], [2, 3, 4, 5], [6, 7]]
    assert gate.coalescer.stats()["largest_batch"] == 4


def test_a_failed_batch_fails_nobody_else_each_runs_alone():
    gate = Gate(waiting=3)
    answers = submit_all(gate, [1, 2, -3, 4])
    assert answers[1] == 10 and answers[2] == 20 and answers[4] == 40
    assert isinstance(answers[-3], ValueError) and str(answers[-3]) == "negative: [-3]"
    assert gate.batches[:2] == [[1], [2, -3, 4]]
    # then each alone, in its own thread: any order
    assert sorted(gate.batches[2:]) == [[-3], [2], [4]]


def test_a_queued_request_whose_client_left_stops_waiting():
    release = threading.Event()

    def slow(items: Sequence[int]) -> list[int]:
        release.wait(10)
        return [item for item in items]

    coalescer: Coalescer[int, int] = Coalescer(slow)
    leader = threading.Thread(target=coalescer.submit, args=(1,))
    leader.start()
    while not coalescer._busy:
        time.sleep(0.001)
    token = cancel.WorkToken()
    outcome: list[object] = []

    def waiting() -> None:
        cancel.current.set(token)
        try:
            outcome.append(coalescer.submit(2))
        except BusyError as exc:
            outcome.append(exc)

    follower = threading.Thread(target=waiting)
    follower.start()
    while not coalescer._waiting:
        time.sleep(0.001)
    token.cancel("the client went away")
    follower.join(5)
    assert [str(o) for o in outcome] == ["the client went away"]
    assert coalescer._waiting == []
    release.set()
    leader.join(5)
    assert coalescer.stats()["requests"] == 1  # the one that left was never run


def test_max_batch_must_be_positive():
    with pytest.raises(ValueError, match="max_batch must be at least 1"):
        Coalescer(lambda items: list(items), max_batch=0)


def gated(coalescer: Coalescer, waiting: int) -> None:
    """Hold `coalescer`'s first statement until `waiting` requests queue behind it."""
    original = coalescer._run_batch
    held = [True]

    def run(items):  # type: ignore[no-untyped-def]
        if held[0]:
            held[0] = False
            deadline = time.monotonic() + 30
            while len(coalescer._waiting) < waiting:
                assert time.monotonic() < deadline, "the other requests never queued"
                time.sleep(0.001)
        return original(items)

    coalescer._run_batch = run  # type: ignore[method-assign]


def concurrently(calls: list) -> list:  # type: ignore[type-arg]
    """calls[0] first (it leads the first statement), then the others while it runs."""
    answers: list = [None] * len(calls)  # type: ignore[type-arg]

    def one(index: int) -> None:
        try:
            answers[index] = calls[index]()
        except Exception as exc:
            answers[index] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(calls))]
    threads[0].start()
    time.sleep(0.05)
    for thread in threads[1:]:
        thread.start()
    for thread in threads:
        thread.join(60)
    return answers


def test_dynamic_recall_answers_waiting_queries_together_as_each_alone(tmp_path):
    """Queries of different players, agents, saves and options answered by one statement
    give exactly what each gives alone (dense, entities, timeline, candidates included)."""

    now = datetime(2021, 2, 21, 20, 0)
    memory = DynamicMemory(demo_store(str(tmp_path / "demo.duckdb")))
    for user, agent, text in (
        ("lulu", "qiyu", "露露和祁煜在海边捡贝壳"),
        ("lulu", "qinling", "露露请钦灵吃火锅"),
        ("mumu", "qinling", "木木和钦灵一起画画"),
    ):
        memory.add_event(
            user_id=user, agent_id=agent, description=text, created_at=now - timedelta(days=3)
        )
    queries = [
        {"text": "你还记得那次火锅吗", "user_id": "mumu", "agent_id": "qiyu", "save_id": 1},
        {"text": "火锅", "user_id": "lulu", "agent_id": "qinling", "limit": 1},
        {"text": "海边的贝壳", "user_id": "lulu", "agent_id": "qiyu", "explain": True},
        {"text": "画画", "user_id": "mumu", "agent_id": "qinling", "roulette_seed": 7},
        {"text": "生日", "user_id": "mumu", "agent_id": "qiyu", "score_threshold": 0.6},
    ]

    def ask(query):  # type: ignore[no-untyped-def]
        return lambda: memory.query(**query, now=now, update=False)

    alone = [recall_shown(ask(query)()) for query in queries]
    assert memory.batching()["largest_batch"] == 1
    gated(memory._recall.batches, waiting=len(queries) - 1)
    together = concurrently([ask(query) for query in queries])
    assert [recall_shown(answer) for answer in together] == alone
    assert memory.batching()["largest_batch"] == len(queries) - 1
    assert alone[0][0] and alone[2][0] and alone[2][4]  # something recalled and explained
    memory.close()


def test_recall_side_effects_of_a_batch_are_those_of_its_queries_one_by_one(tmp_path):
    """Queries answered together update the store in one transaction as if each had updated
    it alone, in the order of their times: a memory recalled by three queries gets
    recall_count + 3, three strength bonuses and the latest time; update=False adds nothing;
    log=True logs that query's candidates only."""

    # no overview timeline: it would hold both events, and recall never repeats it
    memory = DynamicMemory(
        str(tmp_path / "store.duckdb"), embedder=None, profile={"timeline_size": 0}
    )
    day = datetime(2026, 3, 1, 20, 0)
    hotpot, shells = (
        memory.add_event(
            user_id="mumu", agent_id="qiyu", description=text, keywords=[tag], created_at=day
        )
        for text, tag in (("木木和祁煜吃火锅", "火锅"), ("木木和祁煜在海边捡贝壳", "贝壳"))
    )
    bonus = memory.settings["recall_strength_bonus"]
    asks = [
        ("火锅", day + timedelta(days=1), True, False),
        ("火锅", day + timedelta(days=3), True, True),
        ("贝壳", day + timedelta(days=4), False, False),
        ("火锅", day + timedelta(days=2), True, False),
    ]
    calls = [
        lambda text=text, now=now, update=update, log=log: memory.query(
            text, user_id="mumu", agent_id="qiyu", now=now, update=update, log=log
        )
        for text, now, update, log in asks
    ]
    gated(memory._recall.batches, waiting=len(calls) - 1)
    answers = concurrently(calls)
    assert [[e["event_id"] for e in answer.memory_events] for answer in answers] == [
        [hotpot],
        [hotpot],
        [shells],
        [hotpot],
    ]
    assert memory.batching()["largest_batch"] == len(calls) - 1
    stored = memory.con.execute(
        "select id, recall_count, strength, last_recalled_at from memory_event order by id"
    ).fetchall()
    # the first query ran alone, the other three together
    assert stored == [
        (hotpot, 3, 1 + 3 * bonus, day + timedelta(days=3)),
        (shells, 0, 1, None),
    ]
    assert memory.con.execute(
        "select count(distinct query_id), min(item_id), max(item_id) from memory_recall_log"
    ).fetchall() == [(1, hotpot, hotpot)]
    memory.close()


def test_character_recall_answers_waiting_recalls_of_several_characters_together():
    """One library, two characters: recalls waiting together (explain or not, dry run or not,
    other limits, queues of their own) give what each gives alone."""

    def recalls(library: CharacterLibrary):  # type: ignore[no-untyped-def]
        qiyu = CharacterMemory(character_id="qiyu", library=library)
        qinling = CharacterMemory(
            character_id="qinling", library=library, limits={"attributes_total": 1}
        )
        context = {"intimacy": 5, "exploration": 5, "scene": "studio"}
        # a turn first, so each session has a sticky queue to carry
        qiyu.session("mumu").recall("画画", context)
        qinling.session("mumu").recall("画画", context)
        # the explained one inside the batch: its rows carry no statement keys
        return [
            lambda: qinling.session("mumu").recall("画画", context),
            lambda: qiyu.session("lulu").recall("海边", {"intimacy": 1}, dry_run=True),
            lambda: qiyu.session("mumu").recall("画画好温柔", context, explain=True),
            lambda: qinling.session("lulu").recall("你好", None, require_match=False),
        ]

    def recall_shown(result):  # type: ignore[no-untyped-def]
        return (
            result.attributes,
            result.events,
            result.dialogue_style,
            result.explain,
            result.words,
            result.turn,
        )

    alone = [recall_shown(call()) for call in recalls(CharacterLibrary())]
    library = CharacterLibrary()
    calls = recalls(library)
    gated(library._batches, waiting=len(calls) - 1)
    assert [recall_shown(answer) for answer in concurrently(calls)] == alone
    assert library.batching()["largest_batch"] == len(calls) - 1
    assert alone[2][0] and alone[2][3]  # something shown, and explained


def test_loop_plans_of_observations_waiting_together_are_as_alone():
    """The memory loop's plan (what /turn's window and /lines' extraction read) for saves
    and characters observed together: each as alone, the same save twice with other values
    in two statements."""
    from rolemem.memory_loop import MemoryLoop

    from .test_memory_loop import Dialogue

    con = duckdb.connect()
    DynamicMemory(con, embedder=None).close()  # the application and memory tables
    for save_id, turns in ((1, 3), (2, 25), (3, 0)):
        dialogue = Dialogue(con, save_id)
        for n in range(turns):
            dialogue.turn(n)

    def on(loop: MemoryLoop) -> list:  # type: ignore[type-arg]
        def window(save_id: int, role_id: int | None = 1, script_role_id: str | None = None):  # type: ignore[no-untyped-def]
            return lambda: loop.context_window(
                save_id=save_id, role_id=role_id, script_role_id=script_role_id
            )

        def due(save_id: int, scene: str):  # type: ignore[no-untyped-def]
            return lambda: loop.due(
                save_id=save_id, user_id="mumu", agent_id="qiyu", role_id=1, scene=scene
            )

        return [window(2), window(1), window(3), due(2, "gallery"), window(2, None, "narrator")]

    alone = [call() for call in on(MemoryLoop(con, settings={"context_max_turns": 4}))]
    # the newest min_window_turns (6) turns, whatever context_max_turns says
    assert [len(w["lines"]) for w in (alone[0], alone[1], alone[2])] == [12, 6, 0]
    # a loop of its own: the first one keeps the windows it planned (nothing to wait for)
    loop = MemoryLoop(con, settings={"context_max_turns": 4})
    calls = on(loop)
    gated(loop._plans.batches, waiting=len(calls) - 1)
    together = concurrently(calls)
    assert together == alone
    # four observations of three saves x characters: save 2 x role 1 is observed twice with
    # other values (a scene), so it takes a statement of its own
    assert loop._plans.batches.stats()["statements"] == 2
