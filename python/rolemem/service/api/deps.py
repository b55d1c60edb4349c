"""The dependencies keyed routes share: the key a route group needs."""

from __future__ import annotations

import hmac
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Depends
from fastapi.security import APIKeyHeader

from ..core import errors

API_KEY = APIKeyHeader(
    name="X-API-Key",
    auto_error=False,
    description="The game's key (--api-key); designer routes take the designer key when one "
    "is set.",
)


def key_check(*keys: str | None) -> Callable[..., Coroutine[Any, Any, None]]:
    """A dependency accepting the first of `keys` that is set (none set: open)."""
    expected = next((key for key in keys if key is not None), None)

    async def check(key: str | None = Depends(API_KEY)) -> None:
        if expected is None:
            return
        # bytes, so a non-ASCII header is simply wrong, never a TypeError
        given = (key or "").encode("utf-8", "surrogateescape")
        if not (key and hmac.compare_digest(given, expected.encode("utf-8"))):
            raise errors.Unauthorized("missing or wrong X-API-Key header", field="X-API-Key")

    return check
