"""One prompt per turn: every memory layer of one character, assembled, with one trace of why.

`Companion.turn` assembles what the other modules compute (no rule is restated here): the
save's system line filled by the character recall, the dynamic memory (`DynamicMemory.query`),
the context window (`MemoryLoop.context_window`) and the player's message, the two recalls run
concurrently. `record` appends the turn and runs the loop's `observe` off the reply path. The
prompt's size is macro prompt_token_count's model-independent estimate, not a provider's
billing tokens, cut to its budgets by one statement (rolemem.turn.budget).
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Mapping
from concurrent import futures
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from ..character_memory import (
    CharacterLibrary,
    CharacterMemory,
    RecallResult,
    StoredRecallSession,
)
from ..dynamic_memory import MemoryInputError, QueryResponse, checked_text, naive_time
from ..engines import duckdb_connect
from ..errors import ConflictError
from ..memory_builder import build_memory, build_memory_for_save, saves
from ..memory_loop import MemoryLoop, ObserveReport, observed_target
from ..memory_loop.llm import ChatModel
from ..sql import cancel
from ..sql.project import write_sql
from ..text.embedders import Embedder
from . import budget


@dataclass
class TurnResult:
    """The reply prompt (OpenAI-style messages), its size, and why each piece is there."""

    messages: list[dict[str, str]]
    prompt_tokens: int
    trace: list[dict[str, Any]] = field(repr=False)


class Companion(contextlib.AbstractContextManager["Companion"]):
    """One character's memory for its players' turns, over one store.

    `db`: a DuckDB path or connection, a `postgresql://` URL or an engine (what the CLI takes),
    holding the game's saves and lines, the memory tables and the designer config (`rolemem
    init-db` + `rolemem config import --db` or `config load`).
    `character_id`: the designer config's character; `agent_id` (default: the same) owns the
    dynamic memories. `llm`: extraction (None: memories are not extracted). `embedder`: dynamic
    recall by meaning (default: the bundled e5). `loop` and `library`: a MemoryLoop and a
    CharacterLibrary shared with other companions (the service shares them, so recalls of
    several characters waiting at once are answered together).
    """

    def __init__(
        self,
        db: duckdb_connect.Database = None,
        *,
        character_id: str,
        agent_id: str | None = None,
        llm: ChatModel | None = None,
        embedder: Embedder | None | Literal["default"] = "default",
        settings: Mapping[str, Any] | None = None,
        loop: MemoryLoop | None = None,
        library: CharacterLibrary | None = None,
        open_ownerless_saves: bool = False,
    ) -> None:
        self.character_id = checked_text(character_id, "character_id") or ""
        # saves without an owner open to every player (a game that keeps ownership itself)
        self.open_ownerless_saves = open_ownerless_saves
        self.agent_id = (
            self.character_id if agent_id is None else str(checked_text(agent_id, "agent_id"))
        )
        # a loop given (the service's, shared by every character) stays its owner's to close
        self._owns_loop = loop is None
        self.loop = loop or MemoryLoop(db, llm=llm, embedder=embedder, settings=settings)
        self.memory = self.loop.memory
        # the store's engine: the embedded file's connection, or a server database
        self._store = self.memory.store
        # the config is read where the store is (on PostgreSQL, its config tables)
        self.character = CharacterMemory(
            self.memory.store, character_id=self.character_id, library=library
        )
        # two recalls per turn, for as many turns as run at once: a recall waiting to share the
        # next statement (rolemem.sql.batching) holds its thread meanwhile
        self._recalls = ThreadPoolExecutor(max_workers=32, thread_name_prefix="rolemem-recall")
        self._background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rolemem-loop")
        self._pending: list[Future[ObserveReport]] = []
        self._lock = threading.Lock()

    def close(self) -> None:
        """Finish background extraction, then close the store."""
        self._background.shutdown(wait=True)
        self._recalls.shutdown(wait=True)
        if self._owns_loop:
            self.loop.close()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one turn -----------------------------------------------------------------------------

    def turn(
        self,
        *,
        save_id: int,
        user_id: str,
        message: str | None = None,
        role_id: int | None = None,
        script_role_id: str | int | None = None,
        context: Mapping[str, Any] | None = None,
        now: datetime | None = None,
        user_name: str | None = None,
        char_name: str | None = None,
        count_recall: bool = True,
        dry_run: bool = False,
        regenerate: bool = False,
        max_prompt_tokens: int | None = None,
    ) -> TurnResult:
        """The prompt for the character's reply to `message` in save `save_id`.
        `count_recall=False` only looks: recalled memories get no strength or count.
        `dry_run=True` changes nothing at all (a preview or a retry): no strength or count, and
        the character's sticky queue and turn counter stay as they were.
        `regenerate=True` (no `message`): the prompt for a new reply in place of the save's
        tip, which must be a reply (else ConflictError naming `regenerate`): the conversation
        up to the player line it answered, that line once and last; a read, as `dry_run`.
        `max_prompt_tokens`: the most tokens the prompt may take (`TurnResult.prompt_tokens`):
        the lowest-ranked memory items go first, then the oldest history; the template's text
        and the message are never cut (MemoryInputError naming `max_prompt_tokens` when they
        alone pass it)."""
        if max_prompt_tokens is not None and (
            isinstance(max_prompt_tokens, bool)
            or not isinstance(max_prompt_tokens, int)
            or max_prompt_tokens < 1
        ):
            raise MemoryInputError(
                f"max_prompt_tokens must be a positive integer, got {max_prompt_tokens!r}",
                field="max_prompt_tokens",
            )
        for flag, name in ((dry_run, "dry_run"), (regenerate, "regenerate")):
            if not isinstance(flag, bool):
                raise MemoryInputError(f"{name} must be True or False, got {flag!r}")
        if regenerate and message is not None:
            raise MemoryInputError(
                "a regenerate answers the player line the tip answered: give no message",
                field="message",
            )
        if not regenerate:
            checked_text(message, "message")
        # the turn that played the replaced reply was counted then: a swipe changes nothing
        dry_run = dry_run or regenerate
        checked_text(user_id, "user_id")
        observed_target(role_id, script_role_id)  # exactly one, checked
        now = naive_time(now or datetime.now(), "now")
        with self._store.reading() as cur:  # another player's save is not found
            save = saves.owned_save(
                cur,
                save_id,
                user_id,
                engine=self._store.name,
                open_ownerless=self.open_ownerless_saves,
            )
            replaced = (
                saves.reply_tip(cur, save, engine=self._store.name, field="regenerate")
                if regenerate
                else None
            )
        user_name = user_name or save["user_name"]  # the save's player, unless given
        # the save's history first (it also brings the save's write-time rows up to date for
        # every read after it); then both recalls start while this thread builds the window
        history = build_memory_for_save(
            self._store,
            save_id,
            role_id=role_id,
            script_role_id=script_role_id,
            user_id=save["user_id"],  # the save's player (on Citus, the walk's shard)
        )
        last_reply = _last_reply(history)
        context_window = functools.partial(
            self.loop.context_window,
            save_id=save_id,
            role_id=role_id,
            script_role_id=script_role_id,
            user_id=user_id,
        )
        window = None
        if replaced is not None:
            # the window ends on the reply being replaced: the lines before it are the
            # conversation, the player line it answered the message (and the last reply the
            # character's one before it)
            window = context_window()
            window["lines"], message = _before_reply(window["lines"], replaced, save_id)
            last_reply = _last_reply(
                build_memory(window["lines"], role_id=role_id, script_role_id=script_role_id)
            )
        assert message is not None
        # the save x character's sticky queue and turn counter, as the store holds them (every
        # process sharing it, and a restart, continue the same countdown)
        session = StoredRecallSession(self.character, self._store, save_id, user_id)
        # the recalls work for this turn's work token (a turn past its budget stops them)
        dynamic_job = self._recalls.submit(
            cancel.carried(self.memory.query),
            message,
            user_id=user_id,
            agent_id=self.agent_id,
            now=now,
            save_id=save_id,
            last_reply=last_reply,
            explain=True,
            update=count_recall and not dry_run,
            user_name=user_name,
            agent_name=char_name,
            # the budget's statement renders the dynamic memory from the items it keeps
            prompt_text=False,
        )
        if window is None:
            window = context_window()
        # names the caller did not give: the save's player, the role's (or the name its lines
        # show); every block is filled with them, so no placeholder reaches the LLM
        player, character = self.loop.speaker_names(role_id, user_name, char_name, window["lines"])
        # the save's system line is the template the character recall's statement fills
        raw_template = next((m["content"] for m in history if m["role"] == "system"), "")
        character_job = self._recalls.submit(
            cancel.carried(session.recall),
            message,
            context,
            user_name=player,
            char_name=character,
            dry_run=dry_run,
            explain=True,
            template=raw_template,
        )
        # the player's message is the window's next line: the memory builder's rule makes the
        # conversation (background voices before it merge with it as `{background}\nfocus`)
        said = {
            "attribute": "user",
            "id": max((line["id"] for line in window["lines"]), default=0) + 1,
            "content": message,
            "created_at": now,
        }
        # the player named as this request names them (else the save): rendered from the
        # window's lines, never read from the stored history, so another name than the save's
        # is the one shown. A regenerate's window already ends on the player's line.
        conversation = build_memory(
            [*window["lines"], *([] if replaced is not None else [said])],
            role_id=role_id,
            script_role_id=script_role_id,
            user_name=user_name,
        )
        recalled, dynamic = character_job.result(), dynamic_job.result()

        # the template as the recall's statement filled it (model character_memory_prompts);
        # the dynamic memory, recalled at the same time by its own statement, goes where the
        # template places it, else in a system message of its own
        around = recalled.prompt_around_dynamic
        system = recalled.system_prompt or ""
        # the player's message is the conversation's last message; the character's prompt
        # line, when the window reaches back to it, is the system message
        starts_with_prompt = conversation[0] == {"role": "system", "content": raw_template}
        history = conversation[1:-1] if starts_with_prompt else conversation[:-1]
        # every piece counted, the budgets' cuts decided, the dynamic memory rebuilt: one
        # statement (model memory_prompt_budget_cuts)
        pieces = _prompt_pieces(system, around, history, conversation[-1]["content"], dynamic)
        # the trace's event sources read the store while the budget's statement runs on its
        # own connection: neither waits for the other
        sources_job = self._recalls.submit(
            cancel.carried(self._event_sources),
            [c["event_id"] for c in dynamic.candidates]
            + [event["event_id"] for event in dynamic.timeline],
            user_id,
        )
        try:
            counted, dynamic_text, prompt_tokens = budget.cut(
                pieces,
                max_prompt_tokens=max_prompt_tokens,
                user_name=user_name,
                agent_name=char_name,
                is_dynamic_inline=around is not None,
                template_alone=system,
            )
            if max_prompt_tokens is not None and prompt_tokens > max_prompt_tokens:
                raise MemoryInputError(
                    f"max_prompt_tokens {max_prompt_tokens} is less than the {prompt_tokens} "
                    "tokens the template's text and the message take with nothing else",
                    field="max_prompt_tokens",
                )
        except BaseException:
            # the read ends with the turn: not started, it never runs; started, it is waited for
            sources_job.cancel()
            futures.wait([sources_job])
            raise
        cuts = {
            (piece["layer"], piece["item_index"]): count["cut_reason"]
            for piece, count in zip(pieces, counted, strict=True)
            if count["is_cut"]
        }
        if dynamic_text and around is not None:
            system = around[0] + dynamic_text + around[1]
        messages: list[dict[str, str]] = []
        if system:
            messages.append({"role": "system", "content": system})
        if dynamic_text and around is None:
            messages.append({"role": "system", "content": dynamic_text})
        messages += [m for i, m in enumerate(history) if ("history", i) not in cuts]
        messages.append(conversation[-1])
        return TurnResult(
            messages=messages,
            prompt_tokens=prompt_tokens,
            trace=self._trace(
                save_id,
                recalled,
                dynamic,
                sources_job.result(),
                window,
                len(history) - sum(layer == "history" for layer, _ in cuts),
                cuts,
            ),
        )

    def _trace(
        self,
        save_id: int,
        recalled: RecallResult,
        dynamic: QueryResponse,
        sources: Mapping[int, dict[str, Any]],
        window: Mapping[str, Any],
        window_messages: int,
        cuts: Mapping[tuple[str, int], str],
    ) -> list[dict[str, Any]]:
        """Every item that went in and every candidate that did not, one row each."""
        rows: list[dict[str, Any]] = [
            {
                "layer": "character",
                "item": entry["content"],
                "kind": entry["entry_kind"],
                "status": entry["status"],
                "why": entry["reason"],  # the recall mart's (character_memory_recall)
                "sticky_turns_left": entry.get("sticky_turns_left"),
            }
            for entry in recalled.explain
        ]
        for candidate in dynamic.candidates:
            budgeted = candidate["status"] == "shown" and cuts.get(
                ("dynamic_event", candidate["event_id"])
            )
            rows.append(
                {
                    "layer": "dynamic_event",
                    **sources.get(candidate["event_id"], {"item": None}),
                    "event_id": candidate["event_id"],
                    # the recall mart's (memory_recall_candidates): the first rule that
                    # keeps it out, in words, then the score components
                    "status": "budget" if budgeted else candidate["status"],
                    "why": {
                        **({"budget": budgeted} if budgeted else {}),
                        **{
                            name: candidate[name]
                            for name in (
                                "reason",
                                "bm25_score",
                                "keyword_score",
                                "dense_score",
                                "dense_z",
                                "context_score",
                                "long_context_score",
                                "time_score",
                                "time_answer_score",
                                "relevance_score",
                                "profile_score",
                                "score",
                            )
                        },
                    },
                }
            )
        rows += [
            {
                "layer": "timeline",
                **sources.get(event["event_id"], {}),
                "item": event["description"],
                "event_id": event["event_id"],
                "status": "budget" if ("timeline", event["id"]) in cuts else "shown",
                "why": cuts.get(("timeline", event["id"]))
                or (
                    f"save {event['save_id']}" if event["save_id"] is not None else "added by hand"
                ),
            }
            for event in dynamic.timeline
        ]
        rows += [
            {
                "layer": "dynamic_entity",
                "item": entity["description"],
                "entity_id": entity["entity_id"],
                # the lines the save sees it came from (its visible mentions'), as recalled
                "save_id": entity["save_id"],
                "line_ids": entity["line_ids"],
                "status": "budget" if ("dynamic_entity", entity["id"]) in cuts else "shown",
                "why": cuts.get(("dynamic_entity", entity["id"]))
                or f"matched {entity['matched_keywords']} ({entity['kind']})",
            }
            for entity in dynamic.memory_entities
        ]
        if dynamic.superseded_facts:
            # facts a later one on this branch replaced: left out before the entity limit
            rows.append(
                {
                    "layer": "dynamic_entity",
                    "item": f"{dynamic.superseded_facts} superseded facts",
                    "status": "superseded",
                    "why": "a later fact on the current branch replaced them",
                }
            )
        turns = window["window_turns"]
        rows.append(
            {
                "layer": "history",
                "item": f"{window_messages} messages",
                "status": "shown",
                "why": f"save {save_id}, current branch: the newest "
                f"{turns} turn{'' if turns == 1 else 's'} ({window['pending_turns']} after the "
                + (
                    f"extraction watermark, line {window['watermark_line_id']})"
                    if window["watermark_line_id"] is not None
                    else "start: nothing extracted yet)"
                ),
            }
        )
        history_cuts = [reason for (layer, _), reason in cuts.items() if layer == "history"]
        if history_cuts:
            rows.append(
                {
                    "layer": "history",
                    "item": f"{len(history_cuts)} oldest messages",
                    "status": "budget",
                    "why": history_cuts[0],
                }
            )
        return rows

    def _event_sources(self, event_ids: list[int], user_id: str) -> dict[int, dict[str, Any]]:
        """Each event's description, the save it was extracted on and its source lines."""
        if not event_ids:
            return {}
        # macro recalled_event_descriptions (test_rules_in_sql holds it equal to the model)
        sql = write_sql("recalled_event_descriptions", engine=self._store.name)
        rows = self._store.run(sql, {"ids": event_ids, "user_id": user_id})
        return {
            event_id: {
                "item": description,
                "save_id": save_id,
                "line_ids": None if line_ids is None else list(line_ids),
            }
            for event_id, description, save_id, line_ids in rows
        }

    # -- after the reply ---------------------------------------------------------------------

    def record(
        self,
        *,
        save_id: int,
        user_id: str,
        message: str,
        reply: str,
        role_id: int | None = None,
        script_role_id: str | int | None = None,
        scene: str | None = None,
        now: datetime | None = None,
        user_name: str | None = None,
        char_name: str | None = None,
        emotion: str | None = None,
    ) -> tuple[int, int]:
        """Append the player's line and the reply on the save's tip (one transaction), schedule
        the memory loop for them in the background; the two line ids."""
        for value, field_name in ((message, "message"), (reply, "reply"), (user_id, "user_id")):
            checked_text(value, field_name)
        observed_target(role_id, script_role_id)
        now = naive_time(now or datetime.now(), "now")
        with self._store.transaction() as cur:
            ids = saves.append(
                cur,
                save_id,
                [
                    {
                        "attribute": "user",
                        "content": message,
                        "display_name": user_name,
                        "created_at": now,
                    },
                    {
                        "attribute": "assistant",
                        "content": reply,
                        "role_id": role_id,
                        "script_role_id": None if script_role_id is None else str(script_role_id),
                        "display_name": char_name,
                        "original_emotion": emotion,
                        "created_at": now,
                    },
                ],
                user_id,
                engine=self._store.name,
                scene=scene,
                # a Companion opened for games that keep ownership themselves appends as it reads
                open_ownerless=self.open_ownerless_saves,
            )["line_ids"]
        job = self._background.submit(
            self.loop.observe,
            save_id=save_id,
            user_id=user_id,
            agent_id=self.agent_id,
            role_id=role_id,
            script_role_id=script_role_id,
            scene=scene,
            now=now,
            user_name=user_name,
            agent_name=char_name,
        )
        with self._lock:
            self._pending.append(job)
        return ids[0], ids[1]

    def wait(self) -> list[ObserveReport]:
        """Wait for the background observations scheduled so far; their reports (an
        extraction that failed raises its ExtractionError here)."""
        with self._lock:
            jobs, self._pending = self._pending, []
        return [job.result() for job in jobs]


def _before_reply(
    lines: list[dict[str, Any]], reply: Mapping[str, Any], save_id: int
) -> tuple[list[dict[str, Any]], str]:
    """The window's lines before `reply` (the save's tip, the window's last line), and the
    player's words it answered: the newest run of player lines before it, as the memory
    builder joins a run. ConflictError when the tip moved meanwhile or answers no player."""
    ids = [line["id"] for line in lines]
    if reply["id"] not in ids:
        raise ConflictError(
            f"save {save_id}: its tip moved while the prompt was built: try again",
            field="save_id",
        )
    before = lines[: ids.index(reply["id"])]
    said = [index for index, line in enumerate(before) if line["attribute"] == "user"]
    if not said:
        raise ConflictError(
            f"save {save_id}: its tip (line {reply['id']}) answers no player line: only a "
            "reply to the player can be regenerated with a prompt",
            field="regenerate",
        )
    start = said[-1]
    while start > 0 and before[start - 1]["attribute"] == "user":
        start -= 1
    return before, "".join(line["content"] or "" for line in before[start : said[-1] + 1])


def _last_reply(messages: list[dict[str, str]]) -> str | None:
    """The character's newest reply among the memory builder's messages."""
    return next((m["content"] for m in reversed(messages) if m["role"] == "assistant"), None)


def _prompt_pieces(
    system: str,
    around: tuple[str, str] | None,
    history: list[dict[str, str]],
    message: str,
    dynamic: QueryResponse,
) -> list[dict[str, Any]]:
    """The prompt's pieces as the budget statement reads them (model int_prompt_pieces): the
    template's text (before and after the dynamic memory's place when it gives one), the
    message, the history (rank 1 the newest), the recalled items (rank 1 the best; the
    overview timeline's newest first)."""
    template = [system] if around is None else list(around)
    timeline = dynamic.timeline
    return [
        *({"layer": "system", "item_index": i, "content": text} for i, text in enumerate(template)),
        {"layer": "message", "item_index": 0, "content": message},
        *(
            {
                "layer": "history",
                "item_index": i,
                "item_rank": len(history) - i,
                "content": m["content"],
            }
            for i, m in enumerate(history)
        ),
        *(
            {
                "layer": "timeline",
                "item_index": event["id"],
                "item_rank": len(timeline) - event["id"],
                "content": event["description"],
                "time_text": event["time_text"],
                "place": event["place"],
            }
            for event in timeline
        ),
        *(
            {
                "layer": "dynamic_event",
                "item_index": event["event_id"],
                "item_rank": event["id"] + 1,
                "content": event["description"],
                "time_text": event["time_text"],
                "place": event["place"],
                "day_text": event["updatetime"],
            }
            for event in dynamic.memory_events
        ),
        *(
            {
                "layer": "dynamic_entity",
                "item_index": entity["id"],
                "item_rank": entity["id"] + 1,
                "content": entity["description"],
                "kind": entity["kind"],
                "day_text": entity["updatetime"],
            }
            for entity in dynamic.memory_entities
        ),
    ]
