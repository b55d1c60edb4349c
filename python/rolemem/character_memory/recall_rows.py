"""A recall's answer computed in Python on the embedded store, from its keyword matches
(entry_matches) and its context's unlock verdicts: models int_recall_entries_evaluated,
int_recall_entries_ranked, int_recall_queue_updated and int_recall_entries_shown, and marts
character_memory_blocks and character_memory_recall written out over the library's loaded
config (fixed for its life), so a recall plans no statement at all. The models stay the rule
dbt and PostgreSQL read; test_character_recall_in_python holds the two equal, turn after turn.

SQL's NULLs are kept where a rule reads them: an ORDER BY puts them last, a comparison with
one fails, a concatenation with one is one (`_joined`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from ..sql.project import render_macro
from ..text.names import names_filled
from ..text.recall_words import Word, answer_words

# Past this many entries with explain rows asked (one per entry, every turn) the statement
# answers: a cautious bound (Python was still faster at 5,000 entries all matched, ~130
# against ~200 ms; docs/decisions/per-turn-rules-in-python.md)
EXPLAIN_LIMIT = 2_000
_MATCH_KINDS = {1: "keyword", 2: "associated keyword", 3: "content"}
_TOTALS = {"attribute": "attributes_total", "event": "events_total"}
# a queue item: (entry_key, recalled_turn, match_quality)
_Item = tuple[str, int | None, int | None]


@dataclass(frozen=True)
class _Entry:
    """An entry as int_character_entries_unioned gives it (its keywords as explain joins
    them)."""

    key: str
    kind: str
    group_name: str | None
    group_order: int | None
    ordinal: int
    event_date: str | None
    content: str | None
    strength: int | None
    is_constant: bool | None
    sticky_turns: int | None
    keywords: str | None
    secondary_keywords: str | None
    secondary_logic: str | None


@dataclass
class _Ranked:
    """An entry of int_recall_entries_ranked (a candidate) for one request."""

    entry: _Entry
    is_unlocked: bool  # the model's coalesce: a null verdict unlocks
    failed_condition: str | None
    match_quality: int | None  # a relevant match's, else None
    is_recalled: bool | None  # SQL's three values: None is neither recalled nor not
    recall_rank: int | None = None


def nulls_last(value: Any) -> tuple[bool, Any]:
    """An ascending sort key with NULLs last, as the engines order."""
    return (value is None, value)


def _descending(value: int | None) -> tuple[bool, int]:
    """`desc nulls last` as an ascending sort key."""
    return (value is None, -(value or 0))


def _joined(*parts: Any) -> str | None:
    """SQL's `||`: None when any part is."""
    return None if None in parts else "".join(map(str, parts))


def _numbered(
    rows: Sequence[Any], partition: Callable[[Any], Any], order: Callable[[Any], Any]
) -> list[int]:
    """row_number() over (partition by … order by …): each row's, in the rows' order."""
    groups: defaultdict[Any, list[int]] = defaultdict(list)
    for at, row in enumerate(rows):
        groups[partition(row)].append(at)
    numbers = [0] * len(rows)
    for members in groups.values():
        for number, at in enumerate(sorted(members, key=lambda at: order(rows[at])), start=1):
            numbers[at] = number
    return numbers


