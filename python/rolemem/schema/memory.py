"""Per-player memory stores (SQLModel): entity memories, event memories, and what recall reads.

Two scopes, two sets of tables: `user` rows, written by extraction per user x agent, in the
player tables (`memory_event`, ...); `official` rows, written by designers per agent, in tables
of their own (`official_event`, ...: OFFICIAL_TABLES) with the same columns (scope `official`,
user_id null), read by every player's recall (on Citus reference tables, the player tables
being sharded by player). The vectors' tables are made by DDL with the embedder's dimension
(DuckDB's arrays are fixed-size), not by SQLModel.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from .game import _key_column, _table, drop_tables

# memory_event_embedding's vectors of an event: its description's, then its context texts'
# (model int_memory_event_context_texts)
VECTOR_COLUMNS = ("embedding", "context_embedding", "long_context_embedding")
# the keys of memory_event and of its official twin (one sequence: an id names one event)
EVENT_ID_SEQUENCE = "memory_event_id_seq"

# naive timestamps: the game's local clock ("same calendar day" is the player's day)
_TS = sa.TIMESTAMP(timezone=False)
# single precision on every engine (DuckDB's FLOAT is 4 bytes, PostgreSQL's 8): a value written
# on either reads back the same, and so scores the same
_REAL: sa.REAL[float] = sa.REAL()

ENTITY_TYPES = ("主体", "客体", "具体实体", "泛化实体")
ENTITY_KINDS = ("用户属性", "与主体和客体的关系", "特殊实体属性", "与其它实体的关系", "记忆画面")
SCOPES = ("official", "user")


class MemoryEntity(SQLModel, table=True):
    """An attribute or relation of an entity, as the agent remembers it."""

    __tablename__ = "memory_entity"

    id: int | None = _key_column("memory_entity_id_seq")
    scope: str = Field(index=True)
    agent_id: str = Field(index=True)
    user_id: str | None = Field(default=None, index=True)
    user_name: str | None = None
    entity_name: str
    entity_type: str
    kind: str
    keyword: str
    description: str
    strength: int = 1
    recall_count: int = 0
    # pinned memories are never archived by cleanup (designers or the game pin them)
    is_pinned: bool = Field(default=False, sa_column_kwargs={"server_default": sa.false()})
    # how many descriptions were merged into this one since the last LLM consolidation
    merge_count: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    created_at: datetime = Field(sa_type=_TS)
    updated_at: datetime = Field(sa_type=_TS)
    last_recalled_at: datetime | None = Field(default=None, sa_type=_TS)


class MemoryEvent(SQLModel, table=True):
    """Something that happened in a conversation (or, official, in the character's story)."""

    __tablename__ = "memory_event"

    id: int | None = _key_column(EVENT_ID_SEQUENCE)
    scope: str = Field(index=True)
    agent_id: str = Field(index=True)
    user_id: str | None = Field(default=None, index=True)
    scene: str | None = None
    place: str | None = None
    description: str
    deepinsight: str | None = None
    keywords: list[str] = Field(default_factory=list, sa_type=sa.JSON)
    importance: float = Field(default=0.5, sa_type=_REAL)
    feedback: float = Field(default=0.5, sa_type=_REAL)
    strength: int = 1
    recall_count: int = 0
    token_count: int = 0
    is_pinned: bool = Field(default=False, sa_column_kwargs={"server_default": sa.false()})
    # where an extracted event came from: a slice of one save's chain (null when added by hand)
    save_id: int | None = Field(default=None, sa_type=sa.BigInteger, index=True)
    # its source lines' (memory_event_line) shallowest and deepest on the chain they were
    # extracted on: every source line is the deepest one's ancestor, so the event's lines are
    # all on a chain exactly when its last line is (macro is_event_in_scope)
    first_line_id: int | None = Field(default=None, sa_type=sa.BigInteger)
    last_line_id: int | None = Field(default=None, sa_type=sa.BigInteger)
    # the first line of that chain: it names the dialogue tree (a save and its forks share it)
    root_line_id: int | None = Field(default=None, sa_type=sa.BigInteger)
    batch_key: str | None = None
    created_at: datetime = Field(sa_type=_TS)
    updated_at: datetime | None = Field(default=None, sa_type=_TS)
    last_recalled_at: datetime | None = Field(default=None, sa_type=_TS)
    # bumped by every change in place of a field a recall shows (macro update_memory_fields,
    # rolemem's one such write; a game changing events itself bumps it too): the embedded
    # recall holds the fields it shows in memory and checks them against it
    revision: int = Field(default=0, sa_column_kwargs={"server_default": sa.text("0")})


class MemoryFact(SQLModel, table=True):
    """A fact about someone as a character heard it stated: a slot (subject, attribute) and
    its value, stated at one line of a save. Never updated: which value is current is resolved
    per save chain at query time (model int_memory_facts_resolved), so a reload, a fork or a
    return to the tip needs no write. Ids come from the entity sequence, so an id recall
    returns names one memory of either (a recalled fact's strength update matches no entity)."""

    __tablename__ = "memory_fact"

    id: int | None = _key_column("memory_entity_id_seq")
    agent_id: str = Field(index=True)
    user_id: str = Field(index=True)
    subject: str
    attribute: str  # as stated; the seed memory_fact_attribute_aliases maps it to its slot
    value: str
    # the values of this slot a later `many` fact ends (JSON list of text)
    supersedes: list[str] = Field(default_factory=list, sa_type=sa.JSON)
    save_id: int | None = Field(default=None, sa_type=sa.BigInteger, index=True)
    # the line stating it (the last line of its message): its chain position orders a slot
    line_id: int | None = Field(default=None, sa_type=sa.BigInteger)
    # every line of the message it came from (JSON list of ids)
    line_ids: list[int] = Field(default_factory=list, sa_type=sa.JSON)
    batch_key: str | None = None
    created_at: datetime = Field(sa_type=_TS)


class MemoryEventLine(SQLModel, table=True):
    """A line an extracted event came from: the lines of the transcript message the
    extraction reply names, else every line of its batch; written with the event, deleted
    with it."""

    __tablename__ = "memory_event_line"

    event_id: int = Field(primary_key=True, sa_type=sa.BigInteger)
    line_id: int = Field(primary_key=True, sa_type=sa.BigInteger)
    user_id: str = Field(index=True)
    target_key: str  # the character whose extraction wrote it (memory_extraction_batch)
    # the event's batch and last line, copied in: an observation reads what cites a chain
    # line from this table alone (the event's row is deleted with these)
    batch_key: str | None = None
    last_line_id: int | None = Field(default=None, sa_type=sa.BigInteger)


class MemoryEntityMention(SQLModel, table=True):
    """One description fragment of a player's entity and the lines it came from: entities
    merge across saves into one row, their mentions keep their lines, so an entity shows on a
    chain with the fragments whose lines are on it (model int_memory_entity_mentions_visible,
    macro is_event_in_scope: the events' rule). Written with the entity insert or merge; a
    mention without a save (added by hand, edited, or written before mentions) shows
    everywhere its entity does."""

    __tablename__ = "memory_entity_mention"

    id: int | None = _key_column("memory_entity_mention_id_seq")
    entity_id: int = Field(sa_type=sa.BigInteger, index=True)
    user_id: str = Field(index=True)
    agent_id: str
    description: str
    save_id: int | None = Field(default=None, sa_type=sa.BigInteger)
    # as an event's: every line is the last one's ancestor, the tree is the chain's first line
    first_line_id: int | None = Field(default=None, sa_type=sa.BigInteger)
    last_line_id: int | None = Field(default=None, sa_type=sa.BigInteger)
    root_line_id: int | None = Field(default=None, sa_type=sa.BigInteger)
    # every line of the message it came from, else of its batch (JSON list of ids)
    line_ids: list[int] = Field(default_factory=list, sa_type=sa.JSON)
    target_key: str | None = None  # the character whose extraction wrote it
    batch_key: str | None = None
    created_at: datetime = Field(sa_type=_TS)


class MemoryEventTerm(SQLModel, table=True):
    """How often a token occurs in an event's description and keywords: the BM25 postings,
    (keyword_count) which tokens come from its tags, and (tag_count) how many of its tags the
    token is whole, case-folded (recall's exact-tag tier, decided once at write time). The
    event's owner (agent, scope, player) is copied in, so a turn reads its player's postings
    only (on PostgreSQL by index ix_memory_event_term_owner_word), never every player's."""

    __tablename__ = "memory_event_term"

    event_id: int = Field(primary_key=True, sa_type=sa.BigInteger)
    term: str = Field(primary_key=True)
    description_count: int
    keyword_count: int
    tag_count: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    agent_id: str | None = None
    scope: str | None = None
    user_id: str | None = None


class MemoryRecallLog(SQLModel, table=True):
    """One row per scored candidate of a logged query, with every score component."""

    __tablename__ = "memory_recall_log"

    id: int | None = _key_column("memory_recall_log_id_seq")
    query_id: str = Field(index=True)
    queried_at: datetime = Field(sa_type=_TS)
    agent_id: str
    user_id: str
    item_type: str  # event / entity
    item_id: int = Field(sa_type=sa.BigInteger)
    scope: str
    bm25_score: float | None = Field(default=None, sa_type=_REAL)
    keyword_score: float | None = Field(default=None, sa_type=_REAL)
    dense_score: float | None = Field(default=None, sa_type=_REAL)
    recency_score: float | None = Field(default=None, sa_type=_REAL)
    profile_score: float | None = Field(default=None, sa_type=_REAL)
    score: float = Field(sa_type=_REAL)
    is_selected: bool


class MemoryExtractionBatch(SQLModel, table=True):
    """One extraction: a run of turns of one save x character sent to the LLM. Written in the
    same transaction as the memories it produced, so it is also the extraction watermark."""

    __tablename__ = "memory_extraction_batch"

    # save:target_key:first_line_id:last_line_id — the same batch is never extracted twice
    batch_key: str = Field(primary_key=True)
    save_id: int = Field(sa_type=sa.BigInteger, index=True)
    target_key: str
    user_id: str
    agent_id: str
    first_line_id: int = Field(sa_type=sa.BigInteger)
    last_line_id: int = Field(sa_type=sa.BigInteger)
    turn_count: int
    reason: str  # window_full / scene_change
    scene: str | None = None
    event_count: int
    entity_count: int
    llm_model: str | None = None
    extracted_at: datetime = Field(sa_type=_TS)
    # a replacement batch: the batches whose memories it stands in for where they are cut
    # away (memory_batch_line holds its lines); null for a first extraction
    replaced_batch_keys: list[str] | None = Field(default=None, sa_type=sa.JSON)


class MemoryExtractedLine(SQLModel, table=True):
    """A line an extraction sent to the LLM for one character: lines are shared by the saves
    forked from them (and by branches a reload returns to), so a line is extracted at most once
    per character, whichever save was played; written with its batch."""

    __tablename__ = "memory_extracted_line"

    line_id: int = Field(primary_key=True, sa_type=sa.BigInteger)
    target_key: str = Field(primary_key=True)  # the character: role_id=N / script_role_id=X
    user_id: str = Field(index=True)  # the player whose save the line is on
    batch_key: str  # the batch that sent it (memory_extraction_batch)
    # that batch's last line, copied in: a chain holding this line but not that one may have
    # had a memory cut off it (model int_loop_line_coverage)
    batch_last_line_id: int | None = Field(default=None, sa_type=sa.BigInteger)


class MemoryBatchLine(SQLModel, table=True):
    """A replacement batch's lines (models int_loop_line_coverage, is_event_in_scope):
    `sent`, a line it sent again; `replaces`, the last line of a memory it stands in for (its
    memories are hidden wherever that line is on the chain, where the original shows)."""

    __tablename__ = "memory_batch_line"

    batch_key: str = Field(primary_key=True)
    line_id: int = Field(primary_key=True, sa_type=sa.BigInteger)
    relation: str = Field(primary_key=True)  # sent / replaces
    user_id: str = Field(index=True)
    target_key: str
    # the batch's last line (its own memory rows' shown where it is on the chain)
    last_line_id: int | None = Field(default=None, sa_type=sa.BigInteger)


class MemoryLoopState(SQLModel, table=True):
    """What the loop last saw of one save x character: the scene (a change flushes the
    context) and when the player was last active."""

    __tablename__ = "memory_loop_state"

    save_id: int = Field(primary_key=True, sa_type=sa.BigInteger)
    target_key: str = Field(primary_key=True)
    user_id: str = Field(index=True)
    agent_id: str
    last_scene: str | None = None
    last_observed_at: datetime = Field(sa_type=_TS)
    # the character observed (target_key spelled out), so a status can be asked by agent
    role_id: int | None = Field(default=None, sa_type=sa.BigInteger)
    script_role_id: str | None = None
    # the last failed extraction and how many attempts failed since the last success
    last_error: str | None = None
    last_error_at: datetime | None = Field(default=None, sa_type=_TS)
    failed_attempts: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    # no extraction of the save x character before this (a failure's back-off), whatever the
    # appends; null: none waiting. In the store, so every process and a restart honour it
    next_attempt_at: datetime | None = Field(default=None, sa_type=_TS)


class CharacterRecallQueue(SQLModel, table=True):
    """The sticky recall queue of one save x character: its recall turns so far and the
    designer entries recalled in earlier turns that still stay (停留轮数). In the store, so
    every service process and a restart continue the same countdown."""

    __tablename__ = "character_recall_queue"

    save_id: int = Field(primary_key=True, sa_type=sa.BigInteger)
    character_id: str = Field(primary_key=True)
    user_id: str = Field(index=True)  # the save's player (a purge deletes the row)
    turn_number: int
    # JSON: [{entry_key, recalled_turn, match_quality}] (int_recall_queue_updated's rows)
    queue: str
    updated_at: datetime = Field(sa_type=_TS)


class MemoryArchive(SQLModel, table=True):
    """Memories moved out of the live store (cleanup, consolidation): never silently deleted."""

    __tablename__ = "memory_archive"

    id: int | None = _key_column("memory_archive_id_seq")
    memory_type: str  # event / entity
    memory_id: int = Field(sa_type=sa.BigInteger, index=True)
    agent_id: str
    user_id: str | None = Field(default=None, index=True)
    reason: str  # a reason of seed memory_archive_reasons
    strength: int
    # the whole row as it was (JSON), so an archived memory can be inspected or restored
    memory: str
    archived_at: datetime = Field(sa_type=_TS)


class MemoryMaintenanceRun(SQLModel, table=True):
    """One cleanup pass over one user x agent (cleanup runs at most every N days)."""

    __tablename__ = "memory_maintenance_run"

    id: int | None = _key_column("memory_maintenance_run_id_seq")
    agent_id: str
    user_id: str = Field(index=True)
    rule: str
    memory_count: int
    archived_count: int
    ran_at: datetime = Field(sa_type=_TS)


class IdempotentRequest(SQLModel, table=True):
    """A write made under an `Idempotency-Key`: the same key and body again get this answer
    (nothing is written twice); the same key with another body is refused."""

    __tablename__ = "rolemem_idempotency"

    # the caller's key within its player's scope (service.core.idempotency.once)
    key: str = Field(primary_key=True)
    user_id: str | None = None  # the player whose request it was (None: no player's)
    request_hash: str  # sha256 of the route and the request body
    response: str  # the first answer, JSON
    created_at: datetime = Field(sa_type=_TS, index=True)


class WebhookDelivery(SQLModel, table=True):
    """A webhook delivery that failed every retry, kept until it is replayed and delivered
    (service.core.webhooks): the event as it was sent, and why it failed last."""

    __tablename__ = "rolemem_webhook_delivery"

    event_id: str = Field(primary_key=True)  # the event's id (evt_…)
    url: str = Field(primary_key=True)  # the receiver it did not reach
    event_type: str  # extraction.succeeded, extraction.failed, …
    body: str  # the event, JSON, as signed and sent
    attempts: int  # deliveries tried so far
    last_error: str
    failed_at: datetime = Field(sa_type=_TS, index=True)


# the designers' memories: the player tables' columns (so one union, the models
# int_memory_*_with_official, reads both), and their id sequences, so an id names one memory
# of either (the API addresses memories by id); memory_event_embedding's is made by DDL
OFFICIAL_TABLES = {
    "memory_event": "official_event",
    "memory_entity": "official_entity",
    "memory_event_term": "official_event_term",
    "memory_event_embedding": "official_event_embedding",
    "memory_archive": "official_archive",
}


# the vectors' tables, made by DDL (create_vector_tables), not by SQLModel
VECTOR_TABLES = ("memory_event_embedding", OFFICIAL_TABLES["memory_event_embedding"])


def memory_table(table: str, scope: str | None) -> str:
    """The table holding `table`'s rows of `scope`: its official twin for `official`."""
    return OFFICIAL_TABLES[table] if scope == "official" else table


# the official twins: copies of their player tables in the same metadata
_TWINS = [
    _table(model).to_metadata(SQLModel.metadata, name=OFFICIAL_TABLES[_table(model).name])
    for model in (MemoryEntity, MemoryEvent, MemoryEventTerm, MemoryArchive)
]
# every table of this module, official twins last: not every table of the metadata, which a
# game's own SQLModel tables may share
MEMORY_TABLES: list[Any] = [
    *(
        _table(model)
        for model in list(globals().values())
        if isinstance(model, type)
        and issubclass(model, SQLModel)
        and model.__module__ == __name__
        and hasattr(model, "__table__")
    ),
    *_TWINS,
]


def stored_vector_types(connection: Any) -> dict[str, str]:
    """The column types of the store's memory_event_embedding on DuckDB, whose arrays are
    fixed-size (an older store's may be another embedder's); none on PostgreSQL."""
    if connection.dialect.name != "duckdb":
        return {}
    found = connection.exec_driver_sql(
        "select column_name, data_type from duckdb_columns() "
        "where table_name = 'memory_event_embedding'"
    )
    return dict(found.fetchall())


def create_vector_tables(connection: Any, embedding_dim: int) -> None:
    """memory_event_embedding with vectors of `embedding_dim` (a SQLAlchemy connection), and
    its official twin with the store's widths: made by DDL, not SQLModel (DuckDB's arrays are
    fixed-size)."""
    # single precision, as the embedders give them (PostgreSQL's float is 8 bytes); a store's
    # own widths where it has the table: its official twin is made with them
    widths = dict.fromkeys(VECTOR_COLUMNS, f"real[{int(embedding_dim)}]")
    widths |= stored_vector_types(connection)
    for table in VECTOR_TABLES:
        # user_id: the event's player (null: an official event), the shard key on Citus
        columns = ["event_id bigint primary key", "user_id varchar"]
        columns += [f"{name} {widths[name]}" for name in VECTOR_COLUMNS]
        connection.exec_driver_sql(f"create table if not exists {table} ({', '.join(columns)})")


def drop_memory_tables(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        for table in (*VECTOR_TABLES, "rolemem_migration"):
            connection.exec_driver_sql(f"drop table if exists {table}")
    drop_tables(engine, MEMORY_TABLES)
