"""The customer's own approach, as the benchmark baseline (never used by rolemem itself).

`get_chat_history` is the spec's code: load every line of a save with SQLModel, walk
`last_message_id` in Python. `build_messages` is a straightforward Python loop over the same
rules, as a game server would write it next to that loader.
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, select

from rolemem.schema import Line, Save


def get_chat_history(session: Session, save_id: int) -> list[Line]:
    save = session.get(Save, save_id)
    if not save or not save.last_message_id:
        return []
    lines = session.exec(select(Line).where(Line.save_id == save_id)).all()
    lines_map = {line.id: line for line in lines}
    history = []
    current_id = save.last_message_id
    while current_id:
        line = lines_map.get(current_id)
        if not line:
            break
        history.append(line)
        current_id = line.parent_line_id
    return list(reversed(history))


def _blank(value: Any) -> Any:
    return None if value is None or not str(value).strip() else value


def build_messages(
    lines: list[Any], role_id: int | None = None, script_role_id: str | None = None
) -> list[dict[str, str]]:
    def is_self(line: Any) -> bool:
        return (role_id is not None and line.role_id == role_id) or (
            script_role_id is not None and _blank(line.script_role_id) == script_role_id
        )

    messages: list[dict[str, str]] = []
    segment: list[Any] = []

    def flush() -> None:
        if not segment:
            return
        last_other = max(
            (i for i, line in enumerate(segment) if line.attribute == "assistant"), default=-1
        )
        background, focus = [], []
        for i, line in enumerate(segment):
            name = _blank(line.display_name)
            if line.attribute == "user" and i > last_other:
                focus.append(line.content)
            elif line.attribute == "user":
                background.append(f"{name or '用户'}：{line.content}")
            else:
                emotion = _blank(line.original_emotion)
                action = _blank(line.action_content)
                background.append(
                    f"{name or '旁白'}："
                    + (f"【{emotion}】" if emotion else "")
                    + line.content
                    + (f"（{action}）" if action else "")
                )
        parts = []
        if background:
            parts.append("{" + "\n".join(background) + "}")
        if focus:
            parts.append("".join(focus))
        messages.append({"role": "user", "content": "\n".join(parts)})
        segment.clear()

    own: list[str] = []
    for line in lines:
        if line.attribute == "system":
            no_identity = (
                line.role_id is None
                and _blank(line.script_role_id) is None
                and _blank(line.display_name) is None
            )
            if no_identity or is_self(line):
                flush()
                if own:
                    messages.append({"role": "assistant", "content": "".join(own)})
                    own = []
                messages.append({"role": "system", "content": line.content})
        elif line.attribute == "assistant" and is_self(line):
            flush()
            emotion, tts, action = (
                _blank(line.original_emotion),
                _blank(line.tts_content),
                _blank(line.action_content),
            )
            own.append(
                (f"【{emotion}】" if emotion else "")
                + line.content
                + (f"<{tts}>" if tts else "")
                + (f"（{action}）" if action else "")
            )
        else:
            if own:
                messages.append({"role": "assistant", "content": "".join(own)})
                own = []
            segment.append(line)
    flush()
    if own:
        messages.append({"role": "assistant", "content": "".join(own)})
    return messages
