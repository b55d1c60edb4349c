"""/query, /query_simple (dynamic memory, dynamic-memory §十二) and /expand_words (§11.1)."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Request

from .schemas import (
    ExpandWordsRequest,
    ExpandWordsResponse,
    QueryRequest,
    QueryResponse,
    QuerySimpleResponse,
)

router = APIRouter()


def _query(request: Request, body: QueryRequest) -> QueryResponse:
    response = request.app.state.store.memory.query(
        body.query,
        user_id=body.user_id,
        agent_id=body.agent_id,
        limit=body.limit,
        score_threshold=body.score_threshold,
        now=body.now or datetime.now(),
        save_id=body.save_id,
        last_reply=body.last_reply,
    )
    return QueryResponse(
        memory_events=response.memory_events,
        memory_entities=response.memory_entities,
        additional_info=response.additional_info,
        timeline=response.timeline,
        prompt_text=response.prompt_text,
    )


@router.post("/query", response_model=QueryResponse)
def query(request: Request, body: QueryRequest) -> QueryResponse:
    return _query(request, body)


@router.post("/query_simple", response_model=QuerySimpleResponse)
def query_simple(request: Request, body: QueryRequest) -> QuerySimpleResponse:
    full = _query(request, body)
    return QuerySimpleResponse(
        memory_events=[e["description"] for e in full.memory_events],
        memory_entities=[e["description"] for e in full.memory_entities],
        timeline=[e["description"] for e in full.timeline],
        prompt_text=full.prompt_text,
    )


@router.post("/expand_words", response_model=ExpandWordsResponse, response_model_by_alias=True)
def expand_words(request: Request, body: ExpandWordsRequest) -> ExpandWordsResponse:
    words = request.app.state.store.memory.expand_words(
        body.sentence,
        count=body.chinese_rd_count,
        strategy=0 if body.logic_type == "first" else 1,
        filter_levels=body.filter_values,
    )
    return ExpandWordsResponse(**words)
