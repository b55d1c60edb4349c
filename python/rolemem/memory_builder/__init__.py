"""Memory builder: a dialogue tree -> one character's chat messages (`build`), kept per save at
write time (`history`), the save lifecycle a game drives (`saves`) and the ids a role carries
(`roles`). The rules are the models under models/*/memory_builder (and stg_app__roles)."""

from .build import (
    STORED_LINE_FIELDS,
    build_memory,
    build_memory_for_save,
    int_or_none,
    message_spans,
    script_role_or_none,
)

__all__ = [
    "STORED_LINE_FIELDS",
    "build_memory",
    "build_memory_for_save",
    "int_or_none",
    "message_spans",
    "script_role_or_none",
]
