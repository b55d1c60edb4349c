"""MemoryLoop: observing a save after a turn (the batches due, window full or scene change,
extracted in order; or, with `due`, only what an observation would find), over its parts: the
plans, the extraction of one batch, maintenance."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from ..dynamic_memory import (
    DynamicMemory,
    MemoryInputError,
    checked_text,
    naive_time,
)
from ..dynamic_memory.base import forward
from ..engines import PostgresEngine, duckdb_connect
from ..memory_builder.contract import NAME_LENGTH
from ..sql.seeds import read_settings, shipped_settings
from ..text.embedders import Embedder
from .extraction import Extraction
from .llm import ChatModel
from .maintenance import Maintenance
from .plans import Plans
from .reports import ObserveReport, observed_target, required_id, write_state
from .sql import SETTING_NAMES
from .windows import WindowCache


class MemoryLoop(contextlib.AbstractContextManager["MemoryLoop"]):
    """Extraction, timeline, cleanup and consolidation for one store.

    `db`: a DuckDB path or connection (the game's `save`/`line` tables and the memory tables),
    or a `postgresql://` URL or an engine (`rolemem.engines.PostgresEngine`, also as `engine`):
    the same tables in a PostgreSQL database.
    `llm`: an `OpenAICompatibleLLM` (or any object with `model` and `complete(messages)`);
    None disables extraction and consolidation. `embedder`: vectors for extracted events.
    `settings`: overrides of the seed memory_loop_settings.
    """

    def __init__(
        self,
        db: duckdb_connect.Database = None,
        *,
        llm: ChatModel | None = None,
        embedder: Embedder | None | Literal["default"] = None,
        settings: Mapping[str, Any] | None = None,
        memory: DynamicMemory | None = None,
        engine: PostgresEngine | None = None,
    ) -> None:
        # a memory given (shared, with its vector cache) stays its owner's to close
        self._owns_memory = memory is None
        self.memory = memory or DynamicMemory(db, embedder=embedder, engine=engine)
        self.llm = llm
        # seconds a failed extraction waits before the save x character is tried again,
        # doubling per failure (stored: next_attempt_at); None: the next observation tries
        self.retry_seconds: float | None = None
        self.settings = _loop_settings(self.memory, settings or {})
        self._plans = Plans(self.memory, self.settings)
        self._extraction = Extraction(self.memory, llm, self.settings)
        self._maintenance = Maintenance(self.memory, llm, self.settings)

    @property
    def windows(self) -> WindowCache:
        """Each plan's context window, kept for the save's next turn (its `stats()`)."""
        return self._plans.windows

    def close(self) -> None:
        if self._owns_memory:
            self.memory.close()

    def __exit__(self, *exc: object) -> None:
        self.close()

    context_window = forward("_plans", Plans.context_window, tracked=False)
    maintain = forward("_maintenance", Maintenance.maintain, tracked=False)
    backoff = forward("_extraction", Extraction.backoff, tracked=False)
    speaker_names = forward("_extraction", Extraction.speaker_names, tracked=False)

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
        # the store's own edit: it finds the memory's table, a player's or a designer's
        if event_id is not None:
            self.memory.update_event(required_id(event_id, "event_id", "pin"), is_pinned=pinned)
        else:
            self.memory.update_entity(required_id(entity_id, "entity_id", "pin"), is_pinned=pinned)

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
        flush: bool = False,
    ) -> ObserveReport:
        """Look at the save after a turn was played; extract the batches that are due.

        Call it after each reply is stored, with the scene the turn was played in. Pending
        turns stored in another scene than the newest ones (`saves.append(scene=)`) go at
        once, as batches of their own scene; a scene different from the newest pending turns'
        sends them too. `flush=True` extracts every pending turn now, the remainder below
        extract_at_turns included (the last batch holds fewer than extract_turns: the end of
        an imported history).
        Raises `ExtractionError` when the LLM keeps failing (batches committed before stay).
        """
        params = self._observation(
            save_id, user_id, agent_id, role_id, script_role_id, scene, flush
        )
        now = naive_time(now or datetime.now(), "now")
        save, role, script_role = params["save_id"], params["role_id"], params["script_role_id"]
        with self._plans.lock((save, role, script_role)):
            plan = self._plans.plan(params)
            report = ObserveReport(
                save_id=save,
                target_key=plan["target_key"],
                pending_turns=plan["pending_turns"],
                watermark_line_id=plan["watermark_line_id"],
            )
            batches = list(plan["batches"] or [])
            report.scene_changed = bool(batches) and batches[0]["reason"] == "scene_change"
            state = {
                **_state(params, plan, now),
                # the chain's first line (position 0) names the dialogue tree
                "root_line_id": next(
                    (line["id"] for line in plan["lines"] or [] if line["line_position"] == 0),
                    None,
                ),
            }
            if not batches:
                self._record_observed(state)
                return report
            if self.llm is None:
                return report  # nothing to extract with; the turns stay pending
            if self.retry_seconds is not None:  # a failure's back-off: no call before it ends
                with self.memory.store.reading() as cur:
                    report.failed_attempts, retry_at = self.backoff(cur, state)
                if retry_at is not None and retry_at > datetime.now():
                    report.retry_at = retry_at
                    return report
            lines = list(plan["lines"] or [])
            # the player's name: given, else the save's
            names = self.speaker_names(role, user_name or plan["save_user_name"], agent_name, lines)
            for position, batch in enumerate(batches):
                is_last = position == len(batches) - 1
                try:
                    written = self._extraction.extract_batch(
                        batch,
                        lines,
                        state,
                        role,
                        script_role,
                        *names,
                        keep_scene=not is_last or scene is None,
                        retry_seconds=self.retry_seconds,
                    )
                except Exception as exc:
                    self._extraction.record_failure(
                        state, role, script_role, exc, self.retry_seconds
                    )
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
        flush: bool = False,
    ) -> dict[str, Any]:
        """What `observe` would find now, without extracting: the character's target key, the
        pending turns, the watermark and how many batches are due (the scene too: a new one
        makes every pending turn due). `record=True` notes the observation when nothing is
        due (the scene seen, the player active), as `observe` does: the next scene change is
        then seen. `flush=True`: what `observe(flush=True)` would find (every pending turn
        due)."""
        params = self._observation(
            save_id, user_id, agent_id, role_id, script_role_id, scene, flush
        )
        plan = self._plans.plan(params)
        batches = len(plan["batches"] or [])
        if record and not batches:
            self._record_observed(_state(params, plan, datetime.now()))
        return {
            "target_key": plan["target_key"],  # the models' key of the character
            "pending_turns": plan["pending_turns"],
            "watermark_line_id": plan["watermark_line_id"],
            "batches_due": batches,
        }

    def _observation(
        self,
        save_id: Any,
        user_id: str,
        agent_id: str,
        role_id: Any,
        script_role_id: Any,
        scene: str | None,
        flush: bool,
    ) -> dict[str, Any]:
        """An observation's arguments, checked, as the plan's bound parameters."""
        save = required_id(save_id, "save_id", "observe")
        checked_text(user_id, "user_id")
        checked_text(agent_id, "agent_id")
        checked_text(scene, "scene", required=False)
        if scene is not None and len(scene) > NAME_LENGTH:  # its batches' events keep it
            raise MemoryInputError(f"scene must be at most {NAME_LENGTH} characters", field="scene")
        role, script_role = observed_target(role_id, script_role_id)
        return self._plans.observation(
            save, role, script_role, user_id, agent_id, scene, flush=flush
        )

    def _record_observed(self, state: Mapping[str, Any]) -> None:
        """An observation with nothing due noted (the scene seen, the player active)."""
        with self.memory.store.transaction() as cur:
            write_state(
                cur, state, engine=self.memory.store.name, keep_scene=state["scene"] is None
            )


def _state(params: Mapping[str, Any], plan: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """The loop state an observation writes: its save x character (`target_key`, the models'
    key of the character, from the plan), player, agent and scene, as of `now`."""
    names = ("save_id", "user_id", "agent_id", "role_id", "script_role_id", "scene")
    return {**{name: params[name] for name in names}, "target_key": plan["target_key"], "now": now}


def _loop_settings(memory: DynamicMemory, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The seed memory_loop_settings (the store's over shipped ones) with `overrides`, checked."""
    settings = {
        **shipped_settings("memory_loop_settings"),
        **read_settings(memory.con, "memory_loop_settings"),
    }
    for name, value in overrides.items():
        if name not in SETTING_NAMES:
            raise MemoryInputError(
                f"unknown loop setting {name!r}; expected one of {', '.join(SETTING_NAMES)}"
            )
        settings[name] = value
    for name in SETTING_NAMES:
        value = settings[name]
        if name == "memory_scope":
            if value not in ("player", "save"):
                raise MemoryInputError("memory_scope must be 'player' or 'save'")
        elif name == "cleanup_share":
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise MemoryInputError(f"cleanup_share must be a number from 0 to 1, got {value!r}")
        elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise MemoryInputError(f"{name} must be a non-negative integer, got {value!r}")
    if settings["extract_turns"] < 1 or settings["llm_max_attempts"] < 1:
        raise MemoryInputError("extract_turns and llm_max_attempts must be at least 1")
    return settings
