"""Model int_memory_query_signals written out in Python: a batch's BM25 rows (postings_cache),
dense candidates (vector_cache) and the events created inside the window each text names
(time_windows), one row per (query, event). The embedded store's recall binds these rows
(sql.FAST_SIGNALS), so its statement plans none of the union; the model stays the rule, and
test_recall_follows_every_write holds the two equal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .reachable import Reachable
from .sql import COSINE_NAMES, LEXICAL_COLUMNS, SIGNAL_COLUMNS


def signal_rows(
    lexical: Mapping[str, Sequence[Any]],
    dense: Mapping[str, np.ndarray] | None,
    windows: Mapping[str, Sequence[Any]] | None,
    reachable: Sequence[Reachable],
) -> dict[str, list[Any]]:
    """The batch's signal rows as bound lists (`signals_<column>`). `lexical`: the BM25 rows
    (`lexical_<column>`); `dense`: the dense candidates, None when the batch plans none (var
    recall_dense); `windows`: the windows the texts name (`windows_<column>`), None when no
    text names one (var recall_time_windows); `reachable`: each query's events, with their
    creation times."""
    rows = {
        (query_id, event_id): [bm25, tier, None, None, None, False]
        for query_id, event_id, bm25, tier in zip(
            *(lexical.get(f"lexical_{name}", ()) for name in LEXICAL_COLUMNS), strict=True
        )
    }

    def row(key: tuple[int, int]) -> list[Any]:
        """The key's row, grouped with a signal row (max(): which reads 0.0 where it has no
        word)."""
        found = rows.setdefault(key, [0.0, 0.0, None, None, None, False])
        found[0], found[1] = max(found[0], 0.0), max(found[1], 0.0)
        return found

    if dense is not None:
        for query_id, event_id, *cosines in zip(
            *(dense[name].tolist() for name in ("query_id", "event_id", *COSINE_NAMES)), strict=True
        ):
            row((query_id, event_id))[2:5] = cosines  # one dense row per (query, event)
    for query_id, start, end in zip(
        *((windows or {}).get(f"windows_{name}", ()) for name in _WINDOWS), strict=True
    ):
        events = reachable[query_id - 1]
        created = events.created_at
        inside = (created >= np.datetime64(start)) & (created < np.datetime64(end))
        for event_id in events.ids[inside].tolist():
            row((query_id, event_id))[5] = True
    bound: dict[str, list[Any]] = {f"signals_{name}": [] for name in SIGNAL_COLUMNS}
    for (query_id, event_id), values in rows.items():
        for name, value in zip(SIGNAL_COLUMNS, (query_id, event_id, *values), strict=True):
            bound[f"signals_{name}"].append(value)
    return bound


_WINDOWS = ("query_id", "window_start", "window_end")
