"""The commands' calls on a running service (`--url`): its key from --api-key or
$ROLEMEM_API_KEY, its error answer as one line."""

from __future__ import annotations

import argparse
import json
import os
import urllib.error
import urllib.request
from typing import Any

from ..errors import RolememError


def call(
    args: argparse.Namespace, method: str, path: str, body: Any = None, **headers: str
) -> dict[str, Any]:
    """The JSON answer of `method path` on the service at `args.url`."""
    key = args.api_key or os.environ.get("ROLEMEM_API_KEY")
    if key:
        headers["X-API-Key"] = key
    request = urllib.request.Request(
        args.url.rstrip("/") + path, data=body, method=method, headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=600) as answer:
            return dict(json.load(answer))
    except urllib.error.HTTPError as exc:
        try:
            error = json.load(exc)["error"]
            said = error["message"] + (f" (field {error['field']})" if error.get("field") else "")
        except (ValueError, KeyError, TypeError):
            said = exc.reason
        raise RolememError(f"the service answered {exc.code}: {said}") from None
    except urllib.error.URLError as exc:
        raise RolememError(f"cannot reach {args.url}: {exc.reason}") from None
