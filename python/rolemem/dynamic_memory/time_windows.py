"""The time window a query names, computed before the recall statement on the embedded store
(which then plans none of model int_memory_query_time_windows' ~30 operators), and the
answer to whether a batch plans a window at all, on every engine. The model and its macros
(time_expression_window, calendar_day_start) stay the rule that dbt builds and analysts
read; test_time_windows_fast_path holds this equal to them, text for text. A clock whose
windows leave Python's calendar (years 1-9999) is left to the model (`rows` answers None)."""

from __future__ import annotations

import calendar
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import Any

import duckdb

# the model's space, spelled out (Python's \s would also take Unicode spaces, PostgreSQL's a
# vertical tab, and U+3000 under a UTF-8 collation)
_SPACE = "[\t\n\f\r ]"
# the model's year_pattern, day_after and day_before; its $ is the end of the text only (\Z)
_YEAR = re.compile(r"(?:^|[^0-9$¥￥])((?:19|20)[0-9]{2})(?:[^0-9块元万千百个人多岁%]|\Z)")
_DAY_AFTER = _SPACE + r"*([0-9]{1,2})(?:st|nd|rd|th|日|号)?(?:[^0-9]|\Z)"
_DAY_BEFORE = r"(?:^|[^0-9])([0-9]{1,2})(?:st|nd|rd|th)?" + _SPACE + r"+(?:of" + _SPACE + "+)?"

# start, end (None: a seed row naming no window, as the model's nulls) and the expressions
Window = tuple[datetime | None, datetime | None, list[str]]


@dataclass(frozen=True)
class Expression:
    """A row of the seed time_expressions."""

    expression: str
    unit: str
    step: int | None
    start_hour: int | None
    end_hour: int | None
    month_number: int | None
    day_number: int | None
    days: int | None


@dataclass(frozen=True)
class TimeWindows:
    """The seed's expressions, read once when a store is opened (as the settings are)."""

    expressions: tuple[Expression, ...]

    @classmethod
    def read(cls, cur: duckdb.DuckDBPyConnection) -> TimeWindows:
        columns = ", ".join(column.name for column in fields(Expression))
        rows = cur.execute(f"select {columns} from time_expressions").fetchall()
        return cls(tuple(Expression(*row) for row in rows))

    def window(self, text: str, now: datetime) -> Window | None:
        """The window `text` names relative to `now` and the expressions that name it (the
        model's window_start, window_end and time_expressions), or None."""
        matched = [e for e in self.expressions if e.expression in text]
        # a longer expression wins over one it contains (十一月 over 一月)
        kept = [
            e
            for e in matched
            if not any(
                other.expression != e.expression and e.expression in other.expression
                for other in matched
            )
        ]
        year = _YEAR.search(text)
        written_year = int(year.group(1)) if year else None
        year_steps = [now.year + e.step for e in kept if e.unit == "year" and e.step is not None]
        named_year = min(year_steps) if year_steps else written_year
        names = sorted(e.expression for e in kept)
        if written_year is not None:
            names = sorted([*names, str(written_year)])
        if not names:
            return None
        windows = [span for e in kept if (span := _window(e, text, now, named_year)) is not None]
        if written_year is not None:
            windows.append((datetime(written_year, 1, 1), datetime(written_year + 1, 1, 1)))
        if not windows:  # seed rows naming no window: the model's row of nulls
            return None, None, names
        start, end = max(w[0] for w in windows), min(w[1] for w in windows)
        if start < end:
            return start, end, names
        # they do not overlap: the shortest, the earliest of equal ones
        start, end = min(windows, key=lambda w: (w[1] - w[0], w[0]))
        return start, end, names

    def rows(self, inputs: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]] | None:
        """The batch's windows bound as sql.FAST_TIME_WINDOWS' lists (query_id from 1); None
        when a query's clock takes a window out of Python's calendar (the model then decides,
        in the statement)."""
        bound: dict[str, list[Any]] = {f"windows_{name}": [] for name in WINDOW_COLUMNS}
        for query_id, values in enumerate(inputs, 1):
            try:
                found = self.window(values["query_text"], values["now"])
            except (OverflowError, ValueError):
                return None
            if found is not None:
                for name, value in zip(WINDOW_COLUMNS, (query_id, *found), strict=True):
                    bound[f"windows_{name}"].append(value)
        return bound


WINDOW_COLUMNS = {
    "query_id": "integer",
    "window_start": "timestamp",
    "window_end": "timestamp",
    "time_expressions": "varchar[]",
}


def _window(
    e: Expression, text: str, now: datetime, named_year: int | None
) -> tuple[datetime, datetime] | None:
    """One expression's window (macro time_expression_window), narrowed to the day written
    beside a month (the model's dated and day_starts); None for a seed row without what its
    unit needs (the model's nulls)."""
    day = datetime(now.year, now.month, now.day)
    if e.unit in ("day", "week", "month", "year"):
        if e.step is None:
            return None
        step = e.step
        if e.unit == "day":
            start = day + timedelta(days=step)
            end_hour = 24 if e.end_hour is None else e.end_hour
            return start + timedelta(hours=e.start_hour or 0), start + timedelta(hours=end_hour)
        if e.unit == "week":
            monday = day - timedelta(days=day.weekday())
            return monday + timedelta(weeks=step), monday + timedelta(weeks=step + 1)
        if e.unit == "month":
            first = day.replace(day=1)
            return _months(first, step), _months(first, step + 1)
        return datetime(now.year + step, 1, 1), datetime(now.year + step + 1, 1, 1)
    if e.month_number is None:
        return None
    if e.unit == "annual_date":
        if e.day_number is None:
            return None
        start = _calendar_day_start(e.month_number, e.day_number, now, named_year)
        return start, start + timedelta(days=1 if e.days is None else e.days)
    if e.unit != "month_of_year":
        return None
    start = _calendar_day_start(e.month_number, 1, now, named_year)
    match = re.search(e.expression + _DAY_AFTER, text) or re.search(
        _DAY_BEFORE + e.expression, text
    )
    written_day = int(match.group(1)) if match else None
    if written_day is None or not 1 <= written_day <= 31:
        return start, _months(start, 1)
    day_start = start + timedelta(days=written_day - 1)
    if named_year is None and day_start > now:
        day_start = _years_back(day_start)
    return day_start, day_start + timedelta(days=1)


def _calendar_day_start(month: int, day: int, now: datetime, named_year: int | None) -> datetime:
    """Macro calendar_day_start: that day in `named_year`, or (none) in the latest year where
    it is not after `now`."""
    if named_year is not None:
        return datetime(named_year, month, day)
    this_year = datetime(now.year, month, day)
    return this_year if this_year.date() <= now.date() else datetime(now.year - 1, month, day)


def _months(start: datetime, months: int) -> datetime:
    """A month's first day `months` later (the windows' months start on the first)."""
    index = start.year * 12 + start.month - 1 + months
    return start.replace(year=index // 12, month=index % 12 + 1)


def _years_back(at: datetime) -> datetime:
    """`at` a year earlier, 29 February becoming the 28th (as `- interval '1 year'`)."""
    last = calendar.monthrange(at.year - 1, at.month)[1]
    return at.replace(year=at.year - 1, day=min(at.day, last))