class RecallRows:
    """The loaded config's entries per character, and the rules over them."""

    def __init__(self, entries: Mapping[str, Sequence[_Entry]]) -> None:
        self.entries = entries
        self.by_key = {entry.key: entry for rows in entries.values() for entry in rows}

    @classmethod
    def read(cls, cur: duckdb.DuckDBPyConnection) -> RecallRows:
        entries: defaultdict[str, list[_Entry]] = defaultdict(list)
        for character_id, *values in cur.execute(render_macro("loaded_recall_entries")).fetchall():
            entries[character_id].append(_Entry(*values))
        return cls(dict(entries))

    def answers(self, character_id: str, explain: bool) -> bool:
        """Whether Python is the cheaper way for this character (EXPLAIN_LIMIT)."""
        return not explain or len(self.entries.get(character_id, ())) <= EXPLAIN_LIMIT

    def recall(
        self,
        request_id: int,
        request: Mapping[str, Any],
        matched: Sequence[tuple[Any, ...]],
        verdicts: Mapping[str, tuple[bool | None, str | None]],
        words: Sequence[Word],
        explain: bool,
    ) -> tuple[Any, ...]:
        """One request's answer as the statement gives it: the three blocks, the explain rows
        (None unless asked; `request_id` their key), the updated queue and the words (None
        when empty). `matched`: its entry_matches rows; `verdicts`: its context's unlock
        verdicts by entry."""
        by_match = {row[1]: row for row in matched}
        ranked = self._ranked(request, by_match, verdicts)
        queue = self._queue(request, ranked)
        shown = self._shown(request, queue, ranked)
        return (
            *self._blocks(request, shown),
            self._explained(request_id, request, ranked, by_match, queue, shown)
            if explain
            else None,
            [
                {"entry_key": key, "recalled_turn": turn, "match_quality": quality}
                for key, turn, quality in sorted(queue.values(), key=lambda item: item[0])
            ]
            or None,
            answer_words(words) or None,
        )

    def _ranked(
        self,
        request: Mapping[str, Any],
        matched: Mapping[str, tuple[Any, ...]],
        verdicts: Mapping[str, tuple[bool | None, str | None]],
    ) -> dict[str, _Ranked]:
        """int_recall_entries_evaluated and _ranked: the candidates (constant, matched,
        queued, or every entry when no match is required), each unlocked or not, recalled or
        not, ranked in its kind."""
        every = self.entries.get(request["character_id"], ())
        required = request["require_match"]
        candidates = {*matched, *request["queued_keys"]}
        ranked = {}
        for entry in every:
            if required and not entry.is_constant and entry.key not in candidates:
                continue
            is_unlocked, failed = verdicts.get(entry.key, (True, None))
            is_unlocked = True if is_unlocked is None else is_unlocked  # the model's coalesce
            match = matched.get(entry.key)
            quality = match[2] if match is not None and match[6] is True else None
            ranked[entry.key] = _Ranked(
                entry,
                is_unlocked,
                failed,
                quality,
                _and(is_unlocked, _or(quality is not None, entry.is_constant, not required)),
            )
        recalled = [row for row in ranked.values() if row.is_recalled is True]
        ranks = _numbered(
            recalled,
            lambda row: row.entry.kind,
            lambda row: (
                _descending(row.entry.strength),
                4 if row.match_quality is None else row.match_quality,
                row.entry.ordinal,
            ),
        )
        for row, rank in zip(recalled, ranks, strict=True):
            row.recall_rank = rank
        return ranked

    def _queue(self, request: Mapping[str, Any], ranked: Mapping[str, _Ranked]) -> dict[str, _Item]:
        """int_recall_queue_updated: this turn's recalls and the unlocked earlier ones still
        within their sticky turns, the oldest dropped where a queue is full."""
        pool = _queue_pool(request, ranked)
        entries = [ranked[key].entry for key, _, _ in pool]
        # the items of each attribute category, of each other kind, newest first
        recency = _numbered(
            list(zip(pool, entries, strict=True)),
            lambda pair: (pair[1].kind, pair[1].group_name if pair[1].kind == "attribute" else 0),
            lambda pair: (
                _descending(pair[0][1]),
                _descending(pair[1].strength),
                nulls_last(pair[0][2]),
                pair[1].ordinal,
            ),
        )
        group_rank = _group_ranks(pool, entries)
        kept = {}
        for item, entry, rank in zip(pool, entries, recency, strict=True):
            if entry.kind == "attribute":
                keep = _within(rank, request["queue_items_per_category"]) and _within(
                    group_rank[entry.kind, entry.group_name], request["queue_attribute_categories"]
                )
            else:
                limit = "queue_events" if entry.kind == "event" else "queue_dialogue_styles"
                keep = _within(rank, request[limit])
            if keep:
                kept[item[0]] = item
        return kept

    def _shown(
        self,
        request: Mapping[str, Any],
        queue: Mapping[str, _Item],
        ranked: Mapping[str, _Ranked],
    ) -> dict[str, int]:
        """int_recall_entries_shown: the queue ranked like one recall, capped per attribute
        category, then per kind; each shown entry's display rank."""

        def order(item: _Item) -> tuple[Any, ...]:
            entry = ranked[item[0]].entry
            return (_descending(entry.strength), nulls_last(item[2]), entry.ordinal)

        items = list(queue.values())
        in_group = _numbered(
            items,
            lambda item: (ranked[item[0]].entry.kind, ranked[item[0]].entry.group_name),
            order,
        )
        capped = [
            item
            for item, rank in zip(items, in_group, strict=True)
            if ranked[item[0]].entry.kind != "attribute"
            or _within(rank, request["attributes_per_category"])
        ]
        in_kind = _numbered(capped, lambda item: ranked[item[0]].entry.kind, order)
        shown = {}
        for item, rank in zip(capped, in_kind, strict=True):
            kind = ranked[item[0]].entry.kind
            if _within(rank, request[_TOTALS.get(kind, "dialogue_styles_total")]):
                shown[item[0]] = rank
        return shown

    def _blocks(self, request: Mapping[str, Any], shown: Mapping[str, int]) -> tuple[str, ...]:
        """character_memory_blocks: the three blocks, the names filled."""
        entries = sorted((self.by_key[key] for key in shown), key=lambda entry: shown[entry.key])
        groups: dict[tuple[str, str | None, int | None], list[_Entry]] = {}
        for entry in entries:
            groups.setdefault((entry.kind, entry.group_name, entry.group_order), []).append(entry)

        def block(kind: str, head: str, item: Callable[[_Entry], Any], joiner: str) -> str:
            """A kind's groups in their order, each `name` `head` and its items joined."""
            lines = []
            for (of, name, order), members in groups.items():
                items = [item(entry) for entry in members if entry.content is not None]
                if of == kind and items:
                    lines.append((order, _joined(name, head, joiner.join(items))))
            return "\n".join(
                text for _, text in sorted(lines, key=lambda pair: nulls_last(pair[0])) if text
            )

        def event(entry: _Entry) -> str:
            return f"-{entry.event_date + '，' if entry.event_date else ''}{entry.content}\n"

        styles = "".join(
            f"-{entry.content}\n"
            for entry in entries
            if entry.kind == "dialogue_style" and entry.content is not None
        )
        return tuple(
            names_filled(text, request["user_name"], request["char_name"])
            for text in (
                block("attribute", "：", lambda entry: entry.content, "、"),
                block("event", "：\n", event, ""),
                styles,
            )
        )

    def _explained(
        self,
        request_id: int,
        request: Mapping[str, Any],
        ranked: Mapping[str, _Ranked],
        matched: Mapping[str, tuple[Any, ...]],
        queue: Mapping[str, _Item],
        shown: Mapping[str, int],
    ) -> list[dict[str, Any]]:
        """character_memory_recall: a row per entry of the character, why it is shown or
        not."""
        turn, turns = request["turn_number"], request["queue_turns"]
        rows = []
        for entry in self.entries.get(request["character_id"], ()):
            row, match, item = ranked.get(entry.key), matched.get(entry.key), queue.get(entry.key)
            quality, words = (None, None) if match is None else match[2:4]
            secondary_failed = match is not None and match[6] is False
            is_recalled = row is not None and row.is_recalled is True
            carried = item is not None and not is_recalled
            recalled_turn = None if item is None else item[1]
            if entry.key in shown:
                status = "shown"
                if carried:
                    reason = _joined("recalled at turn ", recalled_turn, ", still queued")
                elif words is not None and not secondary_failed:
                    reason = "matched " + words
                elif entry.is_constant:
                    reason = "constant: recalled whenever it is unlocked"
                else:
                    reason = "recalled without a match: the request does not require one"
            elif row is not None and row.is_unlocked is False:
                status, reason = "locked", _joined("locked: ", row.failed_condition)
            elif item is not None:
                status = "over the limit"
                reason = "unlocked and relevant, but outranked past its limit"
            else:
                status = "not relevant"
                reason = (
                    _joined(
                        "matched ",
                        words,
                        ", but its secondary keywords (",
                        entry.secondary_keywords,
                        ") fail ",
                        entry.secondary_logic,
                        ": ",
                        match[5] if match is not None and match[5] is not None else "none",
                        " in the text",
                    )
                    if secondary_failed
                    else f"none of its keywords ({entry.keywords or ''}) is in the text, nor a "
                    "word of the text in its content"
                )
            stays = entry.sticky_turns if entry.sticky_turns is not None else turns
            rows.append(
                {
                    "request_id": request_id,
                    "entry_key": entry.key,
                    "entry_kind": entry.kind,
                    "group_name": entry.group_name,
                    "content": entry.content,
                    "status": status,
                    "failed_condition": None if row is None else row.failed_condition,
                    "match_kind": _MATCH_KINDS.get(quality),
                    "matched_words": words,
                    "matches": [] if match is None else match[4],
                    "strength": entry.strength,
                    "match_quality": quality,
                    "recall_rank": None if row is None else row.recall_rank,
                    "display_rank": shown.get(entry.key),
                    "recalled_turn": recalled_turn,
                    "sticky_turns_left": None
                    if stays is None or recalled_turn is None
                    else stays - (turn - recalled_turn),
                    "is_unlocked": True if row is None else row.is_unlocked,
                    "is_recalled": is_recalled,
                    "is_carried_over": carried,
                    "is_shown": entry.key in shown,
                    "reason": reason,
                }
            )
        return rows


