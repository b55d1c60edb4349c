"""PostgreSQL through psycopg 3: a connection pool, the per-turn SQL transpiled by sqlglot once
per statement and prepared on the server (PostgreSQL caches the plan: no replanning per call,
unlike DuckDB)."""

from __future__ import annotations

import contextlib
import functools
import re
import struct
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..errors import LineError, PlayerRequiredError, RolememError, WriteConflictError
from ..retry import retry
from ..sql.imports import read_imports_in_place
from ..sql.project import render_macro

NAME = "postgres"
CITUS = "citus"
_RAISED_PREFIX = "rolemem: "
_PLAYER_REQUIRED = (
    "user_id is required: this database shards every save, line and memory by its player "
    "(Citus), so a save without a player is not stored here"
)
# tries of one statement the server chose as a deadlock's victim
_STATEMENT_ATTEMPTS = 3
# DuckDB column types of the tables rolemem copies over (config-derived tables)
_TYPES = {
    "BIGINT": "bigint",
    "INTEGER": "integer",
    "DOUBLE": "double precision",
    "BOOLEAN": "boolean",
    "VARCHAR": "text",
    "JSON": "json",
}
_SCHEMA = re.compile(r"[a-z_][a-z0-9_]*")
# Planner settings a statement may ask for (PostgresEngine.run), each as the one value it may
# take. A statement of many CTEs over thousands of rows (dynamic recall) gets row estimates of
# 1 for its CTEs, and with them nested loops that take seconds to minutes: hash and merge joins
# take 0.3 s. A statement that joins a few rows to indexed tables (character recall: a turn's
# text windows and the keyword index) gets merge joins that walk a whole index instead of
# looking the rows up.
# On Citus, where plans are PostgreSQL's choice (auto), a statement that reads no Citus table
# (replace_tables(..., reference=False)) asks for its generic plan: cached, not planned per call.
PLANNER_SETTINGS = {
    "enable_nestloop": "off",
    "enable_mergejoin": "off",
    "enable_sort": "off",
    "plan_cache_mode": "force_generic_plan",
}
# a psycopg placeholder, %(name)s; any other % is a literal and must be doubled
_LITERAL_PERCENT = re.compile(r"%(?!\(\w+\)s)")


@functools.lru_cache(maxsize=256)
def transpile(sql: str, materialize: bool = False) -> str:
    """The project's DuckDB-dialect statement (rendered with postgres dispatch macros) as
    PostgreSQL with psycopg placeholders: `$name` becomes `%(name)s`. `materialize`: every
    CTE of a query MATERIALIZED (Citus, _materialize_ctes)."""
    import sqlglot

    tree = sqlglot.parse_one(sql, read="duckdb")
    if materialize:
        tree = _materialize_ctes(tree)
    _inline_table_aliases(tree)
    _functions_as_written(tree)
    _membership_filters(tree)
    return _LITERAL_PERCENT.sub("%%", tree.sql(dialect="postgres"))


def _functions_as_written(tree: Any) -> None:
    """Functions both engines have that sqlglot reads as something PostgreSQL lacks:
    make_date(year, month, day), written DATE_FROM_PARTS; any_value, which skips nulls on
    both, read as ANY_VALUE ... IGNORE NULLS (sqlglot warns that PostgreSQL has no such
    clause)."""
    from sqlglot import exp

    for node in list(tree.find_all(exp.DateFromParts)):
        node.replace(
            exp.Anonymous(
                this="make_date",
                expressions=[node.args.get(part) for part in ("year", "month", "day")],
            )
        )
    for node in list(tree.find_all(exp.IgnoreNulls)):
        if isinstance(node.this, exp.AnyValue):
            node.replace(node.this)


