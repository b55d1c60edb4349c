"""The memory loop (dynamic-memory §四, §八): played turns -> LLM extraction -> memories, and
cleanup that archives the weakest.

Rules are SQL (models/intermediate/memory_loop): which turns are pending after the watermark,
which batches are due (window full / scene change), which memories a cleanup archives. This
module binds the observation, renders each due batch with the memory builder (the character's
own point of view), asks the LLM, and writes the memories, the batch row (the watermark) and
the loop state in one transaction. The LLM is called outside any transaction: a failure, a
timeout or a kill before the commit writes nothing, and the next observation asks again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

import duckdb

from . import _duck
from ._seeds import read_settings, shipped_settings
from ._sql_project import compose
from .archive import archive
from .archive import archived as archived
from .dynamic_memory import (
    _SEEDS,
    DynamicMemory,
    EventVectors,
    MemoryInputError,
    _entity_params,
    _naive,
    _text,
)
from .embedders import Embedder
from .errors import ChainError, SaveNotFoundError
from .extraction import ExtractionReply, consolidate, extract
from .history import ensure_fresh
from .llm import ChatModel
from .memory_builder import _int_or_none, _script_role, message_spans

log = logging.getLogger(__name__)

SETTING_NAMES = (
    "min_window_turns",
    "context_max_turns",
    "extract_at_turns",
    "extract_turns",
    "memory_scope",
    "cleanup_threshold",
    "cleanup_share",
    "cleanup_interval_days",
    "inactive_days",
    "inactive_min_keep",
    "consolidation_batch_size",
    "llm_max_attempts",
)

# The caller's one observation, standing in for the batch model int_loop_observations.
_OBSERVATION_SQL = """
    select
        cast($save_id as bigint) as save_id,
        cast($target_key as varchar) as target_key,
        cast($role_id as bigint) as target_role_id,
        cast($script_role_id as varchar) as target_script_role_id,
        cast($user_id as varchar) as user_id,
        cast($agent_id as varchar) as agent_id,
        cast($scene as varchar) as scene,
        (
            select any_value(last_scene) from memory_loop_state
            where save_id = $save_id and target_key = $target_key
        ) as last_scene,
        cast($extract_at_turns as integer) as extract_at_turns,
        cast($extract_turns as integer) as extract_turns,
        cast($context_max_turns as integer) as context_max_turns,
        cast($min_window_turns as integer) as min_window_turns
"""
# the save's chain from the write-time table (refreshed first when the save's tip moved)
_CHAIN_SQL = "select * from main.int_lines_chained_to_root where save_id = $save_id"
_BATCHES_SQL = """
    select * from memory_extraction_batch
    where save_id = $save_id and target_key = $target_key
"""
_OBSERVE_SELECT = """
select
    (
        select list(struct_pack(batch_index, reason, batch_key, first_line_id, last_line_id,
                                first_line_position, last_line_position, turn_count)
                    order by batch_index)
        from int_loop_batches_due
    ) as batches,
    (select count(*) from int_loop_pending_turns) as pending_turns,
    (select any_value(watermark_line_id) from int_loop_watermarks) as watermark_line_id,
    (select any_value(watermark_position) from int_loop_watermarks) as watermark_position,
    (select any_value(last_scene) from int_loop_observations) as last_scene,
    (select any_value(window_start_position) from int_loop_context_windows)
        as window_start_position,
    (select any_value(window_turns) from int_loop_context_windows) as window_turns,
    -- the lines after the watermark (what extraction takes) and those of the context window
    (
        select list(struct_pack(line_position, id := line_id, role_id, script_role_id, attribute,
                                display_name, content, original_emotion, tts_content,
                                action_content, created_at)
                    order by line_position)
        from int_lines_chained_to_root
        where line_position >= least(
            (select any_value(watermark_position) from int_loop_watermarks) + 1,
            (select any_value(window_start_position) from int_loop_context_windows)
        )
    ) as lines,
    (select any_value(chain_problem) from int_save_history_tips where save_id = $save_id)
        as problem,
    (select count(*) from save where id = $save_id) as saves_found
