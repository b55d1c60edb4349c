"""A recall's keyword matches computed in Python before its statement, so the statement does
not plan them on the embedded store (about 50 operators, planned on every call): model
int_recall_entries_matched written out over the library's loaded config, which it reads once
when it loads (the config is fixed for the library's life). The model stays the rule dbt and
PostgreSQL read; test_character_matches_fast_path holds the two equal."""

from __future__ import annotations

import bisect
import itertools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from ..text.recall_words import Word
from ..text.tokens import simple_lower

# the model's columns as a recall statement binds them (sql.request_rows.bound_rows)
MATCHED_COLUMNS = {
    "request_id": "integer",
    "entry_key": "varchar",
    "match_quality": "integer",
    "matched_words": "varchar",
    "matches": "struct(word varchar, how varchar, text_position bigint)[]",
    "secondary_words": "varchar",
    "is_relevant": "boolean",
}
# Where Python's answer costs more than planning the model's ~50 operators (about 6 ms), the
# statement plans the model (bench_character_memory at 100, 10,000 and 100,000 entries): a
# character whose contents pass CONTENT_LIMIT characters (each word is looked for in them
# all: about 2 ms a recall at 230,000), or a batch of more than ROW_LIMIT matched entries
# (about 13 us each to bind).
CONTENT_LIMIT = 300_000
ROW_LIMIT = 500
# (word, word_order, match_quality, how, text_position): one hit of an entry
_Hit = tuple[str, int, int, str, int | None]
_SEPARATOR = "、"


@dataclass(frozen=True)
class _Contents:
    """One character's entry contents, searched as one text."""

    text: str
    starts: list[int]
    keys: list[str]

    @classmethod
    def of(cls, pairs: Sequence[tuple[str, str]]) -> _Contents:
        # where each content starts in the joined text (each followed by one NUL)
        starts = list(itertools.accumulate((len(c) + 1 for _, c in pairs), initial=0))[:-1]
        return cls("\0".join(c for _, c in pairs), starts, [key for key, _ in pairs])

    def holding(self, word: str) -> list[str]:
        """The entries whose content holds `word` (the model's strpos > 0), each once."""
        found: list[str] = []
        at = self.text.find(word)
        while at >= 0:
            after = bisect.bisect_right(self.starts, at)  # the entry after the hit's
            found.append(self.keys[after - 1])
            # on from the next entry's start: one hit per entry
            at = self.text.find(word, self.starts[after]) if after < len(self.starts) else -1
        return found