def _membership_filters(tree: Any) -> None:
    """`list_contains(list, x)` as a condition a row must meet (a conjunct of a WHERE or a
    join's ON, or of one branch of an OR there) becomes `x = ANY(list)`, which an index on x
    serves: sqlglot writes every list_contains as a CASE that keeps its null-versus-false
    answer, which no index serves (a save's lines were a scan of the game's whole `line`
    table). A filter drops a row on null as on false, and an OR of null and false is null, so
    the answer is the same."""
    from sqlglot import exp

    def conjuncts(node: Any) -> Iterator[Any]:
        if isinstance(node, exp.And | exp.Or):
            yield from conjuncts(node.this)
            yield from conjuncts(node.expression)
        elif isinstance(node, exp.Paren):
            yield from conjuncts(node.this)
        else:
            yield node

    conditions = [where.this for where in tree.find_all(exp.Where)]
    conditions += [join.args["on"] for join in tree.find_all(exp.Join) if join.args.get("on")]
    for condition in conditions:
        for node in list(conjuncts(condition)):
            if isinstance(node, exp.ArrayContains):
                node.replace(
                    exp.EQ(
                        this=node.expression.copy(),
                        expression=exp.Any(this=exp.Paren(this=node.this.copy())),
                    )
                )


def _materialize_ctes(tree: Any) -> Any:
    """Every CTE that is a query MATERIALIZED, after the import CTEs are read in place (a
    materialized `events as (select * from stg)` would copy the player's rows once more); the
    tree that replaces `tree`. Citus plans a routed statement on every call, and with CTEs it
    may inline sends the worker an inlined copy that is planned again per reader: materialized,
    each CTE is planned once on each node (docs/decisions/citus.md). Reads only: Citus refused
    a write with its CTEs materialized."""
    from sqlglot import exp

    ctes = list(tree.find_all(exp.CTE))
    if not isinstance(tree, exp.Query) or not all(isinstance(c.this, exp.Query) for c in ctes):
        return tree
    tree = read_imports_in_place(tree)
    for cte in tree.find_all(exp.CTE):
        cte.set("materialized", True)
    return tree


def _inline_table_aliases(tree: Any) -> None:
    """A model's `name as (select * from table)` read more than once would be materialised by
    PostgreSQL (its default for a CTE read twice): a copy of the whole table, scanned without
    its indexes. Such CTEs are marked NOT MATERIALIZED; every other CTE keeps its mode."""
    from sqlglot import exp

    for cte in tree.find_all(exp.CTE):
        select = cte.this
        if cte.args.get("materialized") is not None or not isinstance(select, exp.Select):
            continue
        source = select.args.get("from_") or select.args.get("from")
        if (
            select.is_star
            and isinstance(source, exp.From)
            and isinstance(source.this, exp.Table)
            and not any(select.args.get(part) for part in ("where", "joins", "group", "limit"))
        ):
            cte.set("materialized", False)


def _configure(con: Any) -> None:
    """Each pooled connection reads a `real` (single precision) as its exact value, as DuckDB
    does (0.9 is stored as 0.89999997…; its text form would round it to 0.9)."""
    from psycopg.adapt import Loader

    class ExactReal(Loader):
        def load(self, data: Any) -> float:
            return float(struct.unpack("f", struct.pack("f", float(bytes(data))))[0])

    con.adapters.register_loader("float4", ExactReal)


def _json_as_text(cur: Any) -> None:
    """JSON columns read as their text, as DuckDB returns them (one shape for the callers)."""
    from psycopg.types.string import TextLoader

    for name in ("json", "jsonb"):
        cur.adapters.register_loader(name, TextLoader)


def _citus_shape(cur: Any, name: str) -> tuple[bool, bool]:
    """Whether table `name` is Citus's (a reference table here), and whether its replica
    identity is the whole row."""
    cur.execute(
        "select exists (select from pg_dist_partition where logicalrelid = oid), "
        "relreplident = 'f' from pg_class where oid = to_regclass(%s)",
        (name,),
    )
    found = cur.fetchone()
    return (bool(found[0]), bool(found[1])) if found else (False, False)


@contextlib.contextmanager
def _raised(error: type[RolememError]) -> Iterator[None]:
    """A message the project's SQL raised on purpose (`rolemem_raise`) as `error`."""
    import psycopg

    try:
        yield
    except psycopg.errors.RaiseException as exc:
        message = exc.diag.message_primary or ""
        if message.startswith(_RAISED_PREFIX):
            raise error(message[len(_RAISED_PREFIX) :]) from None
        raise
    except (psycopg.errors.NotNullViolation, psycopg.errors.NullValueNotAllowed) as exc:
        # Citus: a row without its player (user_id NOT NULL, the distribution column)
        if exc.diag.column_name == "user_id" or "partition column" in str(exc):
            raise PlayerRequiredError(_PLAYER_REQUIRED, field="user_id") from None
        raise


