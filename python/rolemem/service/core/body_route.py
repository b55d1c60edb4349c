"""The route class of every router: the route takes the JSON body the request guard parsed
(guard.PARSED_BODY) instead of parsing it again, and a large body is validated against the
route's body model on the body lane (body_lane.py) before FastAPI sees it: a body that fails
is answered 422 from there (the error handler's shape), one that passes is handed over as the
validated model, which FastAPI's own validation then takes as it is. A route with a JSON
body answers a body of another Content-Type 415 (FastAPI would validate its bytes as the
model and answer a 422 naming no field)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response

from .errors import UnsupportedMediaType, responses
from .guard import NOT_JSON_BODY, PARSED_BODY, ParsedBody

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


class _Parsed(Request):
    """The request, its JSON the guard's document (FastAPI calls json() only where it
    would parse the body as JSON)."""

    def __init__(self, request: Request, document: Any) -> None:
        super().__init__(request.scope, request.receive)
        self.document = document

    async def json(self) -> Any:
        return self.document


class BodyRoute(APIRoute):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.body_field is not None:
            self.responses = {**self.responses, **responses(415)}

    def get_route_handler(self) -> Handler:
        handler: Handler = super().get_route_handler()
        body = self.body_field if _one_model(self.dependant.body_params) else None
        takes_json = self.body_field is not None

        async def parsed(request: Request) -> Response:
            state = request.scope.get("state", {})
            if takes_json and state.get(NOT_JSON_BODY):
                text = "the body must be JSON: send it with Content-Type: application/json"
                raise UnsupportedMediaType(text, field="Content-Type")
            given = state.get(PARSED_BODY)
            if not isinstance(given, ParsedBody):
                return await handler(request)
            document = given.document
            if given.lane and body is not None and document is not None:
                validate = functools.partial(body.validate, loc=("body",))
                value, errors = await given.lane.run(validate, document, later=True)
                if errors:
                    raise RequestValidationError(errors)
                document = value  # a model instance: FastAPI does not validate it again
            return await handler(_Parsed(request, document))

        return parsed


def _one_model(params: list[Any]) -> bool:
    """Whether the body is the route's one model (not fields embedded in an object): what
    FastAPI then validates the whole body against."""
    if len({param.name for param in params}) != 1 or getattr(params[0].field_info, "embed", None):
        return False
    model = params[0].field_info.annotation
    return isinstance(model, type) and issubclass(model, BaseModel)
