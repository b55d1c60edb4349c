"""Application tables (SQLModel): the game's roles, saves and dialogue lines.

These are the dbt sources `app.role`, `app.save` and `app.line`. `Line` has exactly the fields of
the customer's spec. Integer keys get an explicit sequence: DuckDB has no SERIAL, and a sequence
is plain SQLAlchemy that PostgreSQL understands too (SQLite ignores it).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlmodel import Field, SQLModel


def _key_column(sequence_name: str) -> Any:
    sequence = sa.Sequence(sequence_name)
    return Field(
        default=None,
        sa_column=sa.Column(
            sa.BigInteger, sequence, primary_key=True, server_default=sequence.next_value()
        ),
    )


class Role(SQLModel, table=True):
    """A game character that the AI plays."""

    __tablename__ = "role"

    id: int | None = _key_column("role_id_seq")
    name: str


class Save(SQLModel, table=True):
    """A save slot; `last_message_id` is the tip of the branch being played.

    No foreign key on `last_message_id`: it would make `save` and `line` reference each other,
    which DuckDB cannot create; the memory builder checks the chain instead.
    """

    __tablename__ = "save"

    id: int | None = _key_column("save_id_seq")
    name: str | None = None
    last_message_id: int | None = Field(default=None, sa_type=sa.BigInteger)


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
    parent_line_id: int | None = Field(
        default=None, foreign_key="line.id", nullable=True, sa_type=sa.BigInteger
    )


def _table(model: type[SQLModel]) -> Any:
    """The SQLAlchemy table of a SQLModel class (typed access to `__table__`)."""
    return model.__table__  # type: ignore[attr-defined]


APP_TABLES = [_table(Role), _table(Save), _table(Line)]


def create_all(engine: sa.Engine) -> None:
    """Create the application tables (and their sequences) if they do not exist."""
    SQLModel.metadata.create_all(engine, tables=APP_TABLES)  # type: ignore[arg-type]


def drop_all(engine: sa.Engine) -> None:
    drop_tables(engine, APP_TABLES)


def drop_tables(engine: sa.Engine, tables: list[Any]) -> None:
    """Drop `tables` and then only their own key sequences (SQLAlchemy's drop_all drops every
    sequence of the metadata, which fails while another table set still uses its own)."""
    for table in reversed(tables):
        table.drop(engine, checkfirst=True)
    for table in tables:
        for column in table.columns:
            if isinstance(column.default, sa.Sequence):
                column.default.drop(engine, checkfirst=True)


def engine_for(path: str) -> sa.Engine:
    """A SQLAlchemy engine on an embedded DuckDB file."""
    return sa.create_engine(f"duckdb:///{path}")
