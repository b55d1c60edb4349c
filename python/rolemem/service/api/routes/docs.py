"""/docs (Swagger UI) and /redoc that work offline: their scripts and styles are served by the
service itself, from the `fastapi-offline` package's copies, never from a CDN."""

from __future__ import annotations

import functools
from importlib import resources

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.staticfiles import StaticFiles
from starlette.responses import HTMLResponse, Response

ASSETS = "/docs-assets"


# the one thing ReDoc fetches from the web by itself: its footer logo (shown from here instead)
_REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"


def install(app: FastAPI) -> None:
    folder = resources.files("fastapi_offline").joinpath("static")

    @functools.cache
    def redoc_script() -> bytes:
        text = folder.joinpath("redoc.standalone.js").read_text("utf-8")
        return text.replace(_REDOC_LOGO, f"{ASSETS}/favicon.png").encode("utf-8")

    @app.get(f"{ASSETS}/redoc.standalone.js", include_in_schema=False)
    async def redoc_asset() -> Response:
        return Response(redoc_script(), media_type="text/javascript")

    app.mount(ASSETS, StaticFiles(directory=str(folder)), name="docs-assets")
    openapi = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    async def swagger() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi,
            title=f"{app.title} - API",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon.png",
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=openapi,
            title=f"{app.title} - API reference",
            redoc_js_url=f"{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{ASSETS}/favicon.png",
            with_google_fonts=False,
        )
