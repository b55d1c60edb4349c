"""What keyed routes share: the key header they declare. Whether a key may call a route is
decided once, before the body is read, by the gate (core/gate.py, by core/keys.py's rule)."""

from __future__ import annotations

from fastapi.security import APIKeyHeader

API_KEY = APIKeyHeader(
    name="X-API-Key",
    auto_error=False,
    description="A key of the service: --api-key, --designer-key or one of the --keys file; "
    "its role says which routes it reaches, its players glob which players it may name.",
)
