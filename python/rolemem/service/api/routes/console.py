"""/console: a page for designers and support to see what a character remembers and why (the
unlock matrix, a dry-run recall preview, a player's timeline and memories). The page and its
script are shipped in the package and served here, never from a CDN; the page holds no data:
everything it shows comes from the JSON routes, with the key typed into it."""

from __future__ import annotations

from importlib import resources

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.responses import HTMLResponse

ASSETS = "/console-assets"
# the page runs only its own script and style and talks only to this service; no other site
# may frame it (it shows a player's memories to whoever holds the key)
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def install(app: FastAPI) -> None:
    folder = resources.files("rolemem.service").joinpath("console")
    app.mount(ASSETS, StaticFiles(directory=str(folder)), name="console-assets")

    @app.get("/console", include_in_schema=False)
    async def console() -> HTMLResponse:
        return HTMLResponse(folder.joinpath("index.html").read_text("utf-8"), headers=HEADERS)
