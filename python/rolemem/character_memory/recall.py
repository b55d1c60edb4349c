"""Character (solidified) memory: designer entries unlocked by game state, recalled by words.
A `CharacterMemory` recalls from a CharacterLibrary (library: the config and the rules): each
`session.recall()` binds its inputs (tokens, context, queue, limits) to one statement shared
with the other recalls waiting for it, or is answered in Python on the embedded store."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engines import duckdb_connect, reading
from ..text.tokens import tokenize
from . import prompt_fill
from .config import (
    JSON_COLUMNS,
    SEED_COLUMNS,
    CharacterConfig,
    CharacterNotFoundError,
    ConfigError,
    parse_designer_json,
)
from .library import LIMIT_NAMES, MISSING_TABLE, CharacterLibrary, RecallRequest


@dataclass(frozen=True)
class RecallResult:
    """The three prompt blocks ("" when empty); per entry, why it is or is not shown
    (`explain`); and the words recall used (`words`: tokens, then association words). With a
    `template` given to recall, the template filled by the recall's own statement (model
    character_memory_prompts): `system_prompt` as it reads without dynamic memory, and
    `prompt_around_dynamic`, the text before and after the place the template gives the
    dynamic memory (None when it gives none)."""

    attributes: str
    events: str
    dialogue_style: str
    explain: list[dict[str, Any]] = field(repr=False)
    words: list[dict[str, Any]] = field(repr=False)
    turn: int = 0

    PLACEHOLDERS = prompt_fill.BLOCK_PLACEHOLDERS
    user_name: str | None = None
    char_name: str | None = None
    system_prompt: str | None = field(default=None, repr=False)
    prompt_around_dynamic: tuple[str, str] | None = field(default=None, repr=False)

    def labelled(self, template: str) -> str:
        """`template` as it is when it places any block; else with the three blocks appended,
        each under its header (a dialogue example then never reads like an event). The rule is
        the macro label_memory_blocks (written out in prompt_fill)."""
        return prompt_fill.labelled(template)

    def fill(self, template: str, extra: Mapping[str, str] | None = None) -> str:
        """A character prompt template with its placeholders filled in one pass: the three
        memory blocks, {{user}} / {{char}} with the names given to recall, and any `extra`
        ({"{{name}}": text}); text that comes in is never substituted again. An empty block takes
        its header line (ending in 】, ： or :, or a markdown `#` line, directly above its
        placeholder alone on a line) with it: no bare `【经历】` left, a wrapping tag such as
        `<events>` stays. The rule is the macro fill_prompt_template (prompt_fill)."""
        blocks = (self.attributes, self.events, self.dialogue_style)
        names = {"{{user}}": self.user_name, "{{char}}": self.char_name}
        values = {**dict(zip(self.PLACEHOLDERS, blocks, strict=True)), **(extra or {})}
        values.update({key: name for key, name in names.items() if name is not None})
        return prompt_fill.fill(template, list(values.items()))


def _check_context(context: Mapping[str, Any] | None) -> str:
    if context is None:
        return "{}"
    if not isinstance(context, Mapping) or not all(isinstance(k, str) for k in context):
        raise TypeError("context must be a mapping of field names to values")
    for key, value in context.items():
        for item in value if isinstance(value, list | tuple) else [value]:
            if item is not None and not isinstance(item, str | int | float | bool):
                raise TypeError(
                    f"context[{key!r}] must be a number, string, bool or a list of them, "
                    f"got {type(item).__name__}"
                )
            if isinstance(item, float) and not math.isfinite(item):
                raise TypeError(f"context[{key!r}] must be a finite number, got {item!r}")
            if isinstance(item, int) and not -(2**63) <= item < 2**63:
                raise TypeError(f"context[{key!r}] must fit in 64 bits, got {item!r}")
            if isinstance(item, str) and not duckdb_connect.is_storable_text(item):
                raise TypeError(f"context[{key!r}] is not valid Unicode text")
    # compact, as DuckDB prints JSON: a condition's reason quotes the context the same way on
    # every engine (PostgreSQL prints json as it was written)
    return json.dumps(dict(context), ensure_ascii=False, separators=(",", ":"), sort_keys=True)


class CharacterMemory:
    """One character's configured memory, ready to recall from.

    `db`: None reads the demo config shipped with rolemem; a DuckDB path or connection, a
    `postgresql://` URL or an engine reads the deployment's config tables there (`rolemem
    config import --db`, `POST /config/import`).
    `config`: rows from the designers' JSON instead (see `from_designer_json`). `library`: a
    CharacterLibrary shared with other characters (recalls of several characters waiting at
    once are then answered by one statement); by default one of this character's own.
    """

    def __init__(
        self,
        db: Any = None,
        *,
        character_id: str,
        config: CharacterConfig | None = None,
        limits: Mapping[str, Any] | None = None,
        library: CharacterLibrary | None = None,
    ) -> None:
        if not isinstance(character_id, str) or not character_id:
            raise TypeError("character_id must be a non-empty string")
        self.character_id = character_id
        self.library = library or CharacterLibrary(db, config=config, character_id=character_id)
        if character_id not in self.library.characters:
            raise CharacterNotFoundError(
                f"no config for character {character_id!r}", field="character_id"
            )
        self.limits = {**self.library.default_limits, **self._check_limits(limits or {})}
        self._sessions: dict[str, RecallSession] = {}
        self._save_locks: dict[int, threading.Lock] = {}
        self._sessions_lock = threading.Lock()

    @classmethod
    def from_designer_json(
        cls,
        doc: str | Path | Mapping[str, Any],
        *,
        character_id: str | None = None,
        limits: Mapping[str, Any] | None = None,
    ) -> CharacterMemory:
        """From the designers' JSON (a path or a mapping `{"attributes": {类别: [...]},
        "events": {...}, "dialogue_styles": {...}}`). Bad config raises ConfigError naming the
        entry and field; sizes outside the spec's advice warn (ConfigWarning)."""
        config = parse_designer_json(doc, character_id=character_id)
        characters = [rows[0]["character_id"] for rows in config.tables.values() if rows]
        if not characters:
            raise ConfigError("the designer config has no entries")
        return cls(config=config, character_id=characters[0], limits=limits)

    def session(self, user_id: str) -> RecallSession:
        """The conversation of `user_id` with this character (same id, same session), its
        sticky queue in this process."""
        with self._sessions_lock:
            return self._sessions.setdefault(user_id, RecallSession(self, user_id))

    def save_lock(self, save_id: int) -> threading.Lock:
        """The lock of one save's stored queue in this process (its turns one at a time)."""
        with self._sessions_lock:
            return self._save_locks.setdefault(save_id, threading.Lock())

    @staticmethod
    def _check_limits(limits: Mapping[str, Any]) -> dict[str, Any]:
        known = set(LIMIT_NAMES) | {"filter_levels"}
        for name, value in limits.items():
            if name not in known:
                raise TypeError(f"unknown limit {name!r}; expected one of {sorted(known)}")
            if name == "filter_levels":
                if not isinstance(value, list | tuple) or not all(
                    isinstance(v, int) and not isinstance(v, bool) for v in value
                ):
                    raise TypeError("filter_levels must be a list of integers")
            elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise TypeError(f"{name} must be a non-negative integer, got {value!r}")
        if limits.get("expand_strategy", 0) not in (0, 1):
            raise TypeError("expand_strategy must be 0 or 1")
        return {k: (list(v) if k == "filter_levels" else v) for k, v in limits.items()}


class RecallSession:
    """One conversation (user x character) in this process: counts turns and keeps the sticky
    queue in memory (a Companion keeps them per save x character in the store instead:
    StoredRecallSession). A lock makes one session safe to share between threads; different
    sessions never wait for each other.
    """

    def __init__(self, memory: CharacterMemory, user_id: str) -> None:
        self.memory = memory
        self.user_id = user_id
        self.turn = 0
        self._queue: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def recall(
        self,
        text: str,
        context: Mapping[str, Any] | None = None,
        *,
        require_match: bool = True,
        user_name: str | None = None,
        char_name: str | None = None,
        dry_run: bool = False,
        explain: bool = False,
        template: str | None = None,
    ) -> RecallResult:
        """One turn: recall entries for the player's `text` under the game `context`.
        `dry_run=True` previews it: the turn counter and the sticky queue do not move.
        `explain=True` also says, for every entry of the character, why it is or is not in
        the prompt (`RecallResult.explain`). `template`: a prompt template (the character's
        system line) the statement also fills (`RecallResult.system_prompt`)."""
        if not isinstance(text, str) or not duckdb_connect.is_storable_text(text):
            raise TypeError(f"text must be valid Unicode text, got {text!r}")
        tokens = tokenize(text)
        context_json = _check_context(context)
        texts = {"user_name": user_name, "char_name": char_name, "template": template}
        for name, value in texts.items():
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a string or None")
        if not isinstance(require_match, bool):
            raise TypeError("require_match must be True or False")
        with self._held():
            turn, queue = self._state()
            # the queue as the models take it (int_recall_queue_items): entries of this
            # character (a stored queue may name a key a re-import handed to another entry
            # since), each once (a store's row edited by hand could name one twice) at its
            # newest recall, as a re-recall refreshes an entry
            own = self.memory.library.entry_keys.get(self.memory.character_id, frozenset())
            newest: dict[str, dict[str, Any]] = {}
            for item in sorted(queue, key=lambda item: -(item["recalled_turn"] or 0)):
                if item["entry_key"] in own:
                    newest.setdefault(item["entry_key"], item)
            queue = list(newest.values())
            values = {
                "character_id": self.memory.character_id,
                "query_text": text,
                "tokens": tokens,
                "context": context_json,
                "require_match": require_match,
                "user_name": user_name or None,
                "char_name": char_name or None,
                "template": template,
                "turn_number": turn + 1,
                **self.memory.limits,
                "queued_keys": [item["entry_key"] for item in queue],
                "queued_turns": [item["recalled_turn"] for item in queue],
                "queued_qualities": [item["match_quality"] for item in queue],
            }
            # answered with the recalls waiting for a statement, if any (rolemem.sql.batching)
            (attributes, events, styles, prompt, before, after, explained, updated, words) = (
                self.memory.library.recall(RecallRequest(values, explain))
            )
            if not dry_run:  # the queue after it: int_recall_queue_updated's rows
                self._keep(turn + 1, [dict(item) for item in updated or []])
        return RecallResult(
            attributes,
            events,
            styles,
            # only when asked (another recall of the batch may have asked); request_id is the
            # statement's key for this recall, not the caller's business
            [
                {name: value for name, value in row.items() if name != "request_id"}
                for row in (explained or [] if explain else [])
            ],
            list(words or []),
            turn + 1,
            user_name or None,
            char_name or None,
            prompt,
            None if before is None else (before, after or ""),
        )

    # where the counter and the queue live: this object (StoredRecallSession: the store)

    def _held(self) -> threading.Lock:
        return self._lock

    def _state(self) -> tuple[int, list[dict[str, Any]]]:
        return self.turn, self._queue

    def _keep(self, turn: int, queue: list[dict[str, Any]]) -> None:
        self.turn, self._queue = turn, queue


def config_version(db: Any) -> int:
    """How many config imports the database has seen (0: none, or a store older than the
    counter)."""
    with reading(db) as cur:
        try:
            [(version,)] = cur.execute("select max(version) from rolemem_config_version").fetchall()
        except Exception:  # a store written before the counter: no import since
            return 0
    return int(version or 0)


def stored_config(db: Any, character_id: str | None = None) -> CharacterConfig:
    """The config tables of a database (one character's rows, or all) as config rows. `db`: a
    DuckDB path or connection, or an engine (rolemem.engines)."""
    config = CharacterConfig()
    with reading(db) as cur:
        for table, columns in SEED_COLUMNS.items():
            try:
                rows = cur.execute(
                    f"select {', '.join(columns)} from {table} "  # names from this package
                    "where cast($id as varchar) is null or character_id = $id order by ordinal",
                    {"id": character_id},
                ).fetchall()
            except MISSING_TABLE:  # on either engine
                raise ConfigError(
                    f"the database has no config table {table!r}: run `rolemem init-db`"
                ) from None
            for values in rows:
                row = dict(zip(columns, values, strict=True))
                for column in JSON_COLUMNS:
                    row[column] = json.loads(row[column] or "[]")
                config.tables[table].append(row)
    return config
