"""What an orchestrator and a monitor call, without a key: /health (the process answers),
/ready (warm and the store answering: send it requests), /metrics (Prometheus)."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ...core.errors import ErrorBody
from ...core.metrics import CONTENT_TYPE, Metrics
from ...core.readiness import NotReady, Readiness, check_schema
from ...schemas.admin import Health, Ready
from ..deps import StoreDep

router = APIRouter(tags=["service"])

# how long /ready waits for the store's answer before it says the store is not answering
STORE_PROBE_SECONDS = 2.0


@router.get(
    "/health",
    response_model=Health,
    summary="Is the service up",
    description="Answers while the process serves, warm or not (a liveness probe); needs no key.",
)
async def health() -> Any:
    return {"status": "ok"}


@router.get(
    "/ready",
    response_model=Ready,
    summary="Is the service ready for requests",
    description="200 once the service is warm (the store reachable with every table rolemem "
    "needs, the designer config loaded, the embedder loaded unless --keyword-only) and while "
    "the store answers; before that, or when the store stops answering, a 503 whose message "
    "names the reason (a readiness probe). Needs no key.",
    responses={503: {"model": ErrorBody, "description": "Not ready: the message says why."}},
)
async def ready(request: Request, store: StoreDep) -> Any:
    readiness: Readiness = request.app.state.readiness
    reason = readiness.reason
    if reason is not None:
        raise NotReady(reason)
    try:  # off the event loop: a store that hangs must not hold up /health
        await asyncio.wait_for(asyncio.to_thread(check_schema, store.engine), STORE_PROBE_SECONDS)
    except TimeoutError:
        raise NotReady(f"store: no answer within {STORE_PROBE_SECONDS:g} s") from None
    except Exception as exc:
        raise NotReady(f"store: {exc}") from None
    return {"status": "ready"}


@router.get(
    "/metrics",
    response_class=Response,
    summary="Metrics for Prometheus",
    description="Prometheus' text format, families prefixed `rolemem_`: request latency per "
    "route template and requests by status, extraction attempts, failures, latency and queue "
    "depth, LLM call latency, maintenance runs, memories per kind (read from the store at each "
    "scrape). With several worker processes, any one answers for all of them. Needs no key.",
    responses={
        200: {
            "description": "The metrics.",
            "content": {CONTENT_TYPE.split(";")[0]: {"schema": {"type": "string"}}},
        }
    },
)
async def metrics(request: Request) -> Response:
    collected: Metrics = request.app.state.metrics
    # off the event loop: the scrape runs one statement on the store
    body = await asyncio.to_thread(collected.exposition)
    return Response(body, media_type=CONTENT_TYPE)
