"""Chat histories exported by other tools, as lines a save can import (`Saves.import_lines`,
`POST /saves/{id}/import`, `rolemem import-chat`):

- rolemem's own: ndjson, one line object per row (`attribute`, `content`, ...), kept as is;
- OpenAI-style messages (`{"role", "content", "name"?}`), a JSON array or ndjson: `user` is
  the player, `assistant` the character (`role_id` / `script_role_id`), `system` a system
  line; `name` becomes the line's display name;
- a SillyTavern chat (`.jsonl`): a first row of metadata (`user_name`, `character_name`,
  `chat_metadata`), then `{"name", "is_user", "is_system"?, "mes", "send_date", ...}` rows;
  `send_date` (ISO, or SillyTavern's "May 1, 2024 8:00pm") becomes `created_at`.

Messages without text (an image, a deleted swipe) are skipped; anything else unreadable is a
RolememError naming the row (`rows[i]`, counted from the file's first row)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import RolememError

_OPENAI_ROLES = {"user": "user", "assistant": "assistant", "system": "system"}
_SILLYTAVERN_TIMES = ("%B %d, %Y %I:%M%p", "%B %d, %Y %I:%M %p", "%Y-%m-%d@%Hh%Mm%Ss")


def read_rows(path: str | Path) -> list[Any]:
    """The file's rows: a JSON array's items, or its ndjson lines (blank lines skipped)."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise RolememError(f"{path}: cannot read the chat: {exc}") from None
    if text.lstrip().startswith("["):
        try:
            rows = json.loads(text)
        except ValueError as exc:
            raise RolememError(f"{path}: not a JSON array: {exc}") from None
        return list(rows)
    rows = []
    for number, line in enumerate(text.splitlines()):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError as exc:
                raise RolememError(f"{path}: line {number + 1} is not JSON: {exc}") from None
    return rows


def chat_lines(
    rows: Sequence[Any], *, role_id: int | None = None, script_role_id: str | None = None
) -> list[dict[str, Any]]:
    """The rows as lines (see the module docstring); the character's lines are `role_id`'s
    (or `script_role_id`'s)."""
    speaker = {"role_id": role_id, "script_role_id": script_role_id}
    lines = []
    for index, row in enumerate(rows):
        at = f"rows[{index}]"
        if not isinstance(row, dict):
            raise RolememError(f"{at} must be an object", field=at)
        if index == 0 and "mes" not in row and ("chat_metadata" in row or "user_name" in row):
            continue  # SillyTavern's metadata row
        if "mes" in row:
            line = _sillytavern(row, speaker)
        elif "role" in row:
            line = _openai(row, at, speaker)
        elif "attribute" in row:
            line = dict(row)
        else:
            raise RolememError(
                f"{at}: neither a line (attribute), a message (role) nor a SillyTavern row (mes)",
                field=at,
            )
        if line is not None:
            lines.append(line)
    return lines


def _openai(row: dict[str, Any], at: str, speaker: dict[str, Any]) -> dict[str, Any] | None:
    attribute = _OPENAI_ROLES.get(row["role"])
    if attribute is None:
        raise RolememError(
            f"{at}.role must be one of {sorted(_OPENAI_ROLES)}, got {row['role']!r}",
            field=f"{at}.role",
        )
    content = row.get("content")
    if isinstance(content, list):  # content parts: the text ones
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return _message(row, attribute, content, speaker)


def _sillytavern(row: dict[str, Any], speaker: dict[str, Any]) -> dict[str, Any] | None:
    attribute = "user" if row.get("is_user") else "system" if row.get("is_system") else "assistant"
    line = _message(row, attribute, row.get("mes"), speaker)
    if line is not None:  # a row without text is skipped whatever its date
        created = _send_date(row.get("send_date"))
        if created is not None:
            line["created_at"] = created
    return line


def _message(
    row: dict[str, Any], attribute: str, content: Any, speaker: dict[str, Any]
) -> dict[str, Any] | None:
    """A message as a line (its `name` the display name, the character's lines `speaker`'s);
    None when it has no text."""
    if not isinstance(content, str) or not content.strip():
        return None
    line: dict[str, Any] = {"attribute": attribute, "content": content}
    if row.get("name"):
        line["display_name"] = row["name"]
    if attribute == "assistant":
        line.update({key: value for key, value in speaker.items() if value is not None})
    return line


def _send_date(value: Any) -> str | None:
    """SillyTavern's send_date as a naive ISO time (UTC when it had an offset); None when it
    is missing or unreadable (the import's time is used)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:  # milliseconds past the calendar (1e20, NaN) are unreadable too
            return datetime.fromtimestamp(value / 1000, UTC).replace(tzinfo=None).isoformat()
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str):
        return None
    for pattern in (None, *_SILLYTAVERN_TIMES):  # ISO first
        try:
            if pattern is None:
                parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
            else:
                parsed = datetime.strptime(value, pattern)
        except ValueError:
            continue
        if parsed.tzinfo is not None:
            parsed = parsed.astimezone(UTC).replace(tzinfo=None)
        return parsed.isoformat()
    return None
