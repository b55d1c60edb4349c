"""The plan of an observation: the loop's models over the save's chain, statements shared by
observations waiting together, each plan's context window kept."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from ..dynamic_memory import DynamicMemory
from ..dynamic_memory.responses import from_json
from ..engines.postgres import CITUS
from ..errors import ChainError, SaveNotFoundError
from ..memory_builder.history import chain_params
from ..sql.batching import Coalescer, per_player, sole_player
from .reports import observed_target, required_id
from .sql import OBSERVATION_FIELDS, OBSERVED_SETTINGS, plan_sql
from .windows import WindowCache, window_of

# the loop's CTEs get row estimates of 1 on PostgreSQL: no nested loops over them
_PLANNER = {"enable_nestloop": "off"}


class Plans:
    """The loop's models over observations' saves, answered with the observations waiting for
    a statement (rolemem.sql.batching), each plan's window kept (`windows`); one observation of
    a save x character at a time (`lock`)."""

    def __init__(self, memory: DynamicMemory, settings: Mapping[str, Any]) -> None:
        self.memory, self.settings = memory, settings
        # one observation of a save x character at a time (two would ask the LLM twice)
        self._locks: dict[tuple[int, int | None, str | None], threading.Lock] = {}
        self._locks_guard = threading.Lock()
        # plans of observations waiting together share a statement (the memory's batch size)
        # on Citus one statement names one player (its shard)
        plan = (
            per_player(self._plan_batch, lambda observation: observation.get("user_id"))
            if memory.store.name == CITUS
            else self._plan_batch
        )
        self.batches: Coalescer[Mapping[str, Any], dict[str, Any]] = Coalescer(
            plan, max_batch=memory.max_batch
        )
        # each plan's window, for the save's next turn (it reads what the observation read)
        self.windows = WindowCache()

    def lock(self, key: tuple[int, int | None, str | None]) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(key, threading.Lock())

    def observation(
        self,
        save_id: int,
        role_id: int | None,
        script_role_id: str | None,
        user_id: str | None = None,
        agent_id: str | None = None,
        scene: str | None = None,
        flush: bool = False,
    ) -> dict[str, Any]:
        """The bound parameters standing in for int_loop_observations. `flush`: every pending
        turn is due (extract_at_turns 1), in batches of extract_turns, the last one smaller.
        The character is checked by the caller (observed_target)."""
        return {
            "save_id": save_id,
            "role_id": role_id,
            "script_role_id": script_role_id,
            "user_id": user_id,
            "agent_id": agent_id,
            "scene": scene,
            **{name: self.settings[name] for name in OBSERVED_SETTINGS},
            **({"extract_at_turns": 1} if flush else {}),
        }

    def plan(self, params: dict[str, Any]) -> dict[str, Any]:
        """The loop's models over one observation's save: answered with the observations
        waiting for a statement, if any (rolemem.sql.batching)."""
        plan = self.batches.submit(params)
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
        save_ids = sorted({o["save_id"] for o in observations})
        player = sole_player(o.get("user_id") for o in observations)
        chains = {"save_ids": save_ids, **chain_params(store, save_ids, player)}
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
            # where a memory was cut off the chain, or a line says who was present, the lean
            # plan does not hold: plan again with what it needs
            variants: dict[tuple[bool, bool], list[Mapping[str, Any]]] = {}
            for o in distinct:
                lean = by_key[_character(o)]
                if lean["has_cut"] or lean["has_presence"]:
                    variants.setdefault((lean["has_cut"], lean["has_presence"]), []).append(o)
            for (cuts, presence), again in variants.items():
                sql = plan_sql(store.name, cuts=cuts, presence=presence)
                by_key.update(self._planned(sql, chains, again))
            for index in now:
                plans[index] = by_key[_character(observations[index])]
            for params in distinct:
                self.windows.keep(params, by_key[_character(params)])
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
        save = required_id(save_id, "save_id", "context")
        role, script_role = observed_target(role_id, script_role_id)
        if user_id is None:
            owner = self.memory.store.run("select user_id from save where id = $id", {"id": save})
            user_id = owner[0][0] if owner else None
        params = self.observation(save, role, script_role, user_id)
        kept = self.windows.current(self.memory.store, params)
        return kept if kept is not None else window_of(self.plan(params))


def _character(observation: Mapping[str, Any]) -> tuple[int, int | None, str | None]:
    """Which save x character an observation plans (its plan row's key)."""
    return observation["save_id"], observation["role_id"], observation["script_role_id"]
