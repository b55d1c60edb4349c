"""Designer config loaded for recall: one private in-memory DuckDB holding the config of one
character or of every character of a database, its static models built once as tables, and
the recall statement, which answers every waiting request (of any of its characters) at once.

All rules are the dbt models under models/intermediate/character_memory and
models/marts/character_memory; every request value is a bound parameter. On the embedded
store a recall is answered in Python over the config loaded here (recall_rows, entry_matches,
prompt_fill: the models written out, each held equal to them by a test), the statement
answering where that costs more. The config reaches a database's tables here too
(`store_config`, and `load_seeds_into` with every seed).
"""

from __future__ import annotations

import contextlib
import functools
import threading
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from ..engines import PostgresEngine, duckdb_connect, engine_name, reading, resolve, writing
from ..schema import CONFIG_TABLES, create_config_tables
from ..sql.batching import Coalescer
from ..sql.project import compose, render_macro, used, write_sql
from ..sql.request_rows import bound_lists, bound_rows, request_rows_sql
from ..sql.seeds import load_seed, read_settings, seed_specs
from ..text.recall_words import RecallWords, Word, word_columns, words_params
from . import entry_matches, prompt_fill, recall_rows
from .config import (
    SEED_COLUMNS,
    CharacterConfig,
    ConfigError,
    ConfigWarning,
    config_columns,
    demo_config,
    read_seed_csvs,
    report_problems,
)
from .entry_matches import MATCHED_COLUMNS, EntryMatcher
from .verdict_cache import TABLE as VERDICTS
from .verdict_cache import Pair, VerdictCache

_CONFIG_SEEDS = tuple(SEED_COLUMNS)
_RECALL_SEEDS = (
    "association_words",
    "recall_stopwords",
    "recall_context_defaults",
    "recall_limits",
)
# Models that depend on config only: built once per library, then read as tables.
_STATIC_MODELS = (
    "stg_config__character_attributes",
    "stg_config__character_events",
    "stg_config__character_dialogue_styles",
    "int_character_entries_unioned",
    "int_character_entry_keywords",
    "int_character_keyword_lengths",
    "int_character_conditions_parsed",
    "int_character_condition_values",
)
# On PostgreSQL a generic plan merge-joins a turn's few text windows with the whole keyword
# index; without merge joins it looks them up (p50 26 against 38 ms at 10k entries, 298
# against 334 ms at 100k; hash joins off as well: 25 ms, but 512 ms at 100k)
_INDEXED_JOINS = {"enable_mergejoin": "off"}
# On another engine recall reads its copies only (no player's rows): on Citus they are plain
# tables of the node the service connects to, and the statement asks for its generic plan
# there too. As reference tables, Citus planned it on every call, then planned its shard query
# again (docs/decisions/citus.md). The seeds dynamic recall reads as well get copies of their
# own: dynamic recall's are reference tables there (it joins them to a player's rows).
_RECALL_PLAN = {**_INDEXED_JOINS, "plan_cache_mode": "force_generic_plan"}
_OWN_SEEDS = {seed: f"character_{seed}" for seed in _RECALL_SEEDS}
# what recall looks up in the static tables, indexed where they are copied (another engine)
_INDEXES: dict[str, list[tuple[str, ...]]] = {
    "int_character_entries_unioned": [("entry_key",), ("character_id", "is_constant")],
    "int_character_entry_keywords": [("character_id", "folded_keyword"), ("keyword",)],
    "int_character_keyword_lengths": [("character_id",)],
    "int_character_conditions_parsed": [("entry_key",)],
    "int_character_condition_values": [("entry_key", "condition_index")],
    "association_words": [("word",)],
}
# the limits a request may set: the seed recall_limits' integer columns (filter_levels, the
# list, is bound apart)
LIMIT_NAMES = tuple(name for name in seed_specs()["recall_limits"][1] if name != "filter_levels")

