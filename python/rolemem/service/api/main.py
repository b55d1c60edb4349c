"""The routers on the app, each in its route group (which keys reach which group is
core/keys.py's); the probes, the docs and the console open; the client-facing schema."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter, Depends, FastAPI
from starlette.routing import Match
from starlette.types import Scope

from ..core import openapi_for_clients, slashes
from ..core.gate import OPEN, RouteOf
from .deps import API_KEY
from .routes import (
    admin,
    config,
    console,
    docs,
    imports,
    official,
    probes,
    query,
    recall,
    saves,
    turn,
    users,
)

GAME_GROUPS = (
    saves.router,
    imports.router,
    users.router,
    query.router,
    recall.router,
    turn.router,
    admin.router,
)
DESIGNER_GROUPS = (official.router, config.router, recall.designer)
# route group (core/keys.py's GROUPS) -> its routers
ROUTE_GROUPS: Mapping[str, tuple[APIRouter, ...]] = {
    "game": GAME_GROUPS,
    "designer": DESIGNER_GROUPS,
    "snapshot": (admin.snapshots,),
    "admin": (admin.admin,),
}


def include_routers(app: FastAPI, *, keyed: bool, limited: bool) -> None:
    """Every router on `app`. `keyed`: some route needs a key; `limited`: a rate is set (what
    the client-facing schema declares)."""
    app.include_router(probes.router)
    # the key header, declared (the gate checks it, before any body is read)
    declared = [Depends(API_KEY)]
    for routers in ROUTE_GROUPS.values():
        for router in routers:
            app.include_router(router, dependencies=declared)
    docs.install(app)
    openapi_for_clients.install(app, keyed=keyed, limited=limited)
    console.install(app)
    slashes.install(app)


def route_groups(app: FastAPI) -> RouteOf:
    """The group of the route that takes a request (as Starlette picks it: the first full
    match, else the first partial one, a 405) and its path parameters; OPEN for the routes
    outside the groups (probes, docs, console, static files); None (any key) when no route
    takes it, or for a route marked `keyed` (/mcp: each of its tools' calls is then a request
    of its own route, checked here too)."""
    groups = {id(router): group for group, routers in ROUTE_GROUPS.items() for router in routers}

    def group_of(scope: Scope) -> tuple[str | None, Mapping[str, Any]]:
        partial: tuple[str | None, Mapping[str, Any]] | None = None
        for route in app.router.routes:
            included = getattr(route, "original_router", None)  # FastAPI's included router
            group: str | None = OPEN if included is None else groups.get(id(included), OPEN)
            if getattr(route, "keyed", False):
                group = None
            for candidate in (route,) if included is None else included.routes:
                match, child = candidate.matches(scope)
                if match == Match.FULL:
                    return group, child.get("path_params", {})
                if match == Match.PARTIAL and partial is None:
                    partial = (group, child.get("path_params", {}))
        return partial or (None, {})

    return group_of