class _Cursor:
    """A psycopg cursor in a transaction, called as a DuckDB cursor is: statements in the
    project's dialect (transpiled once), `$name` parameters, JSON values as their text."""

    def __init__(self, cur: Any, *, materialize: bool) -> None:
        _json_as_text(cur)
        self._cur = cur
        self._materialize = materialize

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> _Cursor:
        with _raised(LineError):
            self._cur.execute(transpile(sql, self._materialize), dict(params or {}))
        return self

    def __getattr__(self, name: str) -> Any:  # fetchone, fetchall: psycopg's own
        return getattr(self._cur, name)

    @property
    def description(self) -> list[tuple[str]]:
        return [(column.name,) for column in self._cur.description or ()]


class PostgresEngine(contextlib.AbstractContextManager["PostgresEngine"]):
    """A PostgreSQL database by URL (`postgresql://…`). Threads share the pool; each call takes
    a connection for one statement. Statements are prepared server-side (psycopg prepares each
    on its first run on a connection). rolemem's tables go to `schema`."""

    name = NAME

    def __init__(
        self, url: str, *, schema: str = "rolemem", min_size: int = 1, max_size: int = 8
    ) -> None:
        import psycopg
        from psycopg_pool import ConnectionPool

        if not _SCHEMA.fullmatch(schema):
            raise ValueError(f"schema must be a lower-case SQL name, got {schema!r}")
        # rolemem's own tables and function live in `schema`; the game's (role, save, line)
        # are found on the rest of the search path
        search_path = f"{schema},public"
        # one transaction, one process at a time: service processes starting together would
        # otherwise replace the function at once ("tuple concurrently updated")
        with psycopg.connect(url) as con, con.transaction():
            con.execute("select pg_advisory_xact_lock(hashtext('rolemem.setup'))")
            con.execute(f"create schema if not exists {schema}")
            con.execute(f"set local search_path to {search_path}")
            con.execute(render_macro("create_rolemem_raise", engine=NAME))
            citus = con.execute("select 1 from pg_extension where extname = 'citus'")
            # a database sharded by player (schema.citus): the config copies are reference
            # tables, and plans are Citus's (it plans a generic plan only on its fast path)
            self.citus = citus.fetchone() is not None
        # the dispatch target of its statements (rolemem.sql.project): Citus's macros name the
        # player of every statement on a player's tables, so each routes to one shard
        self.name = CITUS if self.citus else NAME
        self.url = url
        self.schema = schema
        # what a write that met another transaction raises (the caller may retry it): a
        # check-then-insert that lost a race to another process's insert of the same key is
        # one too (on the retry its check finds the row)
        self.conflicts: tuple[type[Exception], ...] = (
            psycopg.errors.DeadlockDetected,
            psycopg.errors.SerializationFailure,
            psycopg.errors.UniqueViolation,
            # a row written after one it refers to was deleted (rolemem checks them first)
            psycopg.errors.ForeignKeyViolation,
            WriteConflictError,
        )
        plans = "auto" if self.citus else "force_generic_plan"
        # what every connection has already: a statement asking for it opens no transaction
        self._session = {"plan_cache_mode": plans}
        self._pool = ConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            kwargs={
                "autocommit": True,
                "prepare_threshold": 0,
                # a generic plan, cached: per-call planning is what PostgreSQL is here to save
                # (on Citus, its own choice: it refuses generic plans off its fast path)
                "options": f"-c search_path={search_path} -c plan_cache_mode={plans}",
            },
            configure=_configure,
            open=True,
        )
        self._pool.wait(timeout=30)  # a server that refuses says so now, not at the first call

    def run(
        self,
        sql: str,
        params: Mapping[str, Any],
        error: type[RolememError] = LineError,
        planner: Mapping[str, str] | None = None,
    ) -> list[tuple[Any, ...]]:
        """`sql` in the project's dialect, with bound parameters; a message the SQL raised on
        purpose (`rolemem_raise`) becomes `error`. `planner`: planner settings for this
        statement only (e.g. `{"enable_nestloop": "off"}`), from PLANNER_SETTINGS. JSON values
        come back parsed (lists and dicts)."""
        return self._execute(sql, params, error, planner, json_as_text=False)[1]

    def records(
        self,
        sql: str,
        params: Mapping[str, Any],
        planner: Mapping[str, str] | None = None,
        json_as_text: bool = True,
    ) -> list[dict[str, Any]]:
        """`sql`'s rows as dicts by column name, JSON values as their text (as DuckDB gives a
        JSON column) or, `json_as_text=False`, parsed (lists of objects: macro
        list_of_objects)."""
        names, rows = self._execute(sql, params, LineError, planner, json_as_text=json_as_text)
        return [dict(zip(names, row, strict=True)) for row in rows]

    def _execute(
        self,
        sql: str,
        params: Mapping[str, Any],
        error: type[RolememError],
        planner: Mapping[str, str] | None,
        *,
        json_as_text: bool,
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        # on Citus, a statement PostgreSQL plans alone (it asks for its generic plan: it reads
        # no Citus table) keeps its CTEs as on one server
        generic = (planner or {}).get("plan_cache_mode") == "force_generic_plan"
        text = transpile(sql, self.citus and not generic)
        settings: dict[str, str] = {}  # those the session has not already
        for name, value in (planner or {}).items():
            if PLANNER_SETTINGS.get(name) != value:
                raise ValueError(f"not a planner setting rolemem uses: {name}={value}")
            if self._session.get(name) != value:
                settings[name] = value

        def once() -> tuple[list[str], list[tuple[Any, ...]]]:
            with self._pool.connection() as con, con.cursor() as cur, _raised(error):
                if json_as_text:
                    _json_as_text(cur)
                # settings of one transaction (`set local`); none: no transaction to open
                with con.transaction() if settings else contextlib.nullcontext():
                    for name, value in settings.items():
                        cur.execute(f"set local {name} = {value}")
                    cur.execute(text, dict(params))
                    if cur.description is None:
                        return [], []
                    return [column.name for column in cur.description], cur.fetchall()

        # one statement is its own transaction: one the server chose as a deadlock's victim (a
        # read meeting a config copy being replaced), or one a shard move overtook on Citus,
        # had no effect and runs again
        return retry(
            once,
            attempts=_STATEMENT_ATTEMPTS,
            on=lambda exc: isinstance(exc, self.conflicts[0]) or self._moved_shard(exc),
        )

    def _moved_shard(self, exc: Exception) -> bool:
        """Citus: a statement planned against a shard's old placement, run on its worker after
        a shard move (citus_rebalance_start) dropped it: `relation "line_102008" does not
        exist` from that worker. Planned again, it reads the new placement."""
        import psycopg

        return (
            self.citus
            and isinstance(exc, psycopg.errors.UndefinedTable)
            and "while executing command on" in (exc.diag.context or "")
        )

    def columns(self, sql: str, params: Mapping[str, Any]) -> dict[str, list[Any]]:
        """`sql`'s result as columns (name -> values), as DuckDB's fetchnumpy gives them."""
        names, rows = self._execute(sql, params, LineError, None, json_as_text=False)
        return {name: [row[i] for row in rows] for i, name in enumerate(names)}

    @contextlib.contextmanager
    def reading(self) -> Iterator[_Cursor]:
        """A cursor to read with (autocommit: each statement sees what is committed), called as
        a DuckDB cursor is; JSON values as their text."""
        with self._pool.connection() as con, con.cursor() as cur:
            yield _Cursor(cur, materialize=self.citus)

    @contextlib.contextmanager
    def only_one(self, name: str) -> Iterator[bool]:
        """Whether this caller holds the one run of `name` among every process on the database
        (False: another holds it): a session advisory lock, held on a connection of its own
        while the run lasts."""
        with self._pool.connection() as con:
            key = ("rolemem." + name,)
            [(held,)] = con.execute("select pg_try_advisory_lock(hashtext(%s))", key).fetchall()
            try:
                yield bool(held)
            finally:
                if held:
                    con.execute("select pg_advisory_unlock(hashtext(%s))", key)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[_Cursor]:
        """A cursor in one transaction, called as a DuckDB cursor is; an error rolls it back."""
        with self._pool.connection() as con, con.transaction(), con.cursor() as cur:
            yield _Cursor(cur, materialize=self.citus)

    def run_all(self, statements: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        """Write statements in one transaction: all or nothing."""
        with self.transaction() as cur:
            for sql, params in statements:
                cur.execute(sql, params)

    def replace_tables(
        self,
        source: Any,
        names: Sequence[str],
        indexes: Mapping[str, Sequence[Sequence[str]]] | None = None,
        *,
        reference: bool = True,
    ) -> None:
        """Tables `names` of the DuckDB connection `source`, copied into the schema in one
        transaction (what was there is replaced): config-derived tables a statement reads.
        `indexes`: the column lists to index per table. On Citus they are reference tables;
        `reference=False`: plain tables of the node connected to, for tables no statement joins
        to a player's rows (Citus plans none of the statements that read only them, and
        PostgreSQL caches their plans as on one server). Text compares as bytes (collation C),
        as DuckDB compares it; the tables are analysed for the planner. A table that is there
        with the same columns keeps its relation and only its rows are replaced: a view
        someone else built on it (an analyst's) never stops the service from starting."""
        from psycopg import sql

        with self._pool.connection() as con, con.transaction(), con.cursor() as cur:
            # one process at a time: several service processes start with the same copies
            cur.execute("select pg_advisory_xact_lock(hashtext('rolemem.replace_tables'))")
            if self.citus:  # tables made, filled and analysed in one transaction: one
                # connection a node, the coordinator's copy written through it as the others
                cur.execute("set local citus.multi_shard_modify_mode to 'sequential'")
                cur.execute("set local citus.enable_local_execution to off")
            for name in names:
                columns = source.execute(
                    "select column_name, data_type from duckdb_columns() "
                    "where table_name = $name and schema_name = 'main' order by column_index",
                    {"name": name},
                ).fetchall()
                table = sql.Identifier(self.schema, name)
                cur.execute(
                    """select column_name, data_type, coalesce(collation_name, '')
                    from information_schema.columns
                    where table_schema = %(schema)s and table_name = %(name)s
                    order by ordinal_position""",
                    {"schema": self.schema, "name": name},
                )
                wanted = [
                    (column, _TYPES[kind], "C" if kind == "VARCHAR" else "")
                    for column, kind in columns
                ]
                is_same = cur.fetchall() == wanted
                if is_same and self.citus and not reference:
                    # a reference table (an earlier rolemem made one): made again, plain
                    is_same = not _citus_shape(cur, f"{self.schema}.{name}")[0]
                if is_same:
                    cur.execute(sql.SQL("truncate table {}").format(table))
                else:
                    cur.execute(sql.SQL("drop table if exists {}").format(table))
                    cur.execute(
                        sql.SQL("create table {} ({})").format(
                            table,
                            sql.SQL(", ").join(
                                sql.SQL("{} {}").format(sql.Identifier(column), sql.SQL(kind))
                                + sql.SQL(' collate "C"' if collation else "")
                                for column, kind, collation in wanted
                            ),
                        )
                    )
                if self.citus and reference:
                    # every worker joins it to a player's rows: a reference table (one made
                    # before the database had the extension too: a store distributed in place)
                    distributed, whole_row = _citus_shape(cur, f"{self.schema}.{name}")
                    if not distributed:
                        cur.execute("select create_reference_table(%s)", (f"{self.schema}.{name}",))
                    if not whole_row:
                        # a worker added later gets its copy by logical replication
                        # (citus_rebalance_start), which refuses a table without a replica
                        # identity; these have no key, and are only truncated and refilled
                        # (no old row is ever logged): the whole row costs nothing
                        cur.execute(sql.SQL("alter table {} replica identity full").format(table))
                selected = ", ".join(
                    f'cast("{column}" as varchar)' if kind == "JSON" else f'"{column}"'
                    for column, kind in columns
                )
                rows = source.execute(f'select {selected} from "{name}"').fetchall()
                with cur.copy(sql.SQL("copy {} from stdin").format(table)) as copy:
                    for row in rows:
                        copy.write_row(row)
                for index in () if is_same else (indexes or {}).get(name, ()):
                    cur.execute(
                        sql.SQL("create index on {} ({})").format(
                            table, sql.SQL(", ").join(map(sql.Identifier, index))
                        )
                    )
                cur.execute(sql.SQL("analyze {}").format(table))

    def close(self) -> None:
        self._pool.close()

    def __exit__(self, *exc: object) -> None:
        self.close()
