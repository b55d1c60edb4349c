"""The entity hits gathered and shaped in Python (rolemem.dynamic_memory.entity_scores) answer as
the models do (int_memory_entities_recalled, memory_query_entities): the same entities, ranks,
scores, logs and source lines, for a player's entities extracted on branches of saves and
added by hand, official ones, and facts current and superseded (以前…现在… for a query about
an earlier time), with an entity limit that cuts, several queries per statement."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

import duckdb
import pytest

from rolemem import DynamicMemory
from rolemem.dynamic_memory import entity_scores, recall
from rolemem.memory_loop import MemoryLoop
from rolemem.memory_loop.llm import OpenAICompatibleLLM
from rolemem.sql.project import render_macro
from rolemem.testing.scripted_llm import ScriptedChatServer

from .test_memory_loop import AGENT, NOW, USER, Dialogue, reply
from .test_recall_follows_every_write import VOCABULARY, same

KINDS = ["用户属性", "与主体和客体的关系", "特殊实体属性", "与其它实体的关系", "记忆画面"]
# words a query about the past and the facts' slots read
ASKED = [*VOCABULARY, "以前", "原来", "住址", "职业", "北京", "上海", "喜欢"]


def _entity(rng: random.Random) -> dict[str, str]:
    kind = rng.choice(KINDS)
    return {
        "entity_name": "木木" if kind == "用户属性" else rng.choice(["祁煜", "画廊", "小猫"]),
        "entity_type": "客体",
        "kind": kind,
        "keyword": rng.choice([*VOCABULARY, "住址", "画画兴趣"]),
        "description": "木木"
        + rng.choice(["喜欢", "讨厌", "记得"])
        + "".join(rng.sample(VOCABULARY, 2)),
    }


def _question(rng: random.Random, saves: list[int]) -> tuple[str, dict]:
    return " ".join(rng.sample(ASKED, rng.randint(1, 4))), {
        "user_id": USER,
        "agent_id": AGENT,
        "save_id": rng.choice([None, *saves]),
        "now": NOW + timedelta(days=rng.randint(0, 30)),
        "user_name": rng.choice([None, "木木"]),
        "agent_name": "祁煜",
        "update": False,
        "prompt_text": rng.random() < 0.7,
    }


@pytest.mark.parametrize(
    ("entity_limit", "most_scored"),
    [(2, recall.MOST_SCORED), (6, recall.MOST_SCORED), (3, 0)],
    ids=["limit 2", "limit 6", "events by the models"],
)
def test_the_entities_gathered_in_python_are_the_models(entity_limit, most_scored, monkeypatch):
    # most_scored 0: the events fall back to the models, the entities are gathered still
    monkeypatch.setattr(recall, "MOST_SCORED", most_scored)
    rng = random.Random(entity_limit)
    con = duckdb.connect()
    profile = {"entity_limit": entity_limit}
    with (
        ScriptedChatServer() as server,
        DynamicMemory(con, embedder=None) as writer,
        DynamicMemory(con, embedder=None, profile=profile, max_batch=16) as fast,
        DynamicMemory(con, embedder=None, profile=profile, max_batch=16) as model,
    ):
        model._recall._fast = None  # every model planned
        llm = OpenAICompatibleLLM(base_url=server.base_url, model="scripted", max_retries=0)
        loop = MemoryLoop(con, llm=llm, memory=writer)
        saves = {1: Dialogue(con, save_id=1), 2: Dialogue(con, save_id=2)}
        saves[1].say("system", "你是祁煜", role_id=1)
        turn, forks = 0, []

        def played(save: int, parent: int | None = None) -> None:
            """Ten turns on the save (the first from `parent`), extracted with entities."""
            nonlocal turn
            for number in range(10):
                turn += 1
                saves[save].turn(turn, parent=parent if number == 0 else None)
            forks.append(saves[save].tip)
            entities = [_entity(rng) for _ in range(rng.randint(2, 4))]
            said = "木木和祁煜" + "，".join(rng.sample(VOCABULARY, 2))
            server.push(reply(said, entities=entities))
            loop.observe(
                save_id=save, user_id=USER, agent_id=AGENT, role_id=1, now=NOW,
                user_name="木木", agent_name="祁煜", flush=True,
            )  # fmt: skip

        played(1)
        played(1)
        played(1, parent=forks[0])  # a branch: the second stretch's mentions are off it
        played(2)
        for _ in range(6):  # by hand: shown on every save
            writer.add_entity(
                user_id=USER,
                agent_id=AGENT,
                # a year before 1000 too (DuckDB writes four digits)
                updated_at=rng.choice([NOW, datetime(999, 11, 23)])
                - timedelta(days=rng.randint(0, 90), seconds=rng.random() * 100),
                **_entity(rng),
            )
        writer.import_official(
            {
                "agent_id": AGENT,
                "events": [],
                "entities": [
                    {**_entity(rng), "updated_at": "2024-03-01T00:00:00"} for _ in range(4)
                ],
            }
        )
        # the facts: a slot changed on save 1's chain (上海, then 北京 on the branch it plays),
        # one on save 2, one stated by hand
        for value, line in (("上海", forks[0]), ("北京", forks[2])):
            writer.add_fact(
                user_id=USER, agent_id=AGENT, subject="木木", attribute="住址", value=value,
                save_id=1, line_id=line, created_at=NOW - timedelta(days=3),
            )  # fmt: skip
        writer.add_fact(
            user_id=USER, agent_id=AGENT, subject="木木", attribute="职业", value="画家喜欢画画",
            save_id=2, line_id=forks[3], created_at=NOW - timedelta(days=1),
        )  # fmt: skip
        writer.add_fact(
            user_id=USER, agent_id=AGENT, subject="木木", attribute="生日", value="下雨的上周",
            created_at=NOW - timedelta(days=5),
        )  # fmt: skip
        asked = [_question(rng, sorted(saves)) for _ in range(60)]
        for text in ("以前 住址", "原来 住址 画画", "住址"):  # about an earlier time, and not
            asked.append((text, {**_question(rng, [])[1], "save_id": 1}))
        with ThreadPoolExecutor(16) as pool:
            answers = [
                [
                    future.result()
                    for future in [pool.submit(reader.query, t, **kw) for t, kw in asked]
                ]
                for reader in (fast, model)
            ]
        # one at a time too: a lone query's entities come from a statement of their own
        lone = [fast.query(t, **kw) for t, kw in asked]
        # and a batch of several in one statement (the Coalescer would answer each alone if
        # the batch failed): the same answers as each alone
        recall_of = fast._recall
        items, alone_answers = [], []

        def kept(item):
            items.append(item)
            answer = submit(item)
            alone_answers.append(answer[0])
            return answer

        submit, recall_of.batches.submit = recall_of.batches.submit, kept
        for text, kw in asked[:8]:
            fast.query(text, **kw)
        recall_of.batches.submit = submit
        batched = [answer for answer, _ in recall_of._recall_batch(items)]
        assert _answered(batched) == _answered(alone_answers)
    shown, cut, lines, history = 0, 0, 0, 0
    for (text, _), mine, theirs, alone in zip(asked, *answers, lone, strict=True):
        for name in ("memory_entities", "prompt_text", "superseded_facts"):
            same(getattr(mine, name), getattr(theirs, name), f"{text}: {name}", exact=True)
            same(getattr(alone, name), getattr(theirs, name), f"{text}: {name}", exact=True)
        shown += len(mine.memory_entities)
        cut += len(mine.memory_entities) == entity_limit
        lines += sum(entity["line_ids"] is not None for entity in mine.memory_entities)
        history += sum("以前" in entity["description"] for entity in mine.memory_entities)
    assert shown > 0 and cut > 0 and lines > 0 and history > 0
    kinds = {entity["kind"] for answer in answers[0] for entity in answer.memory_entities}
    assert {"用户属性", "特殊实体属性"} <= kinds


def _answered(rows):
    """Recall's raw answer rows as DynamicMemory.query reads them: no list is None (a batch
    the models score aggregates none where Python answers []), and without the statement's
    query keys (a query's number in its batch, which the answer leaves out)."""

    def without_query_ids(value):
        if isinstance(value, list | tuple):
            return type(value)(without_query_ids(item) for item in value)
        if isinstance(value, dict):
            return {k: without_query_ids(v) for k, v in value.items() if k != "query_id"}
        return value

    return [
        without_query_ids(
            (events or [], entities or [], prompt, timeline or [], candidates or [], *rest)
        )
        for events, entities, prompt, timeline, candidates, *rest in rows
    ]


def test_the_list_text_macro_written_out():
    """Macro list_text (a log's matched words) as DuckDB casts a list of text."""
    con = duckdb.connect()
    sql = "select " + render_macro("list_text", "cast($v as varchar[])")
    rng = random.Random(9)
    pieces = ["画画", "a", " ", "\t", "'", '"', "\\", ",", "(", ")", ":", "=", "[", "]", "{", "}"]
    # what DuckDB 2.0.1 does not take for a space, and spellings of null inside words
    pieces += ["\u3000", "\u00a0", "\x1c", "\x85", "😀", "null", "NULL"]
    values = [[], ["画画", "猫"], [""], ["null"], ["NULL"], ["Null"], ["nul"], [None, "x"]]
    values += [
        ["".join(rng.choices(pieces, k=rng.randint(1, 4))) for _ in range(rng.randint(1, 3))]
        for _ in range(300)
    ]
    for value in values:
        [(text,)] = con.execute(sql, {"v": value}).fetchall()
        assert entity_scores.list_text(value) == text, value
