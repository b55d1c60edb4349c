"""The part of MemoryLoop the rest builds on: the store, the LLM, the settings, and the plan
of one observation (the loop's models over the save's chain)."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Self

from ..dynamic_memory import (
    DynamicMemory,
    MemoryInputError,
)
from ..dynamic_memory.archive import archived as archived
from ..dynamic_memory.responses import from_json
from ..engines import PostgresEngine, duckdb_connect
from ..engines.postgres import CITUS
from ..errors import ChainError, SaveNotFoundError
from ..memory_builder import int_or_none
from ..memory_builder.history import chain_params
from ..sql.batching import Coalescer, per_player, sole_player
from ..sql.seeds import read_settings, shipped_settings
from ..text.embedders import Embedder
from .llm import ChatModel
from .reports import observed_target
from .sql import OBSERVATION_FIELDS, SETTING_NAMES, plan_sql
from .windows import WindowCache, window_of

# the loop's CTEs get row estimates of 1 on PostgreSQL: no nested loops over them
_PLANNER = {"enable_nestloop": "off"}


class _LoopBase:
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
        self._con = self.memory.con
        self.llm = llm
        # seconds a failed extraction waits before the save x character is tried again,
        # doubling per failure (stored: next_attempt_at); None: the next observation tries
        self.retry_seconds: float | None = None
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
        self._locks: dict[tuple[int, int | None, str | None], threading.Lock] = {}
        self._locks_guard = threading.Lock()
        # plans of observations waiting together share a statement (the memory's batch size)
        # on Citus one statement names one player (its shard)
        plan = (
            per_player(self._plan_batch, lambda observation: observation.get("user_id"))
            if self.memory.store.name == CITUS
            else self._plan_batch
        )
        self._plans: Coalescer[Mapping[str, Any], dict[str, Any]] = Coalescer(
            plan, max_batch=self.memory.max_batch
        )
        # each plan's window, for the save's next turn (it reads what the observation read)
        self._windows = WindowCache()

    @property
    def windows(self) -> WindowCache:
        """Each plan's context window, kept for the save's next turn (its `stats()`)."""
        return self._windows

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

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _lock(self, key: tuple[int, int | None, str | None]) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(key, threading.Lock())

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
        role_id, script_role_id = observed_target(role_id, script_role_id)
        return {
            "save_id": save_id,
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
        """The loop's models over one observation's save: answered with the observations
        waiting for a statement, if any (rolemem.sql.batching)."""
        plan = self._plans.submit(params)
        owner = plan["save_user_id"]
        if not plan["saves_found"] or (
            params["user_id"] is not None and owner is not None and owner != params["user_id"]
        ):
            # another player's save: nothing of it is read, planned or extracted for this one
            raise SaveNotFoundError(f"no save with id {params['save_id']}", field="save_id")
        if plan["problem"]:
            raise ChainError(plan["problem"])
        return plan

    def _plan_batch(self, observations: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Plans of a batch of observations: one statement for distinct saves x characters (a
        second observation of the same one with other values waits for the next)."""
        store = self.memory.store
        # a batch of one player's saves names its player (on Citus, the walk's shard)
        chains = chain_params(
            store,
            sorted({o["save_id"] for o in observations}),
            sole_player(o.get("user_id") for o in observations),
        )
        plans: list[dict[str, Any] | None] = [None] * len(observations)
        remaining = list(range(len(observations)))
        while remaining:
            first: dict[tuple[Any, ...], int] = {}
            now, later = [], []
            for index in remaining:
                key = _character(observations[index])
                if key in first and observations[first[key]] != observations[index]:
                    later.append(index)
                else:
                    first.setdefault(key, index)
                    now.append(index)
            distinct = [observations[index] for index in first.values()]
            by_key = self._planned(plan_sql(store.name), chains, distinct)
            # where a memory was cut off the chain the lean plan does not hold: plan in full
            cut = [o for o in distinct if by_key[_character(o)]["has_cut"]]
            if cut:
                by_key.update(self._planned(plan_sql(store.name, cuts=True), chains, cut))
            for index in now:
                plans[index] = by_key[_character(observations[index])]
            for params in distinct:
                self._windows.keep(params, by_key[_character(params)])
            remaining = later
        return [plan for plan in plans if plan is not None]

    def _planned(
        self,
        sql: str,
        chains: Mapping[str, Any],
        observations: Sequence[Mapping[str, Any]],
    ) -> dict[tuple[int, int | None, str | None], dict[str, Any]]:
        """The plan rows of distinct observations, by save x character."""
        rows = self.memory.store.records(
            sql,
            {**chains, **{name: [o[name] for o in observations] for name in OBSERVATION_FIELDS}},
            planner=_PLANNER,
            json_as_text=False,
        )
        return {
            (row["save_id"], row["target_role_id"], row["target_script_role_id"]): {
                **row,
                "lines": from_json(row["lines"]),
            }
            for row in rows
        }

    def context_window(
        self,
        *,
        save_id: int,
        role_id: int | None = None,
        script_role_id: str | int | None = None,
        user_id: str | None = None,
    ) -> dict[str, Any]:
        """The lines of the context window (the newest `context_max_turns` turns after the
        watermark) of one save x character, with the watermark and the pending turn count.
        `user_id`: the player (default: the save's owner), whose extracted lines count."""
        save = int_or_none(save_id, "save_id", "context")
        if save is None:
            raise MemoryInputError("save_id is required")
        role, script_role = observed_target(role_id, script_role_id)
        if user_id is None:
            owner = self.memory.store.run("select user_id from save where id = $id", {"id": save})
            user_id = owner[0][0] if owner else None
        params = self._observation(save, role, script_role, user_id)
        kept = self._windows.current(self.memory.store, params)
        return kept if kept is not None else window_of(self._plan(params))

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
            self.memory.update_event(int_or_none(event_id, "event_id", "pin"), is_pinned=pinned)
        else:
            self.memory.update_entity(int_or_none(entity_id, "entity_id", "pin"), is_pinned=pinned)


def _character(observation: Mapping[str, Any]) -> tuple[int, int | None, str | None]:
    """Which save x character an observation plans (its plan row's key)."""
    return observation["save_id"], observation["role_id"], observation["script_role_id"]