@dataclass(frozen=True)
class EntryMatcher:
    """The loaded config's keyword index, per character."""

    # character -> folded keyword -> (entry_key, keyword, is_secondary)
    folded: Mapping[str, Mapping[str, Sequence[tuple[str, str, bool]]]]
    # character -> keyword -> the entries it is a (not secondary) keyword of
    primary: Mapping[str, Mapping[str, Sequence[str]]]
    longest: Mapping[str, int]
    # character -> its entries' contents joined by NUL (no word holds one, so no match runs
    # from one into the next), with where each starts: a word is looked for once in them all
    contents: Mapping[str, _Contents]
    # entry_key -> (secondary_keyword_count, secondary_logic)
    secondary: Mapping[str, tuple[int, str]]

    @classmethod
    def read(cls, cur: duckdb.DuckDBPyConnection) -> EntryMatcher:
        folded: defaultdict[str, defaultdict[str, list[tuple[str, str, bool]]]]
        folded = defaultdict(lambda: defaultdict(list))
        primary: defaultdict[str, defaultdict[str, list[str]]]
        primary = defaultdict(lambda: defaultdict(list))
        for entry_key, character_id, keyword, folded_keyword, is_secondary in cur.execute(
            "select entry_key, character_id, keyword, folded_keyword, is_secondary "
            "from int_character_entry_keywords order by entry_key, keyword"
        ).fetchall():
            folded[character_id][folded_keyword].append((entry_key, keyword, is_secondary))
            if not is_secondary:
                primary[character_id][keyword].append(entry_key)
        longest = {
            character_id: int(length or 0)
            for character_id, length in cur.execute(
                "select character_id, longest_keyword_length from int_character_keyword_lengths"
            ).fetchall()
        }
        texts: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)
        secondary = {}
        for entry_key, character_id, content, count, logic in cur.execute(
            "select entry_key, character_id, content, secondary_keyword_count, secondary_logic "
            "from int_character_entries_unioned order by entry_key"
        ).fetchall():
            if content:
                texts[character_id].append((entry_key, content))
            secondary[entry_key] = (count, logic)
        contents = {character: _Contents.of(pairs) for character, pairs in texts.items()}
        # plain dicts: a lookup of a missing key must never write into the shared matcher
        return cls(
            {character: dict(index) for character, index in folded.items()},
            {character: dict(index) for character, index in primary.items()},
            longest,
            contents,
            secondary,
        )

    def answers(self, character_id: str) -> bool:
        """Whether `matched` is the cheaper way for this character (CONTENT_LIMIT)."""
        contents = self.contents.get(character_id)
        return contents is None or len(contents.text) <= CONTENT_LIMIT

    def matched(
        self,
        request_id: int,
        request: Mapping[str, Any],
        words: Sequence[Word],
        secondary_rule: bool,
    ) -> list[tuple[Any, ...]]:
        """One request's rows of the model (MATCHED_COLUMNS): its `words` as recall_words
        gives them; `secondary_rule`: the model's var recall_secondary_keywords."""
        character = request["character_id"]
        hits: defaultdict[str, list[_Hit]] = defaultdict(list)
        secondary_found: defaultdict[str, set[str]] = defaultdict(set)
        for (entry_key, keyword, is_secondary), position in self._text_hits(request).items():
            if is_secondary:
                secondary_found[entry_key].add(keyword)
                continue
            how = "keyword" if keyword in (request["tokens"] or ()) else "keyword inside a word"
            hits[entry_key].append((keyword, position, 1, how, position))
        by_keyword = self.primary.get(character, {})
        contents = self.contents.get(character)
        for word, source, _, order in words:
            if source == "expanded":
                for entry_key in by_keyword.get(word, ()):
                    hits[entry_key].append((word, order, 2, "associated keyword", None))
            if len(word) > 1 and contents is not None:
                for entry_key in contents.holding(word):
                    hits[entry_key].append((word, order, 3, "content", None))
        rows = []
        for entry_key, found in hits.items():
            found.sort(key=lambda hit: (hit[2], hit[1], hit[0]))
            secondary = secondary_found.get(entry_key)
            rows.append(
                (
                    request_id,
                    entry_key,
                    found[0][2],
                    _SEPARATOR.join(sorted({hit[0] for hit in found})),
                    [{"word": w, "how": how, "text_position": at} for w, _, _, how, at in found],
                    _SEPARATOR.join(sorted(secondary)) if secondary_rule and secondary else None,
                    self._is_relevant(entry_key, secondary) if secondary_rule else True,
                )
            )
        return rows

    def _text_hits(self, request: Mapping[str, Any]) -> dict[tuple[str, str, bool], int]:
        """The keywords found in the text's windows up to the longest keyword's length, each
        at its first (1-based) position; never one that is the player's or the character's
        name."""
        character = request["character_id"]
        longest = self.longest.get(character)
        index = self.folded.get(character)
        text = request["query_text"]
        if longest is None or index is None or text is None:
            return {}
        names = {simple_lower(n) for n in (request["user_name"], request["char_name"]) if n}
        folded_text = simple_lower(text)
        found: dict[tuple[str, str, bool], int] = {}
        for start in range(len(folded_text)):
            for end in range(start + 1, min(start + longest, len(folded_text)) + 1):
                window = folded_text[start:end]
                if window in names:
                    continue
                for entry_key, keyword, is_secondary in index.get(window, ()):
                    found.setdefault((entry_key, keyword, is_secondary), start + 1)
        return found

    def _is_relevant(self, entry_key: str, secondary: set[str] | None) -> bool:
        """Whether the entry's secondary keywords found in the text pass its logic (the
        model's; the entries model gives every entry a count and a logic)."""
        count, logic = self.secondary[entry_key]
        found = len(secondary or ())
        rules = {"NOT_ALL": found < count, "NOT_ANY": found == 0, "AND_ALL": found == count}
        return count == 0 or rules.get(logic, found > 0)  # else AND_ANY
