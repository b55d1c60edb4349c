"""What recall reads besides the recall itself: a query's association words, the overview
timeline, and the scope of a query (the save's branch made current)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from .._sql_project import compose
from ..history import ensure_fresh
from ..text import tokenize
from .base import _tracked
from .checks import MemoryInputError, _setting, _text
from .official import _Official
from .settings import _SEEDS
from .sql import _QUERY_SQL, _SOURCES, _TIMELINE_SELECT, batched


class _Lookups(_Official):
    """Association words, timeline, scope."""

    def _scope_params(self, save_id: Any, memory_scope: Any) -> dict[str, Any]:
        if save_id is not None and (isinstance(save_id, bool) or not isinstance(save_id, int)):
            raise MemoryInputError(f"save_id must be an integer or None, got {save_id!r}")
        if save_id is not None and not self.read_only and self._engine is None:
            # the branch rule reads the save's chain: make it current (a reader reads it as is)
            ensure_fresh(self._cursor().cursor, [save_id])
        scope = self.settings["memory_scope"] if memory_scope is None else memory_scope
        if scope not in ("player", "save"):
            raise MemoryInputError(f"memory_scope must be 'player' or 'save', got {scope!r}")
        return {**self.settings, "save_id": save_id, "memory_scope": scope}

    @_tracked
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
        _text(sentence, "sentence")
        overrides = {
            "max_expanded_words": count,
            "expand_strategy": strategy,
            "filter_levels": [v for v in filter_levels or [] if v != 0]
            if filter_levels is not None
            else None,
        }
        settings = {
            **self.settings,
            **{k: _setting(k, v) for k, v in overrides.items() if v is not None},
        }
        words = tokenize(sentence)
        params = {
            **settings,
            "save_id": None,
            "agent_id": "",
            "user_id": "",
            "user_name": user_name,
            "agent_name": agent_name,
            "query_text": sentence,
            "tokens": words,
            "query_embedding": None,
            "reference_cosines": None,
            "now": datetime.now(),
            "result_limit": 1,
            "score_threshold": None,
            "roulette_seed": None,
        }
        sql = compose(
            "int_memory_query_words",
            {"int_memory_queries": _QUERY_SQL},
            "select word, word_source, level from int_memory_query_words order by word_order",
            existing=_SEEDS,
        )
        rows = self._cursor().run(sql, batched([params]))
        return {
            "original_keywords": words,
            "input_words": [word for word, source, _ in rows if source == "token"],
            "expanded_words": [
                {word: level} for word, source, level in rows if source == "expanded"
            ],
        }

    @_tracked
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
        _text(user_id, "user_id")
        _text(agent_id, "agent_id")
        params = {
            **self._scope_params(save_id, memory_scope),
            "agent_id": agent_id,
            "user_id": user_id,
            "user_name": None,
            "agent_name": None,
            "query_text": "",
            "tokens": [],
            "query_embedding": None,
            "reference_cosines": None,
            "now": datetime.now(),
            "result_limit": 1,
            "score_threshold": 0.0,
            "roulette_seed": None,
        }
        sql = compose(
            "int_memory_timeline",
            {"int_memory_queries": _QUERY_SQL, **_SOURCES},
            _TIMELINE_SELECT,
            existing=_SEEDS,
        )
        cur = self._cursor()
        rows = cur.run(sql, batched([params]))
        names = [d[0] for d in cur.cursor.description]
        return [dict(zip(names, row, strict=True)) for row in rows]
