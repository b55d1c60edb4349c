"""A path with a trailing slash too many (or one too few) is redirected to the route's path,
as Starlette does, but with a relative `Location` (the path and query only): Starlette's
absolute one echoes the request's `Host` header, which a forged Host turns into a redirect to
another site (or a poisoned cache)."""

from __future__ import annotations

from fastapi import FastAPI
from starlette.responses import RedirectResponse
from starlette.routing import Match
from starlette.types import Receive, Scope, Send


def install(app: FastAPI) -> None:
    router = app.router
    router.redirect_slashes = False
    not_found = router.not_found

    async def relative_redirect(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        if scope["type"] == "http" and path != "/":
            other = path.rstrip("/") if path.endswith("/") else path + "/"
            # never a scheme-relative //host/... location
            if other.startswith("/") and not other.startswith("//"):
                moved = {**scope, "path": other}
                if any(route.matches(moved)[0] is not Match.NONE for route in router.routes):
                    query = scope.get("query_string", b"").decode("latin-1")
                    location = other + (f"?{query}" if query else "")
                    await RedirectResponse(location)(scope, receive, send)
                    return
        await not_found(scope, receive, send)

    router.default = relative_redirect