"""

_MAINTENANCE_SQL = """
    select
        cast($now as timestamp) as now,
        cast($cleanup_threshold as integer) as cleanup_threshold,
        cast($cleanup_share as double) as cleanup_share,
        cast($cleanup_interval_days as integer) as cleanup_interval_days,
        cast($inactive_days as integer) as inactive_days,
        cast($inactive_min_keep as integer) as inactive_min_keep
"""
_MAINTENANCE_SELECT = """
select
    (select list(quotas order by quotas.agent_id, quotas.user_id)
     from int_memory_cleanup_quotas as quotas) as quotas,
    (select list(struct_pack(memory_type, memory_id, agent_id, user_id, reason)
                 order by memory_type, memory_id)
     from int_memory_cleanup_candidates) as candidates
"""
_STATE_SQL = """
    insert into memory_loop_state (save_id, target_key, user_id, agent_id, last_scene,
        last_observed_at, role_id, script_role_id, failed_attempts)
    values ($save_id, $target_key, $user_id, $agent_id, $scene, $now, $role_id,
        $script_role_id, 0)
    on conflict (save_id, target_key) do update set
        user_id = excluded.user_id, agent_id = excluded.agent_id,
        last_scene = case when $keep_scene then memory_loop_state.last_scene
            else excluded.last_scene end,
        last_observed_at = excluded.last_observed_at,
        role_id = excluded.role_id, script_role_id = excluded.script_role_id,
        failed_attempts = case when $extracted then 0
            else memory_loop_state.failed_attempts end
"""
# a failed extraction: the error and one more failed attempt (the scene is not moved, so the
# next observation sends the same batch)
_FAILURE_SQL = """
    insert into memory_loop_state (save_id, target_key, user_id, agent_id, last_observed_at,
        role_id, script_role_id, last_error, last_error_at, failed_attempts)
    values ($save_id, $target_key, $user_id, $agent_id, $now, $role_id, $script_role_id,
        $error, $now, 1)
    on conflict (save_id, target_key) do update set
        last_error = excluded.last_error, last_error_at = excluded.last_error_at,
        failed_attempts = coalesce(memory_loop_state.failed_attempts, 0) + 1
