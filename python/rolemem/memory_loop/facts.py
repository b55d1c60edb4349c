"""The facts of an extraction reply as rows: each with the lines of the message stating it
(the transcript's `message` number mapped through the memory builder's spans), else the
batch's last line. Written with the batch, in its transaction; never updated afterwards."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..memory_builder import history
from ..sql.project import write_sql
from .extraction_reply import ExtractionReply
from .reports import message_span

# at most this many current facts are shown to the LLM (the newest on the chain)
_SHOWN_FACTS = 100
_CARDINALITY = {"one": "一个值", "many": "多个值"}


def fact_rows(
    reply: ExtractionReply,
    batch: Mapping[str, Any],
    state: Mapping[str, Any],
    lines: Sequence[Mapping[str, Any]],
    messages: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """insert_memory_fact's parameters, one per fact of `reply`. `lines`: the batch's lines
    in chain order; `messages`: message_spans over them (first/last line positions)."""
    rows = []
    for fact in reply.facts:
        said = message_span(fact.message, messages)
        span = [batch["last_line_id"]] if said is None else [line["id"] for line in lines[said]]
        rows.append(
            {
                "agent_id": state["agent_id"],
                "user_id": state["user_id"],
                "subject": fact.subject,
                "attribute": fact.attribute,
                "value": fact.value,
                "supersedes": json.dumps(list(fact.supersedes), ensure_ascii=False),
                "save_id": state["save_id"],
                # the stating line: the message's last (its chain position orders the slot)
                "line_id": span[-1],
                "line_ids": json.dumps(span),
                "batch_key": batch["batch_key"],
                "created_at": state["now"],
            }
        )
    return rows


def write_facts(cur: Any, rows: Sequence[Mapping[str, Any]], *, engine: str) -> list[int]:
    """The facts inserted in the caller's transaction (on DuckDB re-resolved on the player's
    saves there too); their ids."""
    sql = write_sql("insert_memory_fact", engine=engine)
    # insert ... returning: one row each
    ids = [cur.execute(sql, dict(row)).fetchall()[0][0] for row in rows]
    if engine == "duckdb":
        slots = {(row["user_id"], row["agent_id"], row["subject"]) for row in rows}
        for user_id, agent_id, subject in sorted(slots):
            history.refresh_facts(cur, user_id, agent_id, subject)
    return ids


def fact_attributes(memory: Any) -> str:
    """The extraction prompt's `fact_attributes`: each cardinality's attributes with their
    aliases (the seeds, read once per loop like the recall words: a changed seed is read at
    the next open)."""
    with memory.con.cursor() as cur:
        rows = cur.execute(write_sql("listed_fact_attributes")).fetchall()
    listed: dict[str, list[str]] = {}
    for cardinality, attribute, aliases in rows:
        named = f"{attribute}（{'、'.join(aliases)}）" if aliases else attribute
        listed.setdefault(cardinality, []).append(named)
    attributes = "\n".join(
        f"   {_CARDINALITY[cardinality]}：{'、'.join(names)}"
        for cardinality, names in listed.items()
    )
    return attributes or "（无）"


def current_facts(memory: Any, user_id: str, agent_id: str, save_id: int) -> str:
    """The extraction prompt's `current_facts`: what is current on the save's chain, newest last."""
    current = sorted(
        memory.facts(user_id=user_id, agent_id=agent_id, save_id=save_id),
        key=lambda fact: (fact["line_id"] or 0, fact["fact_id"]),
    )[-_SHOWN_FACTS:]
    known = "\n".join(
        f"   {fact['subject']} {fact['attribute']}：{fact['value']}" for fact in current
    )
    return known or "   （暂无）"
