"""Exception types: one per kind of failure, each message naming the bad thing.

`field` (when known) names the input the error is about, as the HTTP service reports it:
`save_id`, `lines[2].role_id`, ...
"""

from __future__ import annotations

from typing import Any


class RolememError(Exception):
    """Base class for every error rolemem raises on purpose."""

    def __init__(self, message: str = "", *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class NotFoundError(RolememError, LookupError):
    """What the request names does not exist (or is not the caller's to see)."""


class ConflictError(RolememError):
    """The request conflicts with what is stored: an id already taken, an idempotency key
    reused with another body."""


class ForbiddenError(RolememError):
    """The caller may not do this to what the request names (it exists, and says how to
    proceed)."""


class OwnerlessSaveError(ForbiddenError):
    """A player-scoped call named a save that has no owner: a save must belong to a player
    before players reach it (or the service is told the game keeps ownership itself)."""


class PlayerRequiredError(RolememError, ValueError):
    """A row without its player (`user_id`) on a database sharded by player (Citus), where
    every save, line and player memory belongs to one: ownerless saves are not stored there
    (official memories have tables of their own, reference tables there)."""


class BusyError(RolememError):
    """The work did not fit its time budget or queue, or kept meeting other writes; nothing
    was changed, try again."""


class WriteConflictError(BusyError):
    """Another transaction removed rows this write read, after it read them (a delete racing
    a forget): rolled back whole, safe to run again (one of the engines' `conflicts`, which
    the service retries)."""


class ChainError(RolememError, ValueError):
    """A save's parent chain is broken: a cycle, or a parent line from another save."""


class LineError(RolememError, ValueError):
    """A dialogue line cannot be built into memory (unknown attribute, wrong field type)."""


class SaveNotFoundError(NotFoundError):
    """The requested save does not exist (or belongs to another player)."""


class DatabaseLockedError(RolememError):
    """Another process holds the DuckDB file (DuckDB allows one writing process per file)."""


def field_path(location: tuple[Any, ...] | list[Any]) -> str | None:
    """A pydantic error's location as `field` names it: ('body', 'lines', 0, 'role_id') ->
    'lines[0].role_id' (the request part dropped), for the service's 422s and the Python
    API's contract errors alike."""
    parts = list(location)
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part and not str(part).startswith("~"):  # a tagged union's tag is no field
            text += f".{part}" if text else str(part)
    return text or None
