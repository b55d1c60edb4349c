"""A player's BM25 postings held in memory, so a recall statement plans no BM25 (model
int_memory_query_lexical written out, over the words recall_words computed).

An event's postings never change once written (a new description is a new event with a new
id; keywords are not editable), so the cache loads only the events it has not seen. What can
change, the set of reachable events (added, deleted, archived, forgotten) and their lengths,
is read on every recall (`reachable`), and a posting counts only if its event is among them,
so document frequencies, the event count and the average length are exact. A migration that
recomputes postings runs before a process opens the store. Bounded by postings held (least
recently used players go first; a posting takes ~67 bytes, measured on a 40,000-event player's
716,482, so the default 2,000,000 is ~130 MB); thread-safe. test_recall_fast_path holds the
rows equal to the model's."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..sql.project import render_macro
from ..text.recall_words import Word
from .reachable import Fetch, Reachable
from .sql import with_official

_LOAD = with_official("int_memory_event_terms_with_official", render_macro("event_postings_by_id"))


# a query's BM25 rows as columns: event ids, bm25_raw (None: null), word_tier
Lexical = tuple[list[int], list[float | None], list[float]]


class _Term:
    """A term's postings: event ids, keyword, description and tag counts, as lists appended
    and as arrays made again only after they grew (under the cache's lock: another thread may
    be appending)."""

    def __init__(self) -> None:
        self.lists: tuple[list[int], ...] = ([], [], [], [])
        self._arrays: tuple[np.ndarray, ...] = tuple(np.zeros(0, dtype=np.int64) for _ in range(4))

    def add(self, row: tuple[int, int, int, int]) -> None:
        for values, value in zip(self.lists, row, strict=True):
            values.append(value)

    def arrays(self) -> tuple[np.ndarray, ...]:
        if len(self._arrays[0]) != len(self.lists[0]):
            self._arrays = tuple(np.array(values, dtype=np.int64) for values in self.lists)
        return self._arrays


class _Player:
    """The postings of the events seen, by term."""

    def __init__(self) -> None:
        self.seen = np.zeros(0, dtype=np.int64)  # ascending
        self.terms: defaultdict[str, _Term] = defaultdict(_Term)
        self.size = 0


class EventPostingsCache:
    """BM25 rows of a query's words over one player's reachable events."""

    def __init__(self, max_postings: int = 2_000_000) -> None:
        self.max_postings = max_postings
        self._players: OrderedDict[tuple[str, str], _Player] = OrderedDict()
        self._lock = threading.Lock()

    def lexical(
        self,
        fetch: Fetch,
        query: Mapping[str, Any],
        words: Sequence[Word],
        reachable: Reachable,
    ) -> Lexical:
        """The event ids, bm25_raw and word_tier of each reachable event sharing a word with
        the query: model int_memory_query_lexical's rows for one query (numpy over the
        postings of its words). `reachable`: the query's events (official and the player's
        own: read_reachable) with their token counts."""
        ids, lengths = reachable.ids, reachable.lengths
        if not len(ids) or not words:
            return [], [], []
        known = ~np.isnan(lengths)
        average = max(float(lengths[known].sum()) / int(known.sum()), 1.0) if known.any() else 1.0
        k1, b = query["bm25_k1"], query["bm25_b"]
        postings = self._postings(fetch, (query["agent_id"], query["user_id"]), ids, words)
        rows, scores, tiers = [], [], []
        for word, source, _, _ in words:
            if word not in postings:
                continue
            events, keyword, description, tags = postings[word]
            at = np.minimum(np.searchsorted(ids, events), len(ids) - 1)
            long_word = len(word) > 1
            kept = (ids[at] == events) & ((keyword > 0) | long_word)
            if not kept.any():
                continue
            at, keyword, description, tags = at[kept], keyword[kept], description[kept], tags[kept]
            weight = 1.0 if source == "token" else query["expanded_word_weight"]
            frequency = len(at)
            idf = math.log(1 + (len(ids) - frequency + 0.5) / (frequency + 0.5))
            count = keyword + description if long_word else keyword
            norm = 1 - b + b * lengths[at] / average
            rows.append(at)
            scores.append(weight * idf * count * (k1 + 1) / (count + k1 * norm))
            tiers.append(
                weight
                * np.where(
                    tags > 0,
                    query["tier_exact_tag"],
                    np.where(keyword > 0, query["tier_partial_tag"], query["tier_partial_content"]),
                )
            )
        if not rows:
            return [], [], []
        events, inverse = np.unique(np.concatenate(rows), return_inverse=True)
        score = np.concatenate(scores)
        total = np.zeros(len(events))
        np.add.at(total, inverse, np.nan_to_num(score, nan=0.0))
        # a sum of nulls is null (an event without a token count), as in SQL
        counted = np.zeros(len(events), dtype=np.int64)
        np.add.at(counted, inverse, ~np.isnan(score))
        best = np.full(len(events), -np.inf)
        np.maximum.at(best, inverse, np.concatenate(tiers))
        bm25: list[float | None] = list(total.tolist())
        for position in np.flatnonzero(counted == 0).tolist():
            bm25[position] = None
        return ids[events].tolist(), bm25, best.tolist()

    def _postings(
        self, fetch: Fetch, key: tuple[str, str], ids: np.ndarray, words: Sequence[Word]
    ) -> dict[str, tuple[np.ndarray, ...]]:
        """The postings of `words` held for the player, once every event of `ids` is loaded."""
        with self._lock:
            player = self._players.pop(key, None) or _Player()
            missing = ids[~np.isin(ids, player.seen, assume_unique=True)]
            if len(missing):
                loaded = fetch(_LOAD, {"ids": missing.tolist()})  # columns in _LOAD's order
                for event, term, keyword, description, tags in zip(
                    *(_values(column) for column in loaded.values()), strict=True
                ):
                    player.terms[term].add((event, keyword, description, tags))
                    player.size += 1
                player.seen = np.union1d(player.seen, missing)
            self._players[key] = player  # most recently used last
            total = sum(p.size for p in self._players.values())
            while total > self.max_postings and len(self._players) > 1:
                _, evicted = self._players.popitem(last=False)
                total -= evicted.size
            return {word: player.terms[word].arrays() for word, *_ in words if word in player.terms}


def _values(column: Any) -> list[Any]:
    """A fetched column as values, None for null (a masked numpy array's tolist)."""
    return column.tolist() if hasattr(column, "tolist") else list(column)