# What each request of a batch brings: a list per name, a position per request (the models
# carry request_id and character_id, so one statement answers requests of several
# characters).
REQUEST_FIELDS = {
    "character_id": "varchar",
    "query_text": "varchar",
    "tokens": "varchar[]",
    "context": "json",
    "require_match": "boolean",
    "user_name": "varchar",
    "char_name": "varchar",
    "template": "varchar",
    "turn_number": "integer",
    **dict.fromkeys(LIMIT_NAMES, "integer"),
    "filter_levels": "integer[]",
}
# on DuckDB a request's words and keyword matches are computed in Python (text.recall_words,
# entry_matches) and bound as these models' rows
_WORDS_ROWS = {"int_recall_words_expanded": bound_rows("words", word_columns("request_id"))}
_MATCHED_ROWS = {"int_recall_entries_matched": bound_rows("matched", MATCHED_COLUMNS)}


@dataclass(frozen=True)
class RecallRequest:
    """One recall's bound values (REQUEST_FIELDS, its queue as `queued_*` lists) and whether
    it wants the explain rows."""

    values: Mapping[str, Any]
    explain: bool


class CharacterLibrary:
    """The designer config of `character_id` (or, None, of every character) ready to recall.

    `db`: None reads the demo config shipped with rolemem; a DuckDB path or connection reads
    the config tables there; a `postgresql://` URL or a PostgresEngine reads its config tables
    and recalls there.
    `config`: rows from the designers' JSON instead. Share one library between the
    CharacterMemory objects of a process (the service does): recalls waiting for a statement,
    whatever their character, are answered by the next one (at most `max_batch`).
    """

    def __init__(
        self,
        db: Any = None,
        *,
        config: CharacterConfig | None = None,
        character_id: str | None = None,
        max_batch: int = 8,
        engine: PostgresEngine | None = None,
        max_contexts: int = 256,
    ) -> None:
        # what the CLI takes: a DuckDB path or connection, a postgresql:// URL or an engine;
        # the config's database is where recall runs
        source, engine, self._owns_engine = resolve(db, engine)
        # the config is read from the store `db` names (none: the demo config)
        db = engine if db is not None and source is None else source
        self._con = duckdb_connect.private_connection()
        for seed in _RECALL_SEEDS:
            load_seed(self._con, seed)
        if config is not None or db is None:
            _insert_config_rows(self._con, config or demo_config())
        else:
            self._copy_config_tables(db, character_id)
        # errors raise; advice on sizes warns only for designer JSON being imported
        problems = _config_problems(self._con)
        if config is None:
            problems = [p for p in problems if p[3] == "error"]
        report_problems(config or CharacterConfig(), problems)
        for model in _STATIC_MODELS:
            sql = compose(model, {}, f"select * from {model}", existing=_table_names(self._con))
            self._con.execute(write_sql("create_table_from_query", model, sql))
        # on another engine recall reads copies of the config-derived tables there
        self._engine = engine
        if engine is not None:
            for seed, own in _OWN_SEEDS.items():
                copy = write_sql("create_table_from_query", own, f"select * from {seed}")
                self._con.execute(copy)
            engine.replace_tables(
                self._con,
                _STATIC_MODELS + tuple(_OWN_SEEDS.values()),
                {_OWN_SEEDS.get(name, name): index for name, index in _INDEXES.items()},
                reference=False,
            )
        # each character's entry keys: a session's queue is of its own entries (a stored one
        # may name a key a re-import handed to another entry since)
        keys = self._con.execute(render_macro("character_entry_keys")).fetchall()
        self.entry_keys = {character: frozenset(found) for character, found in keys}
        self.characters = frozenset(self.entry_keys)
        self.default_limits = read_settings(self._con, "recall_limits")
        # a config without secondary keywords plans none of their rule (each operator is
        # planned on every call: int_recall_entries_matched's var)
        [(secondary,)] = self._con.execute(
            "select count(*) > 0 from int_character_entry_keywords where is_secondary"
        ).fetchall()
        self._has_secondary_keywords = bool(secondary)
        # on DuckDB a turn looks unlock verdicts up (judged once per context); PostgreSQL
        # caches the plan and judges a turn's candidates in its statement: its tables are
        # shared by every process, and one process's eviction would be another's wrong answer
        embedded = engine is None
        self._verdicts = VerdictCache(self._con, _fill_verdicts, max_contexts) if embedded else None
        # there a request's words, keyword matches (int_recall_entries_matched) and template
        # (prompt_fill) are computed before its statement, which then plans none of them
        # (PostgreSQL keeps its plan, so its statement computes them)
        self._words = RecallWords.read(self._con) if embedded else None
        self._matcher = EntryMatcher.read(self._con) if embedded else None
        self._fills_prompts = embedded
        # and, where its matches are computed here, answers it all here (recall_rows): no
        # statement, but the judging of a context new to the library
        self._rows = recall_rows.RecallRows.read(self._con) if embedded else None
        self._local = threading.local()
        self._batches: Coalescer[RecallRequest, tuple[Any, ...]] = Coalescer(
            self._recall_batch, max_batch=max_batch
        )

    def entry_counts(self) -> dict[str, dict[str, int]]:
        """Per character of the loaded config, its entries per kind (attribute, event,
        dialogue_style)."""
        # its own cursor: recalls run on other threads meanwhile
        with contextlib.closing(self._con.cursor()) as cur:
            rows = cur.execute(write_sql("character_entry_counts")).fetchall()
        counts: dict[str, dict[str, int]] = {}
        for character_id, kind, count in rows:
            counts.setdefault(character_id, {})[kind] = count
        return counts

    def recall(self, request: RecallRequest) -> tuple[Any, ...]:
        """attributes_text, events_text, dialogue_style_text, explain, queue, words."""
        return self._batches.submit(request)

    def close(self) -> None:
        """Close the engine this library opened from a URL (one given stays its owner's)."""
        if self._owns_engine and self._engine is not None:
            self._engine.close()

    def batching(self) -> dict[str, Any]:
        """How recall statements were shared (rolemem.sql.batching)."""
        return self._batches.stats()

    # -- recall ----------------------------------------------------------------------------

    def _recall_batch(self, requests: Sequence[RecallRequest]) -> list[tuple[Any, ...]]:
        words = None
        if self._words is not None:
            words = [self._words.words(r.values, agent_name="char_name") for r in requests]
            answered = self._answered(requests, words)
            if answered is not None:  # no statement: nothing of it is bound or composed
                return answered
        explain = any(request.explain for request in requests)
        # the templates filled by the statement (model character_memory_prompts), or here
        prompts = not self._fills_prompts and any(
            request.values.get("template") is not None for request in requests
        )
        engine = self._engine.name if self._engine else "duckdb"
        params = _batch_params([request.values for request in requests])
        matched = None
        if words is not None:
            params.update(words_params(words, "request_id"))
            matched = self._matched_params(requests, words)
            params.update(matched or {})
        # the marts asked for in one query: blocks, prompts and explain share every CTE
        blocks = "character_memory_prompts" if prompts else "character_memory_blocks"
        sql = compose(
            (blocks, "character_memory_recall") if explain else blocks,
            {
                "int_recall_requests": request_rows_sql("request_id", REQUEST_FIELDS, engine),
                "int_recall_queue_items": render_macro("recall_queue_items"),
                **(_WORDS_ROWS if self._words is not None else {}),
                **(_MATCHED_ROWS if matched is not None else {}),
            },
            write_sql("character_recall_answer", explain, prompts, engine=engine),
            {
                "judge_verdicts_per_turn": self._verdicts is None,
                "recall_secondary_keywords": self._has_secondary_keywords,
            },
            existing=_STATIC_MODELS
            + (_RECALL_SEEDS if self._engine is None else ())
            + (() if self._verdicts is None else (VERDICTS,)),
            engine=engine,
            # another engine: the seeds are this library's own copies
            renamed=None if self._engine is None else _OWN_SEEDS,
        )
        if self._engine is not None:
            rows = self._engine.run(
                sql,
                bound_lists(REQUEST_FIELDS, params, engine),
                error=ConfigError,
                planner=_RECALL_PLAN,
            )
            return [tuple(row[1:]) for row in rows]
        # a cursor per thread: batches run in parallel with other threads' (alone) recalls
        cur = getattr(self._local, "cursor", None)
        if cur is None:
            cur = self._local.cursor = duckdb_connect.PreparedCursor(self._con.cursor())
        assert self._verdicts is not None
        pairs = [(r.values["character_id"], r.values["context"]) for r in requests]
        with self._verdicts.holding(pairs):
            rows = cur.run(sql, params, error=ConfigError)
        if not self._fills_prompts:
            return [tuple(row[1:]) for row in rows]
        return [
            (*_prompted(request.values, row[1:4]), *row[7:])
            for request, row in zip(requests, rows, strict=True)
        ]

    def _answered(
        self, requests: Sequence[RecallRequest], words: Sequence[Sequence[Word]]
    ) -> list[tuple[Any, ...]] | None:
        """The batch's answers computed in Python (recall_rows), as the statement's rows but
        request_id; None: the statement answers (where the matches or the explain rows cost
        Python more: entry_matches.CONTENT_LIMIT, recall_rows.EXPLAIN_LIMIT)."""
        rows, matcher, verdicts = self._rows, self._matcher, self._verdicts
        if rows is None or matcher is None or verdicts is None:
            return None
        if not all(
            matcher.answers(r.values["character_id"])
            and rows.answers(r.values["character_id"], r.explain)
            for r in requests
        ):
            return None
        judged = verdicts.verdicts(
            [(r.values["character_id"], r.values["context"]) for r in requests]
        )
        answers = []
        for number, (request, found, unlocked) in enumerate(
            zip(requests, words, judged, strict=True), start=1
        ):
            values = request.values
            matched = matcher.matched(number, values, found, self._has_secondary_keywords)
            answer = rows.recall(number, values, matched, unlocked, found, request.explain)
            answers.append((*_prompted(values, answer[:3]), *answer[3:]))
        return answers

    def _matched_params(
        self, requests: Sequence[RecallRequest], words: Sequence[Sequence[Word]]
    ) -> dict[str, list[Any]] | None:
        """The batch's keyword matches (entry_matches), bound as `bound_rows("matched")`;
        None: the statement plans the model where that is cheaper (entry_matches.ROW_LIMIT,
        .CONTENT_LIMIT; a test holds the two equal)."""
        matcher = self._matcher
        if matcher is None or not all(
            matcher.answers(request.values["character_id"]) for request in requests
        ):
            return None
        rows = [
            row
            for number, (request, found) in enumerate(zip(requests, words, strict=True), start=1)
            for row in matcher.matched(number, request.values, found, self._has_secondary_keywords)
        ]
        if len(rows) > entry_matches.ROW_LIMIT:
            return None
        return {
            f"matched_{name}": [row[i] for row in rows] for i, name in enumerate(MATCHED_COLUMNS)
        }

    # -- loading ---------------------------------------------------------------------------

    def _copy_config_tables(self, db: duckdb_connect.Database, character_id: str | None) -> None:
        """The config rows (of one character, or all) from the database's config tables; the
        lexicon, stopwords, defaults and limits too where dbt seeded them (else the shipped
        CSVs)."""
        with reading(db, read_only=True) as source:
            for seed in (*_CONFIG_SEEDS, *_RECALL_SEEDS):
                is_config = seed in _CONFIG_SEEDS
                try:
                    cursor = source.execute(
                        f"select * from {seed} "
                        "where cast($id as varchar) is null or character_id = $id"
                        if is_config
                        else f"select * from {seed}",
                        {"id": character_id} if is_config else {},
                    )
                except MISSING_TABLE:
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
                columns = {
                    name: [row[i] for row in rows]
                    for i, name in enumerate(names)
                    if name in expected
                }
                _insert_rows(self._con, seed, columns)


