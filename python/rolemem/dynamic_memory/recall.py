"""Recall: the query models run with the caller's inputs bound, and the recall's side
effects (recall count, time, +strength; the recall log) in one transaction."""

from __future__ import annotations

import functools
import itertools
import logging
import os
import time
import uuid
from collections.abc import Mapping, Sequence
from concurrent import futures
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..engines.postgres import CITUS
from ..memory_builder import history
from ..retry import retry
from ..schema.memory import SCOPES, memory_table
from ..sql import cancel
from ..sql.batching import Coalescer, per_player, sole_player
from ..sql.project import render_macro, write_sql
from ..text.recall_words import RecallWords, Word, answer_words, words_params
from ..text.tokens import search_keywords, search_terms, simple_lower
from . import entity_scores, event_scores, prompt_texts
from .base import Context
from .checks import MemoryInputError, _count, _unit, checked_text, naive_time
from .description_cache import DescriptionCache
from .event_fields import EventFields, revisions_of
from .lookups import Lookups
from .postings_cache import EventPostingsCache
from .reachable import Reachable, read_reachable
from .responses import QueryResponse, _entity_out, _event_out, _timeline_out
from .scope import Scope, candidates_in_scope, read_scope, timeline_ids
from .signals import signal_rows
from .sql import (
    FAST_LEXICAL,
    FAST_SIGNALS,
    FAST_TIME_WINDOWS,
    LEXICAL_COLUMNS,
    LOGGED,
    NO_REFERENCES,
    entity_select,
    logged_columns,
    query_select,
)
from .vector_cache import EventVectorCache, dense_batch
from .vectors import Vectors

log = logging.getLogger(__name__)

# what one recall statement answers, with the entities (_entity_targets)
_TARGETS = (
    "memory_query_events",
    "memory_prompt_texts",
    "memory_query_timeline",
    "memory_recall_candidates",
)
_TARGETS_WITHOUT_PROMPT_TEXT = tuple(t for t in _TARGETS if t != "memory_prompt_texts")
# The signal rows a batch's candidates are scored in Python for (event_scores), at most: a
# candidate costs ~33 us there (its row made a dict, scored, judged) against ~12 in the
# statement, which plans ~40 operators more (~18 ms): they cross at ~850 (bench_recall_scale).
MOST_SCORED = 800
# what it answers when the caller scores the candidates (event_scores)
_SCORED_TARGETS = ("int_memory_event_candidates", "memory_query_timeline")


def _entity_targets(gathers: bool, lines: bool) -> tuple[str, ...]:
    """The entities a statement answers: the recalled ones, or the hits the caller gathers
    (entity_scores, `gathers`) with their mention lines when any came from lines (`lines`,
    var recall_mention_lines)."""
    if not gathers:
        return ("memory_query_entities",)
    return ("int_memory_entity_hits", *(("int_memory_entity_mention_lines",) if lines else ()))


# The threads that run a lone query's entities' statement beside the rest (sql.entity_select):
# DuckDB plans and runs each statement on its own cursor, outside the GIL, so a lone turn waits
# for the longer half (~70 operators each on the demo's turn) instead of one statement of both.
def _threads() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=4, thread_name_prefix="rolemem-recall")


_BESIDE = _threads()


def _new_threads_after_fork() -> None:
    """A forked child has none of the parent's threads: a pool of its own, else its first
    recall would wait forever for workers that do not exist there."""
    global _BESIDE
    _BESIDE = _threads()


os.register_at_fork(after_in_child=_new_threads_after_fork)


@functools.cache
def _has_sql(engine: str) -> str:
    """Whether any player of a batch has a fact, a replacement batch, an entity mention from
    lines, an entity (macro recall_batch_holdings)."""
    return render_macro("recall_batch_holdings", engine=engine)


@dataclass(frozen=True)
class _Query:
    """One query's bound inputs (sql.QUERY_FIELDS but its vector, and the settings), whether
    its caller wants every scored candidate back, and the side effects it asks for."""

    params: dict[str, Any]
    wants_candidates: bool
    update: bool
    log: bool
    wants_prompt_text: bool = True
    # what its player holds (_has_sql's row), read beside its scope from the query's start
    # (the embedded store); None: read by its batch
    holds: Future[tuple[Any, ...]] | None = None


