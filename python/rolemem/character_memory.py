"""Character (solidified) memory: designer entries unlocked by game state, recalled by words.

All rules are the dbt models under models/intermediate/character_memory and
models/marts/character_memory. A `CharacterMemory` loads one character's config into a private
in-memory DuckDB once (the static models become tables); each `session.recall()` is one query
whose inputs (tokens, context, queue, limits) are bound parameters.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from . import _duck
from ._seeds import load_seed, read_settings, seed_specs
from ._sql_project import compose
from .character_config import (
    SEED_COLUMNS,
    CharacterConfig,
    ConfigError,
    demo_config,
    parse_designer_json,
    report_problems,
)
from .schema import create_config_tables
from .text import tokenize

_CONFIG_SEEDS = tuple(SEED_COLUMNS)
_RECALL_SEEDS = (
    "association_words",
    "recall_stopwords",
    "recall_context_defaults",
    "recall_limits",
)
# Models that depend on config only: built once per CharacterMemory, then read as tables.
_STATIC_MODELS = (
    "stg_config__character_attributes",
    "stg_config__character_events",
    "stg_config__character_dialogue_styles",
    "int_character_entries_unioned",
    "int_character_entry_keywords",
    "int_character_conditions_parsed",
    "int_character_condition_values",
)
LIMIT_NAMES = (
    "attributes_per_category",
    "attributes_total",
    "events_total",
    "dialogue_styles_total",
    "queue_turns",
    "queue_attribute_categories",
    "queue_items_per_category",
    "queue_events",
    "queue_dialogue_styles",
    "expand_strategy",
    "max_expanded_words",
)

_REQUEST_SQL = (
    """
    select
        1 as request_id,
        cast($character_id as varchar) as character_id,
        cast($query_text as varchar) as query_text,
        cast($tokens as varchar[]) as tokens,
        cast($context as json) as context,
        cast($require_match as boolean) as require_match,
        cast($user_name as varchar) as user_name,
        cast($char_name as varchar) as char_name,
        cast($turn_number as integer) as turn_number,
"""
    + ",\n".join(f"        cast(${name} as integer) as {name}" for name in LIMIT_NAMES)
    + """,
        cast($filter_levels as integer[]) as filter_levels
"""
)
_QUEUE_SQL = """
    select
        1 as request_id,
        unnest(cast($queued_keys as varchar[])) as entry_key,
        unnest(cast($queued_turns as integer[])) as recalled_turn,
        unnest(cast($queued_qualities as integer[])) as match_quality
"""
# every entry's explain row: only when asked (a row per entry of the character)
_EXPLAIN = """(
        select list(explained order by explained.entry_key)
        from character_memory_recall as explained
    )"""
_RECALL_SELECT = """
select
    blocks.attributes_text,
    blocks.events_text,
    blocks.dialogue_style_text,
    {explain} as explain,
    (
        select list(struct_pack(entry_key, recalled_turn, match_quality) order by entry_key)
        from int_recall_queue_updated
    ) as queue,
    (
        select list(struct_pack(word, word_source, level) order by word_order)
        from int_recall_words_expanded
    ) as words
