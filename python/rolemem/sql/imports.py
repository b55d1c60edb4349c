"""A model's import CTEs read in place: `events as (select * from int_memory_events)` and its
readers' `from events` become `from int_memory_events as events`, and a `with` ending in
`select * from final` ends in final's own select.

dbt models name what they read at the top (the house style keeps that), but DuckDB binds every
CTE scope of a statement on every call: a composed per-turn statement holds a hundred such
layers. The rows are the same; the models stay as written for dbt and for readers.
"""

from __future__ import annotations

import functools
from typing import Any


def _import_target(select: Any, own_with: bool = False) -> str | None:
    """The relation a select only reads whole (`select * from name`, nothing else), or None;
    `own_with`: whatever `with` the select holds does not count (its final select)."""
    from sqlglot import exp

    if not isinstance(select, exp.Select) or select.args.get("distinct"):
        return None
    if len(select.expressions) != 1 or not isinstance(select.expressions[0], exp.Star):
        return None
    clauses = ["joins", "where", "group", "having", "qualify", "order", "limit"]
    if not own_with:
        clauses.append("with_")
    if any(select.args.get(clause) for clause in clauses):
        return None
    source = select.args.get("from_")
    table = None if source is None else source.this
    if not isinstance(table, exp.Table) or table.alias or table.args.get("db"):
        return None
    return str(table.name)


def _read_in_place(query: Any) -> Any:
    """`query` (a select or union with a `with`) with its imports read in place; the query
    that replaces it (final's select) or itself."""
    from sqlglot import exp

    with_ = query.args.get("with_")
    if with_ is None or with_.args.get("recursive"):
        return query
    # names defined again in a deeper `with` mean something else there
    deeper = {
        cte.alias
        for inner in query.find_all(exp.With)
        if inner is not with_
        for cte in inner.expressions
    }
    imports: dict[str, str] = {}
    kept = []
    read_before: set[str] = set()  # an earlier CTE reading the name reads an outer relation
    for position, cte in enumerate(with_.expressions):
        target = None if cte.args.get("materialized") is not None else _import_target(cte.this)
        # a later CTE of the target's name would take over the moved reference
        later = {after.alias for after in with_.expressions[position + 1 :]}
        if target is None or cte.alias in deeper | read_before or target in deeper | later:
            kept.append(cte)
        else:
            imports[cte.alias] = imports.get(target, target)
        read_before |= {table.name for table in cte.this.find_all(exp.Table)}
    for table in list(query.find_all(exp.Table)):
        if not table.args.get("db") and table.name in imports:
            alias = table.alias or table.name
            table.replace(exp.to_table(imports[table.name]).as_(alias))
    with_.set("expressions", kept)
    last = kept[-1] if kept else None
    if (
        last is not None
        and _import_target(query, own_with=True) == last.alias
        and last.alias not in deeper
        and last.this.args.get("with_") is None
        and isinstance(last.this, (exp.Select, exp.SetOperation))
        and not last.args.get("materialized")
    ):
        # `select * from final`: final's query is the model's, the CTEs before it its `with`
        body = last.this
        kept.pop()
        body.set("with_", exp.With(expressions=kept) if kept else None)
        return body
    if not kept:
        with_.pop()
    return query


def read_imports_in_place(tree: Any) -> Any:
    """`tree` (a parsed statement) with the import CTEs of each of its `with`s read in place,
    the deepest first; the tree that replaces it where its own final select does."""
    from sqlglot import exp

    queries: list[Any] = [with_.parent for with_ in tree.find_all(exp.With)]
    for query in reversed(queries):  # the deepest first
        replacement = _read_in_place(query)
        if replacement is not query:
            if query is tree:
                tree = replacement
            else:
                query.replace(replacement)
    return tree


@functools.lru_cache(maxsize=2048)
def inline_imports(sql: str) -> str:
    """`sql` (one model, DuckDB's dialect) with the import CTEs of each of its `with`s read in
    place; a `with` is left as written where a name is defined again deeper inside or it is
    recursive. Cached: a model most plan variables leave alone is parsed once, not once per
    statement variant."""
    from sqlglot import parse_one

    tree = parse_one(sql, read="duckdb")
    as_written = tree.sql(dialect="duckdb")
    result = str(read_imports_in_place(tree).sql(dialect="duckdb"))
    return sql if result == as_written else result  # unchanged: the model's own text