def _scored(
    row: tuple[Any, ...],
    query: Mapping[str, Any],
    stats: Mapping[str, Any],
    variables: Mapping[str, Any],
    candidates: bool,
) -> tuple[Any, ...]:
    """One query's answer row with its candidates (the statement's events column) scored and
    selected in Python (event_scores), in the places the statement's are."""
    scored = event_scores.scored(row[1] or [], query, stats, variables)
    event_scores.selected(scored, query, (event["event_id"] for event in row[4] or []))
    judged = event_scores.judged(scored, query) if candidates else None
    return (row[0], event_scores.shown_events(scored), *row[2:5], judged, *row[6:])


def _gathered(row: tuple[Any, ...], words: Sequence[Word]) -> tuple[Any, ...]:
    """One query's answer row with its entity hits (the statement's entities column, ranked
    and cut) shaped in Python (entity_scores), in the place the statement's entities are."""
    hits = row[2] or []
    lines = {
        hit["entity_id"]: (hit["save_id"], hit["line_ids"]) for hit in hits if "save_id" in hit
    }
    recalled = entity_scores.recalled(hits, entity_scores.base_word_count(words))
    return (*row[:2], entity_scores.shown_entities(recalled, lines) or None, *row[3:])


class Recall:
    """Recall over the store: queries waiting while a statement runs are answered together by
    the next one (`batches`), at most `max_batch`."""

    def __init__(
        self, context: Context, vectors: Vectors, lookups: Lookups, max_batch: int
    ) -> None:
        self.context, self.vectors, self.lookups = context, vectors, lookups
        # a player's event vectors held in memory (numpy), with an embedder
        self._cache = (
            EventVectorCache(context.embedder.dim) if context.embedder is not None else None
        )
        # the query words and their BM25 rows computed before the statement, which then plans
        # neither (the embedded store; PostgreSQL keeps generic plans, so its statement
        # computes them)
        self._fast: tuple[RecallWords, EventPostingsCache] | None = None
        # and answers a lone query without the recall statement when it scores its candidates
        # (scope), over the descriptions held here; False: the statement answers (the parity
        # tests' other side)
        self._alone = True
        self._texts = DescriptionCache()
        self._fields = EventFields()
        # and renders the prompt text from the statement's rows (prompt_texts): False plans
        # model memory_prompt_texts instead, as PostgreSQL does (the parity test's other side)
        self._renders_prompt_text = True
        if context.engine is None:
            with context.con.cursor() as cur:
                self._fast = RecallWords.read(cur), EventPostingsCache()
        # on Citus one statement names one player (its shard)
        run = (
            per_player(self._recall_batch, lambda query: query.params["user_id"])
            if context.store.name == CITUS
            else self._recall_batch
        )
        self.batches = Coalescer(run, max_batch=_count(max_batch, "max_batch", low=1, high=64))

    def query(
        self,
        text: str,
        *,
        user_id: str,
        agent_id: str,
        limit: int = 5,
        score_threshold: float | None = None,
        now: datetime | None = None,
        user_name: str | None = None,
        agent_name: str | None = None,
        roulette_seed: int | None = None,
        log: bool = False,
        update: bool = True,
        explain: bool = False,
        save_id: int | None = None,
        memory_scope: str | None = None,
        last_reply: str | None = None,
        prompt_text: bool = True,
    ) -> QueryResponse:
        """Recall events and entities for `text` (the character's last reply + the player's
        input). Only memories with evidence of relevance are returned (a shared word or tag, a
        cosine clearly above the player's other memories, or the time the text names), best
        first; `score_threshold` (0-1, optional) also drops those whose fused score is lower.
        The overview timeline comes with them (`QueryResponse.timeline`). `last_reply`: the
        character's previous reply, recalled with the text (spec §五.2: reply + input).
        Recalled memories get recall_count + 1, last_recalled_at = now and the profile's
        strength bonus, in one transaction (`update=False` to only look).
        `explain=True` also returns every scored candidate with its score components
        (`QueryResponse.candidates`); `log=True` writes them to memory_recall_log.
        `save_id`: the save being played; events extracted from lines off its current chain
        are not recalled (branch-aware). `memory_scope`: 'player' (default, seed
        memory_loop_settings) or 'save' (only events of this save and unsourced ones).
        `prompt_text=False`: the caller renders the memory itself (a turn's budget does): its
        QueryResponse.prompt_text is empty, and the statement plans none unless another query
        of its batch asks for one."""
        started = time.perf_counter()
        checked_text(text, "text")
        checked_text(user_id, "user_id")
        checked_text(agent_id, "agent_id")
        limit = _count(limit, "limit", low=1, high=1000)
        if (update or log) and self.context.read_only:
            raise MemoryInputError(
                "this DynamicMemory was opened read_only: query with update=False and log=False"
            )
        threshold = _unit(score_threshold, "score_threshold")
        if roulette_seed is not None:
            roulette_seed = _count(roulette_seed, "roulette_seed", low=-(2**31))
        now = naive_time(now or datetime.now(), "now")
        if last_reply is not None:
            text = f"{checked_text(last_reply, 'last_reply')}\n{text}"
        # what the player holds is read beside the scope's read (the save made current, its
        # lineage): both are a statement the statements of the batch wait for. Not for the
        # request's work token: a batch reads it for every query it answers, and one client
        # leaving must not fail the others' batch (as the batch itself runs: Coalescer)
        holds = None if self._fast is None else _BESIDE.submit(self._holds, [user_id], [agent_id])
        try:
            # TF-IDF drops one-character words; a query made only of them still has its tokens
            tokens = search_terms(search_keywords(text, top_k=10), names=(user_name, agent_name))
            tokenized = time.perf_counter()
            params = {
                **self.lookups.scope_params(save_id, memory_scope, user_id),
                "agent_id": agent_id,
                "user_id": user_id,
                "user_name": user_name,
                "agent_name": agent_name,
                "query_text": text,
                "tokens": tokens,
                "now": now,
                "result_limit": limit,
                "score_threshold": threshold,
                "roulette_seed": roulette_seed,
            }
            # answered with the other queries waiting for a statement, if any
            # (rolemem.sql.batching): their texts embedded together, then one statement, then
            # their side effects
            (events, entities, prompt, timeline, candidates, words, superseded), timings = (
                self.batches.submit(
                    _Query(
                        params,
                        wants_candidates=log or explain,
                        update=update,
                        log=log,
                        wants_prompt_text=prompt_text,
                        holds=holds,
                    )
                )
            )
        finally:
            if holds is not None:  # what started beside the query ends with it
                holds.cancel()  # (not started: a query that failed first never needs it)
                futures.wait([holds])
        done = time.perf_counter()
        return QueryResponse(
            memory_events=[_event_out(e) for e in events or []],
            memory_entities=[_entity_out(e) for e in entities or []],
            additional_info={
                "检索耗时": {
                    "分词": f"{(tokenized - started) * 1000:.2f} 毫秒",
                    "向量+embedding": f"{timings['embed']:.2f} 毫秒",
                    "SQL召回与排序": f"{timings['sql']:.2f} 毫秒",
                    "更新强度": f"{timings['update']:.2f} 毫秒",
                },
                # embed, sql and update: of the batch this query was answered in (shared
                # work); wait: queued behind another batch
                "timings_ms": {
                    "tokenize": (tokenized - started) * 1000,
                    "wait": max((done - tokenized) * 1000 - sum(timings.values()), 0.0),
                    **timings,
                },
                "query": text,
                "分词": tokens,
                "给联想的基词": [w["word"] for w in words or [] if w["word_source"] == "token"],
                "扩展后联想词": [
                    {w["word"]: w["level"]} for w in words or [] if w["word_source"] == "expanded"
                ],
            },
            prompt_text=(prompt or "") if prompt_text else "",
            # query_id is the statement's key for this query, not the caller's business
            candidates=[
                {name: value for name, value in candidate.items() if name != "query_id"}
                for candidate in candidates or []
            ]
            if explain
            else [],
            timeline=[_timeline_out(e) for e in timeline or []],
            superseded_facts=int(superseded or 0),
        )

    def _recall_batch(
        self, queries: Sequence[_Query]
    ) -> list[tuple[tuple[Any, ...], dict[str, float]]]:
        """A batch of queries: their texts embedded in one call, then one statement (a lone
        query's two on the embedded store, beside each other), then the side effects the
        queries ask for in one transaction (before the next batch's statement, which sees
        them). Per query (in order) its events, entities, prompt text, timeline, candidates
        (when any query of the batch asks) and words, with the batch's embed, SQL and update
        times."""
        parts: list[Future[Any]] = []
        try:
            return self._answered_batch(queries, parts)
        except BaseException:
            for part in parts:  # what has not started yet never will
                part.cancel()
            raise
        finally:
            # what started beside the batch ends with it, even when the batch fails
            futures.wait(parts)

    def _answered_batch(
        self, queries: Sequence[_Query], parts: list[Future[Any]]
    ) -> list[tuple[tuple[Any, ...], dict[str, float]]]:
        """_recall_batch's work; each statement it starts beside its own goes in `parts`."""
        started = time.perf_counter()
        context = self.context
        # each query's vector and its cosines with the reference sentences, once embedded
        # (below; None: no embedder)
        inputs = [{**query.params, "query_embedding": None, **NO_REFERENCES} for query in queries]
        candidates = any(query.wants_candidates for query in queries)
        # the windows the texts name: whether the statement plans one, and (embedded) its
        # rows; None: a clock out of Python's calendar, the model decides in the statement
        windows = context.time_windows.rows(inputs)
        has_window = windows is None or bool(windows["windows_query_id"])
        variables = self._plan_variables(
            inputs, [query.holds for query in queries], has_window, context.embedder is not None
        )
        # the prompt text: rendered here on the fast path (prompt_texts), else by the statement
        prompt_text = any(query.wants_prompt_text for query in queries)
        rendered = prompt_text and self._fast is not None and self._renders_prompt_text
        # Python reads what the statement selects (the entities' hits, the events' scores)
        # unless the statement renders the prompt text, which reads the recalled ones
        python_reads = self._fast is not None and (rendered or not prompt_text)
        entities = variables.get("recall_entities", True)
        gathers = entities and python_reads
        lines = variables.get("recall_mention_lines", True)
        # the fast path has the words before the statement, which then only reads them
        words = None if self._fast is None else [self._fast[0].words(values) for values in inputs]
        # the entity hits Python gathers come from a statement of their own (sql.entity_select,
        # with the superseded facts its models resolve anyway), which runs beside the rest of
        # the recall from here: it needs neither the reachable events nor the signals. Only
        # for a lone query (a turn's): a busy service batches several, and where every core
        # is busy the work the two statements share is only added
        facts = variables.get("recall_facts", True)
        fast_models = {**FAST_LEXICAL, **(FAST_TIME_WINDOWS if windows is not None else {})}
        apart: Future[list[tuple[Any, ...]]] | None = None
        if gathers and words is not None and len(queries) == 1:
            apart = _BESIDE.submit(
                cancel.carried(self.lookups.run_models),
                self.lookups.models_sql(
                    _entity_targets(gathers, lines),
                    entity_select(context.store.name, facts, lines),
                    variables,
                    fast_models,
                ),
                [dict(values) for values in inputs],  # as they are before the embedding
                {**words_params(words, "query_id"), **(windows or {})},
            )
            parts.append(apart)
        # a lone query's reachable events are read with its scope (the branch rule), so it may
        # need no statement (below); beside its embedding, which they do not need
        lone = (
            self._fast is not None
            and self._alone
            and len(queries) == 1
            and windows is not None
            and not variables.get("recall_replacements", True)
        )
        scoping: Future[Scope] | None = None
        if lone and context.embedder is not None:
            scoping = _BESIDE.submit(
                cancel.carried(read_scope), context.store.columns, dict(inputs[0])
            )
            parts.append(scoping)
        # the texts embedded while the entities' statement works (it reads no vector)
        embedding = time.perf_counter()
        if context.embedder is not None:
            texts = [query.params["query_text"] for query in queries]
            vectors = self.vectors.embed_queries(texts)
            for values, text, vector in zip(inputs, texts, vectors, strict=True):
                values["query_embedding"] = vector
                values |= self.vectors.reference_stats(text, vector)
        embed_ms = (time.perf_counter() - embedding) * 1000
        # the fast path reads the queries' reachable events once, for BM25 and the vectors
        scope: Scope | None = None
        reachable: list[Reachable] | None = None
        if lone:
            scope = (
                read_scope(context.store.columns, inputs[0])
                if scoping is None
                else scoping.result()
            )
            reachable = [scope.reachable]
        elif self._fast is not None:
            reachable = read_reachable(
                context.store.columns,
                [(values["agent_id"], values["user_id"]) for values in inputs],
                vectors=self._cache is not None
                and any(values["query_embedding"] is not None for values in inputs),
            )
        dense, stats = dense_batch(
            self._cache,
            context.store.columns,
            inputs,
            int(context.settings["dense_candidates"]),
            None if reachable is None else [events.with_vectors() for events in reachable],
        )
        lexical = self._lexical(inputs, reachable, words)
        bound = {**stats, **lexical}
        if self._fast is not None and windows is not None:
            bound |= windows
        # with the windows known here, the signal rows too (the model's union: FAST_SIGNALS),
        # unless its words and meanings alone make too many to score here (below)
        signals = None
        known = len(lexical.get("lexical_event_id", ())) + len(dense["event_id"])
        if windows is not None and reachable is not None and known <= MOST_SCORED:
            signals = signal_rows(
                lexical, dense if variables.get("recall_dense", True) else None, windows, reachable
            )
            bound |= signals
        # and then scores and selects the candidates the statement answers (event_scores),
        # unless the statement renders the prompt text (which reads the selected events) or
        # the batch has more signal rows than Python scores faster than the models
        scores = (
            signals is not None and python_reads and len(signals["signals_event_id"]) <= MOST_SCORED
        )
        # a lone query whose candidates Python scores needs no statement: its answer is built
        # from its scope (the entities come from their own statement, beside)
        alone = None
        if scores and signals is not None and scope is not None and (apart or not entities):
            stats_of_one = {name: stats[name][0] for name in stats}
            alone = self._answered_alone(
                scope, signals, inputs[0], stats_of_one, variables, candidates, has_window
            )
        if alone is not None:
            rows = [alone]
        else:
            provided = (
                None
                if self._fast is None
                else {**fast_models, **(FAST_SIGNALS if signals is not None else {})}
            )
            sql = self.lookups.models_sql(
                (
                    *(
                        _SCORED_TARGETS
                        if scores
                        else _TARGETS
                        if prompt_text and not rendered
                        else _TARGETS_WITHOUT_PROMPT_TEXT
                    ),
                    *(() if apart is not None else _entity_targets(gathers, lines)),
                ),
                query_select(
                    candidates,
                    context.store.name,
                    facts and apart is None,
                    prompt_text=prompt_text and not rendered,
                    entities=entities and apart is None,
                    words=words is None,
                    scored=scores,
                    hits=gathers,
                    lines=lines,
                ),
                variables,
                provided,
            )
            rows = self.lookups.run_models(sql, inputs, bound, dense)
            if scores:
                rows = [
                    _scored(
                        row,
                        values,
                        {name: stats[name][number] for name in stats},
                        variables,
                        candidates,
                    )
                    for number, (row, values) in enumerate(zip(rows, inputs, strict=True))
                ]
        if gathers and words is not None:
            if apart is not None:  # the entities' statement's rows in their place
                rows = [
                    (*row[:2], hits, *row[3:7], superseded)
                    for row, (_, hits, superseded) in zip(rows, apart.result(), strict=True)
                ]
            rows = [_gathered(row, found) for row, found in zip(rows, words, strict=True)]
        results = (
            [row[1:] for row in rows]
            if words is None
            else [
                (*row[1:6], answer_words(found), *row[7:])
                for row, found in zip(rows, words, strict=True)
            ]
        )
        if rendered:
            results = [
                (
                    events,
                    entities,
                    prompt_texts.prompt_text(
                        events or [],
                        entities or [],
                        timeline or [],
                        values["user_name"],
                        values["agent_name"],
                    )
                    if query.wants_prompt_text
                    else None,
                    timeline,
                    *rest,
                )
                for query, values, (events, entities, _, timeline, *rest) in zip(
                    queries, inputs, results, strict=True
                )
            ]
        answered = time.perf_counter()
        if any(query.update or query.log for query in queries):
            self._after_recall(queries, results)
        timings = {
            "embed": embed_ms,
            "sql": (answered - started) * 1000 - embed_ms,
            "update": (time.perf_counter() - answered) * 1000,
        }
        return [(result, timings) for result in results]

    def _answered_alone(
        self,
        scope: Scope,
        signals: Mapping[str, Sequence[Any]],
        values: Mapping[str, Any],
        stats: Mapping[str, Any],
        variables: Mapping[str, Any],
        explain: bool,
        has_window: bool,
    ) -> tuple[Any, ...] | None:
        """A lone query's answer row, as the statement and _scored give it, from its `scope`:
        its candidates scored and selected (event_scores), its timeline, and the fields of the
        events shown, read by id. None: an event was deleted since the scope was read (each
        read has its snapshot; the statement's one reads them all)."""
        context = self.context
        owner = (values["agent_id"], values["user_id"])
        found = candidates_in_scope(
            scope,
            signals,
            has_window,
            functools.partial(self._texts.texts, context.store.columns, owner),
            context.time_question_words,
            context.time_words,
        )
        if found is None:
            return None
        scored = event_scores.scored(found, values, stats, variables)
        timeline = timeline_ids(scope, values["timeline_size"])
        event_scores.selected(scored, values, timeline)
        shown = [row for row in scored if row["is_selected"]]
        wanted = sorted({row["event_id"] for row in shown} | set(timeline))
        fields = self._fields.fields(
            context.store.records,
            owner,
            revisions_of(scope.reachable.ids, scope.revision, wanted),
            values["now"],
        )
        if len(fields) < len(wanted):
            return None
        for row in shown:
            row.update(fields[row["event_id"]])
        timeline_rows = [
            {"query_id": 1, "result_index": index, **fields[event_id]}
            for index, event_id in enumerate(timeline)
        ]
        return (
            1,
            event_scores.shown_events(scored),
            None,
            None,
            timeline_rows or None,
            event_scores.judged(scored, values) if explain else None,
            None,
            0,
        )

    def _lexical(
        self,
        inputs: Sequence[Mapping[str, Any]],
        reachable: Sequence[Reachable] | None,
        words: Sequence[list[Word]] | None,
    ) -> dict[str, list[Any]]:
        """The batch's words and BM25 rows over each query's `reachable` events, bound as
        FAST_LEXICAL's lists; none without the fast path."""
        if self._fast is None or reachable is None or words is None:
            return {}
        postings = self._fast[1]
        fetch = self.context.store.columns
        lexical: dict[str, list[Any]] = {f"lexical_{name}": [] for name in LEXICAL_COLUMNS}
        for query_id, (values, query_words, events) in enumerate(
            zip(inputs, words, reachable, strict=True), 1
        ):
            event_ids, bm25, tiers = postings.lexical(fetch, values, query_words, events)
            found: tuple[list[Any], ...] = ([query_id] * len(event_ids), event_ids, bm25, tiers)
            for name, column in zip(LEXICAL_COLUMNS, found, strict=True):
                lexical[f"lexical_{name}"] += column
        return {**lexical, **words_params(words, "query_id")}

    def _holds(self, user_ids: list[str], agent_ids: list[str]) -> tuple[Any, ...]:
        """_has_sql's row: whether any of the players has a fact with any of the agents, a
        replacement batch, an entity mention from lines, an entity."""
        store = self.context.store
        params: dict[str, Any] = {"user_id": user_ids, "agent_id": agent_ids}
        if self.context.engine is not None:  # the batch's one player, where it is one's
            params[history.PLAYER] = sole_player(user_ids)
        [row] = store.run(_has_sql(store.name), params)
        return tuple(row)

    def _plan_variables(
        self,
        inputs: Sequence[Mapping[str, Any]],
        holds: Sequence[Future[tuple[Any, ...]] | None],
        has_window: bool,
        dense: bool,
    ) -> dict[str, Any]:
        """What a batch's statement plans (each operator is planned on every call): each part
        only for a batch that needs it, as said beside it; the time window only when a text
        names one (`has_window`, time_windows.TimeWindows); the dense signals only when the
        queries will have vectors (`dense`). The models answer alike without these (every
        part, decided per query)."""
        # each query's own read (exact for its player and agent), or one for the batch
        rows = (
            [read.result() for read in holds if read is not None]
            if all(read is not None for read in holds)
            else [
                self._holds(
                    [values["user_id"] for values in inputs],
                    [values["agent_id"] for values in inputs],
                )
            ]
        )
        has_facts, has_replacements, has_mention_lines, has_entities = (
            any(column) for column in zip(*rows, strict=True)
        )
        return {
            # the facts' models only for a batch whose players have facts (most have none)
            "recall_facts": bool(has_facts),
            # the branch rule's replacements only for players with some (after a reload into
            # an extracted stretch)
            "recall_replacements": bool(has_replacements),
            # the entities' branch rule only for players with a mention extracted from lines
            "recall_mention_lines": bool(has_mention_lines),
            # the entities' models only for a batch with an entity or a fact to recall (a
            # fact is the 用户属性 tier)
            "recall_entities": bool(has_entities or has_facts),
            # a query without a save resolves its facts in the statement (the others read
            # their save's resolution)
            "recall_saveless": any(values["save_id"] is None for values in inputs),
            # the profile's fusion only
            "recall_fusion": self.context.settings["fusion"],
            "recall_dense": dense,
            "recall_time_windows": has_window,
            # which events name a time only for a batch with a query asking when (a word of
            # seed memory_time_question_words in its lowercased text, as the model tests)
            "recall_time_answers": any(
                word in text
                for text in (simple_lower(values["query_text"]) for values in inputs)
                for word in self.context.time_question_words
            ),
            # 以前…现在… only for a batch with a query about an earlier time: a past word
            # among its tokens (seed memory_fact_past_words, as the model tests) or a window
            "recall_fact_history": has_window
            or any(not self.context.past_words.isdisjoint(v["tokens"]) for v in inputs),
        }

    def _after_recall(self, queries: Sequence[_Query], results: Sequence[tuple[Any, ...]]) -> None:
        """A batch's side effects in one transaction: one update per table for every recall
        asking for it (as if applied one by one in the order of their times), one log insert
        per query asking for its log; retried on a write conflict (another writer touching a
        recalled memory), and if they still conflict the batch is answered anyway and its
        bookkeeping is skipped (logged), never the answer."""
        statements = []
        store = self.context.store
        tables = (("memory_event", 0, "event_id"), ("memory_entity", 1, "entity_id"))
        bonus = self.context.settings["recall_strength_bonus"]
        # the batch's player where it is one's (on Citus always: DynamicMemory splits)
        player = sole_player(query.params["user_id"] for query in queries)
        # an official memory's counters are in its own table (of no player): its statement
        # only when one was recalled
        for (player_table, position, key), scope in itertools.product(tables, SCOPES):
            recalled = [
                (row[key], query.params["now"])
                for query, result in zip(queries, results, strict=True)
                if query.update
                for row in result[position] or []
                if row["scope"] == scope
            ]
            ids, times = [item_id for item_id, _ in recalled], [at for _, at in recalled]
            if len(set(ids)) == len(ids) and len(set(times)) == 1:
                name, params = "record_recalls", {"ids": ids, "now": times[0]}
            elif recalled:
                name, params = "record_batched_recalls", {"ids": ids, "recalled_at": times}
            else:
                continue
            table = memory_table(player_table, scope)
            sql = write_sql(name, table, scope == "user", engine=store.name)
            statements.append((sql, {"bonus": bonus, "user_id": player, **params}))
        for query, result in zip(queries, results, strict=True):
            if query.log and result[4]:
                statements.append(
                    (
                        write_sql("log_recalls", LOGGED, engine=store.name),
                        {
                            "query_id": uuid.uuid4().hex,
                            "now": query.params["now"],
                            "agent_id": query.params["agent_id"],
                            "user_id": query.params["user_id"],
                            **logged_columns(result[4]),
                        },
                    )
                )
        try:
            retry(lambda: store.run_all(statements), attempts=3, on=store.conflicts, wait=0.005)
        except store.conflicts as exc:
            log.warning("recall side effects skipped after 3 conflicts: %s", exc)

    def prompt_text(self, text: str, **kwargs: Any) -> str:
        """The recalled memory as the chat prompt reads it (see QueryResponse.prompt_text)."""
        return self.query(text, **kwargs).prompt_text