"""


@dataclass
class ObserveReport:
    """What one observation did. `extracted_turns`: turns sent to the LLM and committed;
    `pending_turns`: turns after the watermark now (the context window)."""

    save_id: int
    target_key: str
    extracted_turns: int = 0
    event_ids: list[int] = field(default_factory=list)
    entity_ids: list[int] = field(default_factory=list)
    batch_keys: list[str] = field(default_factory=list)
    pending_turns: int = 0
    watermark_line_id: int | None = None
    scene_changed: bool = False


@dataclass
class MaintenanceReport:
    """What one maintenance run did, per rule and in total."""

    archived: dict[str, int] = field(default_factory=dict)  # reason -> memories archived
    players_cleaned: int = 0
    consolidated_entities: int = 0
    context_vectors: int = 0  # events given the context vector they lacked
    archived_ids: list[tuple[str, int]] = field(default_factory=list)


def _state_params(
    state: Mapping[str, Any], *, keep_scene: bool, extracted: bool = False
) -> dict[str, Any]:
    names = ("save_id", "target_key", "user_id", "agent_id", "scene", "now", "role_id")
    return {
        **{name: state[name] for name in names},
        "script_role_id": state["script_role_id"],
        "keep_scene": keep_scene,
        "extracted": extracted,
    }


class _AlreadyExtracted(Exception):
    """Another caller committed this batch first: roll back ours, write nothing."""


def event_times(
    events: list[tuple[datetime | None, int | None]],
    messages: Sequence[Mapping[str, Any]],
    line_times: list[datetime | None],
    now: datetime,
) -> list[datetime]:
    """When each event of a batch happened: `events` are (the time the dialogue states, the
    number of the message it comes from) in the LLM's order (dialogue order). A stated time
    wins; else the newest time among the lines of its message; else, without a message
    number, the newest time up to the end of the event's equal share of the batch's lines;
    lines without times spread the events one second apart, ending at `now`. Equal times are
    then moved a second apart, so a batch never gets identical stamps."""
    count, times = len(events), list[datetime]()
    for index, (stated, number) in enumerate(events):
        if number is not None and 1 <= number <= len(messages):
            span = messages[number - 1]
            lines = line_times[span["first_line"] : span["last_line"] + 1]
        else:
            lines = line_times[: -(-(index + 1) * len(line_times) // count)]  # ceil
        timed = [t for t in lines if t is not None]
        at = stated or (max(timed) if timed else now - timedelta(seconds=count - 1 - index))
        while at in times:
            at += timedelta(seconds=1)
        times.append(at)
    return times


def _target(role_id: Any, script_role_id: Any) -> tuple[str, int | None, str | None]:
    role_id = _int_or_none(role_id, "role_id", "observe")
    script_role_id = _script_role(script_role_id, "script_role_id", "observe")
    if (role_id is None) == (script_role_id is None):
        raise MemoryInputError("give the character as exactly one of role_id or script_role_id")
    if role_id is not None:
        return f"role_id={role_id}", role_id, None
    return f"script_role_id={script_role_id}", None, script_role_id


class MemoryLoop:
    """Extraction, timeline, cleanup and consolidation for one store.

    `db`: a DuckDB path or connection (the game's `save`/`line` tables and the memory tables).
    `llm`: an `OpenAICompatibleLLM` (or any object with `model` and `complete(messages)`);
    None disables extraction and consolidation. `embedder`: vectors for extracted events.
    `settings`: overrides of the seed memory_loop_settings.
    """

    def __init__(
        self,
        db: _duck.Database = None,
        *,
        llm: ChatModel | None = None,
        embedder: Embedder | None | Literal["default"] = None,
        settings: Mapping[str, Any] | None = None,
        memory: DynamicMemory | None = None,
    ) -> None:
        # a memory given (shared, with its vector cache) stays its owner's to close
        self._owns_memory = memory is None
        self.memory = memory or DynamicMemory(db, embedder=embedder)
        self._con = self.memory._con
        self.llm = llm
        self.settings = {
            **shipped_settings("memory_loop_settings"),
            **read_settings(self._con, "memory_loop_settings"),
        }
        for name, value in (settings or {}).items():
            if name not in SETTING_NAMES:
                raise MemoryInputError(
                    f"unknown loop setting {name!r}; expected one of {', '.join(SETTING_NAMES)}"
                )
            self.settings[name] = value
        self._check_settings()
        # one observation of a save x character at a time (two would ask the LLM twice)
        self._locks: dict[tuple[int, str], threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def _check_settings(self) -> None:
        for name in SETTING_NAMES:
            value = self.settings[name]
            if name == "memory_scope":
                if value not in ("player", "save"):
                    raise MemoryInputError("memory_scope must be 'player' or 'save'")
            elif name == "cleanup_share":
                if (
                    isinstance(value, bool)
                    or not isinstance(value, int | float)
                    or not (0 <= value <= 1)
                ):
                    raise MemoryInputError(
                        f"cleanup_share must be a number from 0 to 1, got {value!r}"
                    )
            elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise MemoryInputError(f"{name} must be a non-negative integer, got {value!r}")
        if self.settings["extract_turns"] < 1 or self.settings["llm_max_attempts"] < 1:
            raise MemoryInputError("extract_turns and llm_max_attempts must be at least 1")

    def close(self) -> None:
        if self._owns_memory:
            self.memory.close()

    def __enter__(self) -> MemoryLoop:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _lock(self, key: tuple[int, str]) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(key, threading.Lock())

    # -- extraction --------------------------------------------------------------------------

    def observe(
        self,
        *,
        save_id: int,
        user_id: str,
        agent_id: str,
        role_id: int | None = None,
        script_role_id: str | int | None = None,
        scene: str | None = None,
        now: datetime | None = None,
        user_name: str | None = None,
        agent_name: str | None = None,
    ) -> ObserveReport:
        """Look at the save after a turn was played; extract the batches that are due.

        Call it after each reply is stored, with the scene the turn was played in. A scene
        different from the last one seen for this save x character sends every pending turn.
        Raises `ExtractionError` when the LLM keeps failing (batches committed before stay).
        """
        save = _int_or_none(save_id, "save_id", "observe")
        if save is None:
            raise MemoryInputError("save_id is required")
        _text(user_id, "user_id")
        _text(agent_id, "agent_id")
        _text(scene, "scene", required=False)
        target_key, role, script_role = _target(role_id, script_role_id)
        now = _naive(now or datetime.now(), "now")
        params = self._observation(save, role, script_role, user_id, agent_id, scene)
        with self._lock((save, target_key)):
            plan = self._plan(params)
            report = ObserveReport(
                save_id=save,
                target_key=target_key,
                pending_turns=plan["pending_turns"],
                watermark_line_id=plan["watermark_line_id"],
            )
            batches = list(plan["batches"] or [])
            report.scene_changed = bool(batches) and batches[0]["reason"] == "scene_change"
            state = {
                "save_id": save,
                "target_key": target_key,
                "user_id": user_id,
                "agent_id": agent_id,
                "role_id": role,
                "script_role_id": script_role,
                "scene": scene,
                "now": now,
                # the turns a scene change flushes were played in the scene seen before
                "batch_scene": plan["last_scene"] if report.scene_changed else scene,
            }
            if not batches:
                with _duck.transaction(self._con) as cur:
                    cur.execute(_STATE_SQL, _state_params(state, keep_scene=scene is None))
                return report
            if self.llm is None:
                return report  # nothing to extract with; the turns stay pending
            lines = list(plan["lines"] or [])
            names = self._names(role, user_name, agent_name, lines)
            for position, batch in enumerate(batches):
                is_last = position == len(batches) - 1
                try:
                    written = self._extract_batch(
                        batch,
                        lines,
                        state,
                        role,
                        script_role,
                        *names,
                        keep_scene=not is_last or scene is None,
                    )
                except Exception as exc:
                    self._record_failure(state, role, script_role, exc)
                    raise
                if written is None:
                    continue  # another caller committed the same batch meanwhile
                events, entities = written
                report.extracted_turns += batch["turn_count"]
                report.event_ids += events
                report.entity_ids += entities
                report.batch_keys.append(batch["batch_key"])
                report.pending_turns -= batch["turn_count"]
                report.watermark_line_id = batch["last_line_id"]
        return report

    def due(
        self,
        *,
        save_id: int,
        user_id: str,
        agent_id: str,
        role_id: int | None = None,
        script_role_id: str | int | None = None,
        scene: str | None = None,
        record: bool = False,
    ) -> dict[str, Any]:
        """What `observe` would find now, without extracting: the character's target key, the
        pending turns, the watermark and how many batches are due (the scene too: a new one
        makes every pending turn due). `record=True` notes the observation when nothing is
        due (the scene seen, the player active), as `observe` does: the next scene change is
        then seen."""
        save = _int_or_none(save_id, "save_id", "observe")
        if save is None:
            raise MemoryInputError("save_id is required")
        _text(user_id, "user_id")
        _text(agent_id, "agent_id")
        _text(scene, "scene", required=False)
        target_key, role, script_role = _target(role_id, script_role_id)
        plan = self._plan(self._observation(save, role, script_role, user_id, agent_id, scene))
        batches = len(plan["batches"] or [])
        if record and not batches:
            state = {
                "save_id": save,
                "target_key": target_key,
                "user_id": user_id,
                "agent_id": agent_id,
                "role_id": role,
                "script_role_id": script_role,
                "scene": scene,
                "now": datetime.now(),
            }
            with _duck.transaction(self._con) as cur:
                cur.execute(_STATE_SQL, _state_params(state, keep_scene=scene is None))
        return {
            "target_key": target_key,
            "pending_turns": plan["pending_turns"],
            "watermark_line_id": plan["watermark_line_id"],
            "batches_due": batches,
        }

    def _names(
        self,
        role_id: int | None,
        user_name: str | None,
        agent_name: str | None,
        lines: list[dict[str, Any]],
    ) -> tuple[str, str]:
        """The names the extraction prompt uses (never ids, which an LLM would copy into the
        memories): the player's given name, else 用户; the character's given name, else its
        role's name, else the name its own lines show, else 角色."""
        if agent_name is None and role_id is not None:
            with self._con.cursor() as cur:
                row = cur.execute("select name from role where id = $id", {"id": role_id})
                found = row.fetchone()
            agent_name = found[0] if found else None
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

    def _record_failure(
        self,
        state: Mapping[str, Any],
        role_id: int | None,
        script_role_id: str | None,
        error: Exception,
    ) -> None:
        """A failed extraction shows in the save's memory status (last error, attempts); the
        next observation retries the batch."""
        try:
            with _duck.transaction(self._con) as cur:
                cur.execute(
                    _FAILURE_SQL,
                    {
                        **{name: state[name] for name in ("save_id", "target_key", "user_id")},
                        "agent_id": state["agent_id"],
                        "role_id": role_id,
                        "script_role_id": script_role_id,
                        "error": f"{type(error).__name__}: {error}"[:1000],
                        "now": datetime.now(),
                    },
                )
        except duckdb.Error:  # the status is a courtesy; the failure itself is raised
            log.warning("could not record the failed extraction of save %s", state["save_id"])

    def _observation(
        self,
        save_id: int,
        role_id: int | None,
        script_role_id: str | None,
        user_id: str | None = None,
        agent_id: str | None = None,
        scene: str | None = None,
    ) -> dict[str, Any]:
        """The bound parameters standing in for int_loop_observations."""
        target_key, _, _ = _target(role_id, script_role_id)
        return {
            "save_id": save_id,
            "target_key": target_key,
            "role_id": role_id,
            "script_role_id": script_role_id,
            "user_id": user_id,
            "agent_id": agent_id,
            "scene": scene,
            **{
                name: self.settings[name]
                for name in (
                    "extract_at_turns",
                    "extract_turns",
                    "context_max_turns",
                    "min_window_turns",
                )
            },
        }

    def _plan(self, params: dict[str, Any]) -> dict[str, Any]:
        sql = compose(
            ("int_loop_batches_due", "int_loop_pending_turns", "int_loop_context_windows"),
            {
                "int_lines_chained_to_root": _CHAIN_SQL,
                "int_loop_observations": _OBSERVATION_SQL,
                "source_memory_extraction_batch": _BATCHES_SQL,
            },
            _OBSERVE_SELECT,
        )
        cur = self.memory._cursor()
        ensure_fresh(cur.cursor, [params["save_id"]])
        row = cur.run(sql, params)[0]
        names = [d[0] for d in cur.cursor.description]
        plan = dict(zip(names, row, strict=True))
        if not plan["saves_found"]:
            raise SaveNotFoundError(f"save {params['save_id']} does not exist")
        if plan["problem"]:
            raise ChainError(plan["problem"])
        return plan

    def _extract_batch(
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
    ) -> tuple[list[int], list[int]] | None:
        assert self.llm is not None
        chosen = [
            line
            for line in lines
            if batch["first_line_position"] <= line["line_position"] <= batch["last_line_position"]
        ]
        messages = message_spans(chosen, role_id=role_id, script_role_id=script_role_id)
        reply = extract(
            self.llm,
            messages,
            agent_name=agent_name,
            user_name=user_name,
            max_attempts=self.settings["llm_max_attempts"],
        )
        event_rows, vectors = self.memory._prepare_events(
            self._event_inputs(reply, batch, state, chosen, messages)
        )
        entity_params = [
            _entity_params(
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
            )
            for e in reply.entities
        ]
        try:
            with _duck.transaction(self._con) as cur:
                events, entities = self._commit_batch(
                    cur, batch, state, event_rows, vectors, entity_params, keep_scene
                )
        except _AlreadyExtracted:
            return None
        log.info(
            "extracted %s: %d events, %d entities", batch["batch_key"], len(events), len(entities)
        )
        return events, entities

    def _commit_batch(
        self,
        cur: duckdb.DuckDBPyConnection,
        batch: Mapping[str, Any],
        state: dict[str, Any],
        event_rows: list[dict[str, Any]],
        vectors: list[EventVectors | None],
        entity_params: list[dict[str, Any]],
        keep_scene: bool,
    ) -> tuple[list[int], list[int]]:
        """The batch row (the watermark), its memories and the loop state: one transaction."""
        claimed = cur.execute(
            """insert into memory_extraction_batch (batch_key, save_id, target_key, user_id,
                agent_id, first_line_id, last_line_id, turn_count, reason, scene,
                event_count, entity_count, llm_model, extracted_at)
            values ($batch_key, $save_id, $target_key, $user_id, $agent_id, $first_line_id,
                $last_line_id, $turn_count, $reason, $scene, $event_count, $entity_count,
                $llm_model, $now)
            on conflict do nothing returning batch_key""",
            {
                "batch_key": batch["batch_key"],
                "save_id": state["save_id"],
                "target_key": state["target_key"],
                "user_id": state["user_id"],
                "agent_id": state["agent_id"],
                "first_line_id": batch["first_line_id"],
                "last_line_id": batch["last_line_id"],
                "turn_count": batch["turn_count"],
                "reason": batch["reason"],
                "scene": state["batch_scene"],
                "event_count": len(event_rows),
                "entity_count": len(entity_params),
                "llm_model": getattr(self.llm, "model", None),
                "now": state["now"],
            },
        ).fetchall()
        if not claimed:
            raise _AlreadyExtracted(batch["batch_key"])
        events = self.memory._write_events(cur, event_rows, vectors, merge=True)
        entities = [self.memory._write_entity(cur, params) for params in entity_params]
        cur.execute(_STATE_SQL, _state_params(state, keep_scene=keep_scene, extracted=True))
        return events, entities

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
        return [
            {
                "scope": "user",
                "user_id": state["user_id"],
                "agent_id": state["agent_id"],
                "description": event.description,
                "deepinsight": event.deepinsight,
                "keywords": list(event.keywords),
                "place": event.place,
                "scene": state["batch_scene"],
                "importance": event.importance,
                "created_at": created_at,
                "save_id": state["save_id"],
                "first_line_id": batch["first_line_id"],
                "last_line_id": batch["last_line_id"],
                "batch_key": batch["batch_key"],
            }
            for event, created_at in zip(reply.events, times, strict=True)
        ]

    def context_window(
        self,
        *,
        save_id: int,
        role_id: int | None = None,
        script_role_id: str | int | None = None,
    ) -> dict[str, Any]:
        """The lines of the context window (the newest `context_max_turns` turns after the
        watermark) of one save x character, with the watermark and the pending turn count."""
        save = _int_or_none(save_id, "save_id", "context")
        if save is None:
            raise MemoryInputError("save_id is required")
        _, role, script_role = _target(role_id, script_role_id)
        params = self._observation(save, role, script_role)
        plan = self._plan(params)
        start = plan["window_start_position"]
        lines = [
            line
            for line in plan["lines"] or []
            if start is not None and line["line_position"] >= start
        ]
        return {
            "lines": lines,
            "pending_turns": plan["pending_turns"],
            "watermark_line_id": plan["watermark_line_id"],
            "window_turns": plan["window_turns"],
        }

    # -- timeline and pins ---------------------------------------------------------------------

    def timeline(
        self, *, user_id: str, agent_id: str, save_id: int | None = None
    ) -> list[dict[str, Any]]:
        """The overview timeline (前情提要) on the save's current branch, oldest first."""
        return self.memory.timeline(
            user_id=user_id,
            agent_id=agent_id,
            save_id=save_id,
            memory_scope=self.settings["memory_scope"],
        )

    def pin(
        self, *, event_id: int | None = None, entity_id: int | None = None, pinned: bool = True
    ) -> None:
        """Pin (or unpin) one memory: a pinned memory is never archived by cleanup."""
        if (event_id is None) == (entity_id is None):
            raise MemoryInputError("give exactly one of event_id or entity_id")
        if not isinstance(pinned, bool):
            raise MemoryInputError(f"pinned must be True or False, got {pinned!r}")
        table, memory_id = (
            ("memory_event", event_id) if event_id is not None else ("memory_entity", entity_id)
        )
        memory_id = _int_or_none(
            memory_id, "event_id" if event_id is not None else "entity_id", "pin"
        )
        changed = (
            self._con.cursor()
            .execute(
                # the table name is one of two fixed names, never data
                f"update {table} set is_pinned = $pinned where id = $id returning id",
                {"pinned": pinned, "id": memory_id},
            )
            .fetchall()
        )
        if not changed:
            raise MemoryInputError(f"no {table} with id {memory_id}")

    # -- maintenance -----------------------------------------------------------------------------

    def maintain(
        self,
        *,
        now: datetime | None = None,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> MaintenanceReport:
        """Cleanup (archive the weakest memories of players due, per the SQL rules), then, with
        an LLM, consolidate entities whose descriptions were merged since the last time; then,
        with an embedder, give events stored without a context vector theirs.
        `progress(stage, done, total)` is called as each stage ('cleanup', 'consolidation',
        'context vectors') advances (the CLI draws bars with it)."""
        now = _naive(now or datetime.now(), "now")
        step = progress or (lambda stage, done, total: None)
        step("cleanup", 0, 1)
        report = MaintenanceReport()
        params = {
            "now": now,
            **{
                name: self.settings[name]
                for name in (
                    "cleanup_threshold",
                    "cleanup_share",
                    "cleanup_interval_days",
                    "inactive_days",
                    "inactive_min_keep",
                )
            },
        }
        sql = compose(
            ("int_memory_cleanup_quotas", "int_memory_cleanup_candidates"),
            {
                "int_memory_maintenance_requests": _MAINTENANCE_SQL,
                **{
                    f"source_{table}": f"select * from {table}"
                    for table in (
                        "memory_event",
                        "memory_entity",
                        "memory_loop_state",
                        "memory_maintenance_run",
                    )
                },
            },
            _MAINTENANCE_SELECT,
            existing=_SEEDS,
        )
        quotas, candidates = self.memory._cursor().run(sql, params)[0]
        quotas, candidates = list(quotas or []), list(candidates or [])
        by_kind: dict[tuple[str, str], list[int]] = {}
        for item in candidates:
            by_kind.setdefault((item["memory_type"], item["reason"]), []).append(item["memory_id"])
        with _duck.transaction(self._con) as cur:
            for (memory_type, reason), ids in sorted(by_kind.items()):
                archive(cur, memory_type, reason, ids, now)
                report.archived[reason] = report.archived.get(reason, 0) + len(ids)
                report.archived_ids += [(memory_type, i) for i in ids]
            for quota in quotas:
                archived = sum(
                    1
                    for item in candidates
                    if (item["agent_id"], item["user_id"]) == (quota["agent_id"], quota["user_id"])
                )
                cur.execute(
                    """insert into memory_maintenance_run (agent_id, user_id, rule,
                        memory_count, archived_count, ran_at)
                    values ($agent_id, $user_id, $rule, $memory_count, $archived, $now)""",
                    {
                        "agent_id": quota["agent_id"],
                        "user_id": quota["user_id"],
                        "rule": quota["rule"],
                        "memory_count": quota["memory_count"],
                        "archived": archived,
                        "now": now,
                    },
                )
        report.players_cleaned = len(quotas)
        step("cleanup", 1, 1)
        if self.llm is not None:
            report.consolidated_entities = self._consolidate(now, step)
        report.context_vectors = self.memory.fill_context_vectors(
            lambda done, total: step("context vectors", done, total)
        )
        return report

    def _consolidate(self, now: datetime, step: Callable[[str, int, int], None]) -> int:
        """Entities with merged descriptions, in batches to the LLM; each batch rewritten in
        one transaction, the old rows archived with reason 'consolidated'."""
        assert self.llm is not None
        cur = self._con.cursor()
        rows = cur.execute(
            """select id, entity_name, kind, keyword, description from memory_entity
            where scope = 'user' and merge_count > 0 order by id"""
        ).fetchall()
        entities = [
            dict(zip(("id", "entity_name", "kind", "keyword", "description"), row, strict=True))
            for row in rows
        ]
        size = max(1, self.settings["consolidation_batch_size"])
        done = 0
        step("consolidation", 0, len(entities))
        for start in range(0, len(entities), size):
            batch = entities[start : start + size]
            merged = consolidate(self.llm, batch, max_attempts=self.settings["llm_max_attempts"])
            if not merged:
                continue
            with _duck.transaction(self._con) as tx:
                archive(tx, "entity", "consolidated", list(merged), now, keep=True)
                tx.execute(
                    """update memory_entity set description = merged.description,
                        merge_count = 0, updated_at = greatest(updated_at, $now)
                    from (select unnest($ids) as id, unnest($texts) as description) as merged
                    where memory_entity.id = merged.id""",
                    {"ids": list(merged), "texts": list(merged.values()), "now": now},
                )
            done += len(merged)
            step("consolidation", min(start + size, len(entities)), len(entities))
        return done
