"""The routers on the app, each in its route group (which keys reach which group is
core/keys.py's); the probes, the docs and the console open; the client-facing schema."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter, FastAPI, Security
from starlette.routing import Match
from starlette.types import Scope

from ..core import openapi_for_clients, slashes
from ..core.access import flat_routes
from ..core.errors import EVERY_ROUTE, gate_responses
from ..core.gate import OPEN, Routed, RouteOf
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

# the reads every player shares: a key with a players glob reaches them naming no player
SHARED_READS = (official.shared, config.shared, query.shared)
# route group (core/keys.py's GROUPS) -> its routers
ROUTE_GROUPS: Mapping[str, tuple[APIRouter, ...]] = {
    "game": (
        saves.router,
        imports.router,
        users.router,
        query.router,
        query.shared,
        recall.router,
        turn.router,
        admin.router,
    ),
    "designer": (official.router, official.shared, config.router, config.shared, recall.designer),
    "snapshot": (admin.snapshots,),
    "admin": (admin.admin,),
}


def include_routers(app: FastAPI, *, keyed: bool, limited: bool) -> None:
    """Every router on `app`. `keyed`: some route needs a key; `limited`: a rate is set (what
    the client-facing schema declares)."""
    app.include_router(probes.router, responses=EVERY_ROUTE)
    # the key header and the gate's answers, declared (the gate checks the key, before any
    # body is read); a service without keys declares none
    declared = [Security(API_KEY)] if keyed else []
    for routers in ROUTE_GROUPS.values():
        for router in routers:
            shared = any(router is read for read in SHARED_READS)
            answers = EVERY_ROUTE | gate_responses(keyed=keyed, limited=limited, shared=shared)
            app.include_router(router, dependencies=declared, responses=answers)
    docs.install(app)
    openapi_for_clients.install(app)
    console.install(app)
    slashes.install(app)


def route_groups(app: FastAPI) -> RouteOf:
    """What the gate knows of the route that takes a request (as Starlette picks it: the
    first full match, else the first partial one, a 405): its group, path parameters,
    operation and where it takes a player; OPEN for the routes outside the groups (probes,
    docs, console, static files); group None (any key) when no route takes it, or for a
    route marked `keyed` (/mcp: each of its tools' calls is then a request of its own
    route, checked there too)."""
    groups = {id(router): group for group, routers in ROUTE_GROUPS.items() for router in routers}
    shared = {id(router) for router in SHARED_READS}
    players = {id(route): _players_taken(route) for route in flat_routes(app.routes)}

    def group_of(scope: Scope) -> Routed:
        partial: Routed | None = None
        for route in app.router.routes:
            included = getattr(route, "original_router", None)  # FastAPI's included router
            relay = bool(getattr(route, "keyed", False))
            group = None if relay else groups.get(id(included), OPEN)  # id(None): no router's
            for candidate in (route,) if included is None else included.routes:
                match, child = candidate.matches(scope)
                params = child.get("path_params", {})
                if match == Match.FULL:
                    names, body = players.get(id(candidate), (False, False))
                    operation = (scope["method"], getattr(candidate, "path", ""))
                    reads = id(included) in shared
                    return Routed(group, params, operation, names, body, relay, shared_read=reads)
                if match == Match.PARTIAL and partial is None:
                    partial = Routed(group, params, relay=relay)
        return partial or Routed(None)

    return group_of


def _players_taken(route: Any) -> tuple[bool, bool]:
    """Whether a route takes a user_id (anywhere), and in its JSON body."""
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return False, False
    named = any(p.name == "user_id" for p in dependant.path_params + dependant.query_params)
    body = any(
        "user_id" in getattr(p.field_info.annotation, "model_fields", {})
        for p in dependant.body_params
    )
    return named or body, body
