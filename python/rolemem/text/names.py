"""The player's and the character's names in a prompt's text."""

from __future__ import annotations


def names_filled(text: str, user_name: str | None, agent_name: str | None) -> str:
    """Macro fill_name_placeholders: {{user}} / {{char}} by the names, in one pass (a name
    without one keeps its placeholder)."""
    user = "{{user}}" if user_name is None else user_name.replace("\x01", "").replace("\x02", "")
    agent = "{{char}}" if agent_name is None else agent_name.replace("\x01", "").replace("\x02", "")
    marked = text.replace("{{user}}", "\x01").replace("{{char}}", "\x02")
    return marked.replace("\x01", user).replace("\x02", agent)
