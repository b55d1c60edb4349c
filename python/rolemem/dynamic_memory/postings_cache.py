"""A player's BM25 postings held in memory, so a recall statement plans no BM25 (model
int_memory_query_lexical written out, over the words recall_words computed).

An event's postings never change once written (a new description is a new event with a new
id; keywords are not editable), so the cache loads only the events it has not seen. What can
change, the set of reachable events (added, deleted, archived, forgotten) and their lengths,
is read on every recall (`reachable`), and a posting counts only if its event is among them,
so document frequencies, the event count and the average length are exact. A migration that
recomputes postings runs before a process opens the store. Bounded by postings held (least
recently used players go first); thread-safe. test_recall_fast_path holds the rows equal to
the model's."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ..text.recall_words import Word
from .sql import PLAYER_EVENTS, with_official
from .vector_cache import Fetch

# an event's postings: (term, keyword_count, description_count, tag_count)
_Posting = tuple[str, int, int, int]

_LOAD = with_official(
    "int_memory_event_terms_with_official",
    """select event_id, term, keyword_count, description_count, tag_count
    from int_memory_event_terms_with_official
    where event_id in (select unnest(cast($ids as bigint[])))""",
)


# The batch's reachable events with their owners, so each query takes its own: the union of
# int_memory_events_with_official written out (a per-recall read; the composed model's
# staging costs ~1.2 ms more to plan), narrowed as the recall statement's sources are.
# test_recall_fast_path holds it equal to the model.
REACHABLE = " union all ".join(
    f"select agent_id, scope, user_id, id as event_id, token_count from ({events}) as events"
    for events in PLAYER_EVENTS.values()
)


def reachable_lengths(
    columns: Mapping[str, Sequence[Any]], agent_id: str, user_id: str
) -> dict[int, int | None]:
    """One query's reachable events and their token counts, from REACHABLE's columns."""
    return {
        int(event): None if length is None else int(length)
        for agent, scope, user, event, length in zip(
            *(
                _values(columns[name])
                for name in ("agent_id", "scope", "user_id", "event_id", "token_count")
            ),
            strict=True,
        )
        if agent == agent_id and (scope == "official" or user == user_id)
    }


def _values(column: Any) -> list[Any]:
    """A fetched column as values, None for null (a masked numpy array's tolist)."""
    return column.tolist() if hasattr(column, "tolist") else list(column)


class _Player:
    """The postings of the events seen, by term: (event id, keyword, description, tag count)."""

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.terms: defaultdict[str, list[tuple[int, int, int, int]]] = defaultdict(list)
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
        lengths: Mapping[int, int | None],
    ) -> list[tuple[int, float | None, float]]:
        """(event id, bm25_raw, word_tier) of each reachable event sharing a word with the
        query: model int_memory_query_lexical's rows for one query. `lengths`: the query's
        reachable events (official and the player's own, read by REACHABLE) and their token
        counts."""
        if not lengths or not words:
            return []
        known = [length for length in lengths.values() if length is not None]
        event_count = len(lengths)
        average = max(sum(known) / len(known), 1.0) if known else 1.0
        k1, b = query["bm25_k1"], query["bm25_b"]
        terms = self._terms(fetch, (query["agent_id"], query["user_id"]), list(lengths))
        bm25: dict[int, float | None] = {}
        tier: dict[int, float] = {}
        for word, source, _, _ in words:
            long_word = len(word) > 1
            postings = [
                (event, keyword, description, tags)
                for event, keyword, description, tags in terms.get(word, ())
                if event in lengths and (keyword > 0 or long_word)
            ]
            if not postings:
                continue
            weight = 1.0 if source == "token" else query["expanded_word_weight"]
            frequency = len(postings)
            idf = math.log(1 + (event_count - frequency + 0.5) / (frequency + 0.5))
            for event, keyword, description, tags in postings:
                count = keyword + (description if long_word else 0)
                length = lengths[event]
                if length is not None:
                    norm = 1 - b + b * length / average
                    score: float | None = weight * idf * count * (k1 + 1) / (count + k1 * norm)
                else:
                    score = None
                if event not in bm25:
                    bm25[event] = score
                elif score is not None:
                    bm25[event] = score + (bm25[event] or 0.0)
                level = (
                    query["tier_exact_tag"]
                    if tags > 0
                    else query["tier_partial_tag"]
                    if keyword > 0
                    else query["tier_partial_content"]
                )
                tier[event] = max(tier.get(event, -math.inf), weight * level)
        return [(event, bm25[event], tier[event]) for event in bm25]

    def _terms(
        self, fetch: Fetch, key: tuple[str, str], ids: list[int]
    ) -> Mapping[str, list[tuple[int, int, int, int]]]:
        with self._lock:
            player = self._players.pop(key, None) or _Player()
            missing = [event for event in ids if event not in player.seen]
            if missing:
                loaded = fetch(_LOAD, {"ids": missing})
                for row in zip(
                    *(
                        _values(loaded[name])
                        for name in (
                            "event_id",
                            "term",
                            "keyword_count",
                            "description_count",
                            "tag_count",
                        )
                    ),
                    strict=True,
                ):
                    player.terms[row[1]].append((row[0], row[2], row[3], row[4]))
                    player.size += 1
                player.seen.update(missing)
            self._players[key] = player  # most recently used last
            total = sum(p.size for p in self._players.values())
            while total > self.max_postings and len(self._players) > 1:
                _, evicted = self._players.popitem(last=False)
                total -= evicted.size
            return player.terms
