"""/query, /query_simple (dynamic memory, dynamic-memory §十二) and /expand_words (§11.1)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request

from ....dynamic_memory import QueryResponse as Answer
from ...core.body_route import BodyRoute
from ...core.errors import responses
from ...core.state import Store
from ...schemas.recall import (
    ExpandWordsRequest,
    ExpandWordsResponse,
    QueryRequest,
    QueryResponse,
    QuerySimpleResponse,
)
from ..deps import StoreDep, check_own_save

_ERRORS = responses(400, 403, 404, 413, 422, 503)
router = APIRouter(tags=["recall"], route_class=BodyRoute, responses=_ERRORS)
shared = APIRouter(tags=["recall"], route_class=BodyRoute, responses=_ERRORS)


def _recall(store: Store, body: QueryRequest) -> Answer:
    # another player's save is not revealed, not even by its rule
    check_own_save(store, body.save_id, body.user_id)
    return store.memory.query(
        body.query,
        **body.model_dump(exclude={"query", "now", "dry_run"}),
        now=body.now or datetime.now(),
        update=not body.dry_run,
    )


@router.post(
    "/query",
    response_model=QueryResponse,
    summary="Recall a player's memories",
    description="Events and entity memories relevant to the text (keywords, BM25, meaning, "
    "the time it names), best first, with the overview timeline and the prompt text. A "
    "recall counts (+strength) unless `dry_run`.",
)
async def query(request: Request, store: StoreDep, body: QueryRequest) -> Any:
    # QueryResponse reads its fields off the answer
    return await store.run(_recall, store, body, request=request)


_LISTS = ("memory_events", "memory_entities", "timeline")


@router.post(
    "/query_simple",
    response_model=QuerySimpleResponse,
    summary="Recall, the texts only",
    description="As /query, only the memories' texts and the prompt text.",
)
async def query_simple(request: Request, store: StoreDep, body: QueryRequest) -> Any:
    answer: Answer = await store.run(_recall, store, body, request=request)
    texts = {name: [e["description"] for e in getattr(answer, name)] for name in _LISTS}
    return {**texts, "prompt_text": answer.prompt_text}


@shared.post(
    "/expand_words",
    response_model=ExpandWordsResponse,
    response_model_by_alias=True,
    summary="Association words of a sentence",
    description="dynamic-memory §11.1: the sentence's words, those left after stopwords, and "
    "their association words with levels.",
)
async def expand_words(request: Request, store: StoreDep, body: ExpandWordsRequest) -> Any:
    words = await store.run(
        store.memory.expand_words,
        body.sentence,
        count=body.chinese_rd_count,
        strategy=0 if body.logic_type == "first" else 1,
        filter_levels=body.filter_values,
        request=request,
    )
    return ExpandWordsResponse(**words)