from character_memory_blocks as blocks
"""


@dataclass(frozen=True)
class RecallResult:
    """The three prompt blocks ("" when empty); per entry, why it is or is not shown
    (`explain`); and the words recall used (`words`: tokens, then association words)."""

    attributes: str
    events: str
    dialogue_style: str
    explain: list[dict[str, Any]] = field(repr=False)
    words: list[dict[str, Any]] = field(repr=False)
    turn: int = 0

    PLACEHOLDERS = (
        "{{character_memory_attributes}}",
        "{{character_memory_event}}",
        "{{character_dialogue_style}}",
    )
    user_name: str | None = None
    char_name: str | None = None

    def fill(self, template: str, extra: Mapping[str, str] | None = None) -> str:
        """A character prompt template with its placeholders filled in one pass over the
        template: the three memory blocks, {{user}} / {{char}} with the names given to
        recall, and any `extra` placeholders ({"{{name}}": text}). Text that comes in (a block,
        a name) is never substituted again."""
        values = dict(
            zip(self.PLACEHOLDERS, (self.attributes, self.events, self.dialogue_style), strict=True)
        )
        values.update(extra or {})
        if self.user_name is not None:
            values["{{user}}"] = self.user_name
        if self.char_name is not None:
            values["{{char}}"] = self.char_name
        pattern = re.compile("|".join(re.escape(key) for key in values))
        return pattern.sub(lambda match: values[match.group(0)], template)


def _check_context(context: Mapping[str, Any] | None) -> str:
    if context is None:
        return "{}"
    if not isinstance(context, Mapping) or not all(isinstance(k, str) for k in context):
        raise TypeError("context must be a mapping of field names to values")
    for key, value in context.items():
        items = value if isinstance(value, list | tuple) else [value]
        for item in items:
            if item is not None and not isinstance(item, str | int | float | bool):
                raise TypeError(
                    f"context[{key!r}] must be a number, string, bool or a list of them, "
                    f"got {type(item).__name__}"
                )
            if isinstance(item, float) and not math.isfinite(item):
                raise TypeError(f"context[{key!r}] must be a finite number, got {item!r}")
            if isinstance(item, int) and not -(2**63) <= item < 2**63:
                raise TypeError(f"context[{key!r}] must fit in 64 bits, got {item!r}")
            if isinstance(item, str) and not _duck.is_utf8(item):
                raise TypeError(f"context[{key!r}] is not valid Unicode text")
    return json.dumps(dict(context), ensure_ascii=False)


class CharacterMemory:
    """One character's configured memory, ready to recall from.

    `db`: None reads the demo config shipped with rolemem; a DuckDB path or connection reads
    the deployment's config tables there (`rolemem config import --db`, `POST /config/import`).
    `config`: rows from the designers' JSON instead (see `from_designer_json`).
    """

    def __init__(
        self,
        db: _duck.Database = None,
        *,
        character_id: str,
        config: CharacterConfig | None = None,
        limits: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(character_id, str) or not character_id:
            raise TypeError("character_id must be a non-empty string")
        self.character_id = character_id
        self._con = _duck.private_connection()
        self._load(db, config)
        self._check(config)
        for model in _STATIC_MODELS:
            sql = compose(model, {}, f"select * from {model}", existing=_table_names(self._con))
            self._con.execute(f"create table {model} as {sql}")
        count = self._con.execute(
            "select count(*) from int_character_entries_unioned where character_id = $id",
            {"id": character_id},
        ).fetchone()
        if not count or not count[0]:
            raise ConfigError(f"no config for character {character_id!r}")
        self.limits = self._default_limits()
        self.limits.update(self._check_limits(limits or {}))
        self._local = threading.local()
        self._sessions: dict[str, RecallSession] = {}
        self._sessions_lock = threading.Lock()

    @classmethod
    def from_designer_json(
        cls,
        doc: str | Path | Mapping[str, Any],
        *,
        character_id: str | None = None,
        limits: Mapping[str, Any] | None = None,
    ) -> CharacterMemory:
        """From the designers' JSON (a path or a mapping `{"attributes": {类别: [...]},
        "events": {...}, "dialogue_styles": {...}}`). Bad config raises ConfigError naming the
        entry and field; sizes outside the spec's advice warn (ConfigWarning)."""
        config = parse_designer_json(doc, character_id=character_id)
        characters = [rows[0]["character_id"] for rows in config.tables.values() if rows]
        if not characters:
            raise ConfigError("the designer config has no entries")
        return cls(config=config, character_id=characters[0], limits=limits)

    def session(self, user_id: str) -> RecallSession:
        """The conversation of `user_id` with this character (same id, same session)."""
        with self._sessions_lock:
            session = self._sessions.get(user_id)
            if session is None:
                session = self._sessions[user_id] = RecallSession(self, user_id)
            return session

    # -- loading ---------------------------------------------------------------------------

    def _load(self, db: _duck.Database, config: CharacterConfig | None) -> None:
        for seed in _RECALL_SEEDS:
            load_seed(self._con, seed)
        if config is not None or db is None:
            _insert_config_rows(self._con, config or demo_config())
        else:
            self._copy_config_tables(db)

    def _copy_config_tables(self, db: _duck.Database) -> None:
        """This character's config rows from the database's config tables; the lexicon,
        stopwords, defaults and limits too where dbt seeded them (else the shipped CSVs)."""
        with _duck.cursor(db, read_only=not isinstance(db, duckdb.DuckDBPyConnection)) as source:
            for seed in (*_CONFIG_SEEDS, *_RECALL_SEEDS):
                is_config = seed in _CONFIG_SEEDS
                try:
                    cursor = source.execute(
                        f"select * from {seed} where character_id = $id"
                        if is_config
                        else f"select * from {seed}",
                        {"id": self.character_id} if is_config else {},
                    )
                except duckdb.CatalogException:
                    if not is_config:
                        continue
                    raise ConfigError(
                        f"the database has no config table {seed!r}: run `rolemem init-db` "
                        "and `rolemem config import --db` (or `rolemem config load`)"
                    ) from None
                rows = cursor.fetchall()
                names = [d[0] for d in cursor.description]
                expected = set(SEED_COLUMNS[seed] if is_config else seed_specs()[seed][1])
                if not is_config and not expected <= set(names):
                    continue  # seeded by an older rolemem: keep the shipped table whole
                # column names become SQL identifiers: only the seed's own are copied
                keep = [i for i, name in enumerate(names) if name in expected]
                rows = [tuple(row[i] for i in keep) for row in rows]
                names = [names[i] for i in keep]
                _insert_rows(
                    self._con,
                    seed,
                    {name: [row[i] for row in rows] for i, name in enumerate(names)},
                )

    def _check(self, config: CharacterConfig | None) -> None:
        """Errors raise; advice on sizes warns only for designer JSON being imported."""
        problems = _config_problems(self._con)
        if config is None:
            problems = [p for p in problems if p[3] == "error"]
        report_problems(config or CharacterConfig(), problems)

    def _default_limits(self) -> dict[str, Any]:
        return read_settings(self._con, "recall_limits")

    @staticmethod
    def _check_limits(limits: Mapping[str, Any]) -> dict[str, Any]:
        known = set(LIMIT_NAMES) | {"filter_levels"}
        for name, value in limits.items():
            if name not in known:
                raise TypeError(f"unknown limit {name!r}; expected one of {sorted(known)}")
            if name == "filter_levels":
                if not isinstance(value, list | tuple) or not all(
                    isinstance(v, int) and not isinstance(v, bool) for v in value
                ):
                    raise TypeError("filter_levels must be a list of integers")
            elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise TypeError(f"{name} must be a non-negative integer, got {value!r}")
        if limits.get("expand_strategy", 0) not in (0, 1):
            raise TypeError("expand_strategy must be 0 or 1")
        return {k: (list(v) if k == "filter_levels" else v) for k, v in limits.items()}

    # -- recall ----------------------------------------------------------------------------

    def _recall(self, params: dict[str, Any], explain: bool) -> tuple[Any, ...]:
        # both marts in one query when explaining: blocks and explain share every CTE
        sql = compose(
            ("character_memory_blocks", "character_memory_recall")
            if explain
            else "character_memory_blocks",
            {"int_recall_requests": _REQUEST_SQL, "int_recall_queue_items": _QUEUE_SQL},
            _RECALL_SELECT.format(explain=_EXPLAIN if explain else "cast(null as integer[])"),
            existing=_STATIC_MODELS + _RECALL_SEEDS,
        )
        # a cursor per thread: sessions of other users run in parallel
        cur = getattr(self._local, "cursor", None)
        if cur is None:
            cur = self._local.cursor = _duck.PreparedCursor(self._con.cursor())
        return cur.run(sql, params, error=ConfigError)[0]


def _table_names(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [row[0] for row in con.execute("select table_name from duckdb_tables()").fetchall()]


def _insert_rows(con: duckdb.DuckDBPyConnection, seed: str, columns: dict[str, list[Any]]) -> None:
    """Table `seed` (a config table, or a seed typed from its YAML) holding exactly these
    columns' values, bound as one list per column."""
    if seed in SEED_COLUMNS:
        create_config_tables(con)
    else:
        load_seed(con, seed)
    con.execute(f"delete from {seed}")
    _append_rows(con, seed, columns)


def _append_rows(con: duckdb.DuckDBPyConnection, seed: str, columns: dict[str, list[Any]]) -> None:
    if any(len(values) for values in columns.values()):
        selects = ", ".join(f"unnest(${name}) as {name}" for name in columns)
        con.execute(f"insert into {seed} by name select {selects}", columns)


def _config_columns(config: CharacterConfig, seed: str, offset: int = 0) -> dict[str, list[Any]]:
    """One seed table's rows of `config` as bound columns (JSON columns as text, ordinals
    shifted by `offset`)."""
    rows = config.tables[seed]
    return {
        column: [
            row[column] + offset
            if column == "ordinal"
            else json.dumps(row[column], ensure_ascii=False)
            if column in ("keywords", "query_params")
            else row[column]
            for row in rows
        ]
        for column in SEED_COLUMNS[seed]
    }


def _insert_config_rows(con: duckdb.DuckDBPyConnection, config: CharacterConfig) -> None:
    for seed in _CONFIG_SEEDS:
        _insert_rows(con, seed, _config_columns(config, seed))


def _config_problems(con: duckdb.DuckDBPyConnection) -> list[tuple[Any, ...]]:
    """Rows of the SQL model int_character_config_problems over the loaded config."""
    sql = compose(
        "int_character_config_problems",
        {},
        "select * from int_character_config_problems order by entry_kind, entry_ordinal, field",
        existing=_table_names(con),
    )
    try:
        return con.execute(sql).fetchall()
    except duckdb.ConversionException as exc:
        raise ConfigError(f"malformed JSON in character config: {exc}") from None


def validate_config(config: CharacterConfig) -> None:
    """Check designer config with the SQL rules: ConfigError on errors, ConfigWarning on
    advice. Used before writing seeds, so a bad file writes nothing."""
    con = _duck.private_connection()
    try:
        _insert_config_rows(con, config)
        report_problems(config, _config_problems(con))
    finally:
        con.close()


class RecallSession:
    """One conversation (user x character): counts turns and keeps the sticky queue.

    The queue lives in this process only (the spec clears it on restart). A lock makes one
    session safe to share between threads; different sessions never wait for each other.
    """

    def __init__(self, memory: CharacterMemory, user_id: str) -> None:
        self.memory = memory
        self.user_id = user_id
        self.turn = 0
        self._queue: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def recall(
        self,
        text: str,
        context: Mapping[str, Any] | None = None,
        *,
        require_match: bool = True,
        user_name: str | None = None,
        char_name: str | None = None,
        dry_run: bool = False,
        explain: bool = False,
    ) -> RecallResult:
        """One turn: recall entries for the player's `text` under the game `context`.
        `dry_run=True` previews it: the turn counter and the sticky queue do not move.
        `explain=True` also says, for every entry of the character, why it is or is not in
        the prompt (`RecallResult.explain`)."""
        if not isinstance(text, str) or not _duck.is_utf8(text):
            raise TypeError(f"text must be valid Unicode text, got {text!r}")
        tokens = tokenize(text)
        context_json = _check_context(context)
        for name, value in (("user_name", user_name), ("char_name", char_name)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a string or None")
        if not isinstance(require_match, bool):
            raise TypeError("require_match must be True or False")
        with self._lock:
            turn = self.turn + 1
            params = {
                "character_id": self.memory.character_id,
                "query_text": text,
                "tokens": tokens,
                "context": context_json,
                "require_match": require_match,
                "user_name": user_name or None,
                "char_name": char_name or None,
                "turn_number": turn,
                **self.memory.limits,
                "queued_keys": [item["entry_key"] for item in self._queue],
                "queued_turns": [item["recalled_turn"] for item in self._queue],
                "queued_qualities": [item["match_quality"] for item in self._queue],
            }
            attributes, events, styles, explained, queue, words = self.memory._recall(
                params, explain
            )
            if not dry_run:
                self.turn = turn
                self._queue = list(queue or [])
        return RecallResult(
            attributes,
            events,
            styles,
            list(explained or []),
            list(words or []),
            turn,
            user_name or None,
            char_name or None,
        )


def store_config(db: _duck.Database, config: CharacterConfig) -> dict[str, int]:
    """Write designer config into a database's config tables, per character: validated first
    (nothing written on an error), then in one transaction the characters' old rows are
    replaced (ordinals continue after the table's others, so entry keys stay unique). Returns
    rows written per table."""
    validate_config(config)
    characters = sorted({row["character_id"] for rows in config.tables.values() for row in rows})
    written = {}
    with _duck.cursor(db) as cur:
        create_config_tables(cur)
        cur.execute("begin")
        try:
            for seed in _CONFIG_SEEDS:
                cur.execute(
                    f"delete from {seed} where list_contains($ids, character_id)",
                    {"ids": characters},
                )
                offset = cur.execute(f"select coalesce(max(ordinal), 0) from {seed}").fetchone()
                _append_rows(cur, seed, _config_columns(config, seed, offset[0] if offset else 0))
                written[seed] = len(config.tables[seed])
            cur.execute("commit")
        except BaseException:
            cur.execute("rollback")
            raise
    return written


def stored_config(db: _duck.Database, character_id: str | None = None) -> CharacterConfig:
    """The config tables of a database (one character's rows, or all) as config rows."""
    config = CharacterConfig()
    with _duck.cursor(db, read_only=not isinstance(db, duckdb.DuckDBPyConnection)) as cur:
        for table, columns in SEED_COLUMNS.items():
            try:
                rows = cur.execute(
                    f"select {', '.join(columns)} from {table} "  # names from this package
                    "where $id is null or character_id = $id order by ordinal",
                    {"id": character_id},
                ).fetchall()
            except duckdb.CatalogException:
                raise ConfigError(
                    f"the database has no config table {table!r}: run `rolemem init-db`"
                ) from None
            for values in rows:
                row = dict(zip(columns, values, strict=True))
                row["keywords"] = json.loads(row["keywords"])
                row["query_params"] = json.loads(row["query_params"] or "[]")
                config.tables[table].append(row)
    return config
