"""Extracting one due batch: the memory builder renders it from the character's point of view,
the LLM answers, and the memories, the batch row (the watermark) and the loop state are one
transaction."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from ..dynamic_memory import DynamicMemory, EventVectors, checked_entity
from ..memory_builder import message_spans
from ..memory_builder.contract import NAME_LENGTH
from ..sql.project import write_sql
from .extraction_reply import ExtractionReply, extract
from .facts import current_facts, fact_attributes, fact_rows, write_facts
from .llm import ChatModel
from .reports import _AlreadyExtracted, event_times, source_lines, write_state

log = logging.getLogger(__name__)


_LONGEST_BACKOFF = 24 * 3600.0  # seconds: a failing LLM is tried at least once a day
# the loop state row of a save x character: its key and its player
_KEY = ("save_id", "target_key", "user_id")
# the plan's batch columns its row keeps
_BATCH_COLUMNS = ("batch_key", "first_line_id", "last_line_id", "turn_count", "reason", "scene")


class Extraction:
    """One batch to memories; a failure recorded, with its back-off."""

    def __init__(
        self, memory: DynamicMemory, llm: ChatModel | None, settings: Mapping[str, Any]
    ) -> None:
        self.memory, self.llm, self.settings = memory, llm, settings

    @functools.cached_property
    def _attributes(self) -> str:
        return fact_attributes(self.memory)  # the seeds', read at the first batch

    def extract_batch(
        self,
        batch: Mapping[str, Any],
        lines: list[dict[str, Any]],
        state: dict[str, Any],
        role_id: int | None,
        script_role_id: str | None,
        user_name: str,
        agent_name: str,
        *,
        keep_scene: bool,
        retry_seconds: float | None,
    ) -> tuple[list[int], list[int]] | None:
        assert self.llm is not None
        # the batch's lines the character witnessed (the plan's is_witnessed): the others are
        # neither sent nor cited
        chosen = [
            line
            for line in lines
            if batch["first_line_position"] <= line["line_position"] <= batch["last_line_position"]
            and line["is_witnessed"]
        ]
        messages = message_spans(
            chosen, role_id=role_id, script_role_id=script_role_id, user_name=user_name
        )
        reply = extract(
            self.llm,
            messages,
            agent_name=agent_name,
            user_name=user_name,
            max_attempts=self.settings["llm_max_attempts"],
            # with a stored back-off, a failing LLM is tried again after it, not at once
            retry_errors=retry_seconds is None,
            fact_attributes=self._attributes,
            current_facts=current_facts(
                self.memory, state["user_id"], state["agent_id"], state["save_id"]
            ),
        )
        event_rows, vectors = self.memory.prepare_events(
            self._event_inputs(reply, batch, state, chosen, messages)
        )
        # each entity with its mention's source: the lines of the message it names, else the
        # batch's (as an event's)
        entity_params = [
            (
                checked_entity(
                    scope="user",
                    user_id=state["user_id"],
                    agent_id=state["agent_id"],
                    entity_name=e.entity_name,
                    entity_type=e.entity_type,
                    kind=e.kind,
                    keyword=e.keyword,
                    description=e.description,
                    updated_at=state["now"],
                    user_name=user_name,
                ),
                self._source(source_lines(e.message, messages, chosen), batch, state),
            )
            for e in reply.entities
        ]
        fact_params = fact_rows(reply, batch, state, chosen, messages)
        try:
            with self.memory.store.transaction() as cur:
                events, entities = self._commit_batch(
                    cur, batch, chosen, state, event_rows, vectors, entity_params, keep_scene
                )
                write_facts(cur, fact_params, engine=self.memory.store.name)
        except _AlreadyExtracted:
            return None
        log.info(
            "extracted %s: %d events, %d entities", batch["batch_key"], len(events), len(entities)
        )
        return events, entities

    def _commit_batch(
        self,
        cur: Any,
        batch: Mapping[str, Any],
        chosen: list[dict[str, Any]],
        state: dict[str, Any],
        event_rows: list[dict[str, Any]],
        vectors: list[EventVectors | None],
        entity_params: list[tuple[dict[str, Any], dict[str, Any]]],
        keep_scene: bool,
    ) -> tuple[list[int], list[int]]:
        """The batch row, its lines (the watermark), its memories and the loop state: one
        transaction."""
        engine = self.memory.store.name
        claimed = cur.execute(
            write_sql("insert_extraction_batch", engine=engine),
            {
                **{name: state[name] for name in (*_KEY, "agent_id", "now")},
                **{name: batch[name] for name in _BATCH_COLUMNS},
                "event_count": len(event_rows),
                "entity_count": len(entity_params),
                "llm_model": getattr(self.llm, "model", None),
                "replaced_batch_keys": (
                    json.dumps(list(batch["replaced_batch_keys"]))
                    if batch["replaced_batch_keys"]
                    else None
                ),
            },
        ).fetchall()
        if not claimed:
            raise _AlreadyExtracted(batch["batch_key"])
        # its lines, once per character: a save sharing them (a fork, a branch reloaded) that
        # committed the new ones meanwhile makes this batch a duplicate (the transaction is
        # undone); a replacement's lines were sent before, and it records them as its own
        sent = [line["id"] for line in chosen]
        owner = {"target_key": state["target_key"], "user_id": state["user_id"]}
        recorded = cur.execute(
            write_sql("insert_extracted_lines", engine=engine),
            {
                **owner,
                "line_ids": sent,
                "batch_key": batch["batch_key"],
                "batch_last_line_id": batch["last_line_id"],
            },
        ).fetchall()
        if len(recorded) != batch["new_line_count"]:
            raise _AlreadyExtracted(batch["batch_key"])
        if batch["replaced_line_ids"]:
            for relation, line_ids, last in (
                ("sent", sent, batch["last_line_id"]),
                ("replaces", batch["replaced_line_ids"], None),
            ):
                cur.execute(
                    write_sql("insert_batch_lines", engine=engine),
                    {
                        **owner,
                        "batch_key": batch["batch_key"],
                        "line_ids": list(line_ids),
                        "relation": relation,
                        "last_line_id": last,
                    },
                )
        # a replacement's memories are its own (one merged into the original it stands in
        # for would show where the original is cut, i.e. nowhere here)
        events = self.memory.write_events(
            cur, event_rows, vectors, merge=batch["reason"] != "replacement"
        )
        entities = [self.memory.write_entity(cur, *entity) for entity in entity_params]
        write_state(cur, state, engine=engine, keep_scene=keep_scene, extracted=True)
        return events, entities

    @staticmethod
    def _source(
        line_ids: list[int], batch: Mapping[str, Any], state: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Where an extracted memory came from: an entity mention's (Entities.write_entity's
        `source`), an event's columns of the same names."""
        return {
            "save_id": state["save_id"],
            "first_line_id": line_ids[0],
            "last_line_id": line_ids[-1],
            "root_line_id": state["root_line_id"],
            "line_ids": line_ids,
            "target_key": state["target_key"],
            "batch_key": batch["batch_key"],
        }

    @staticmethod
    def _event_inputs(
        reply: ExtractionReply,
        batch: Mapping[str, Any],
        state: Mapping[str, Any],
        lines: list[dict[str, Any]],
        messages: list[dict[str, Any]],
    ) -> list[dict[str, Any]]:
        times = event_times(
            [(event.time, event.message) for event in reply.events],
            messages,
            [line["created_at"] for line in lines],
            state["now"],
        )
        sources = [source_lines(event.message, messages, lines) for event in reply.events]
        return [
            {
                "scope": "user",
                "user_id": state["user_id"],
                "agent_id": state["agent_id"],
                "description": event.description,
                "deepinsight": event.deepinsight,
                "keywords": list(event.keywords),
                "place": event.place,
                # the lines' scene; one the game wrote past the memory's limit is cut to it
                # (the batch's lines are never refused over it)
                "scene": None if batch["scene"] is None else batch["scene"][:NAME_LENGTH],
                "importance": event.importance,
                "created_at": created_at,
                **Extraction._source(line_ids, batch, state),
            }
            for event, created_at, line_ids in zip(reply.events, times, sources, strict=True)
        ]

    def speaker_names(
        self,
        role_id: int | None,
        user_name: str | None,
        agent_name: str | None,
        lines: list[dict[str, Any]],
    ) -> tuple[str, str]:
        """The player's and the character's names as the prompts use them (the extraction's
        and the Companion's; never ids, which an LLM would copy into the memories): the
        player's given name, else 用户; the character's given name, else its role's name, else
        the name its own lines show, else 角色."""
        if agent_name is None and role_id is not None:
            found = self.memory.store.run("select name from role where id = $id", {"id": role_id})
            agent_name = found[0][0] if found else None
        if agent_name is None:
            agent_name = next(
                (
                    line["display_name"]
                    for line in reversed(lines)
                    if line["attribute"] == "assistant"
                    and line["display_name"]
                    and (role_id is None or line["role_id"] == role_id)
                ),
                None,
            )
        return user_name or "用户", agent_name or "角色"

    def backoff(self, cur: Any, state: Mapping[str, Any]) -> tuple[int, datetime | None]:
        """The save x character's failures since its last success and the end of its
        back-off (None: none), as stored (every process reads the same)."""
        back_off = write_sql("loop_back_off", engine=self.memory.store.name)
        row = cur.execute(back_off, {name: state[name] for name in _KEY}).fetchone()
        return (0, None) if row is None else (int(row[0] or 0), row[1])

    def record_failure(
        self,
        state: Mapping[str, Any],
        role_id: int | None,
        script_role_id: str | None,
        error: Exception,
        retry_seconds: float | None,
    ) -> None:
        """A failed extraction shows in the save's memory status (last error, attempts); the
        next observation retries the batch, once its back-off has ended (`retry_seconds`
        doubled per failure since the last success, at most a day; None: at once)."""
        try:
            with self.memory.store.transaction() as cur:
                now = datetime.now()
                retry_at = None
                if retry_seconds is not None:  # stored, for every process: not rolemem.retry
                    failed, _ = self.backoff(cur, state)
                    wait = min(retry_seconds * 2 ** min(failed, 30), _LONGEST_BACKOFF)
                    retry_at = now + timedelta(seconds=wait)
                cur.execute(
                    write_sql("record_loop_failure", engine=self.memory.store.name),
                    {
                        **{name: state[name] for name in (*_KEY, "agent_id")},
                        "role_id": role_id,
                        "script_role_id": script_role_id,
                        "error": f"{type(error).__name__}: {error}"[:1000],
                        "now": now,
                        "next_attempt_at": retry_at,
                    },
                )
        except Exception:  # the status is a courtesy; the failure itself is raised
            log.warning("could not record the failed extraction of save %s", state["save_id"])
