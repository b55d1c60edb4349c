"""What recall reads besides the recall itself: a query's association words, the overview
timeline, and the scope of a query (the save's branch made current)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ..memory_builder import history
from ..sql.batching import sole_player
from ..sql.project import compose, render_macro
from ..sql.request_rows import bound_lists
from ..text.tokens import tokenize
from .base import Context
from .checks import MemoryInputError, _setting, checked_text
from .responses import from_json
from .settings import SETTING_SEEDS
from .sql import (
    DENSE_COLUMNS,
    QUERY_FIELDS,
    QUERY_NULLS,
    batched,
    query_sql,
    recall_sources,
)

# the query models' CTEs get row estimates of 1 on PostgreSQL: nested loops over them would take
# seconds to minutes, hash and merge joins a fraction of a second; merge joins sort what a hash
# would only probe (a query's words against every entity of the player: 50k rows), so hash
# joins alone. No sort where an index gives the order: the timeline's lateral read of a
# player's newest events looks like a one-row sort to a generic plan (20k rows in fact)
_PLANNER = {"enable_nestloop": "off", "enable_mergejoin": "off", "enable_sort": "off"}


class Lookups:
    """Association words, timeline, scope; the query models run on the store's engine."""

    def __init__(self, context: Context) -> None:
        self.context = context

    def checked_scope(self, save_id: Any, memory_scope: Any) -> str:
        """The scope a query of `save_id` asks for (the setting's without one), both checked."""
        if save_id is not None and (isinstance(save_id, bool) or not isinstance(save_id, int)):
            raise MemoryInputError(f"save_id must be an integer or None, got {save_id!r}")
        scope = self.context.settings["memory_scope"] if memory_scope is None else memory_scope
        if scope not in ("player", "save"):
            raise MemoryInputError(f"memory_scope must be 'player' or 'save', got {scope!r}")
        return str(scope)

    def scope_params(
        self, save_id: Any, memory_scope: Any, user_id: str | None = None
    ) -> dict[str, Any]:
        context = self.context
        scope = self.checked_scope(save_id, memory_scope)
        lineage = None
        if save_id is not None and context.engine is not None:
            # the save's player's (on Citus, the shard the lineage is read on)
            lineage = history.engine_lineage(context.engine, [save_id], user_id)
        elif save_id is not None and context.read_only:
            lineage = history.lineage(context.duckdb.cursor().cursor, [save_id])  # read as it is
        elif save_id is not None:
            # the branch rule reads the save's chain: made current first
            lineage = history.fresh_lineage(context.duckdb.cursor().cursor, [save_id])
        return {
            **context.settings,
            "save_id": save_id,
            "memory_scope": scope,
            # the saves whose lines the chain passes through (a fork's parents): their events
            # follow the branch rule as the save's own do
            "lineage_save_ids": lineage,
        }

    def expand_words(
        self,
        sentence: str,
        *,
        count: int | None = None,
        strategy: int | None = None,
        filter_levels: Sequence[int] | None = None,
        user_name: str | None = None,
        agent_name: str | None = None,
    ) -> dict[str, Any]:
        """The association words of a sentence (dynamic-memory §11; macro
        expand_recall_words): its words, those that remain after stopwords and names, and the
        associated words with their levels. `strategy` 0 (first) or 1 (second); `count` at
        most; `filter_levels` dropped ([] or [0]: none)."""
        checked_text(sentence, "sentence")
        overrides = {
            "max_expanded_words": count,
            "expand_strategy": strategy,
            "filter_levels": [v for v in filter_levels or [] if v != 0]
            if filter_levels is not None
            else None,
        }
        words = tokenize(sentence)
        params = {
            **QUERY_NULLS,
            **self.context.settings,
            **{k: _setting(k, v) for k, v in overrides.items() if v is not None},
            "agent_id": "",
            "user_id": "",
            "user_name": user_name,
            "agent_name": agent_name,
            "query_text": sentence,
            "tokens": words,
            "now": datetime.now(),
            "result_limit": 1,
        }
        sql = compose(
            "int_memory_query_words",
            {"int_memory_queries": query_sql()},
            "select word, word_source, level from int_memory_query_words order by word_order",
            existing=SETTING_SEEDS,
        )
        rows = self.context.duckdb.cursor().run(sql, batched([params]))
        return {
            "original_keywords": words,
            "input_words": [word for word, source, _ in rows if source == "token"],
            "expanded_words": [
                {word: level} for word, source, level in rows if source == "expanded"
            ],
        }

    def timeline(
        self,
        *,
        user_id: str,
        agent_id: str,
        save_id: int | None = None,
        memory_scope: str | None = None,
    ) -> list[dict[str, Any]]:
        """The overview timeline (前情提要): the player's newest `timeline_size` events in
        scope (on the save's current branch), oldest first, as event dicts."""
        params = self.listing(user_id, agent_id, save_id, memory_scope)
        return self.listed("int_memory_timeline", render_macro("timeline_rows"), params)

    def listing(
        self,
        user_id: str,
        agent_id: str,
        save_id: int | None,
        memory_scope: str | None,
        result_limit: int = 1,
    ) -> dict[str, Any]:
        """The one query (no text, no vector) a listing of the player's memories binds for the
        query models: the timeline's, the facts', the character's knowledge."""
        self.check_listing(user_id, agent_id, save_id, memory_scope)
        return {
            **QUERY_NULLS,
            **self.scope_params(save_id, memory_scope, user_id),
            "agent_id": agent_id,
            "user_id": user_id,
            "query_text": "",
            "tokens": [],
            "now": datetime.now(),
            "result_limit": result_limit,
            "score_threshold": 0.0,
        }

    def listed(
        self,
        model: str,
        select: str,
        params: Mapping[str, Any],
        extra: Mapping[str, Any] | None = None,
    ) -> list[dict[str, Any]]:
        """`select` over the query models for one listing's `params` (`listing`), as dicts."""
        sql = self.models_sql(model, select)
        return self.context.store.records(sql, self.bound([params], extra), planner=_PLANNER)

    def check_listing(
        self, user_id: str, agent_id: str, save_id: int | None, memory_scope: str | None
    ) -> None:
        """A listing's inputs checked, before anything is read for it."""
        checked_text(user_id, "user_id")
        checked_text(agent_id, "agent_id")
        self.checked_scope(save_id, memory_scope)

    # -- the query models on the store's engine ---------------------------------------------

    def models_sql(
        self,
        targets: str | tuple[str, ...],
        select: str,
        variables: Mapping[str, Any] | None = None,
        provided: Mapping[str, str] | None = None,
    ) -> str:
        """The query models composed over a batch's bound queries (sql.QUERY_FIELDS), for the
        store's engine: its sources (sql.recall_sources) and dispatch macros. `provided`:
        models the caller computed (e.g. sql.FAST_LEXICAL)."""
        engine = self.context.store.name
        return compose(
            targets,
            {
                "int_memory_queries": query_sql(engine),
                **recall_sources(engine),
                **(provided or {}),
            },
            select,
            variables=variables,
            existing=SETTING_SEEDS,
            engine=engine,
            narrowed=("int_memory_queries",),
        )

    def bound(
        self,
        inputs: Sequence[Mapping[str, Any]],
        extra: Mapping[str, Any] | None = None,
        dense: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A batch's parameters as the store's engine binds them: the query fields as lists;
        on another engine the queried saves and their lineage (the models walk the chains
        there) and the dense candidates as lists (DuckDB reads them as a registered table)."""
        params = {**batched(inputs), **(extra or {})}
        engine = self.context.engine
        if engine is None:
            return params
        save_ids = sorted({values["save_id"] for values in inputs if values["save_id"] is not None})
        lineages = [values["lineage_save_ids"] or [] for values in inputs]
        return {
            **bound_lists(QUERY_FIELDS, params, engine.name),
            **{f"dense_{name}": dense[name].tolist() for name in DENSE_COLUMNS if dense},
            "save_ids": save_ids,
            # the chains walk every query's lineage (each query's own, found with its scope)
            "lineage_ids": sorted(set(save_ids).union(*lineages)),
            # their player, where the batch is one player's (on Citus, the walk's shard)
            history.PLAYER: sole_player(values.get("user_id") for values in inputs),
        }

    def run_models(
        self,
        sql: str,
        inputs: Sequence[Mapping[str, Any]],
        extra: Mapping[str, Any] | None = None,
        dense: Mapping[str, Any] | None = None,
    ) -> list[tuple[Any, ...]]:
        """The composed statement's rows; on another engine its lists of rows come back as
        JSON and are read into DuckDB's shape (responses.from_json)."""
        engine = self.context.engine
        if engine is None:
            cursor = self.context.duckdb.cursor()
            if dense is not None:
                cursor.cursor.register("rolemem_dense_candidates", dense)
            return cursor.run(sql, self.bound(inputs, extra))
        rows = engine.run(sql, self.bound(inputs, extra, dense), planner=_PLANNER)
        return [tuple(from_json(value) for value in row) for row in rows]
