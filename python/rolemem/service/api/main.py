"""The routers on the app: the probes open, the game's groups behind the game key, the
designer's behind the designer key; the docs, the console and the client-facing schema."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Depends, FastAPI

from ..core import openapi_for_clients, slashes
from ..core.settings import ServiceSettings
from .deps import key_check
from .routes import (
    admin,
    config,
    console,
    docs,
    official,
    probes,
    query,
    recall,
    saves,
    turn,
    users,
)

GAME_GROUPS = (saves.router, users.router, query.router, recall.router, turn.router, admin.router)
DESIGNER_GROUPS = (official.router, config.router, recall.designer, admin.designer)


def include_routers(app: FastAPI, settings: ServiceSettings) -> list[Any]:
    """Every router on `app`; the game group's dependencies (for routes added later)."""
    app.include_router(probes.router)
    game = [Depends(key_check(settings.api_key))]
    designer = [Depends(key_check(settings.designer_key, settings.api_key))]
    for router in GAME_GROUPS:
        app.include_router(router, dependencies=game)
    for router in DESIGNER_GROUPS:
        app.include_router(router, dependencies=designer)
    docs.install(app)
    openapi_for_clients.install(app, keyed=bool(settings.api_key or settings.designer_key))
    console.install(app)
    slashes.install(app)
    return game


def needs_key(app: FastAPI) -> Callable[[str], bool]:
    """Whether a request path needs a key: all but the routes outside the keyed routers
    (probes, docs, console; none has a path parameter) and the static files; a route marked
    `keyed` (/mcp) needs one."""
    from starlette.routing import Mount

    keyed = {id(router) for router in (*GAME_GROUPS, *DESIGNER_GROUPS)}
    open_paths: set[str] = set()
    open_prefixes: list[str] = []
    for route in app.routes:
        included = getattr(route, "original_router", None)  # FastAPI's included router
        if included is not None:
            if id(included) not in keyed:
                open_paths.update(str(getattr(inner, "path", "")) for inner in included.routes)
        elif getattr(route, "keyed", False):  # /mcp: keyed as the routes its tools call
            continue
        elif isinstance(route, Mount):
            open_prefixes.append(f"{route.path}/")
        else:
            open_paths.add(str(getattr(route, "path", "")))
    prefixes = tuple(open_prefixes)

    def needs(path: str) -> bool:
        return path not in open_paths and not path.startswith(prefixes)

    return needs
