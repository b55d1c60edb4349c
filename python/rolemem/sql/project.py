"""Render the dbt project's models with plain Jinja and compose them into one query.

The Python path runs exactly the SQL dbt runs: each model file is rendered with a small stand-in
for dbt's Jinja context (`ref`, `source`, `var`, `config`, `adapter.dispatch`) and becomes a CTE
named after the model. Callers replace relations (a source, or a whole model) with their own CTEs
of bound parameters, so per-turn queries stay small and never format caller values into SQL.
dbt itself is never imported.
"""

from __future__ import annotations

import functools
import re
import textwrap
from collections.abc import Hashable, Iterable, Mapping
from pathlib import Path
from typing import Any

import jinja2

from .imports import inline_imports

_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # rolemem/, beside _models/ _macros/ _seeds/
_REF = re.compile(r"""\bref\(\s*['"](\w+)['"]\s*\)""")


def project_dir(kind: str) -> Path:
    """`models`/`macros`/`seeds` shipped in the wheel (rolemem/_models…) or the checkout's."""
    shipped = _PACKAGE_DIR / f"_{kind}"
    if shipped.is_dir():
        return shipped
    return _PACKAGE_DIR.parents[1] / kind


@functools.cache
def model_paths() -> dict[str, Path]:
    return {path.stem: path for path in sorted(project_dir("models").rglob("*.sql"))}


@functools.cache
def _model_text(name: str) -> str:
    try:
        return model_paths()[name].read_text(encoding="utf-8")
    except KeyError:
        raise KeyError(f"no dbt model named {name!r}") from None


def model_refs(name: str) -> list[str]:
    return list(dict.fromkeys(_REF.findall(_model_text(name))))


ENGINES = ("duckdb", "postgres", "citus")
# the engines a macro falls back to, in order, before `default__` (Citus is PostgreSQL
# sharded by player: PostgreSQL's macro unless it has one of its own)
_FALLBACKS = {"duckdb": ("duckdb",), "postgres": ("postgres",), "citus": ("citus", "postgres")}


class _Adapter:
    """Enough of dbt's `adapter` for `adapter.dispatch`: the engine's macro (`duckdb__…`,
    `postgres__…`, `citus__…` then `postgres__…`) first, then `default__…`, as dbt
    dispatches for its target."""

    def __init__(self, engine: str) -> None:
        self.engine = engine
        self.macros: Any = None

    def dispatch(self, name: str, package: str | None = None) -> Any:
        for prefix in (*(f"{engine}__" for engine in _FALLBACKS[self.engine]), "default__"):
            macro = getattr(self.macros, prefix + name, None)
            if macro is not None:
                return macro
        raise jinja2.UndefinedError(f"no implementation of macro {name!r}")


@functools.cache
def _environment(engine: str = "duckdb") -> jinja2.Environment:
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, extensions=["jinja2.ext.do"])
    adapter = _Adapter(engine)
    env.globals.update(
        adapter=adapter,
        config=lambda *args, **kwargs: "",
        is_incremental=lambda: False,
        # Citus is a PostgreSQL database to every macro asking for the target's type
        target={"type": "postgres" if engine == "citus" else engine, "name": "python"},
    )
    macro_text = "\n".join(
        path.read_text(encoding="utf-8") for path in sorted(project_dir("macros").rglob("*.sql"))
    )
    adapter.macros = env.from_string(macro_text).module
    env.globals.update(
        {
            name: getattr(adapter.macros, name)
            for name in dir(adapter.macros)
            if not name.startswith("_")
        }
    )
    return env


def render_macro(name: str, *args: Any, engine: str = "duckdb") -> str:
    """A project macro called with SQL expressions (e.g. bound parameters) as arguments,
    dispatched for `engine`."""
    adapter: Any = _environment(engine).globals["adapter"]
    return str(getattr(adapter.macros, name)(*args)).strip()


