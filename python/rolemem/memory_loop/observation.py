"""Observing a save after a turn: the batches due (window full, scene change), extracted in
order; or, with `due`, only what an observation would find."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..dynamic_memory import (
    MemoryInputError,
    checked_text,
    naive_time,
)
from ..dynamic_memory.archive import archived as archived
from ..memory_builder import int_or_none
from ..sql.project import update_else_upsert
from .extraction import _Extraction
from .reports import ObserveReport, _state_params, observed_target


class _Observation(_Extraction):
    """Observations of saves."""

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

        Call it after each reply is stored, with the scene the turn was played in. Pending
        turns stored in another scene than the newest ones (`saves.append(scene=)`) go at
        once, as batches of their own scene; a scene different from the newest pending turns'
        sends them too.
        Raises `ExtractionError` when the LLM keeps failing (batches committed before stay).
        """
        save = int_or_none(save_id, "save_id", "observe")
        if save is None:
            raise MemoryInputError("save_id is required")
        checked_text(user_id, "user_id")
        checked_text(agent_id, "agent_id")
        checked_text(scene, "scene", required=False)
        role, script_role = observed_target(role_id, script_role_id)
        now = naive_time(now or datetime.now(), "now")
        params = self._observation(save, role, script_role, user_id, agent_id, scene)
        with self._lock((save, role, script_role)):
            plan = self._plan(params)
            target_key = plan["target_key"]  # the models' key of the character
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
                # the chain's first line (position 0) names the dialogue tree
                "root_line_id": next(
                    (line["id"] for line in plan["lines"] or [] if line["line_position"] == 0),
                    None,
                ),
            }
            if not batches:
                with self.memory.store.transaction() as cur:
                    update_else_upsert(
                        cur,
                        "update_loop_state",
                        "upsert_loop_state",
                        _state_params(state, keep_scene=scene is None),
                        engine=self.memory.store.name,
                    )
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
            names = self._names(role, user_name or plan["save_user_name"], agent_name, lines)
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
        save = int_or_none(save_id, "save_id", "observe")
        if save is None:
            raise MemoryInputError("save_id is required")
        checked_text(user_id, "user_id")
        checked_text(agent_id, "agent_id")
        checked_text(scene, "scene", required=False)
        role, script_role = observed_target(role_id, script_role_id)
        plan = self._plan(self._observation(save, role, script_role, user_id, agent_id, scene))
        target_key = plan["target_key"]  # the models' key of the character
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
            with self.memory.store.transaction() as cur:
                update_else_upsert(
                    cur,
                    "update_loop_state",
                    "upsert_loop_state",
                    _state_params(state, keep_scene=scene is None),
                    engine=self.memory.store.name,
                )
        return {
            "target_key": target_key,
            "pending_turns": plan["pending_turns"],
            "watermark_line_id": plan["watermark_line_id"],
            "batches_due": batches,
        }
