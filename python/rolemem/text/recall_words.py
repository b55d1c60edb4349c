"""A recall's words computed in Python before its statement, so the statement does not plan
them (and dynamic recall's BM25 rows can be computed too: dynamic_memory.postings_cache):
macro expand_recall_words written out, over the seeds read once (recall_stopwords,
association_words), for the dynamic and the character memory's recalls on the embedded
store. The macro stays the rule dbt reads; test_recall_fast_path holds the two equal."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

# (word, word_source, level, word_order): the macro's columns but the request's id
Word = tuple[str, str, int | None, int]

# an expanded word's order comes after every token's (the macro's 1000 + its rank)
_EXPANDED_ORDER = 1000


@dataclass(frozen=True)
class RecallWords:
    """The seeds the words are drawn from."""

    stopwords: frozenset[str]
    # a word's association words: (associated word, level)
    associations: dict[str, tuple[tuple[str, int], ...]]

    @classmethod
    def read(cls, cur: duckdb.DuckDBPyConnection) -> RecallWords:
        stopwords = frozenset(
            w for (w,) in cur.execute("select word from recall_stopwords").fetchall()
        )
        associations: defaultdict[str, list[tuple[str, int]]] = defaultdict(list)
        for word, associated, level in cur.execute(
            "select word, associated_word, level from association_words"
        ).fetchall():
            associations[word].append((associated, int(level)))
        return cls(stopwords, {w: tuple(pairs) for w, pairs in associations.items()})

    def words(self, query: Mapping[str, Any], agent_name: str = "agent_name") -> list[Word]:
        """A request's words (its tokens, user_name, the character's name under `agent_name`
        and the word settings), in word_order."""
        names = {
            name.lower() for name in (query["user_name"], query[agent_name]) if name is not None
        }
        # the tokens but stopwords and names, each at its first position (1-based)
        positions: dict[str, int] = {}
        for position, word in enumerate(query["tokens"] or [], start=1):
            if word not in self.stopwords and word.lower() not in names:
                positions.setdefault(word, position)
        tokens: list[Word] = [(word, "token", None, at) for word, at in positions.items()]
        return tokens + self._expanded(positions, query)

    def _expanded(self, positions: dict[str, int], query: Mapping[str, Any]) -> list[Word]:
        dropped = set(query["filter_levels"] or ())
        # per associated word: its levels, the (rank, position) of each base word calling it up
        found: defaultdict[str, list[tuple[int, int, int]]] = defaultdict(list)
        for base, position in positions.items():
            kept = sorted(
                (
                    (word, level)
                    for word, level in self.associations.get(base, ())
                    if word not in positions and level not in dropped
                ),
                key=lambda pair: (-pair[1], pair[0]),
            )
            for rank, (word, level) in enumerate(kept, start=1):
                found[word].append((level, rank, position))
        pooled = query["expand_strategy"] == 1
        keyed = []
        for word, calls in found.items():
            level = max(c[0] for c in calls)
            pooled_level = level + 2 * (len(calls) - 1)
            pick_order = min(rank * 1_000_000 + position for _, rank, position in calls)
            first_position = min(c[2] for c in calls)
            best_rank = min(c[1] for c in calls)
            order = -pooled_level if pooled else pick_order
            keyed.append(
                ((order, first_position, best_rank, word), word, pooled_level if pooled else level)
            )
        keyed.sort()
        limit = query["max_expanded_words"]
        if limit is None:
            return []
        return [
            (word, "expanded", level, _EXPANDED_ORDER + rank)
            for rank, (_, word, level) in enumerate(keyed, start=1)
            if rank <= limit
        ]


def word_columns(key: str) -> dict[str, str]:
    """The macro's columns and their types, the request's id named `key`."""
    return {
        key: "integer",
        "word": "varchar",
        "word_source": "varchar",
        "level": "integer",
        "word_order": "integer",
    }


def words_params(batch: Sequence[list[Word]], key: str) -> dict[str, list[Any]]:
    """A batch's words as lists `$words_<column>` (sql.request_rows.bound_rows "words",
    word_columns(key)), the requests numbered 1.. in order."""
    columns: dict[str, list[Any]] = {f"words_{name}": [] for name in word_columns(key)}
    for number, words in enumerate(batch, start=1):
        for word, source, level, order in words:
            for name, value in zip(columns, (number, word, source, level, order), strict=True):
                columns[name].append(value)
    return columns


def answer_words(words: Sequence[Word]) -> list[dict[str, Any]]:
    """A request's words as its answer lists them (macro list_of_objects over the words'
    word, word_source and level, in word_order)."""
    return [
        {"word": word, "word_source": source, "level": level}
        for word, source, level, _ in sorted(words, key=lambda w: w[3])
    ]
