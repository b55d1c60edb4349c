"""Time in dynamic memory: the window a text names (昨晚, 去年圣诞…) and how a time reads in the
prompt, both by the project's SQL."""

from __future__ import annotations

import functools
from datetime import datetime, timedelta

from ..engines import duckdb_connect
from ..sql.project import compose, render_macro
from .checks import checked_text, naive_time

_TIME_QUERY_SQL = """
    select 1 as query_id, cast($text as varchar) as query_text, cast($now as timestamp) as now
"""


def time_window(text: str, now: datetime) -> tuple[datetime, datetime] | None:
    """The time window `text` names relative to `now` (昨晚, 上周, 三月, 去年圣诞…), as the
    recall prefers it (model int_memory_query_time_windows over the seed time_expressions),
    or None when it names none."""
    checked_text(text, "text")
    sql = compose(
        "int_memory_query_time_windows",
        {"int_memory_queries": _TIME_QUERY_SQL},
        "select window_start, window_end from int_memory_query_time_windows",
        existing=("time_expressions",),
    )
    cur = duckdb_connect.scratch_seeded("time_expressions")
    rows = cur.run(sql, {"text": text, "now": naive_time(now, "now")})
    return (rows[0][0], rows[0][1]) if rows else None


@functools.cache
def _format_time_sql() -> str:
    return "select " + render_macro(
        "format_memory_time", "cast($ts as timestamp)", "cast($now as timestamp)"
    )


def format_memory_time(ts: datetime, now: datetime) -> str:
    """How `ts` reads in the prompt relative to `now` (runs the SQL macro format_memory_time)."""
    rows = duckdb_connect.scratch_cursor().run(
        _format_time_sql(), {"ts": naive_time(ts, "ts"), "now": naive_time(now, "now")}
    )
    return rows[0][0]


def memory_time_text(ts: datetime | None, now: datetime) -> str | None:
    """Macro format_memory_time written out, for the embedded recall's shown events (their
    other fields come from memory: event_fields); test_event_fields holds it equal to the
    macro. Years are four digits, as DuckDB's strftime writes them."""
    if ts is None:
        return None
    day = f"{ts.year:04d}-{ts.month:02d}-{ts.day:02d}"
    if ts.date() == now.date():
        return f"{day} {ts.hour:02d}:{ts.minute:02d}"
    if now - ts < timedelta(days=7):
        return f"{day} {ts.hour:02d}点"
    if now - ts < timedelta(days=30):
        return f"{day} {'上午' if 6 <= ts.hour < 12 else '下午' if 12 <= ts.hour < 18 else '晚上'}"
    return day