def _batch_params(requests: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """Bound lists for `request_rows_sql` (a position per request) and macro
    recall_queue_items (the requests' queues flattened)."""
    params: dict[str, list[Any]] = {"request_id": list(range(1, len(requests) + 1))}
    params.update({name: [values.get(name) for values in requests] for name in REQUEST_FIELDS})
    params["queued_request_id"] = [
        number for number, values in enumerate(requests, 1) for _ in values.get("queued_keys", ())
    ]
    for name in ("queued_keys", "queued_turns", "queued_qualities"):
        params[name] = [item for values in requests for item in values.get(name, ())]
    return params


def _prompted(values: Mapping[str, Any], blocks: Sequence[Any]) -> tuple[Any, ...]:
    """A request's three blocks and its template filled with them here (prompt_fill)."""
    names = (values["user_name"], values["char_name"])
    return (*blocks, *prompt_fill.prompts(values.get("template"), blocks, *names))


def _fill_verdicts(cur: duckdb.DuckDBPyConnection, pairs: Sequence[Pair]) -> None:
    """The verdicts of new (character, context) pairs, judged by the model."""
    sql = write_sql(
        "insert_from_query",
        VERDICTS,
        compose(
            VERDICTS,
            {"int_recall_requests": request_rows_sql("request_id", REQUEST_FIELDS, "duckdb")},
            f"select character_id, context_signature, entry_key, is_unlocked, failed_condition\n"
            f"from {VERDICTS}",
            existing=_STATIC_MODELS + _RECALL_SEEDS,
        ),
    )
    params = _batch_params([{"character_id": c, "context": context} for c, context in pairs])
    duckdb_connect.run(cur, sql, used(sql, params), ConfigError)


# what reading a table a database lacks raises, on each engine
MISSING_TABLE: tuple[type[Exception], ...] = (duckdb.CatalogException,)
with contextlib.suppress(ImportError):
    from psycopg.errors import UndefinedTable

    MISSING_TABLE += (UndefinedTable,)


def _table_names(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [row[0] for row in con.execute("select table_name from duckdb_tables()").fetchall()]


def _insert_rows(con: duckdb.DuckDBPyConnection, seed: str, columns: dict[str, list[Any]]) -> None:
    """Table `seed` (a config table, or a seed typed from its YAML) holding exactly these
    columns' values, bound as one list per column."""
    if seed in SEED_COLUMNS:
        create_config_tables(con)
    else:
        load_seed(con, seed)
    con.execute(write_sql("delete_all_rows", seed))
    if any(len(values) for values in columns.values()):
        con.execute(write_sql("append_columns", seed, tuple(columns)), columns)


def _insert_config_rows(con: duckdb.DuckDBPyConnection, config: CharacterConfig) -> None:
    for seed in _CONFIG_SEEDS:
        _insert_rows(con, seed, config_columns(config, seed))


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
    with contextlib.closing(duckdb_connect.private_connection()) as con:
        _insert_config_rows(con, config)
        report_problems(config, _config_problems(con))


def store_config(db: Any, config: CharacterConfig) -> dict[str, int]:
    """Write designer config into a database's config tables, per character: validated first
    (nothing written on an error), then in one transaction the characters' old rows are
    replaced (ordinals continue after the table's others, so entry keys stay unique) and the
    config version bumped (other service processes load the config again). `db`: a DuckDB
    path or connection, or an engine (rolemem.engines). Returns rows written per table."""
    validate_config(config)
    characters = sorted({row["character_id"] for rows in config.tables.values() for row in rows})
    if engine_name(db) == "duckdb":
        with reading(db) as cur:  # a store written before the config tables, or their columns
            create_config_tables(cur)
    with writing(db) as cur:
        for seed in _CONFIG_SEEDS:
            cur.execute(
                write_sql("delete_character_rows", seed),
                {"ids": characters},
            )
            [(offset,)] = cur.execute(f"select coalesce(max(ordinal), 0) from {seed}").fetchall()
            columns = config_columns(config, seed, offset)
            if any(columns.values()):
                cur.execute(_insert_sql(seed), columns)
        cur.execute(write_sql("bump_config_version"))
    return {seed: len(config.tables[seed]) for seed in _CONFIG_SEEDS}


@functools.cache
def _insert_sql(seed: str) -> str:
    """Rows of a config table bound as one list per column (macro insert_config_rows), each
    of its type in the SQLModel schema."""
    from duckdb_engine import Dialect

    [table] = [table for table in CONFIG_TABLES if table.name == seed]
    types = {
        column.name: column.type.compile(dialect=Dialect()).lower() for column in table.columns
    }
    columns = tuple((name, types[name]) for name in SEED_COLUMNS[seed])
    return write_sql("insert_config_rows", seed, columns)


def load_seeds_into(db: str, config_dir: str | Path | None = None) -> list[str]:
    """Every non-demo seed into the database's tables, as `dbt seed` writes them, in one
    transaction, then the character config into its tables (`store_config`): from the CSVs in
    `config_dir` (`rolemem config import --out` writes them), default the demo config. For
    installs without dbt."""
    names = [name for name in seed_specs() if not name.startswith(("demo_", "fixture_"))]
    with duckdb_connect.cursor(db) as con, duckdb_connect.transaction(con) as cur:
        for name in names:
            load_seed(cur, name)
    with warnings.catch_warnings():  # size advice is for designers importing their JSON
        warnings.simplefilter("ignore", ConfigWarning)
        written = store_config(db, read_seed_csvs(config_dir))
    return names + list(written)