def _queue_pool(request: Mapping[str, Any], ranked: Mapping[str, _Ranked]) -> list[_Item]:
    """The queue's candidates: this turn's recalls, then the queued entries unlocked, not
    recalled again, and still within their sticky turns."""
    turn, turns = request["turn_number"], request["queue_turns"]
    pool: list[_Item] = [
        (key, turn, row.match_quality) for key, row in ranked.items() if row.is_recalled is True
    ]
    for key, recalled_turn, quality in zip(
        request["queued_keys"],
        request["queued_turns"],
        request["queued_qualities"],
        strict=True,
    ):
        row = ranked.get(key)
        if row is None or recalled_turn is None:
            continue
        if row.is_unlocked is not True or row.is_recalled is not False:
            continue
        stays = row.entry.sticky_turns if row.entry.sticky_turns is not None else turns
        if stays is not None and turn - recalled_turn < stays:
            pool.append((key, recalled_turn, quality))
    return pool


def _group_ranks(
    pool: Sequence[_Item], entries: Sequence[_Entry]
) -> dict[tuple[str, str | None], int]:
    """dense_rank() of the queue's groups (kind, group name) in each kind: newest first, then
    the strongest."""
    latest: dict[tuple[str, str | None], tuple[int | None, int | None, int | None]] = {}
    for item, entry in zip(pool, entries, strict=True):
        group = (entry.kind, entry.group_name)
        turn_then, strength, _ = latest.get(group, (None, None, None))
        latest[group] = (
            _largest(turn_then, item[1]),
            _largest(strength, entry.strength),
            entry.group_order,  # the group's first ordinal: one value a group
        )
    order = {
        group: (
            _descending(turn_then),
            _descending(strength),
            nulls_last(group_order),
            nulls_last(group[1]),
        )
        for group, (turn_then, strength, group_order) in latest.items()
    }
    ranks = {}
    for group, value in order.items():
        distinct = sorted({other for (kind, _), other in order.items() if kind == group[0]})
        ranks[group] = distinct.index(value) + 1
    return ranks


def _largest(a: int | None, b: int | None) -> int | None:
    """max() over rows: NULLs ignored."""
    return b if a is None else a if b is None else max(a, b)


def _or(*values: bool | None) -> bool | None:
    """SQL's OR: true if any is, else unknown if any is."""
    return True if True in values else None if None in values else False


def _and(*values: bool | None) -> bool | None:
    """SQL's AND: false if any is, else unknown if any is."""
    return False if False in values else None if None in values else True


def _within(rank: int, limit: int | None) -> bool:
    """`rank <= limit`, false against NULL."""
    return limit is not None and rank <= limit
