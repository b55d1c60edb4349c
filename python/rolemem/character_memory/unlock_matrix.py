"""What the intimacy and exploration levels unlock of one character's entries: the mart
`character_unlock_matrix` run over the store's config tables (the console's matrix)."""

from __future__ import annotations

from typing import Any

from ..engines import engine_name, reading
from ..sql.project import compose, render_macro
from .config import KINDS, CharacterNotFoundError

_CONFIG_TABLES = tuple(table for table, _group, _kind in KINDS.values())


def unlock_matrix(db: Any, character_id: str) -> list[dict[str, Any]]:
    """One row per (entry, intimacy level, exploration level) of `character_id`: whether the
    entry is unlocked there (`is_unlocked`: a condition on another field fails, as with a
    context lacking it; `is_unlocked_by_levels`: the level conditions alone). A character
    with no config is a ConfigError, as everywhere (every configured entry has its rows).
    `db`: a DuckDB path or connection, or an engine (rolemem.engines)."""
    engine = engine_name(db)
    select = render_macro("read_unlock_matrix")
    sql = compose("character_unlock_matrix", {}, select, existing=_CONFIG_TABLES, engine=engine)
    with reading(db) as cur:
        result = cur.execute(sql, {"character_id": character_id})
        names = [column[0] for column in result.description]
        rows = [dict(zip(names, row, strict=True)) for row in result.fetchall()]
    if not rows:
        raise CharacterNotFoundError(
            f"no config for character {character_id!r}", field="character_id"
        )
    return rows
