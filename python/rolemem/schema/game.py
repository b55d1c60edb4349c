"""Application tables (SQLModel): the game's roles, saves and dialogue lines, and the
deployment's character config.

These are the dbt sources `app.role`, `app.save`, `app.line` and `config.character_*`.
Integer keys get an explicit sequence: DuckDB has no SERIAL, and a sequence is plain
SQLAlchemy that PostgreSQL understands too.

The character config tables are the deployment's own data (written by `rolemem config import`
or `POST /config/import`), not dbt seeds: `dbt build` reads them and never replaces them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from ..sql.project import render_macro


def _key_column(sequence_name: str) -> Any:
    sequence = sa.Sequence(sequence_name)
    return Field(
        default=None,
        sa_column=sa.Column(
            sa.BigInteger, sequence, primary_key=True, server_default=sequence.next_value()
        ),
    )


class Role(SQLModel, table=True):
    """A game character that the AI plays. `character_id`: its designer config (null: the
    caller names the config per request); `agent_id`: the owner of its dynamic memories (null:
    its `character_id`, the rule in `stg_app__roles`). A request naming the role needs
    neither."""

    __tablename__ = "role"

    id: int | None = _key_column("role_id_seq")
    name: str
    character_id: str | None = None
    agent_id: str | None = None
    # a narrator: it witnessed every line, whoever was present (model int_memory_targets)
    omniscient: bool = Field(default=False, sa_column_kwargs={"server_default": sa.false()})


class Save(SQLModel, table=True):
    """A save slot; `last_message_id` is the tip of the branch being played.

    No foreign key on `last_message_id`: it would make `save` and `line` reference each other,
    which DuckDB cannot create; the memory builder checks the chain instead. `user_id`: the
    player it belongs to (null for a save the game wrote without one: refused to players
    unless the service opens such saves); `user_name`: the player's name as prompts say it
    (set once, when the save is made).
    `forked_from_line_id`: a fork starts at that line of another save and shares the lines
    up to it (its chain may pass into that save there, and only there).
    `erasing`: set by the first step of erasing the save; it reads as gone from then on, while
    the erasure's later steps (DuckDB deletes its lines over several transactions) finish.
    """

    __tablename__ = "save"

    id: int | None = _key_column("save_id_seq")
    name: str | None = None
    last_message_id: int | None = Field(default=None, sa_type=sa.BigInteger)
    user_id: str | None = Field(default=None, index=True)
    forked_from_line_id: int | None = Field(default=None, sa_type=sa.BigInteger)
    user_name: str | None = None
    erasing: bool | None = None


class Line(SQLModel, table=True):
    """One line of dialogue: a node of the conversation tree."""

    __tablename__ = "line"

    id: int | None = _key_column("line_id_seq")

    original_emotion: str | None = None
    predicted_emotion: str | None = None
    content: str
    tts_content: str | None = None
    action_content: str | None = None
    audio_file: str | None = None

    attribute: str  # assistant, user, system

    role_id: int | None = Field(
        default=None, foreign_key="role.id", nullable=True, sa_type=sa.BigInteger
    )
    script_role_id: str | None = None
    display_name: str | None = None

    save_id: int = Field(foreign_key="save.id", sa_type=sa.BigInteger)
    # the save's player, the shard key on Citus: rolemem's appends write it; a game writing
    # its own lines may leave it null (on DuckDB and PostgreSQL), filled from the save when
    # rolemem refreshes the save's history or upgrades the store
    user_id: str | None = None
    parent_line_id: int | None = Field(
        default=None, foreign_key="line.id", nullable=True, sa_type=sa.BigInteger
    )
    # when the line was said, in the game's clock (optional): extracted events take it
    created_at: datetime | None = Field(default=None, sa_type=sa.TIMESTAMP(timezone=False))
    # the scene it was played in (the append's observe.scene; null: as the line before it):
    # a batch of turns is the scene its lines were played in, and a scene change cuts there
    scene: str | None = None
    # who was present (a JSON list of role ids, of script role ids); both null: as the line
    # before it on the chain (no line says: everyone); the speaker is always present
    # (macros inherited_presence, is_witnessed)
    present_role_ids: list[int] | None = Field(default=None, sa_type=sa.JSON(none_as_null=True))
    present_script_role_ids: list[str] | None = Field(
        default=None, sa_type=sa.JSON(none_as_null=True)
    )


class _ConfigEntry(SQLModel):
    """What every designer config entry has: one row per entry, in designer order."""

    # designer order across the table (a character's rows keep the order of its file)
    ordinal: int = Field(primary_key=True, sa_type=sa.BigInteger)
    character_id: str = Field(primary_key=True)
    keywords: list[str] = Field(default_factory=list, sa_type=sa.JSON)
    content: str
    strength: int | None = None  # 1-5 (optional for dialogue styles)
    # unlock conditions: [{field, value, operator}], all must hold
    query_params: list[dict[str, Any]] = Field(default_factory=list, sa_type=sa.JSON)
    # recall rules (SillyTavern's selective logic, constant and sticky entries, for any
    # config): relevant only when the secondary keywords pass the logic over the player's
    # text; recalled whenever unlocked; queued this many turns (null: the recall limits')
    secondary_keywords: list[str] = Field(
        default_factory=list, sa_type=sa.JSON, sa_column_kwargs={"server_default": "[]"}
    )
    secondary_logic: str | None = None  # AND_ANY, NOT_ALL, NOT_ANY, AND_ALL
    is_constant: bool = Field(default=False, sa_column_kwargs={"server_default": sa.false()})
    sticky_turns: int | None = None


class CharacterAttributes(_ConfigEntry, table=True):
    """Designer attributes ({{character_memory_attributes}})."""

    __tablename__ = "character_attributes"

    category: str


class CharacterEvents(_ConfigEntry, table=True):
    """Designer events ({{character_memory_event}})."""

    __tablename__ = "character_events"

    event_type: str
    event_date: str | None = ""  # kept as written: "很久以前", "2024-01-20"


class CharacterDialogueStyles(_ConfigEntry, table=True):
    """Designer dialogue examples ({{character_dialogue_style}})."""

    __tablename__ = "character_dialogue_styles"

    style_type: str


class ConfigVersion(SQLModel, table=True):
    """A counter bumped by every config import: a service process whose character config is
    older than it loads the config again (several processes share a PostgreSQL database)."""

    __tablename__ = "rolemem_config_version"

    id: int = Field(default=1, primary_key=True)
    version: int = 0


def _table(model: type[SQLModel]) -> Any:
    """The SQLAlchemy table of a SQLModel class (typed access to `__table__`)."""
    return model.__table__  # type: ignore[attr-defined]


APP_TABLES = [_table(Role), _table(Save), _table(Line)]
CONFIG_TABLES = [
    _table(model)
    for model in (CharacterAttributes, CharacterEvents, CharacterDialogueStyles, ConfigVersion)
]


def has_citus(connection: Any) -> bool:
    """Whether the database (a SQLAlchemy connection) has the citus extension: rolemem's
    tables then take the shape of schema.citus."""
    if connection.dialect.name != "postgresql":
        return False
    found = connection.exec_driver_sql("select 1 from pg_extension where extname = 'citus'")
    return found.first() is not None


def is_distributed(connection: Any, table: str) -> bool:
    """Whether `table` is sharded or copied by Citus (a SQLAlchemy connection): never on one
    PostgreSQL, nor on a Citus database before `init-db` distributed the store made there."""
    if not has_citus(connection):
        return False
    found = connection.exec_driver_sql(
        "select 1 from pg_dist_partition where logicalrelid = to_regclass(%(table)s)",
        {"table": table},
    )
    return found.first() is not None


def create_postgres_indexes(engine: sa.Engine, tables: str) -> None:
    """The indexes a turn's reads of `tables` (app, memory) need on PostgreSQL (macro
    postgres_indexes), made there only."""
    if engine.dialect.name != "postgresql":
        return
    with engine.begin() as connection:
        for statement in render_macro("postgres_indexes", tables, engine="postgres").split(";"):
            connection.exec_driver_sql(statement)


def drop_all(engine: sa.Engine) -> None:
    drop_tables(engine, APP_TABLES + CONFIG_TABLES)


def drop_tables(engine: sa.Engine, tables: list[Any]) -> None:
    """Drop `tables` and then only their own key sequences (SQLAlchemy's drop_all drops every
    sequence of the metadata, which fails while another table set still uses its own)."""
    # DropTable, not table.drop: that drops the table's key sequence with it, which a player
    # table still uses after its official twin is dropped (schema.memory.OFFICIAL_TABLES)
    with engine.begin() as connection:
        for table in reversed(tables):
            connection.execute(sa.schema.DropTable(table, if_exists=True))
    for table in tables:
        for column in table.columns:
            if isinstance(column.default, sa.Sequence):
                column.default.drop(engine, checkfirst=True)
