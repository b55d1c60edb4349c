"""Writing event memories: checked, their postings and vectors prepared before the
transaction, then inserted (or, mentioned again, strengthened)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..schema.memory import EVENT_ID_SEQUENCE, VECTOR_COLUMNS, memory_table
from ..sql.project import compose, used, write_sql
from ..sql.request_rows import bound_lists
from ..text.postings import postings
from .base import Context
from .checks import MemoryInputError, _scope, checked_text, naive_time
from .contract import EventRecord, checked
from .sql import (
    _CONTEXT_TEXTS,
    _EMBED_BATCH,
    _FIRST_NEW_ID,
    _LINE_FIELDS,
    _SOURCE_FIELDS,
    new_and_stored_events,
)
from .vectors import Vectors

log = logging.getLogger(__name__)

# macro insert_event_postings's lists: each posting's term and counts (text.postings' lists,
# each by its plural there)
_POSTING_LISTS = {
    name: f"{name}s" for name in ("term", "description_count", "keyword_count", "tag_count")
}

# an event's vectors, one per column of memory_event_embedding: its description's, then its
# context texts' (model int_memory_event_context_texts)
EventVectors = tuple[list[float], ...]


class Events:
    """Event memories in."""

    def __init__(self, context: Context, vectors: Vectors) -> None:
        self.context, self.vectors = context, vectors

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

    def add_events(
        self,
        events: Sequence[Mapping[str, Any]],
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[int]:
        """Store many events in one transaction (all or nothing). `progress(done, total)` is
        called as their vectors are computed (the slow part of a bulk load)."""
        self.context.writable()
        rows, vectors = self.prepare_events(events, progress)
        with self.context.store.transaction() as cur:
            return self.write_events(cur, rows, vectors)

    def prepare_events(
        self,
        events: Sequence[Mapping[str, Any]],
        progress: Callable[[int, int], None] | None = None,
    ) -> tuple[list[dict[str, Any]], list[EventVectors | None]]:
        """Checked rows and their vectors (EventVectors): everything slow, before a transaction
        (the memory loop's extraction writes them with its own rows)."""
        rows = [self._event_row(event, index) for index, event in enumerate(events)]
        if self.context.embedder is None or not rows:
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
            embedded += self.vectors.embedded(texts[start : start + _EMBED_BATCH])
            if progress is not None:
                progress(len(embedded), len(texts))
        log.info("embedded %d events (%d texts)", len(rows), len(texts))
        by_text = dict(zip(texts, embedded, strict=True))
        return rows, [
            (by_text[row["description"]], *(by_text[text] for text in row_texts))
            for row, row_texts in zip(rows, contexts, strict=True)
        ]

    def _context_texts(self, rows: list[dict[str, Any]]) -> list[tuple[str, ...]]:
        """The context texts of each new event, by the SQL model over its timelines' stored
        events and the new ones (which follow stored events of the same time, in order)."""
        store = self.context.store
        sql = compose(
            "int_memory_event_context_texts",
            {"int_memory_events_with_official": new_and_stored_events(store.name)},
            f"select {', '.join(_CONTEXT_TEXTS)} from int_memory_event_context_texts "
            "where event_id >= $first_new_id order by event_id",
            engine=store.name,
        )
        columns = {
            name: [row[name] for row in rows]
            for name in ("agent_id", "scope", "user_id", "created_at", "description")
        }
        params = {"first_new_id": _FIRST_NEW_ID, **{f"new_{k}": v for k, v in columns.items()}}
        return [tuple(row) for row in store.run(sql, params)]

    def write_events(
        self,
        cur: Any,
        rows: list[dict[str, Any]],
        vectors: list[EventVectors | None],
        *,
        merge: bool = False,
    ) -> list[int]:
        """Insert events `prepare_events` returned inside the caller's transaction, in a few
        statements however many they are (_insert_events); their ids in their order. With
        `merge`, an event whose description the player's store already holds is mentioned
        again instead: its strength grows by the spacing increment (seed
        memory_strength_increments)."""
        if not merge:
            return self._insert_events(cur, rows, vectors)
        reinforce = write_sql("reinforce_memory_event", engine=self.context.store.name)
        ids = [0] * len(rows)
        waiting: dict[str, int] = {}  # not held yet, index by description: inserted together

        def insert_waiting() -> None:
            indexes = list(waiting.values())
            new_ids = self._insert_events(
                cur, [rows[i] for i in indexes], [vectors[i] for i in indexes]
            )
            for index, new_id in zip(indexes, new_ids, strict=True):
                ids[index] = new_id
            waiting.clear()

        for index, row in enumerate(rows):
            # a repeat of a waiting event's description mentions that event: insert it first
            if row["description"] in waiting:
                insert_waiting()
            existing = cur.execute(reinforce, used(reinforce, row)).fetchone()
            if existing is None:
                waiting[row["description"]] = index
            else:
                ids[index] = int(existing[0])
        insert_waiting()
        return ids

    def _insert_events(
        self, cur: Any, rows: list[dict[str, Any]], vectors: list[EventVectors | None]
    ) -> list[int]:
        """New events with their postings, vectors and source lines: a statement per table
        (each scope's own), every value of it bound as one list per column. Their ids are
        drawn first, ascending, so they follow the input order as one insert each would."""
        if not rows:
            return []
        engine = self.context.store.name
        drawn = cur.execute(
            write_sql("draw_ids", EVENT_ID_SEQUENCE, engine=engine), {"count": len(rows)}
        ).fetchall()
        ids = [int(row[0]) for row in drawn]
        columns = [name for name in rows[0] if name != "terms" and name not in _LINE_FIELDS]
        by_scope: dict[str, list[int]] = {}
        for index, row in enumerate(rows):
            by_scope.setdefault(row["scope"], []).append(index)
        for scope, indexes in by_scope.items():  # an official event goes to the official tables
            events, terms, embeddings = (
                memory_table(name, scope)
                for name in ("memory_event", "memory_event_term", "memory_event_embedding")
            )
            cur.execute(
                write_sql("insert_memory_events", events, engine=engine),
                {"id": [ids[i] for i in indexes]}
                | {name: [rows[i][name] for i in indexes] for name in columns},
            )
            postings = _per_item(
                (
                    {
                        "event_id": ids[i],
                        **{n: rows[i][n] for n in ("agent_id", "scope", "user_id")},
                    },
                    {name: rows[i]["terms"][listed] for name, listed in _POSTING_LISTS.items()},
                )
                for i in indexes
            )
            if postings:
                cur.execute(write_sql("insert_event_postings", terms, engine=engine), postings)
            embedded = [i for i in indexes if vectors[i] is not None]
            if embedded:
                by_column = zip(*(vectors[i] or () for i in embedded), strict=True)
                cur.execute(
                    write_sql("insert_event_vectors", VECTOR_COLUMNS, embeddings, engine=engine),
                    {
                        "event_id": [ids[i] for i in embedded],
                        "user_id": [rows[i]["user_id"] for i in embedded],
                    }
                    | bound_lists(
                        dict.fromkeys(VECTOR_COLUMNS, "double[]"),
                        dict(zip(VECTOR_COLUMNS, map(list, by_column), strict=True)),
                        engine,
                    ),
                )
        lines = _per_item(
            (
                {
                    "event_id": event_id,
                    **{n: row[n] for n in ("user_id", "target_key", "batch_key", "last_line_id")},
                },
                # each line once (the table's key), in order: a plain insert, no conflict check
                {"line_id": list(dict.fromkeys(row.get("line_ids") or ()))},
            )
            for event_id, row in zip(ids, rows, strict=True)
        )
        if lines:
            cur.execute(write_sql("insert_event_lines", engine=engine), lines)
        return ids

    def _event_row(self, event: Mapping[str, Any], index: int) -> dict[str, Any]:
        """An event's row: whose it is, then its own fields by the memory's contract
        (EventRecord: the service's too; a field given as None is not given)."""
        where = f"event {index}" if index else "event"
        try:
            user_id = _scope(event.get("scope", "user"), event.get("user_id"))
            agent_id = checked_text(event.get("agent_id"), "agent_id")
            created_at = naive_time(event.get("created_at"), "created_at")
        except MemoryInputError as exc:
            raise MemoryInputError(f"{where}: {exc}") from None
        given = {k: event[k] for k in EventRecord.model_fields if event.get(k) is not None}
        record = checked(EventRecord, {**given, "created_at": created_at}, f"{where}: ")
        terms = postings(record.description, record.keywords)
        return {
            **record.model_dump(),
            "scope": event.get("scope", "user"),
            "agent_id": agent_id,
            "user_id": user_id,
            "keywords": json.dumps(record.keywords, ensure_ascii=False),
            # a share not given: 0.5, as ever
            "importance": 0.5 if record.importance is None else record.importance,
            "feedback": 0.5 if record.feedback is None else record.feedback,
            "token_count": sum(terms["description_counts"]) + sum(terms["keyword_counts"]),
            **{name: event.get(name) for name in (*_SOURCE_FIELDS, *_LINE_FIELDS)},
            "terms": terms,
        }


def _per_item(
    events: Iterable[tuple[Mapping[str, Any], Mapping[str, list[Any]]]],
) -> dict[str, list[Any]]:
    """A statement's bound lists, one position per item of the events' lists (an event's
    postings, its source lines); empty when no event has an item."""
    columns: dict[str, list[Any]] = {}
    for values, lists in events:
        count = len(next(iter(lists.values())))
        if not count:
            continue
        for name, value in values.items():
            columns.setdefault(name, []).extend([value] * count)
        for name, items in lists.items():
            columns.setdefault(name, []).extend(items)
    return columns