@functools.cache
def write_sql(name: str, *args: Hashable, engine: str = "duckdb") -> str:
    """A statement of macros/writes/ (or a read macro of macros/rules/ run alone; its `$name`
    parameters bound by the caller), rendered once per arguments and engine: the per-call cost
    is a dict lookup."""
    # the macro's body is indented in its file; its first line is not (the tag strips it)
    head, _, rest = render_macro(name, *args, engine=engine).partition("\n")
    return f"{head}\n{textwrap.dedent(rest)}" if rest else head


def update_else_upsert(
    cur: Any, update: str, upsert: str, params: Mapping[str, Any], *, engine: str
) -> None:
    """Write a row with the write macro `update` (answering the rows it changed: the one
    place its values are said); when it changed none, `upsert` makes the row and `update`
    runs again; in the caller's transaction. An UPDATE costs DuckDB a fraction of an upsert,
    and the row is nearly always there."""
    changed = write_sql(update, engine=engine)
    if not cur.execute(changed, used(changed, params)).fetchall():
        made = write_sql(upsert, engine=engine)
        cur.execute(made, used(made, params))
        cur.execute(changed, used(changed, params)).fetchall()


# a bound parameter in rolemem's SQL
PARAMETER = re.compile(r"\$(\w+)")


def used(sql: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters `sql` names (DuckDB refuses any it does not)."""
    names = set(PARAMETER.findall(sql))
    return {name: value for name, value in params.items() if name in names}


def render_model(
    name: str, relations: Mapping[str, str], variables: Mapping[str, Any], engine: str = "duckdb"
) -> str:
    """Model SQL with every ref/source replaced by the relation name the caller chose, its
    macros dispatched for `engine`."""

    def ref(model: str) -> str:
        return relations.get(model, model)

    def source(source_name: str, table: str) -> str:
        # a source is whatever the caller provides as the CTE `source_<table>`, else the
        # caller's existing table of the source's name (e.g. the config tables)
        stand_in = f"source_{table}"
        if stand_in not in relations and table in relations:
            return relations[table]
        return relations.get(f"{source_name}.{table}", stand_in)

    def var(key: str, default: Any = None) -> Any:
        return variables.get(key, default)

    return _template(name, engine).render(ref=ref, source=source, var=var).strip()


@functools.cache
def _template(name: str, engine: str) -> jinja2.Template:
    # compiled once: a statement variant (other plan variables) renders its models again
    return _environment(engine).from_string(_model_text(name))


def _dependency_order(targets: tuple[str, ...], provided: set[str]) -> list[str]:
    order: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        # provided relations and seeds (not models) are leaves: tables or caller CTEs
        if name in seen or name in provided or name not in model_paths():
            return
        seen.add(name)
        for parent in model_refs(name):
            visit(parent)
        order.append(name)

    for target in targets:
        visit(target)
    return order


_LINE_COMMENT = re.compile(r"--[^\n]*")


def _cte_mode(name: str, texts: list[tuple[str, str]], own: str, engine: str) -> str:
    # `texts`: each text and it without its comments, which name relations they do not read
    # (materialising a relation read once costs a copy of its rows: the official staging
    # models' comments name their player twins)
    word = re.compile(rf"\b{name}\b")
    if sum(len(word.findall(bare)) for text, bare in texts if text is not own) <= 1:
        return "as"
    if engine != "duckdb" and name.startswith("source_"):
        return "as not materialized"
    return "as materialized"


@functools.cache
def _compose(
    targets: tuple[str, ...],
    provided: tuple[tuple[str, str], ...],
    select: str,
    variables: tuple[tuple[str, Any], ...],
    existing: frozenset[str],
    engine: str,
    renamed: tuple[tuple[str, str], ...] = (),
    narrowed: frozenset[str] = frozenset(),
) -> str:
    leaves = {name for name, _ in provided} | existing | {name for name, _ in renamed}
    relations = {name: name for name in leaves} | dict(renamed)
    models = [
        (name, render_model(name, relations, dict(variables), engine))
        for name in _dependency_order(targets, leaves)
    ]
    # only the CTEs something reads: an unused provided one would still need its parameters,
    # and DuckDB binds every CTE of the statement, read or not, on every call (a model a var
    # left out of its reader's branch, a target the select does not ask for)
    ctes: list[tuple[str, str]] = []
    readers = [select]
    for name, sql in reversed(list(provided) + models):
        if any(re.search(rf"\b{name}\b", text) for text in readers):
            ctes.insert(0, (name, sql))
            readers.append(sql)
    if engine == "duckdb" and narrowed:
        # the readers as written, comments too: a name only a comment holds keeps its column
        # (harmless), where stripping `--` would also cut a string literal holding it
        ctes = [
            (name, _narrowed(sql, [text for text in readers if text is not sql]))
            if name in narrowed
            else (name, sql)
            for name, sql in ctes
        ]
    # A relation read more than once (the walk feeds both the problem check and the history;
    # the player's events feed postings, vectors and scores) is materialised; otherwise DuckDB
    # would run it, recursion included, once per reader.
    # On another engine a caller's source (`source_<table>`: the table's rows read through its
    # indexes) is read again by each reader instead (the timeline reads a player's newest
    # events by index, not from a copy of them all).
    texts = [(text, _LINE_COMMENT.sub("", text)) for text in [sql for _, sql in ctes] + [select]]
    # DuckDB binds every CTE scope on every call: a model's imports are read in place there.
    # PostgreSQL plans once per connection, and its transpiler reads the models as written.
    flattened = {name for name, _ in models} if engine == "duckdb" else set()
    parts = [
        f"{name} {_cte_mode(name, texts, sql, engine)} (\n"
        f"{inline_imports(sql) if name in flattened else sql}\n)"
        for name, sql in ctes
    ]
    return "with\n" + ",\n".join(parts) + f"\n{select}"


# a column of a select of one row per request (request_rows_sql on DuckDB): one a line
_ROW_COLUMN = re.compile(r"^\s+.+ as (\w+),?$")


def _narrowed(sql: str, readers: list[str]) -> str:
    """A provided select of one row per request (request_rows_sql on DuckDB: a column a line,
    no FROM) without the columns no reader names: DuckDB binds every column of a CTE on every
    call, read or not (a recall's queries carry ~50 settings). Its first column, the key,
    always stays; any other text is returned as it is. Only for a relation whose readers name
    every column they use: a `select *` of it that reaches the answer would lose the rest."""
    head, *lines = sql.strip("\n").split("\n")
    names = [match.group(1) for match in map(_ROW_COLUMN.match, lines) if match]
    if head.strip() != "select" or not lines or len(names) != len(lines):
        return sql
    kept = [
        line.rstrip(",")
        for number, (line, name) in enumerate(zip(lines, names, strict=True))
        if number == 0 or any(re.search(rf"\b{name}\b", text) for text in readers)
    ]
    return f"{head}\n" + ",\n".join(kept) + "\n"


def compose(
    target: str | tuple[str, ...],
    provided: Mapping[str, str],
    select: str,
    variables: Mapping[str, Any] | None = None,
    existing: Iterable[str] = (),
    engine: str = "duckdb",
    renamed: Mapping[str, str] | None = None,
    narrowed: Iterable[str] = (),
) -> str:
    """One `with` query: the caller's CTEs (`provided`, e.g. bound-parameter inputs standing in
    for a source `source_line` or a whole model), then every model `target` needs that is not
    `existing` (already a table of that name), then `select`. `target` may name several
    models. The text is cached; the caller's CTEs hold `$name` parameters, never values.
    The text is DuckDB's dialect; `engine` picks the dispatch macros (rolemem.engines
    transpiles it for another engine). `renamed`: models or seeds that are existing tables of
    another name (name -> table). `narrowed`: provided selects of one row per request
    (request_rows_sql) whose columns no other part reads are left out on DuckDB."""
    targets = (target,) if isinstance(target, str) else tuple(target)
    return _compose(
        targets,
        tuple(provided.items()),
        select,
        tuple(sorted((variables or {}).items())),
        frozenset(existing),
        engine,
        tuple(sorted((renamed or {}).items())),
        frozenset(narrowed),
    )
