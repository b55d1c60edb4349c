"""Health, snapshots and designer config."""

from __future__ import annotations

from typing import Any

from .common import Response, field


class Health(Response):
    status: str = field("ok while the service runs.", "ok")


class Snapshot(Response):
    path: str = field("Where the read-only copy was written.", "snapshot.duckdb")
    bytes: int = field("Its size.", 5_242_880)


DESIGNER_CONFIG_EXAMPLE: dict[str, Any] = {
    "character_id": "qiyu",
    "attributes": {
        "性格特征": [
            {
                "关键词": ["温柔", "体贴", "细心"],
                "内容": "对{{user}}格外温柔",
                "强度": 5,
                "queryParams": [{"field": "intimacy", "value": 3, "operator": "gte"}],
            }
        ]
    },
    "events": {},
    "dialogue_styles": {},
}


class ConfigImported(Response):
    character_id: str = field("The character imported.", "qiyu")
    written: dict[str, int] = field("Rows written per config table.", {"character_attributes": 1})
    advice: list[str] = field("Sizes outside the spec's advice (imported anyway).", [])
