"""/health (no key) and /snapshot (a read-only copy for analysts and dbt)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request

from .schemas import SnapshotResponse

public = APIRouter()
router = APIRouter()


@public.get("/health")
def health() -> dict[str, str]:
    return {"status": "ok"}


@router.post("/snapshot", response_model=SnapshotResponse)
def snapshot(request: Request) -> SnapshotResponse:
    try:
        path, size = request.app.state.store.snapshot()
    except FileNotFoundError as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from None
    return SnapshotResponse(path=path, bytes=size)
